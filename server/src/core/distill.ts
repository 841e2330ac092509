import type { PreparedTask, RemedyCode } from '../../../shared/protocol';
import { ModelError, type ChatModel } from '../model/types';
import { DiscussError } from './errors';
import { DISTILL_WINDOW_TURNS, PROMOTE_MAX_ATTEMPTS } from './limits';
import type { TranscriptTurn } from './discussion';
import { asClause, errorText } from '../../../shared/errorText';

export interface DistillInput {
  transcript: TranscriptTurn[];
  repoSummary: string;
  model?: string;
  signal: AbortSignal;
}

/**
 * Turns the recent conversation into one imperative intent and the
 * constraints agreed in it. The output is structured JSON, so a malformed
 * reply is retried a bounded number of times, never looped on.
 */
export async function distill(model: ChatModel, input: DistillInput): Promise<PreparedTask> {
  const window = input.transcript.slice(-DISTILL_WINDOW_TURNS);
  const conversation = window.map((turn) => `${turn.role}: ${turn.text}`).join('\n\n');
  const prompt = [
    'A developer has been discussing a change to a codebase. Distill the discussion into ONE actionable coding intent',
    'plus the constraints they agreed on.',
    '',
    'REPOSITORY',
    input.repoSummary,
    '',
    'DISCUSSION (most recent turns)',
    conversation,
    '',
    'Return ONLY a JSON object, no prose and no code fences:',
    '{ "proposed_intent": "one paragraph, imperative: what to change and why", "constraints": ["something the change must respect or must not break"] }',
    '',
    'Rules:',
    '- proposed_intent is an INSTRUCTION, not a summary of the conversation. Never quote the transcript back.',
    '- Include only constraints actually agreed in the discussion. If none were, return an empty array; do not invent any.',
  ].join('\n');

  let lastProblem = 'no attempt was made';
  // A model failure's fix (a key, a model) is the fix for this request too.
  let lastRemedy: RemedyCode | undefined;
  for (let attempt = 0; attempt < PROMOTE_MAX_ATTEMPTS; attempt++) {
    if (input.signal.aborted) break;
    let text: string;
    try {
      const response = await model.complete(
        {
          messages: [{ role: 'user', content: prompt }],
          model: input.model,
          temperature: 0,
          maxTokens: 1024,
          signal: input.signal,
        },
        () => {},
      );
      text = response.content;
    } catch (err) {
      if (input.signal.aborted) break;
      lastProblem = errorText(err);
      lastRemedy = err instanceof ModelError ? err.remedy : undefined;
      continue;
    }
    const parsed = parseTask(text);
    if (typeof parsed === 'string') {
      lastProblem = parsed;
      lastRemedy = undefined;
      continue;
    }
    return parsed;
  }
  throw new DiscussError(
    'ModelFailed',
    `Could not distill this discussion into a task after ${PROMOTE_MAX_ATTEMPTS} attempts: ${asClause(lastProblem)}. ` +
      'Try again, or pick a stronger model.',
    lastRemedy,
  );
}

/** The one JSON object a model's structured reply holds, or what was wrong with the reply. */
export function parseJsonObjectReply(text: string): Record<string, unknown> | string {
  const json = extractJsonObject(text);
  if (json === undefined) return 'the reply held no JSON object';
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return `the reply's JSON did not parse (${errorText(err)})`;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'the reply was not a JSON object';
  return value as Record<string, unknown>;
}

/** The task in a distillation reply, or a description of what was wrong with it. */
export function parseTask(text: string): PreparedTask | string {
  const record = parseJsonObjectReply(text);
  if (typeof record === 'string') return record;
  const intentValue = record.proposed_intent ?? record.proposedIntent ?? record.intent;
  const intent = typeof intentValue === 'string' ? intentValue.trim() : '';
  if (!intent) return 'the reply had no proposed_intent';
  const constraints = Array.isArray(record.constraints)
    ? record.constraints.filter((c): c is string => typeof c === 'string').map((c) => c.trim()).filter(Boolean)
    : [];
  return { intent, constraints };
}

/**
 * The first balanced `{…}` in `text`, skipping code fences and prose around
 * it. String literals are tracked so braces inside them do not count.
 */
export function extractJsonObject(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return undefined;
}

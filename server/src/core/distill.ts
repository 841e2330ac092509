import type { PreparedTask } from '../../../shared/protocol';
import type { ChatModel } from '../model/types';
import { DiscussError } from './errors';
import { DISTILL_WINDOW_TURNS, PROMOTE_MAX_ATTEMPTS } from './limits';
import type { TranscriptTurn } from './discussion';
import { asClause } from '../../../shared/errorText';
import { parseJsonObjectReply, requestStructured } from './structuredReply';

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

  const answer = await requestStructured(model, { prompt, model: input.model, maxTokens: 1024, attempts: PROMOTE_MAX_ATTEMPTS, signal: input.signal, parse: parseTask });
  if (answer.ok) return answer.value;
  throw new DiscussError(
    'ModelFailed',
    `Could not distill this discussion into a task after ${PROMOTE_MAX_ATTEMPTS} attempts: ${asClause(answer.problem)}. ` +
      'Try again, or pick a stronger model.',
    answer.remedy,
  );
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

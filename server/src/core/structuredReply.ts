import type { RemedyCode } from '../../../shared/protocol';
import { errorText } from '../../../shared/errorText';
import { ModelError, type ChatModel, type TokenUsage } from '../model/types';

/**
 * A structured JSON answer from the model, for a request made with no tools
 * at temperature 0: the call, retried a bounded number of times on a failed
 * call or a reply that does not read, never looped on; and the JSON object
 * such a reply holds.
 */

export interface StructuredRequest<T> {
  prompt: string;
  model?: string;
  maxTokens: number;
  /** Calls made at the most, the first included. */
  attempts: number;
  signal: AbortSignal;
  /** What the reply says, or a description of what was wrong with it. */
  parse(text: string): T | string;
  /** Each call's cost, when the endpoint reports it. */
  onUsage?: (usage: TokenUsage) => void;
}

/**
 * The first reply that parses; else what was wrong with the last attempt,
 * with a model failure's remedy (a key, a model), which is this request's fix
 * too. A cancel ends the attempts at once; the caller tells it by its signal.
 */
export type StructuredAnswer<T> = { ok: true; value: T } | { ok: false; problem: string; remedy: RemedyCode | undefined };

export async function requestStructured<T>(model: ChatModel, request: StructuredRequest<T>): Promise<StructuredAnswer<T>> {
  let problem = 'no attempt was made';
  let remedy: RemedyCode | undefined;
  for (let attempt = 0; attempt < request.attempts; attempt++) {
    if (request.signal.aborted) break;
    let text: string;
    try {
      const response = await model.complete(
        { messages: [{ role: 'user', content: request.prompt }], model: request.model, temperature: 0, maxTokens: request.maxTokens, signal: request.signal },
        () => {},
      );
      if (response.usage) request.onUsage?.(response.usage);
      text = response.content;
    } catch (err) {
      if (request.signal.aborted) break;
      problem = errorText(err);
      remedy = err instanceof ModelError ? err.remedy : undefined;
      continue;
    }
    const parsed = request.parse(text);
    if (typeof parsed === 'string') {
      problem = parsed;
      remedy = undefined;
      continue;
    }
    return { ok: true, value: parsed };
  }
  return { ok: false, problem, remedy };
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

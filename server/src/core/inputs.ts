import { DiscussError } from './errors';

/**
 * Request fields are untrusted: a megabyte id must not come back as a
 * megabyte error, and a number where a string belongs must get an error a
 * person can act on rather than a crash.
 */

/** `value` as a short quoted string for an error message. */
export function quote(value: unknown, max = 120): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

/** An optional string field: absent, or a string; anything else is refused by name. */
export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new DiscussError('InvalidParams', `"${field}" must be a string; got ${quote(value, 40)}.`);
  }
  return value;
}

/** Longest discussion id accepted; real ones are 37 characters. */
export const MAX_ID_CHARS = 100;

/** A discussion id as given, or a clear refusal when it cannot be one. */
export function discussionIdOf(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_CHARS) {
    throw new DiscussError('NotFound', `${quote(value)} is not a discussion id — ids look like disc-0123abcd…; see discuss/list.`);
  }
  return value;
}

/** Bounds on a prepared task, whoever writes it (the model, or a client's edit). */
export const TASK_LIMITS = { intentChars: 8_000, constraints: 50, constraintChars: 1_000, targetChars: 64 } as const;

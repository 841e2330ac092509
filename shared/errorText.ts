/** What an error says, for a message or a log line: its message, or the thrown value as text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Text to be set inside a sentence ("failed: X. Try again", "(X)"): without
 * its own closing stop, which would otherwise double ours into ".." or ".,".
 * An ellipsis is kept: it says the text was cut.
 */
export function asClause(text: string): string {
  return text.trim().replace(/\.{3}$/, '…').replace(/[.!;:,]+$/, '').trimEnd();
}

/** An error's message as a clause, for "…: ${message}. Do this." */
export function errorClause(err: unknown): string {
  return asClause(errorText(err));
}

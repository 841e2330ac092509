/** What an error says, for a message or a log line: its message, or the thrown value as text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

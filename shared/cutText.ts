/**
 * Text cut to a length, the cut marked with an ellipsis. Two conventions,
 * each kept where it is used, so a caller says which:
 *
 * - `within`: the answer is at most `max` characters, the ellipsis one of
 *   them, for text that must fit a room of ours (a summary, a terminal line).
 * - `after`: `max` characters of the text are kept and the ellipsis follows,
 *   for a bound on how much of the text is kept (a preview, a note, a title).
 *
 * No Node imports: the webview bundle may use this module too.
 */
export function cutText(text: string, max: number, ellipsis: 'within' | 'after'): string {
  if (text.length <= max) return text;
  return `${text.slice(0, ellipsis === 'within' ? Math.max(0, max - 1) : max)}…`;
}

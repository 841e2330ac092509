import { cutText } from './cutText';

/**
 * Untrusted text (the model's, a tool's, an endpoint's) put on one line of
 * ours, where a line break in it could pose as another entry, heading or
 * result. Two forms:
 *
 * - `oneLine` keeps the text as it is but for its line breaks, for text that
 *   is shown whole (a decision, a constraint, a review note).
 * - `shortLine` also folds every whitespace run and bounds the length, for a
 *   summary or a detail set inside a sentence of ours.
 *
 * No Node imports: the webview bundle uses this module too.
 */

/** A line ending to CommonMark (CR, LF) or to some editor, terminal or renderer (VT, FF, NEL, U+2028, U+2029), with the blanks around it. */
const LINE_BREAKS = /[ \t]*(?:[\r\n\u000b\u000c\u0085\u2028\u2029][ \t]*)+/g;

/** `text` on one line: each line break becomes a space, so nothing in it starts a line of its own. */
export function oneLine(text: string): string {
  return text.replace(LINE_BREAKS, ' ').trim();
}

/**
 * `text` on one line of at most `max` characters: each whitespace run (line
 * breaks included) becomes one space, and a longer text is cut to end in `…`.
 */
export function shortLine(text: string, max: number): string {
  // String(): a detail from another process may not be the string its type says.
  return cutText(String(text).replace(/\s+/g, ' ').trim(), max, 'within');
}

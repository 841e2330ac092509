/**
 * Where a comment or a string closes: the searches the scan of each
 * language (codeWords.ts, pythonStrings.ts) shares.
 */

/** A character of a word, as the reference search's whole-word pattern reads one. */
export const WORD = /[\p{L}\p{N}_$]/u;

/** The end of a comment or string starting at `at`; CODE when the character there is code after all (a division, a lifetime); undefined when unsure. */
export type RegionEnd = number | typeof CODE | undefined;
export const CODE = -1;

/**
 * After the first `close` from `from`; undefined when the text ends first.
 * With `escapes`, a backslash hides the character after it; with `oneLine`,
 * a line that ends first gives undefined too.
 */
export function endAfter(text: string, from: number, close: string, escapes = false, oneLine = false): RegionEnd {
  if (!escapes && !oneLine) {
    const end = text.indexOf(close, from);
    return end === -1 ? undefined : end + close.length;
  }
  for (let index = from; index < text.length; index += 1) {
    const char = text[index];
    if (escapes && char === '\\') index += 1;
    else if (text.startsWith(close, index)) return index + close.length;
    else if (oneLine && (char === '\n' || char === '\r')) return undefined;
  }
  return undefined;
}

/** After the quote that closes a string opened at `at`, backslash escapes skipped. */
export function quotedEnd(text: string, at: number, quote: string, oneLine: boolean): RegionEnd {
  return endAfter(text, at + 1, quote, true, oneLine);
}

export function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end;
}

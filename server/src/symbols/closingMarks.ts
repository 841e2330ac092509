/**
 * Where a comment or a string closes: the searches the scan of each
 * language (codeWords.ts, pythonStrings.ts) shares.
 */

/**
 * After the first `close` from `from`; undefined when the text ends first.
 * With `escapes`, a backslash hides the character after it; with `oneLine`,
 * a line that ends first gives undefined too.
 */
export function endAfter(text: string, from: number, close: string, escapes = false, oneLine = false): number | undefined {
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
export function quotedEnd(text: string, at: number, quote: string, oneLine: boolean): number | undefined {
  return endAfter(text, at + 1, quote, true, oneLine);
}

export function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end;
}

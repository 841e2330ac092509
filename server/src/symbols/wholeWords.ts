/**
 * What the reference search counts as a whole word: no identifier character
 * (a letter, a digit, `_`, or JavaScript's `$`) right before or after. The
 * index's counts (indexer.ts), the search's pattern and the scan of comments
 * and strings (codeWords.ts) read words by this one rule: were a word split
 * where another reads it whole, the counts would no longer match the
 * matches, and the search would skip a parse it needed.
 */
const WORD_CHARACTER = '[\\p{L}\\p{N}_$]';

/** One character of a word. */
export const WORD = new RegExp(WORD_CHARACTER, 'u');

// Sticky, to test one position of a text without slicing it.
const NO_WORD_BEFORE = new RegExp(`(?<!${WORD_CHARACTER})`, 'uy');
const NO_WORD_AFTER = new RegExp(`(?!${WORD_CHARACTER})`, 'uy');

/** Whether the text from `start` to `end` is a whole word. */
export function wholeWordAt(text: string, start: number, end: number): boolean {
  NO_WORD_BEFORE.lastIndex = start;
  NO_WORD_AFTER.lastIndex = end;
  return NO_WORD_BEFORE.test(text) && NO_WORD_AFTER.test(text);
}

/** A global pattern for every whole-word occurrence of `name`. */
export function wholeWordPattern(name: string): RegExp {
  return new RegExp(`(?<!${WORD_CHARACTER})${escapeRegExp(name)}(?!${WORD_CHARACTER})`, 'gu');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

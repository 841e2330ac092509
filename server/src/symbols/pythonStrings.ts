/**
 * Python's strings, for the scan that tells code from comments and strings
 * (codeWords.ts): prefixes, triple quotes, and the replacement fields of an
 * f-string, whose expressions are code.
 */

import { endAfter, quotedEnd } from './closingMarks';
import { WORD } from './wholeWords';

const PYTHON_PREFIX = /^(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])$/;

/** The start of the letters before a quote; whether they are a prefix is pythonStringEnd's to say. */
export function pythonPrefixStart(text: string, at: number): number {
  let start = at;
  while (start > 0 && /[A-Za-z]/.test(text[start - 1])) start -= 1;
  return start;
}

export function pythonStringEnd(text: string, at: number, codeWithin: number[]): number | undefined {
  const quote = text[at];
  const prefixStart = pythonPrefixStart(text, at);
  const prefix = text.slice(prefixStart, at);
  if (prefix !== '' && (!PYTHON_PREFIX.test(prefix) || WORD.test(text[prefixStart - 1] ?? ''))) return undefined;
  const delimiter = text.startsWith(quote.repeat(3), at) ? quote.repeat(3) : quote;
  if (/[fF]/.test(prefix)) return fStringEnd(text, at + delimiter.length, delimiter, codeWithin);
  return delimiter.length === 3 ? endAfter(text, at + 3, delimiter, true) : quotedEnd(text, at, quote, true);
}

/**
 * The end of an f-string whose text starts at `from`, each replacement
 * field's expression pushed to `codeWithin` as code; its format
 * specification and conversion (`!r`) are not. Undefined for the forms the
 * scan leaves to the parser: a string in a field in the f-string's own
 * quotes or another f-string (Python 3.12 allows both), a backslash or a
 * comment in a field, a `\N{…}` or `\{`, a lone `}`.
 */
function fStringEnd(text: string, from: number, delimiter: string, codeWithin: number[]): number | undefined {
  for (let index = from; index < text.length; ) {
    const char = text[index];
    if (text.startsWith(delimiter, index)) return index + delimiter.length;
    if (char === '\\') {
      if (text[index + 1] === '{' || text[index + 1] === 'N') return undefined;
      index += 2;
    } else if ((char === '{' || char === '}') && text[index + 1] === char) {
      index += 2;
    } else if (char === '{') {
      const end = fieldEnd(text, index + 1, delimiter, codeWithin, 0);
      if (end === undefined) return undefined;
      index = end;
    } else if (char === '}' || (delimiter.length === 1 && (char === '\n' || char === '\r'))) {
      return undefined;
    } else {
      index += 1;
    }
  }
  return undefined;
}

/** Python nests format specifications two deep; a deeper one is left to the parser, so a hostile file cannot recurse the scan off its stack. */
const MOST_NESTED_FIELDS = 2;

/** After the `}` that closes a replacement field whose expression starts at `from`. */
function fieldEnd(text: string, from: number, delimiter: string, codeWithin: number[], nesting: number): number | undefined {
  if (nesting >= MOST_NESTED_FIELDS) return undefined;
  let brackets = 0;
  let codeFrom = from;
  const endCode = (at: number): void => {
    if (at > codeFrom) codeWithin.push(codeFrom, at);
  };
  for (let index = from; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\' || char === '#' || (delimiter.length === 1 && (char === '\n' || char === '\r'))) return undefined;
    if (char === '"' || char === "'") {
      if (delimiter.includes(char) || WORD.test(text[index - 1] ?? '') || text.startsWith(char.repeat(3), index)) return undefined;
      const end = quotedEnd(text, index, char, true);
      if (end === undefined) return undefined;
      endCode(index);
      codeFrom = end;
      index = end - 1;
    } else if (char === '(' || char === '[' || char === '{') {
      brackets += 1;
    } else if (char === ')' || char === ']') {
      brackets -= 1;
      if (brackets < 0) return undefined;
    } else if (char === '}' && brackets > 0) {
      brackets -= 1;
    } else if (brackets === 0 && (char === '}' || char === ':' || (char === '!' && text[index + 1] !== '='))) {
      endCode(index);
      if (char === '}') return index + 1;
      let specFrom = index + 1;
      if (char === '!') {
        const conversion = /[rsa]\s*[:}]/y;
        conversion.lastIndex = index + 1;
        if (!conversion.test(text)) return undefined;
        if (text[conversion.lastIndex - 1] === '}') return conversion.lastIndex;
        specFrom = conversion.lastIndex;
      }
      return formatSpecificationEnd(text, specFrom, delimiter, codeWithin, nesting);
    }
  }
  return undefined;
}

/** After the `}` that closes a field whose format specification starts at `from`; a field nested in it is code. */
function formatSpecificationEnd(text: string, from: number, delimiter: string, codeWithin: number[], nesting: number): number | undefined {
  for (let index = from; index < text.length; ) {
    const char = text[index];
    if (char === '}') return index + 1;
    // The parser reads a specification to the end of its line at most.
    if (char === '\\' || char === '\n' || char === '\r' || text.startsWith(delimiter, index)) return undefined;
    if (char === '{') {
      const end = fieldEnd(text, index + 1, delimiter, codeWithin, nesting + 1);
      if (end === undefined) return undefined;
      index = end;
    } else {
      index += 1;
    }
  }
  return undefined;
}


/**
 * What a `<` or a slash in JavaScript's code means, told by what stands
 * before it, past the comments between: after an operand, a comparison or
 * a division; where an expression starts, an element or a regular
 * expression. The part of the scan of comments and strings (codeWords.ts)
 * that tells them apart.
 */

import { WORD } from './wholeWords';

/** Words after which an expression starts: a slash there opens a regular expression rather than a division, a `<` an element. */
const BEFORE_EXPRESSION = new Set(['return', 'typeof', 'instanceof', 'in', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'default']);
/** Words an expression follows only where they are keywords: elsewhere they may name a variable (`let of = 2; of / 2`). */
const CONTEXTUAL_BEFORE_EXPRESSION = new Set(['of', 'yield', 'await']);
/** Keywords whose parenthesized condition a statement follows: a slash after `if (x)` opens a regular expression. */
const BEFORE_CONDITION = new Set(['if', 'while', 'for', 'with']);
/** How far back the `(` of a `)` is looked for before the scan gives up on what the `)` closes. */
const FARTHEST_PARENTHESIS = 200;

/**
 * What the scan has read, by which what comes before a `<` or a slash is
 * told: the comments, passed over (read as a mark, the last word of `// the
 * form` over `<Form …>` made the element a comparison), and the strings,
 * regular expressions and elements, each an operand.
 */
export interface Behind {
  /** The comments read in code, in order, as start and end pairs. */
  readonly comments: number[];
  /** Where each string, character, regular expression and element read in JavaScript's code starts, by where it ends. */
  readonly operands: Map<number, number>;
}

/**
 * Whether a `<` in code opens a JSX element, by what comes before it, as a
 * slash's meaning is told: after an operand it is a comparison or type
 * arguments. Undefined after a `}`, which ends a block or an object.
 */
export function markupStarts(text: string, at: number, behind: Behind): boolean | undefined {
  const before = lastMarkBefore(text, at, behind.comments);
  if (before < 0) return true;
  const char = text[before];
  if (char === '}') return undefined;
  if (behind.operands.has(before + 1)) return false;
  if (char === ')') return closesCondition(text, before, behind);
  // After `++` or `--` an operand has ended; after any other operator an expression starts.
  if ((char === '+' || char === '-') && text[before - 1] === char) return false;
  if ('([{,;=:?&|!>+-*%~^'.includes(char)) return true;
  return WORD.test(char) ? keywordEndsAt(text, before) : false;
}

/**
 * The last character before `at` that is neither a space nor in one of
 * `comments` (start and end pairs, in order); -1 when there is none.
 */
function lastMarkBefore(text: string, at: number, comments: readonly number[]): number {
  let before = at - 1;
  let pair = comments.length - 2;
  for (;;) {
    while (before >= 0 && /\s/.test(text[before])) before -= 1;
    while (pair >= 0 && comments[pair] > before) pair -= 2;
    if (pair < 0 || before >= comments[pair + 1]) return before;
    before = comments[pair] - 1;
    pair -= 2;
  }
}

/** Whether a slash in JavaScript opens a regular expression, by what comes before it; undefined when that does not tell. */
export function slashStartsExpression(text: string, at: number, behind: Behind): boolean | undefined {
  const before = lastMarkBefore(text, at, behind.comments);
  if (before < 0) return true;
  const char = text[before];
  // `}` ends a block or an object, `/` a comment or another expression, `++`/`--` an operand: each reads both ways.
  if (char === '}' || char === '/' || ((char === '+' || char === '-') && text[before - 1] === char)) return undefined;
  if (behind.operands.has(before + 1)) return false;
  if (char === ')') return closesCondition(text, before, behind);
  if (char === ']' || char === '"' || char === "'" || char === '`') return false;
  if (WORD.test(char)) return keywordEndsAt(text, before);
  return true;
}

/**
 * Whether the word ending at `last` is a keyword an expression follows; a
 * property named like one (`x.return`) is an operand. Undefined for a word
 * that is a keyword in some places and a name in others.
 */
function keywordEndsAt(text: string, last: number): boolean | undefined {
  const start = wordStart(text, last);
  if (text[start - 1] === '.') return false;
  const word = text.slice(start, last + 1);
  return CONTEXTUAL_BEFORE_EXPRESSION.has(word) ? undefined : BEFORE_EXPRESSION.has(word);
}

function wordStart(text: string, last: number): number {
  let start = last;
  while (start > 0 && WORD.test(text[start - 1])) start -= 1;
  return start;
}

/**
 * Whether the `)` at `close` ends the condition of `if`, `while`, `for` or
 * `with`, after which a statement starts, rather than an operand (a call, a
 * parenthesized expression). Its `(` is looked for back past the comments,
 * strings, regular expressions and elements read, whose parentheses do not
 * count. Undefined when it is far back, or a template literal stands
 * between.
 */
function closesCondition(text: string, close: number, behind: Behind): boolean | undefined {
  const { comments, operands } = behind;
  let depth = 0;
  let pair = comments.length - 2;
  for (let index = close; index >= 0 && close - index <= FARTHEST_PARENTHESIS; index -= 1) {
    while (pair >= 0 && comments[pair] > index) pair -= 2;
    const skipTo = pair >= 0 && index < comments[pair + 1] ? comments[pair] : operands.get(index + 1);
    if (skipTo !== undefined) {
      index = skipTo;
      continue;
    }
    const char = text[index];
    if (char === ')') depth += 1;
    else if (char === '(') {
      depth -= 1;
      if (depth > 0) continue;
      const before = lastMarkBefore(text, index, comments);
      if (before < 0 || !WORD.test(text[before])) return false;
      const start = wordStart(text, before);
      return text[start - 1] !== '.' && BEFORE_CONDITION.has(text.slice(start, before + 1));
    } else if (char === '`') return undefined;
  }
  return undefined;
}

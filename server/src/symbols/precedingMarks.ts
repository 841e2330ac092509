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
const BEFORE_CONDITION = new Set(['if', 'for', 'with']);
/**
 * Words before a `(` whose `)` may end a condition or an operand: `while`
 * (the parser reads `do … while (x) / 2` as a division) and `await` (`for
 * await (…)`, or `await (x) / 2`).
 */
const BEFORE_EITHER = new Set(['while', 'await']);
/** Operators after which an expression starts. `!`, `>` and `.` are told apart below. */
const OPERATORS = '([{,;=:?&|~^*%<+-';
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
 * Whether a `<` in code opens a JSX element: after an operand it is a
 * comparison or type arguments.
 */
export function markupStarts(text: string, at: number, behind: Behind): boolean | undefined {
  // After `++` or `--` an operand has ended: nothing an element makes can be incremented.
  return expressionStarts(text, at, behind, false);
}

/**
 * Whether a `<` may open the type parameters of a call or construct
 * signature (`{ <T>(x: T): T }`, `new <T>(…)`, `m?<T>(…)` in a type), which
 * a .tsx file's parser reads as such and the scan would read as an element:
 * it stands where a member of a type may start.
 */
export function maySignature(text: string, at: number, behind: Behind): boolean {
  const before = lastMarkBefore(text, at, behind.comments);
  if (before < 0) return false;
  const char = text[before];
  if (char === '{' || char === ';' || char === '?' || char === ',') return true;
  return WORD.test(char) && text.slice(wordStart(text, before), before + 1) === 'new';
}

/** Whether a slash in JavaScript opens a regular expression rather than a division. */
export function slashStartsExpression(text: string, at: number, behind: Behind): boolean | undefined {
  // After `++` or `--` either: `i++ / 2` divides, `++/x/.lastIndex` increments.
  return expressionStarts(text, at, behind, undefined);
}

/**
 * Whether an expression starts at `at` (true) or an operand has ended before
 * it (false), by the mark before it; undefined when that does not tell.
 */
function expressionStarts(text: string, at: number, behind: Behind, afterIncrement: boolean | undefined): boolean | undefined {
  const before = lastMarkBefore(text, at, behind.comments);
  if (before < 0) return true;
  const afterMark = startsAfter(text, before, behind, afterIncrement);
  // A line break after an operand may end its statement (`let x` over `/re/.test(s)`), and then an expression starts.
  if (afterMark === false && /[\n\r\u2028\u2029]/.test(text.slice(before + 1, at))) return undefined;
  return afterMark;
}

function startsAfter(text: string, before: number, behind: Behind, afterIncrement: boolean | undefined): boolean | undefined {
  if (behind.operands.has(before + 1)) return false;
  const char = text[before];
  // `}` ends a block or an object; a `/` not passed as a regular expression divides.
  if (char === '}' || char === '/') return undefined;
  if (char === ')') return closesCondition(text, before, behind);
  if (char === ']' || char === '"' || char === "'" || char === '`') return false;
  if ((char === '+' || char === '-') && text[before - 1] === char) return afterIncrement;
  // TypeScript's non-null `x!` ends an operand; elsewhere `!` negates what follows.
  if (char === '!') return /[\p{L}\p{N}_$)\]]/u.test(text[before - 1] ?? '') ? undefined : true;
  // `=>` starts a body; another `>` compares, or closes type arguments (`f<T> / 2`).
  if (char === '>') return text[before - 1] === '=' ? true : undefined;
  if (OPERATORS.includes(char)) return true;
  if (WORD.test(char)) return keywordEndsAt(text, before, behind.comments);
  // A dot (`1. / 2`), a private name's `#`, a mark of a name the rule above does not know.
  return undefined;
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

/**
 * Whether the word ending at `last` is a keyword an expression follows; a
 * property or private name named like one (`x.return`, `x. return`,
 * `this.#in`) is an operand. Undefined for a word that is a keyword in some
 * places and a name in others.
 */
function keywordEndsAt(text: string, last: number, comments: readonly number[]): boolean | undefined {
  const start = wordStart(text, last);
  if (isMember(text, start, comments)) return false;
  const word = text.slice(start, last + 1);
  return CONTEXTUAL_BEFORE_EXPRESSION.has(word) ? undefined : BEFORE_EXPRESSION.has(word);
}

/** Whether the word starting at `start` names a property or a private name. */
function isMember(text: string, start: number, comments: readonly number[]): boolean {
  if (text[start - 1] === '#') return true;
  const mark = lastMarkBefore(text, start, comments);
  return mark >= 0 && text[mark] === '.';
}

function wordStart(text: string, last: number): number {
  let start = last;
  while (start > 0 && WORD.test(text[start - 1])) start -= 1;
  return start;
}

/**
 * Whether the `)` at `close` ends the condition of `if`, `for` or `with`,
 * after which a statement starts, rather than an operand (a call, a
 * parenthesized expression). Its `(` is looked for back past the comments,
 * strings, regular expressions and elements read, whose parentheses do not
 * count. Undefined when it is far back, a template literal stands between,
 * or the word before it may be either (`while`, `await`).
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
      if (isMember(text, start, comments)) return false;
      const word = text.slice(start, before + 1);
      return BEFORE_EITHER.has(word) ? undefined : BEFORE_CONDITION.has(word);
    } else if (char === '`') return undefined;
  }
  return undefined;
}

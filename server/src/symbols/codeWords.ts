/**
 * Which whole-word matches of a file stand in its code, outside comments,
 * strings and the text of JSX markup, told by a scan of its quotes, comment
 * marks and tags rather than a parse.
 *
 * The reference search uses it to skip parsing a file the index counted
 * (indexer.ts runReferences): when the matches in code are exactly as many as
 * the identifiers the index's parse counted, they are those identifiers. The
 * scan answers only where it is sure: anything it does not model (a string
 * nested in an f-string's field in its own quotes, raw and verbatim strings,
 * JSX type arguments beyond words, an unterminated string, comment or
 * element, a slash or a `<` it cannot tell the meaning of) gives undefined,
 * and the file is parsed as before. It reads each character a bounded number of times, and nests
 * no deeper than a bound, so a hostile file costs no more than its length.
 */

import { endAfter, lineEnd, quotedEnd } from './closingMarks';
import { pythonPrefixStart, pythonStringEnd } from './pythonStrings';
import { type Behind, markupStarts, maySignature, slashStartsExpression } from './precedingMarks';
import { WORD } from './wholeWords';

/**
 * A family of languages that share their comment and string rules.
 * 'typescript' (`.ts`) and 'tsx' are JavaScript's rules with TypeScript's
 * types; a `.ts` file cannot hold JSX, a `.tsx` or JavaScript file may.
 */
export type Lexicon = 'javascript' | 'typescript' | 'tsx' | 'python' | 'go' | 'rust' | 'java' | 'c' | 'csharp';
/** The lexicons whose comments and strings are read alike: TypeScript's are JavaScript's. */
type Family = Exclude<Lexicon, 'typescript' | 'tsx'>;

/** Where a comment or string may start; everything between is code. */
const OPENERS: Readonly<Record<Family, RegExp>> = {
  javascript: /[/"'`]/g,
  python: /[#"']/g,
  go: /[/"'`]/g,
  rust: /[/"']/g,
  java: /[/"']/g,
  c: /[/"']/g,
  csharp: /[/"']/g,
};

const IDENTIFIER_START = /[\p{L}_]/u;
/** A JavaScript line comment ends at any of its line terminators. */
const JAVASCRIPT_LINE_END = /[\n\r\u2028\u2029]/g;

/** Inside a template literal's `${…}`, braces count too: the one that closes it resumes the template. */
const JAVASCRIPT_IN_TEMPLATE = /[/"'`{}]/g;
/** In a file that may hold JSX, every brace counts (an expression in markup ends at its `}`), and a `<` may open an element. */
const JAVASCRIPT_WITH_JSX = /[/"'`{}<]/g;

/** The character there is code after all (a division, a lifetime), not the start of a comment or string. A symbol, so no offset is ever taken for it. */
const CODE = Symbol('code');
/** The end of a comment or string starting at `at`; CODE; or undefined when unsure. */
type RegionEnd = number | typeof CODE | undefined;

/** JSX elements and their expressions nest this deep at most before the scan gives up, so a hostile file cannot recurse it off its stack. */
const MOST_NESTED_MARKUP = 200;

/**
 * The offsets among `offsets` (sorted starts of whole-word matches) that lie
 * in code, or undefined when the scan cannot tell for this file.
 */
export function offsetsInCode(text: string, offsets: readonly number[], lexicon: Lexicon): number[] | undefined {
  // Every JSX element ends in `</` or `/>`; a file with neither holds none. A .ts file cannot hold JSX at all.
  const markup = (lexicon === 'javascript' || lexicon === 'tsx') && (text.includes('</') || text.includes('/>'));
  const family: Family = lexicon === 'typescript' || lexicon === 'tsx' ? 'javascript' : lexicon;
  const scan = new CodeScan(text, offsets, family, markup, lexicon === 'tsx');
  let position = 0;
  // A hashbang line is a comment to the parser, and its slashes would read as regular expressions here.
  if (family === 'javascript' && text.startsWith('#!')) {
    position = commentLineEnd(text, 0, family);
    scan.behind.comments.push(0, position);
  }
  scan.settle(position, false);
  return scan.code(position, false, 0) === undefined ? undefined : scan.inCode;
}

class CodeScan {
  readonly inCode: number[] = [];
  private next = 0;
  /** The spans of code inside the last string read (an f-string's fields), as start and end pairs. */
  private readonly codeWithin: number[] = [];
  readonly behind: Behind = { comments: [], operands: new Map() };

  constructor(
    private readonly text: string,
    private readonly offsets: readonly number[],
    private readonly lexicon: Family,
    private readonly markup: boolean,
    /** TypeScript in a file that may hold JSX (`.tsx`): a tag may have type arguments, an arrow function type parameters. */
    private readonly typesInMarkup: boolean,
  ) {}

  /** Files the offsets before `end` as in code or not. */
  settle(end: number, code: boolean): void {
    while (this.next < this.offsets.length && this.offsets[this.next] < end) {
      if (code) this.inCode.push(this.offsets[this.next]);
      this.next += 1;
    }
  }

  private get settled(): boolean {
    return this.next >= this.offsets.length;
  }

  /**
   * Code from `from`: with `closesAtBrace`, to the `}` that closes an
   * expression in markup (the position after it); else until every offset
   * is settled, where nothing after can change the answer (the position
   * reached). Undefined when unsure.
   */
  code(from: number, closesAtBrace: boolean, depth: number): number | undefined {
    const { text, lexicon } = this;
    /** For each template expression open (`${`), the braces opened inside it since. */
    const templateBraces: number[] = [];
    /** Braces opened in this code since `from`, outside template expressions. */
    let braces = 0;
    let position = from;
    // An expression in markup is read to its `}` even past the last offset: an element that never closes is left to the parser.
    while (closesAtBrace || !this.settled) {
      const opener = this.markup ? JAVASCRIPT_WITH_JSX : templateBraces.length > 0 ? JAVASCRIPT_IN_TEMPLATE : OPENERS[lexicon];
      opener.lastIndex = position;
      const found = opener.exec(text);
      const at = found ? found.index : text.length;
      this.settle(found ? stringStart(text, at, lexicon) : at, true);
      // The text ended inside an expression: unclosed, whatever was read.
      if (!found) return closesAtBrace || templateBraces.length > 0 ? undefined : text.length;
      const char = text[at];
      position = at + 1;
      if (char === '{') {
        if (templateBraces.length > 0) templateBraces[templateBraces.length - 1] += 1;
        else braces += 1;
        continue;
      }
      if (char === '}') {
        if (templateBraces.length === 0) {
          if (braces > 0) braces -= 1;
          else if (closesAtBrace) return position;
          continue;
        }
        if (templateBraces[templateBraces.length - 1] > 0) {
          templateBraces[templateBraces.length - 1] -= 1;
          continue;
        }
        templateBraces.pop();
      }
      if (char === '`' || char === '}') {
        if (lexicon === 'go') {
          const end = endAfter(text, position, '`');
          if (end === undefined) return undefined;
          this.settle(end, false);
          position = end;
          continue;
        }
        const rest = templateRest(text, position);
        if (rest === undefined) return undefined;
        this.settle(rest.end, false);
        if (rest.opensExpression) templateBraces.push(0);
        position = rest.end;
        continue;
      }
      if (char === '<') {
        const opensElement = markupStarts(text, at, this.behind);
        if (opensElement === undefined) return undefined;
        if (!opensElement) continue;
        // A generic arrow function (`<T,>(…) =>`, `<T extends U>(…) =>`) in a .tsx file: its type parameters are code.
        // JavaScript's parser cannot read one, so a JavaScript file that seems to hold one is left to it.
        TYPE_PARAMETERS.lastIndex = at;
        if (TYPE_PARAMETERS.test(text)) {
          if (this.typesInMarkup) continue;
          return undefined;
        }
        SIGNATURE_PARAMETERS.lastIndex = at;
        if (this.typesInMarkup && SIGNATURE_PARAMETERS.test(text) && maySignature(text, at, this.behind)) return undefined;
        const end = this.element(at, depth + 1);
        if (end === undefined) return undefined;
        this.behind.operands.set(end, at);
        position = end;
        continue;
      }
      this.codeWithin.length = 0;
      const end = regionEnd(text, at, lexicon, this.codeWithin, this.behind);
      if (end === undefined) return undefined;
      if (end === CODE) continue;
      // Only JavaScript's `<` and slashes are told by what the scan read before them.
      if (lexicon === 'javascript') {
        if (char === '/' && (text[at + 1] === '/' || text[at + 1] === '*')) this.behind.comments.push(at, end);
        else this.behind.operands.set(end, at);
      }
      for (let span = 0; span < this.codeWithin.length; span += 2) {
        this.settle(this.codeWithin[span], false);
        this.settle(this.codeWithin[span + 1], true);
      }
      this.settle(end, false);
      position = end;
    }
    return position;
  }

  /**
   * A JSX element or fragment whose `<` is at `at`, to the position after
   * its end. Its tag's and attributes' names are code, as the parser reads
   * them (a hyphenated name is one name, no word of it an identifier); its
   * attributes' strings and its text are not; its expressions are code.
   * Undefined for what the scan does not model: type arguments beyond
   * words (or in a JavaScript file, or after a hyphenated name), an
   * element as an attribute's value, a `>` or `}` in text, a closing tag
   * that names another element.
   */
  private element(at: number, depth: number): number | undefined {
    const { text } = this;
    if (depth > MOST_NESTED_MARKUP) return undefined;
    let index = skipSpaces(text, at + 1);
    let name = '';
    if (text[index] === '>') {
      index += 1;
    } else {
      const tag = this.markupName(index, true);
      if (tag === undefined) return undefined;
      name = text.slice(index, tag);
      index = skipSpaces(text, tag);
      if (text[index] === '<') {
        // Type arguments (`<List<Item> …>`, in a .tsx file): their words are code. The parser reads none
        // after a hyphenated or namespaced name, nor in a JavaScript file.
        if (!this.typesInMarkup || /[-:]/.test(name)) return undefined;
        const end = typeArgumentsEnd(text, index);
        if (end === undefined) return undefined;
        this.settle(end, true);
        index = end;
      }
      for (;;) {
        index = skipSpaces(text, index);
        const char = text[index];
        if (char === '/' && (text[index + 1] === '/' || text[index + 1] === '*')) {
          // A comment between attributes (`// @ts-expect-error` over one, in tests).
          const end = text[index + 1] === '/' ? commentLineEnd(text, index, 'javascript') : endAfter(text, index + 2, '*/');
          if (end === undefined) return undefined;
          this.settle(end, false);
          index = end;
          continue;
        }
        if (char === '/') return text[index + 1] === '>' ? index + 2 : undefined;
        if (char === '>') {
          index += 1;
          break;
        }
        if (char === '{') {
          const end = this.code(index + 1, true, depth + 1);
          if (end === undefined) return undefined;
          index = end;
          continue;
        }
        const attribute = this.markupName(index, false);
        if (attribute === undefined) return undefined;
        index = skipSpaces(text, attribute);
        if (text[index] !== '=') continue;
        index = skipSpaces(text, index + 1);
        const quote = text[index];
        if (quote === '"' || quote === "'") {
          // JSX strings have no escapes; a backslash reads differently across tools, so it is left to the parser.
          const close = text.indexOf(quote, index + 1);
          if (close === -1 || text.slice(index, close).includes('\\')) return undefined;
          this.settle(close + 1, false);
          index = close + 1;
        } else if (quote === '{') {
          const end = this.code(index + 1, true, depth + 1);
          if (end === undefined) return undefined;
          index = end;
        } else {
          return undefined;
        }
      }
    }
    const child = /[<>{}]/g;
    for (;;) {
      child.lastIndex = index;
      const found = child.exec(text);
      if (!found) return undefined;
      this.settle(found.index, false);
      const char = text[found.index];
      if (char === '{') {
        const end = this.code(found.index + 1, true, depth + 1);
        if (end === undefined) return undefined;
        index = end;
      } else if (char === '<' && text[found.index + 1] === '/') {
        return this.closingTag(found.index + 2, name);
      } else if (char === '<') {
        const end = this.element(found.index, depth + 1);
        if (end === undefined) return undefined;
        index = end;
      } else {
        return undefined;
      }
    }
  }

  /** After the `>` of a closing tag whose name starts at or after `from`, if it names the element it closes. */
  private closingTag(from: number, name: string): number | undefined {
    const start = skipSpaces(this.text, from);
    let end = start;
    if (name !== '') {
      const tag = this.markupName(start, true);
      if (tag === undefined || this.text.slice(start, tag) !== name) return undefined;
      end = tag;
    }
    end = skipSpaces(this.text, end);
    return this.text[end] === '>' ? end + 1 : undefined;
  }

  /**
   * The end of a tag's name (`a`, `a.b.c`, `a:b`, `my-element`) or an
   * attribute's (`a`, `a:b`, `aria-label`) starting at `from`, its words
   * settled; undefined when none starts there.
   */
  private markupName(from: number, tag: boolean): number | undefined {
    const name = tag ? TAG_NAME : ATTRIBUTE_NAME;
    name.lastIndex = from;
    const found = name.exec(this.text);
    if (!found) return undefined;
    // Each part of `a:b` or `a.b` is a name of its own to the parser.
    let partEnd = from;
    for (const part of found[0].split(/(?=[.:])/)) {
      partEnd += part.length;
      this.settle(partEnd, !part.includes('-'));
    }
    return partEnd;
  }
}

/**
 * `<T,`, `<T = U` or `<T extends U`, `const` before any, as TypeScript tells
 * a .tsx generic arrow from an element; it reads `extends` before `=`, `>`
 * or `/` as an attribute of an element.
 */
const TYPE_PARAMETERS = /<\s*(?:const\s+)?[\p{L}_$][\p{L}\p{N}_$]*(?![\p{L}\p{N}_$-])(?:\s*,|\s*=(?![=>])|\s+extends(?=\s)(?!\s*[=>/]))/uy;
/** `<T>(`: an element whose text starts with a parenthesis, or a signature's type parameters (precedingMarks.ts `maySignature`). */
const SIGNATURE_PARAMETERS = /<\s*[\p{L}_$][\p{L}\p{N}_$]*\s*>\s*\(/uy;
const MARKUP_WORD = String.raw`[\p{L}_$][\p{L}\p{N}_$-]*`;
const TAG_NAME = new RegExp(String.raw`${MARKUP_WORD}(?:(?:\.${MARKUP_WORD})+|:${MARKUP_WORD})?`, 'uy');
const ATTRIBUTE_NAME = new RegExp(String.raw`${MARKUP_WORD}(?::${MARKUP_WORD})?`, 'uy');

function skipSpaces(text: string, from: number): number {
  let index = from;
  while (index < text.length && /\s/.test(text[index])) index += 1;
  return index;
}

/**
 * After the `>` that closes type arguments whose `<` is at `at`: words,
 * commas, dots, brackets, unions, intersections and nested arguments.
 * Undefined for anything else (an object type, a string, an arrow), which
 * is left to the parser.
 */
function typeArgumentsEnd(text: string, at: number): number | undefined {
  let depth = 0;
  for (let index = at; index < text.length; index += 1) {
    const char = text[index];
    if (char === '<') depth += 1;
    else if (char === '>') {
      depth -= 1;
      if (depth === 0) return index + 1;
    } else if (!WORD.test(char) && !/[\s,.[\]|&]/.test(char)) return undefined;
  }
  return undefined;
}

/** The end of a line comment starting at `at`: JavaScript ends one at any of its line terminators. */
function commentLineEnd(text: string, at: number, lexicon: Family): number {
  if (lexicon !== 'javascript') return lineEnd(text, at);
  JAVASCRIPT_LINE_END.lastIndex = at;
  const found = JAVASCRIPT_LINE_END.exec(text);
  return found ? found.index : text.length;
}

/**
 * The rest of a template literal from `from`: where it closes, or where an
 * expression opens (after its `${`); undefined when the text ends first.
 */
function templateRest(text: string, from: number): { end: number; opensExpression: boolean } | undefined {
  for (let index = from; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\\') index += 1;
    else if (char === '`') return { end: index + 1, opensExpression: false };
    else if (char === '$' && text[index + 1] === '{') return { end: index + 2, opensExpression: true };
  }
  return undefined;
}

function regionEnd(text: string, at: number, lexicon: Family, codeWithin: number[], behind: Behind): RegionEnd {
  const char = text[at];
  if (char === '#') return lineEnd(text, at);
  if (char === '/') return slashEnd(text, at, lexicon, behind);
  if (lexicon === 'python') return pythonStringEnd(text, at, codeWithin);
  if (char === "'" && lexicon !== 'javascript') return characterEnd(text, at, lexicon);
  return quotedStringEnd(text, at, lexicon);
}

function slashEnd(text: string, at: number, lexicon: Family, behind: Behind): RegionEnd {
  const after = text[at + 1];
  if (after === '/') {
    const end = commentLineEnd(text, at, lexicon);
    // A C line comment ending in a backslash goes on to the next line.
    if (lexicon === 'c' && /\\\r?$/.test(text.slice(at, end))) return undefined;
    return end;
  }
  if (after === '*') return lexicon === 'rust' ? nestedCommentEnd(text, at) : endAfter(text, at + 2, '*/');
  if (lexicon !== 'javascript') return CODE;
  const startsExpression = slashStartsExpression(text, at, behind);
  if (startsExpression === undefined) return undefined;
  return startsExpression ? regularExpressionEnd(text, at) : CODE;
}

function regularExpressionEnd(text: string, at: number): number | undefined {
  let inClass = false;
  for (let index = at + 1; index < text.length; index += 1) {
    const char = text[index];
    if (char === '\n' || char === '\r') return undefined;
    if (char === '\\') index += 1;
    else if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    else if (char === '/' && !inClass) return flagsEnd(text, index + 1);
  }
  return undefined;
}

/** A regular expression's flags (`/x/g`) are part of it, not identifiers named like them. */
function flagsEnd(text: string, from: number): number {
  let end = from;
  while (end < text.length && /[a-z]/.test(text[end])) end += 1;
  return end;
}

function quotedStringEnd(text: string, at: number, lexicon: Lexicon): number | undefined {
  const quote = text[at];
  const before = text[at - 1] ?? '';
  const tripled = quote === '"' && text.startsWith('"""', at);
  if (lexicon === 'csharp' && (before === '@' || before === '$' || tripled)) return undefined; // verbatim, interpolated, raw
  if (lexicon === 'java' && tripled) return undefined; // a text block
  if (plainPrefix(text, at, lexicon) === undefined) return undefined;
  if (lexicon === 'rust' && before === '#') return undefined;
  // Rust's strings may span lines; the others' may not.
  return quotedEnd(text, at, quote, lexicon !== 'rust');
}

/** A character literal; in Rust a quote may also start a lifetime or a label, which is code. */
function characterEnd(text: string, at: number, lexicon: Lexicon): RegionEnd {
  if (lexicon === 'rust') {
    if (text[at + 1] === '\\') return closingWithin(text, at + 3, "'", 12);
    const width = (text.codePointAt(at + 1) ?? 0) > 0xffff ? 2 : 1;
    if (text[at + 1 + width] === "'" && text[at + 1] !== '\n') return at + 2 + width;
    return IDENTIFIER_START.test(text[at + 1] ?? '') ? CODE : undefined;
  }
  // C++'s digit separators (`1'000`) are no literals; an encoding prefix (`L'x'`) is the literal's own.
  if (lexicon === 'c' && plainPrefix(text, at, lexicon) === undefined) return undefined;
  return quotedEnd(text, at, "'", true);
}

/** C and C++'s encoding prefixes: the literal after one is plain. A raw string's (`R"(…)"`, `LR"(…)"`) is not. */
const C_ENCODING_PREFIXES = new Set(['L', 'u', 'U', 'u8']);

/**
 * The letters right before the quote at `at` that belong to its string or
 * character as a plain prefix (C's `L"…"`, `u8'x'`; Rust's `b"…"`), '' when
 * there are none; undefined when a word there makes the literal one the scan
 * does not read (a raw string, a C++ digit separator's number, a name). The
 * other languages have no letter prefixes: a word before a quote stands on
 * its own (`from"react"`, as minified JavaScript writes it).
 */
function plainPrefix(text: string, at: number, lexicon: Lexicon): string | undefined {
  if (lexicon !== 'c' && lexicon !== 'rust') return '';
  let start = at;
  while (start > 0 && WORD.test(text[start - 1])) start -= 1;
  const word = text.slice(start, at);
  if (word === '') return '';
  if (lexicon === 'c') return C_ENCODING_PREFIXES.has(word) ? word : undefined;
  return word === 'b' ? word : undefined;
}

/**
 * Where the string or comment whose mark is at `at` starts. A prefix belongs
 * to its string (Python's `f`, `rb`; C's `L`; Rust's `b`): counted as code,
 * the `f` of every f-string would outnumber the identifiers `f` of a file,
 * and the file be parsed for nothing.
 */
function stringStart(text: string, at: number, lexicon: Lexicon): number {
  const char = text[at];
  if (lexicon === 'python' && (char === '"' || char === "'")) return pythonPrefixStart(text, at);
  if ((lexicon === 'c' || lexicon === 'rust') && (char === '"' || char === "'")) return at - (plainPrefix(text, at, lexicon) ?? '').length;
  return at;
}

function closingWithin(text: string, from: number, quote: string, limit: number): number | undefined {
  const end = text.indexOf(quote, from);
  return end === -1 || end - from > limit || text.slice(from, end).includes('\n') ? undefined : end + 1;
}

/** Rust's block comments nest. */
function nestedCommentEnd(text: string, at: number): number | undefined {
  let depth = 0;
  for (let index = at; index < text.length - 1; index += 1) {
    if (text[index] === '/' && text[index + 1] === '*') {
      depth += 1;
      index += 1;
    } else if (text[index] === '*' && text[index + 1] === '/') {
      depth -= 1;
      index += 1;
      if (depth === 0) return index + 1;
    }
  }
  return undefined;
}

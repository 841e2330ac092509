import { literalOf } from './grepCore';

/**
 * Turns the model's JavaScript regular expression into a ripgrep pattern that
 * matches at least every line the JavaScript one matches. ripgrep only picks
 * the candidate files; the JavaScript expression then decides every line
 * (grepCore), so the translation may be looser than the original but never
 * stricter. Whatever is not understood here returns undefined and the search
 * runs on the pure-Node path instead.
 *
 * Where the dialects differ, the translation widens:
 *  - assertions (^ $ \b \B, lookaround) are dropped: removing a condition only matches more;
 *  - backreferences become "anything";
 *  - \d \w \s become the explicit ASCII (and JavaScript whitespace) classes JavaScript means;
 *  - negated classes, `.`, \D \W \S and \p{…} become "any one character", where a
 *    character may also be one to three bytes of invalid UTF-8 (JavaScript decodes
 *    those as U+FFFD, which ripgrep's Unicode classes would not match).
 */

export interface RipgrepPattern {
  pattern: string;
  /** Search for `pattern` as a fixed string (`-F`). */
  fixed: boolean;
}

/** Any one JavaScript character of a line: a code point or an invalid UTF-8 sequence. */
const ANY = '(?:.|(?-u:[\\x80-\\xFF]{1,3}))';
const INVALID_UTF8 = '(?-u:[\\x80-\\xFF]{1,3})';
const DIGIT_RANGES: Array<[number, number]> = [[0x30, 0x39]];
const WORD_RANGES: Array<[number, number]> = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
/** JavaScript's \s: WhiteSpace and LineTerminator code points. */
const SPACE_RANGES: Array<[number, number]> = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
];
const REPLACEMENT_CHARACTER = 0xfffd;

class Unsupported extends Error {}

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

function literalChar(codePoint: number): string {
  if (codePoint === REPLACEMENT_CHARACTER) return `(?:${hex(codePoint)}|${INVALID_UTF8})`;
  const char = String.fromCodePoint(codePoint);
  return /[A-Za-z0-9_]/.test(char) ? char : hex(codePoint);
}

function classOf(ranges: Array<[number, number]>): string {
  if (ranges.length === 0) throw new Unsupported('empty class');
  const body = ranges.map(([low, high]) => (low === high ? hex(low) : `${hex(low)}-${hex(high)}`)).join('');
  const covered = ranges.some(([low, high]) => low <= REPLACEMENT_CHARACTER && REPLACEMENT_CHARACTER <= high);
  return covered ? `(?:[${body}]|${INVALID_UTF8})` : `[${body}]`;
}

type ClassItem = { kind: 'ranges'; ranges: Array<[number, number]> } | { kind: 'wide' };

class Translator {
  private at = 0;
  private readonly out: string[] = [];

  constructor(
    private readonly source: string,
    private readonly unicode: boolean,
  ) {}

  translate(): string {
    this.sequence(false);
    if (this.at < this.source.length) throw new Unsupported('unbalanced');
    return this.out.join('');
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.at + offset];
  }

  /** The code point at the cursor (a whole surrogate pair in Unicode mode). */
  private takeCodePoint(): number {
    const codePoint = this.source.codePointAt(this.at) as number;
    if (codePoint >= 0xd800 && codePoint <= 0xdfff) throw new Unsupported('lone surrogate');
    if (codePoint > 0xffff && !this.unicode) throw new Unsupported('astral character without u');
    this.at += codePoint > 0xffff ? 2 : 1;
    return codePoint;
  }

  /** Alternatives and terms until `)` (inside a group) or the end. */
  private sequence(inGroup: boolean): void {
    while (this.at < this.source.length) {
      const char = this.peek() as string;
      if (char === ')') {
        if (!inGroup) throw new Unsupported('unbalanced )');
        return;
      }
      if (char === '|') {
        this.out.push('|');
        this.at += 1;
        continue;
      }
      this.term();
    }
    if (inGroup) throw new Unsupported('unclosed group');
  }

  /** One atom and its quantifier. */
  private term(): void {
    const char = this.peek() as string;
    let quantifiable = true;
    if (char === '^' || char === '$') {
      this.at += 1;
      this.out.push('(?:)');
      quantifiable = false;
    } else if (char === '(') {
      quantifiable = this.group();
    } else if (char === '[') {
      this.out.push(this.characterClass());
    } else if (char === '.') {
      this.at += 1;
      this.out.push(ANY);
    } else if (char === '\\') {
      quantifiable = this.escape();
    } else if (char === '*' || char === '+' || char === '?') {
      throw new Unsupported('nothing to repeat');
    } else if (char === '{' && this.quantifierLength() > 0) {
      throw new Unsupported('nothing to repeat');
    } else {
      // Includes `{`, `}` and `]` that are literal outside Unicode mode.
      this.out.push(literalChar(this.takeCodePoint()));
    }
    const quantifier = this.quantifier();
    if (quantifier !== '') {
      if (!quantifiable) throw new Unsupported('quantified assertion');
      this.out.push(quantifier);
    }
  }

  /** Length of a `{n}`, `{n,}` or `{n,m}` quantifier at the cursor, 0 when there is none. */
  private quantifierLength(): number {
    const match = /^\{\d+(,\d*)?\}/.exec(this.source.slice(this.at, this.at + 32));
    return match ? match[0].length : 0;
  }

  private quantifier(): string {
    const char = this.peek();
    let text = '';
    if (char === '*' || char === '+' || char === '?') {
      text = char;
      this.at += 1;
    } else if (char === '{') {
      const length = this.quantifierLength();
      if (length === 0) return '';
      text = this.source.slice(this.at, this.at + length);
      this.at += length;
    } else {
      return '';
    }
    if (this.peek() === '?') {
      text += '?';
      this.at += 1;
    }
    const next = this.peek();
    if (next === '*' || next === '+' || next === '?' || (next === '{' && this.quantifierLength() > 0)) {
      throw new Unsupported('double quantifier');
    }
    return text;
  }

  /** Returns whether the group may take a quantifier. */
  private group(): boolean {
    const rest = this.source.slice(this.at, this.at + 4);
    if (rest.startsWith('(?=') || rest.startsWith('(?!') || rest.startsWith('(?<=') || rest.startsWith('(?<!')) {
      // A lookaround only narrows: translate its body (to check it) and drop it.
      this.at += rest.startsWith('(?<') ? 4 : 3;
      const mark = this.out.length;
      this.sequence(true);
      this.at += 1; // ')'
      this.out.length = mark;
      this.out.push('(?:)');
      return false;
    }
    if (rest.startsWith('(?:')) {
      this.at += 3;
    } else if (rest.startsWith('(?<')) {
      const close = this.source.indexOf('>', this.at);
      if (close === -1 || !/^[A-Za-z_$][\w$]*$/.test(this.source.slice(this.at + 3, close))) throw new Unsupported('group name');
      this.at = close + 1;
    } else if (rest.startsWith('(?')) {
      throw new Unsupported('group modifier');
    } else {
      this.at += 1;
    }
    this.out.push('(?:');
    this.sequence(true);
    this.at += 1; // ')'
    this.out.push(')');
    return true;
  }

  /** An escape outside a class. Returns whether it may take a quantifier. */
  private escape(): boolean {
    const next = this.peek(1);
    if (next === undefined) throw new Unsupported('trailing backslash');
    if (next === 'b' || next === 'B') {
      this.at += 2;
      this.out.push('(?:)');
      return false;
    }
    if (/[1-9]/.test(next)) {
      // A backreference (or an octal escape without `u`): "anything" covers both.
      this.at += 2;
      while (/[0-9]/.test(this.peek() ?? '')) this.at += 1;
      this.out.push(`${ANY}*`);
      return true;
    }
    if (next === 'k') {
      if (!this.unicode) throw new Unsupported('\\k without u');
      const close = this.source.indexOf('>', this.at);
      if (this.peek(2) !== '<' || close === -1) throw new Unsupported('\\k');
      this.at = close + 1;
      this.out.push(`${ANY}*`);
      return true;
    }
    const item = this.classEscape();
    this.out.push(item.kind === 'wide' ? ANY : item.ranges.length === 1 && item.ranges[0][0] === item.ranges[0][1] ? literalChar(item.ranges[0][0]) : classOf(item.ranges));
    return true;
  }

  /** An escape that stands for characters (inside or outside a class). Cursor on the backslash. */
  private classEscape(inClass = false): ClassItem {
    const next = this.peek(1) as string;
    const single = (codePoint: number, length: number): ClassItem => {
      this.at += length;
      return { kind: 'ranges', ranges: [[codePoint, codePoint]] };
    };
    switch (next) {
      case 'd':
        this.at += 2;
        return { kind: 'ranges', ranges: DIGIT_RANGES };
      case 'w':
        this.at += 2;
        return { kind: 'ranges', ranges: WORD_RANGES };
      case 's':
        this.at += 2;
        return { kind: 'ranges', ranges: SPACE_RANGES };
      case 'D':
      case 'W':
      case 'S':
        this.at += 2;
        return { kind: 'wide' };
      case 'p':
      case 'P': {
        if (!this.unicode) throw new Unsupported('\\p without u');
        const close = this.source.indexOf('}', this.at);
        if (this.peek(2) !== '{' || close === -1) throw new Unsupported('\\p');
        this.at = close + 1;
        return { kind: 'wide' };
      }
      case 't':
        return single(0x09, 2);
      case 'n':
        return single(0x0a, 2);
      case 'v':
        return single(0x0b, 2);
      case 'f':
        return single(0x0c, 2);
      case 'r':
        return single(0x0d, 2);
      case 'b':
        if (inClass) return single(0x08, 2); // backspace inside a class
        throw new Unsupported('\\b');
      case '0':
        if (/[0-9]/.test(this.peek(2) ?? '')) throw new Unsupported('octal');
        return single(0, 2);
      case 'c': {
        const letter = this.peek(2) ?? '';
        if (!/[A-Za-z]/.test(letter)) throw new Unsupported('\\c');
        return single(letter.charCodeAt(0) % 32, 3);
      }
      case 'x': {
        const digits = this.source.slice(this.at + 2, this.at + 4);
        if (!/^[0-9A-Fa-f]{2}$/.test(digits)) throw new Unsupported('\\x');
        return single(parseInt(digits, 16), 4);
      }
      case 'u':
        return this.unicodeEscape();
      default: {
        if (/[A-Za-z0-9]/.test(next)) {
          // Only valid without `u`, where it is the letter itself; rare enough to leave to Node.
          throw new Unsupported(`\\${next}`);
        }
        this.at += 1;
        const codePoint = this.takeCodePoint();
        return { kind: 'ranges', ranges: [[codePoint, codePoint]] };
      }
    }
  }

  private unicodeEscape(): ClassItem {
    const braced = /^\\u\{([0-9A-Fa-f]{1,6})\}/.exec(this.source.slice(this.at, this.at + 11));
    if (braced) {
      if (!this.unicode) throw new Unsupported('\\u{} without u');
      const codePoint = parseInt(braced[1], 16);
      if (codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) throw new Unsupported('\\u{}');
      this.at += braced[0].length;
      return { kind: 'ranges', ranges: [[codePoint, codePoint]] };
    }
    const four = /^\\u([0-9A-Fa-f]{4})/.exec(this.source.slice(this.at, this.at + 6));
    if (!four) throw new Unsupported('\\u');
    let codePoint = parseInt(four[1], 16);
    let length = 6;
    if (codePoint >= 0xd800 && codePoint <= 0xdbff && this.unicode) {
      const low = /^\\u(D[C-F][0-9A-Fa-f]{2})/i.exec(this.source.slice(this.at + 6, this.at + 12));
      if (!low) throw new Unsupported('lone surrogate');
      codePoint = 0x10000 + ((codePoint - 0xd800) << 10) + (parseInt(low[1], 16) - 0xdc00);
      length = 12;
    } else if (codePoint >= 0xd800 && codePoint <= 0xdfff) {
      throw new Unsupported('surrogate');
    }
    this.at += length;
    return { kind: 'ranges', ranges: [[codePoint, codePoint]] };
  }

  /** `[...]`: exact when it lists characters, "any character" when negated or holding a complement. */
  private characterClass(): string {
    this.at += 1;
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.at += 1;
    }
    const ranges: Array<[number, number]> = [];
    let wide = false;
    let closed = false;
    while (this.at < this.source.length) {
      const char = this.peek() as string;
      if (char === ']') {
        this.at += 1;
        closed = true;
        break;
      }
      const low = this.classAtom();
      if (low.kind === 'wide') {
        wide = true;
        continue;
      }
      // A range `a-z`: both ends single characters; `-` next to a class escape is literal.
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined && low.ranges.length === 1 && low.ranges[0][0] === low.ranges[0][1]) {
        const mark = this.at;
        this.at += 1;
        const high = this.classAtom();
        if (high.kind === 'ranges' && high.ranges.length === 1 && high.ranges[0][0] === high.ranges[0][1]) {
          const from = low.ranges[0][0];
          const to = high.ranges[0][0];
          if (to < from) throw new Unsupported('range out of order');
          ranges.push([from, to]);
          continue;
        }
        if (this.unicode) throw new Unsupported('class escape in range');
        this.at = mark; // `[a-\d]` without u: `a`, `-` and \d
      }
      if (low.kind === 'ranges') ranges.push(...low.ranges);
    }
    if (!closed) throw new Unsupported('unclosed class');
    if (negated || wide) {
      // `[^]` and negated classes can match U+FFFD from invalid bytes; `ANY` covers them.
      return ANY;
    }
    if (ranges.length === 0) throw new Unsupported('empty class'); // `[]` never matches
    return classOf(ranges);
  }

  private classAtom(): ClassItem {
    if (this.peek() === '\\') {
      if (this.peek(1) === '-') {
        this.at += 2;
        return { kind: 'ranges', ranges: [[0x2d, 0x2d]] };
      }
      return this.classEscape(true);
    }
    const codePoint = this.takeCodePoint();
    return { kind: 'ranges', ranges: [[codePoint, codePoint]] };
  }
}

/**
 * The ripgrep form of `source` (compiled by JavaScript with `u` when
 * `unicode`), or undefined when only the Node path can search it.
 */
export function toRipgrepPattern(source: string, unicode: boolean): RipgrepPattern | undefined {
  const literal = literalOf(source);
  // A literal holding U+FFFD can stand for invalid bytes in the file; the regex form handles that.
  if (literal !== undefined && !literal.includes('\uFFFD') && !literal.includes('\n')) return { pattern: literal, fixed: true };
  try {
    const pattern = new Translator(source, unicode).translate();
    return { pattern, fixed: false };
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/**
 * Text fit for a terminal.
 *
 * Almost everything this client prints comes from somewhere it does not
 * control: the model's reply, tool names and arguments, file names in tool
 * results, refusal reasons, task cards, discussion titles, error messages
 * quoting an endpoint. A terminal obeys control characters in any of it:
 * OSC 52 rewrites the clipboard (or tmux's paste buffer), OSC 8 plants links,
 * OSC 0/2 retitle the window, CSI clears the screen or moves the cursor over
 * what was shown, DCS/APC/PM/SOS strings reach the terminal's own parsers,
 * and the 8-bit C1 forms (U+009B CSI, U+009D OSC…) do the same without an
 * ESC. A lone CR or a backspace overwrites what was printed, and the Unicode
 * bidi overrides and isolates make text read differently from what it is.
 *
 * `inert` turns each such character into a visible stand-in, one character at
 * a time (so a sequence split across streamed deltas is caught as well as a
 * whole one), and `TerminalText` is the only way to put an escape sequence of
 * the client's own (an SGR colour) next to it: a plain string handed to the
 * writer is always made inert first.
 */

/** C0 controls except \t and \n, CR (kept only as part of CRLF), DEL, C1, bidi embeddings, overrides and isolates. */
const UNSAFE = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function standIn(char: string): string {
  if (char === '\r\n') return '\n';
  const code = char.charCodeAt(0);
  // U+2400…U+241F are the Unicode pictures of C0 controls (␛ for ESC, ␍ for CR), U+2421 is ␡ for DEL.
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `untrusted` with every control character a terminal would act on replaced by a visible stand-in; \n and \t are kept. */
export function inert(untrusted: string): string {
  return untrusted.replace(UNSAFE, standIn);
}

/** What the writer accepts: a plain string (made inert on the way out), a number, or text already fit for the terminal. */
export type Printable = string | number | TerminalText;

/**
 * Text that may go to the terminal as it is: built only from inert text and
 * the client's own SGR colour codes. The constructor is private, so the only
 * ways to make one are below.
 */
export class TerminalText {
  private constructor(readonly value: string) {}

  static from(part: Printable): TerminalText {
    return part instanceof TerminalText ? part : new TerminalText(inert(String(part)));
  }

  /** `text` between SGR codes: numbers only, so nothing but a colour or weight change can be emitted. */
  static sgr(open: number, close: number, text: Printable): TerminalText {
    if (!Number.isInteger(open) || !Number.isInteger(close) || open < 0 || close < 0) throw new RangeError('SGR parameters are non-negative integers');
    return new TerminalText(`\x1b[${open}m${TerminalText.from(text).value}\x1b[${close}m`);
  }

  /**
   * What the Markdown renderer made of inert text (markdown.ts feeds it
   * nothing else): its SGR colour codes are kept, and anything else it might
   * emit (an OSC 8 link of its own, a decoded character reference) is made
   * inert, so no renderer feature can reopen the hole.
   */
  static fromRenderer(rendered: string): TerminalText {
    return new TerminalText(rendered.split(/(\x1b\[[0-9;]*m)/).map((part, i) => (i % 2 === 1 ? part : inert(part))).join(''));
  }

  /**
   * The client's own cursor control, numbers only: back to column 1 and up
   * `up` rows, then erase to the end of the screen (a streamed block redrawn
   * once it is complete), or bracketed paste mode on or off.
   */
  static control(what: { eraseUp: number } | 'bracketedPasteOn' | 'bracketedPasteOff'): TerminalText {
    if (what === 'bracketedPasteOn') return new TerminalText('\x1b[?2004h');
    if (what === 'bracketedPasteOff') return new TerminalText('\x1b[?2004l');
    if (!Number.isInteger(what.eraseUp) || what.eraseUp < 0) throw new RangeError('a row count is a non-negative integer');
    return new TerminalText(`\x1b[1G${what.eraseUp ? `\x1b[${what.eraseUp}A` : ''}\x1b[J`);
  }

  static concat(parts: readonly Printable[]): TerminalText {
    return new TerminalText(parts.map((part) => TerminalText.from(part).value).join(''));
  }

  get length(): number {
    return this.value.length;
  }

  endsWith(suffix: string): boolean {
    return this.value.endsWith(suffix);
  }

  toString(): string {
    return this.value;
  }
}

/**
 * A template tag that builds `TerminalText`: interpolated strings are made
 * inert, interpolated `TerminalText` (styled parts) is kept as it is. Without
 * the tag, a template literal turns styled parts back into a plain string,
 * whose colour codes the writer would then show as ␛[…m instead of obeying.
 */
export function term(literals: TemplateStringsArray, ...parts: Printable[]): TerminalText {
  const all: Printable[] = [];
  literals.forEach((literal, i) => {
    all.push(literal);
    if (i < parts.length) all.push(parts[i]);
  });
  return TerminalText.concat(all);
}

/** JSON escapes of characters `JSON.stringify` leaves raw: DEL, C1 and bidi controls (and C0 in JSON text not made by it). */
const UNSAFE_IN_JSON = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text made safe for a terminal without changing what it means: JSON
 * only allows these characters inside strings, where `\uXXXX` stands for the
 * same character. JSON.stringify already escapes C0 controls, but it writes
 * U+007F–U+009F (8-bit CSI, OSC…) and bidi overrides raw.
 */
export function inertJsonText(json: string): TerminalText {
  // What is left (\n and \t between tokens) is what `inert` keeps, so this changes nothing further.
  return TerminalText.from(json.replace(UNSAFE_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** `value` as JSON (optionally indented), safe for a terminal. */
export function inertJson(value: unknown, space?: number): TerminalText {
  return inertJsonText(JSON.stringify(value, null, space));
}

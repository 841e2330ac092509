import { EventEmitter } from 'node:events';
import { StringDecoder } from 'node:string_decoder';

/**
 * How a line break inside a message shows in readline's one-line editor (and
 * in its history); it becomes `\n` when the message is sent. Typing the
 * character itself does the same.
 */
export const LINE_BREAK_MARK = '⏎';

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';
const CTRL_C = '\x03';
const CTRL_D = '\x04';

/**
 * What readline reads in a terminal instead of stdin itself. It turns the
 * ways of writing a multi-line message into line breaks inside one line
 * (a bracketed paste's line ends, Alt+Enter, Enter after a trailing `\`), so
 * a pasted question goes as one message; and while no prompt is on screen it
 * holds what is typed (unechoed, unsent) and hands it to the next prompt to
 * edit. Only Ctrl+C passes while it holds: it stops the reply.
 *
 * It stands in for the stream readline expects (data events, raw mode,
 * pause and resume), and passes everything else through as it came.
 */
export class KeyboardFilter extends EventEmitter {
  readonly isTTY = true;
  private readonly decoder = new StringDecoder('utf8');
  private pasting = false;
  private holding = true;
  private held = '';
  /** The end of a chunk that may be the start of a paste marker or of Alt+Enter, kept for the next chunk. */
  private partial = '';

  constructor(
    private readonly stdin: NodeJS.ReadStream,
    /** The text of readline's line so far, and where its cursor is. */
    private readonly currentLine: () => { line: string; cursor: number },
  ) {
    super();
    stdin.on('data', (chunk: Buffer) => this.take(this.decoder.write(chunk)));
    stdin.on('end', () => this.emit('end'));
    stdin.on('error', (err) => this.emit('error', err));
  }

  get isRaw(): boolean {
    return this.stdin.isRaw;
  }

  setRawMode(mode: boolean): this {
    this.stdin.setRawMode(mode);
    return this;
  }

  pause(): this {
    this.stdin.pause();
    return this;
  }

  resume(): this {
    this.stdin.resume();
    return this;
  }

  /** A prompt is gone (a line was sent): hold what is typed from now on. */
  hold(): void {
    this.holding = true;
  }

  /** A prompt is on screen: what was held is typed into it now, where it can be edited. */
  release(): void {
    this.holding = false;
    // An Enter that ended what was typed is not sent: the prompt waits for one of its own.
    const held = this.held.replace(new RegExp(`${LINE_BREAK_MARK}+$`), '');
    this.held = '';
    if (held) this.pass(held);
  }

  private take(text: string): void {
    text = this.partial + text;
    this.partial = '';
    const keep = unfinishedTail(text);
    if (keep) {
      this.partial = text.slice(text.length - keep);
      text = text.slice(0, text.length - keep);
    }
    let plain = '';
    const flush = () => {
      if (plain) this.deliver(plain);
      plain = '';
    };
    for (let i = 0; i < text.length; ) {
      if (text.startsWith(PASTE_START, i)) {
        this.pasting = true;
        i += PASTE_START.length;
      } else if (text.startsWith(PASTE_END, i)) {
        this.pasting = false;
        i += PASTE_END.length;
      } else if (this.pasting && (text[i] === '\r' || text[i] === '\n')) {
        // A pasted line end is a line of the message, not Enter.
        plain += LINE_BREAK_MARK;
        i += text.startsWith('\r\n', i) ? 2 : 1;
      } else if (text.startsWith('\x1b\r', i) || text.startsWith('\x1b\n', i)) {
        plain += LINE_BREAK_MARK;
        i += 2;
      } else if (text[i] === '\r' || text[i] === '\n') {
        flush();
        this.enter();
        i += 1;
      } else {
        plain += text[i];
        i += 1;
      }
    }
    flush();
  }

  private enter(): void {
    if (this.holding) {
      // Enter during a reply ends a line of what is held; sending it is for the next prompt.
      this.held += LINE_BREAK_MARK;
      return;
    }
    const { line, cursor } = this.currentLine();
    if (cursor === line.length && line.endsWith('\\')) {
      // A trailing backslash continues the message on the next line, as in a shell.
      this.pass(`\x7f${LINE_BREAK_MARK}`);
      return;
    }
    this.pass('\r');
  }

  private deliver(text: string): void {
    if (!this.holding) {
      this.pass(text);
      return;
    }
    for (const char of text) {
      if (char === CTRL_C) this.pass(char);
      // Ctrl+D at an empty prompt quits: typed during a reply, it must not quit once the reply ends.
      else if (char !== CTRL_D) this.held += char;
    }
  }

  private pass(text: string): void {
    this.emit('data', Buffer.from(text, 'utf8'));
  }
}

/** How many characters at the end of `text` could begin a paste marker or Alt+Enter still to come. */
function unfinishedTail(text: string): number {
  const at = text.lastIndexOf('\x1b');
  if (at < 0) return 0;
  const tail = text.slice(at);
  return tail.length < PASTE_START.length && (PASTE_START.startsWith(tail) || PASTE_END.startsWith(tail)) ? tail.length : 0;
}

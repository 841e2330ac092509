import { visibleWidth, type MarkdownRenderer } from './markdown';
import type { LineWriter } from './render';

export interface ScreenSize {
  columns: number;
  rows: number;
}

/**
 * A reply rendered as Markdown while it streams, without redrawing what is
 * already on screen: each block is shown as plain text while it is open and
 * replaced by its rendering once it closes (a blank line, a heading's line
 * end, a closing code fence). Only the open block is ever erased, and only
 * while all of it is still on screen; one taller than the screen stays plain.
 */
export class StreamingMarkdown {
  /** Source of the open block, and how much of it is on screen as plain text. */
  private open = '';
  private shown = 0;
  /** False once the open block is too tall to erase: it is then left plain. */
  private redrawable = true;
  /** A blank line is owed between the last rendered block and whatever comes next. */
  private separatorOwed = false;

  constructor(
    private readonly out: LineWriter,
    private readonly renderer: MarkdownRenderer,
    private readonly size: () => ScreenSize,
  ) {}

  write(delta: string): void {
    if (!delta) return;
    if (!this.open) this.out.endLine();
    this.open += delta;
    const boundary = blockBoundary(this.open);
    if (boundary > 0) {
      const shownText = this.open.slice(0, this.shown);
      const closed = this.open.slice(0, boundary);
      this.open = this.open.slice(boundary);
      this.shown = this.settle(closed, shownText);
    }
    this.showPlain();
  }

  /** Renders whatever is still open: the reply ended, or a tool call or note comes next. */
  finish(): void {
    if (this.open.trim()) this.settle(this.open, this.open.slice(0, this.shown));
    this.out.endLine();
    this.open = '';
    this.shown = 0;
    this.redrawable = true;
    this.separatorOwed = false;
  }

  /**
   * Replaces the plain text on screen (`shownText`, from the closed block's
   * start, maybe past its end) with the closed block's rendering. Returns how
   * much of what follows the block is still on screen.
   */
  private settle(closed: string, shownText: string): number {
    const { columns } = this.size();
    if (!this.redrawable) {
      // Its start has scrolled away: it stays as it began, plain.
      this.redrawable = true;
      if (shownText.length >= closed.length) return shownText.length - closed.length;
      this.out.write(closed.slice(shownText.length));
      return 0;
    }
    if (shownText) this.out.eraseBack(cursorRow(shownText, columns));
    const rendered = this.renderer.render(closed, columns);
    if (rendered.length) {
      this.owedSeparator();
      this.out.write(rendered);
      this.separatorOwed = true;
    }
    return 0;
  }

  private showPlain(): void {
    if (this.shown >= this.open.length) return;
    const next = this.open.slice(this.shown);
    if (!this.shown && !next.trim()) return;
    this.owedSeparator();
    if (this.redrawable) {
      const { columns, rows } = this.size();
      if (cursorRow(this.open, columns) >= rows - 1) this.redrawable = false;
    }
    this.out.write(next);
    this.shown = this.open.length;
  }

  private owedSeparator(): void {
    if (!this.separatorOwed) return;
    this.separatorOwed = false;
    this.out.endLine();
    this.out.write('\n');
  }
}

/** How many rows below the first one the cursor is after `text` was written from column 1 of a terminal `columns` wide. */
export function cursorRow(text: string, columns: number): number {
  const lines = text.split('\n');
  let row = 0;
  lines.forEach((line, i) => {
    const width = visibleWidth(line);
    // A full row leaves the cursor on it (pending wrap) until the next character.
    if (i < lines.length - 1) row += Math.max(1, Math.ceil(width / columns));
    else row += width === 0 ? 0 : Math.floor((width - 1) / columns);
  });
  return row;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^ {0,3}#{1,6}(\s|$)/;

/**
 * Where the last complete block of `text` ends (0 if none has): after a
 * closing code fence or a heading's line, before an opening fence, or after
 * a blank line once the next line has begun and is not indented (an
 * indented one may continue a list item). Inside a fence nothing closes.
 */
export function blockBoundary(text: string): number {
  let boundary = 0;
  let fence: { char: string; length: number } | undefined;
  let afterBlank = -1;
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    const line = end < 0 ? text.slice(start) : text.slice(start, end);
    const complete = end >= 0;
    if (!complete && !line) break;
    if (fence) {
      const close = FENCE.exec(line);
      if (complete && close && close[1][0] === fence.char && close[1].length >= fence.length && !line.slice(close[0].length).trim()) {
        fence = undefined;
        boundary = end + 1;
      }
    } else if (line.trim() === '') {
      if (complete && afterBlank < 0) afterBlank = start;
    } else {
      if (afterBlank >= 0 && !/^[ \t]/.test(line)) boundary = start;
      afterBlank = -1;
      const open = FENCE.exec(line);
      if (open && complete) {
        if (start > 0) boundary = start;
        fence = { char: open[1][0], length: open[1].length };
      } else if (complete && HEADING.test(line)) {
        boundary = end + 1;
      }
    }
    if (!complete) break;
    start = end + 1;
  }
  return boundary;
}

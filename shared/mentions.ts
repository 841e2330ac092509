import { inertLine, printablePath } from './printablePath';
import type { Attachment } from './protocol';

/**
 * `@path`, `@path:10-40` and `@path#Symbol` (`@src/cart.ts#Cart.total`) in
 * a typed question, as attachments. A mention
 * starts a word (so `me@example.com` is not one); trailing punctuation that
 * ends a sentence is not part of the path. The text is left as typed.
 */

const MENTION = /(^|\s)@([^\s@]+)/g;
const RANGE = /^(.*?):(\d+)(?:-(\d+))?$/;
const TRAILING = /[.,;:!?)\]]+$/;
/** `path#Name`, `path#Container.name`, `path#mod::name`: the name an identifier, so a `#` inside a file name stays a path. */
const SYMBOL = /^(.+)#([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)$/;
/** Longer names are no symbol the server would take (its limit): the mention stays a file. */
const MAX_SYMBOL_CHARS = 200;

export function mentionOf(token: string): Attachment | undefined {
  const trimmed = token.replace(TRAILING, '');
  if (!trimmed) return undefined;
  const symbol = SYMBOL.exec(trimmed);
  if (symbol && symbol[2].length <= MAX_SYMBOL_CHARS) return { kind: 'symbol', path: symbol[1], symbol: symbol[2] };
  const ranged = RANGE.exec(trimmed);
  if (ranged && ranged[1]) {
    const startLine = Number(ranged[2]);
    const endLine = ranged[3] !== undefined ? Number(ranged[3]) : startLine;
    if (startLine >= 1 && endLine >= startLine) return { kind: 'selection', path: ranged[1], startLine, endLine };
  }
  return { kind: 'file', path: trimmed };
}

export function mentionsIn(text: string): Attachment[] {
  const found: Attachment[] = [];
  for (const match of text.matchAll(MENTION)) {
    const attachment = mentionOf(match[2]);
    if (attachment && !found.some((a) => a.path === attachment.path && a.startLine === attachment.startLine && a.endLine === attachment.endLine && a.symbol === attachment.symbol)) found.push(attachment);
  }
  return found;
}

/**
 * How a client writes a chip's label. The terminal's (the default): the lines
 * the model was given when they are known, always as `start-end`, and a
 * symbol after a `#`. The panel's (PANEL_CHIP): the lines asked for, one line
 * as `:N`, and a symbol in parentheses.
 */
export interface ChipLook {
  lines: 'given' | 'asked';
  singleLine: 'start-end' | 'start';
  symbol: 'hash' | 'parentheses';
}

const TERMINAL_CHIP: ChipLook = { lines: 'given', singleLine: 'start-end', symbol: 'hash' };
export const PANEL_CHIP: ChipLook = { lines: 'asked', singleLine: 'start', symbol: 'parentheses' };

/**
 * An attachment as a chip shows it: the path and its lines, or the path; a
 * symbol's name after it. The path may be the name a link resolved to
 * (repository input): quoted as tool answers quote it, and the whole label is
 * one inert line, so a line break cannot print what looks like a tool line.
 */
export function attachmentLabel(
  a: Pick<Attachment, 'path' | 'startLine' | 'endLine'> & { kind?: Attachment['kind']; symbol?: string; shownStart?: number; shownEnd?: number },
  look: ChipLook = TERMINAL_CHIP,
): string {
  const start = look.lines === 'given' ? (a.shownStart ?? a.startLine) : a.startLine;
  const end = look.lines === 'given' ? (a.shownEnd ?? a.endLine) : a.endLine;
  const path = printablePath(a.path);
  // Both ends or none: a pending symbol chip may carry a line hint alone, its range found by the server later.
  const where = start === undefined || end === undefined ? path : start === end && look.singleLine === 'start' ? `${path}:${start}` : `${path}:${start}-${end}`;
  // The name may come from a replayed event: bounded here.
  const name = a.kind === 'symbol' && typeof a.symbol === 'string' ? (a.symbol.length > 80 ? `${a.symbol.slice(0, 80)}…` : a.symbol) : undefined;
  const symbol = name === undefined ? '' : look.symbol === 'hash' ? ` #${name}` : ` (${name})`;
  return inertLine(`${where}${symbol}`);
}

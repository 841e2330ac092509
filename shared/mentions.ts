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
 * An attachment as a chip shows it: `path:start-end`, or the path; a symbol's
 * name after a `#`. The path may be the name a link resolved to (repository
 * input): quoted as the panel's chips quote it, and the whole label is one
 * inert line, so a line break cannot print what looks like a tool line.
 */
export function attachmentLabel(a: Pick<Attachment, 'path' | 'startLine' | 'endLine'> & { kind?: Attachment['kind']; symbol?: string; shownStart?: number; shownEnd?: number }): string {
  const start = a.shownStart ?? a.startLine;
  const end = a.shownEnd ?? a.endLine;
  const path = printablePath(a.path);
  const where = start !== undefined && end !== undefined ? `${path}:${start}-${end}` : path;
  // The name may come from a replayed event: bounded here.
  const symbol = a.kind === 'symbol' && typeof a.symbol === 'string' ? ` #${a.symbol.length > 80 ? `${a.symbol.slice(0, 80)}…` : a.symbol}` : '';
  return inertLine(`${where}${symbol}`);
}

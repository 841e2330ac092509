import type { Attachment } from './protocol';

/**
 * `@path` and `@path:10-40` in a typed question, as attachments. A mention
 * starts a word (so `me@example.com` is not one); trailing punctuation that
 * ends a sentence is not part of the path. The text is left as typed.
 */

const MENTION = /(^|\s)@([^\s@]+)/g;
const RANGE = /^(.*?):(\d+)(?:-(\d+))?$/;
const TRAILING = /[.,;:!?)\]]+$/;

export function mentionOf(token: string): Attachment | undefined {
  const trimmed = token.replace(TRAILING, '');
  if (!trimmed) return undefined;
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
    if (attachment && !found.some((a) => a.path === attachment.path && a.startLine === attachment.startLine && a.endLine === attachment.endLine)) found.push(attachment);
  }
  return found;
}

/** An attachment as a chip shows it: `path:start-end`, or the path. */
export function attachmentLabel(a: Pick<Attachment, 'path' | 'startLine' | 'endLine'> & { shownStart?: number; shownEnd?: number }): string {
  const start = a.shownStart ?? a.startLine;
  const end = a.shownEnd ?? a.endLine;
  return start !== undefined && end !== undefined ? `${a.path}:${start}-${end}` : a.path;
}

import type { Attachment, AttachmentKind } from '../../../shared/protocol';
import { MAX_REQUESTED_PATH_LENGTH } from '../access/boundary';
import { ATTACHMENT_LIMITS } from '../read/limits';
import type { ReadAttachment } from '../read/attachments';
import { DiscussError } from './errors';

/**
 * A send's `attachments`, checked before anything is read: the field is
 * untrusted, and a malformed one is refused by name, never half-read.
 */

const KINDS: readonly AttachmentKind[] = ['file', 'selection', 'symbol'];

function invalid(index: number, problem: string): DiscussError {
  return new DiscussError('InvalidParams', `attachments[${index}]: ${problem}.`);
}

function lineOf(value: unknown, index: number, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw invalid(index, `"${field}" must be a line number of at least 1`);
  return value;
}

export function validAttachments(value: unknown): Attachment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new DiscussError('InvalidParams', '"attachments" must be an array of { kind, path, startLine?, endLine?, symbol? }.');
  if (value.length > ATTACHMENT_LIMITS.maxCount) {
    throw new DiscussError('InvalidParams', `That message has ${value.length} attachments; the limit is ${ATTACHMENT_LIMITS.maxCount}. Attach fewer files.`);
  }
  return value.map((raw: unknown, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(index, 'must be an object { kind, path, startLine?, endLine?, symbol? }');
    const record = raw as Record<string, unknown>;
    const kind = record.kind;
    if (typeof kind !== 'string' || !KINDS.includes(kind as AttachmentKind)) throw invalid(index, '"kind" must be "file", "selection" or "symbol"');
    const path = record.path;
    if (typeof path !== 'string' || path === '' || path.length > MAX_REQUESTED_PATH_LENGTH) {
      throw invalid(index, `"path" must be a non-empty string of at most ${MAX_REQUESTED_PATH_LENGTH} characters`);
    }
    const startLine = lineOf(record.startLine, index, 'startLine');
    const endLine = lineOf(record.endLine, index, 'endLine');
    if (startLine !== undefined && endLine !== undefined && endLine < startLine) throw invalid(index, `"endLine" (${endLine}) is before "startLine" (${startLine})`);
    const symbol = record.symbol;
    if (symbol !== undefined && symbol !== null && (typeof symbol !== 'string' || symbol.length > ATTACHMENT_LIMITS.maxSymbolChars)) {
      throw invalid(index, `"symbol" must be a name of at most ${ATTACHMENT_LIMITS.maxSymbolChars} characters`);
    }
    const attachment: Attachment = { kind: kind as AttachmentKind, path };
    if (startLine !== undefined) attachment.startLine = startLine;
    if (endLine !== undefined) attachment.endLine = endLine;
    if (typeof symbol === 'string') attachment.symbol = symbol;
    return attachment;
  });
}

/** The user message as the model receives it: the typed text, then each attachment delimited and labelled. */
export function withAttachments(text: string, attachments: readonly ReadAttachment[]): string {
  if (attachments.length === 0) return text;
  return [
    text,
    '',
    `[The user attached ${attachments.length === 1 ? 'this' : 'these'} from the folder with the message above.]`,
    ...attachments.map((a) => a.modelText),
  ].join('\n');
}

/** Where no toolbox can read (tests' fakes): every attachment is refused, and said so. */
export function unreadable(attachments: readonly Attachment[]): ReadAttachment[] {
  return attachments.map((attachment) => ({
    outcome: { ...attachment, status: 'refused', refusal: 'unreadable', note: 'could not be read' },
    modelText: `[Attachment ${JSON.stringify(attachment.path)} was not attached: attachments cannot be read here.]`,
    bytes: 0,
  }));
}

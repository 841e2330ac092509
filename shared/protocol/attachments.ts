/** Code a user points at with a message: a file, a selection or a symbol. */
export type AttachmentKind = 'file' | 'selection' | 'symbol';

/** One attachment as a client sends it: where, never what (the server reads it). */
export interface Attachment {
  kind: AttachmentKind;
  /** Relative to the folder root (an absolute path or `file:` URI inside it also works). */
  path: string;
  /** 1-based, inclusive. */
  startLine?: number;
  endLine?: number;
  /** The symbol's name, for `kind: "symbol"`. */
  symbol?: string;
}

/** Why an attachment was not read. */
export type AttachmentRefusal =
  | 'outside'
  | 'secret'
  | 'denied'
  | 'binary'
  | 'missing'
  | 'not_file'
  | 'invalid'
  | 'unreadable'
  | 'total_cap';

/**
 * How one attachment fared, as the `user_message` event carries it: the
 * request's fields, the folder-relative path that was read, the lines that
 * reached the model, and for a refused one the reason. Never file contents.
 */
export interface AttachmentOutcome extends Attachment {
  /** `attached`: all of it was given; `cut`: its start, up to the caps; `refused`: nothing was read. */
  status: 'attached' | 'cut' | 'refused';
  /** The lines given to the model (1-based, inclusive), when any were. */
  shownStart?: number;
  shownEnd?: number;
  refusal?: AttachmentRefusal;
  /** Short words for the chip: why it was refused or where it was cut. */
  note?: string;
}

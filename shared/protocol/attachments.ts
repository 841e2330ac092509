/** Code a user points at with a message: a file, a selection or a symbol. */
export type AttachmentKind = 'file' | 'selection' | 'symbol';

/** One attachment as a client sends it: where, never what (the server reads it). */
export interface Attachment {
  kind: AttachmentKind;
  /** Relative to the folder root (an absolute path or `file:` URI inside it also works). */
  path: string;
  /**
   * 1-based, inclusive. For `kind: "symbol"` the server finds the range
   * itself; a `startLine` only picks among definitions of the same name.
   */
  startLine?: number;
  endLine?: number;
  /** The symbol's name, for `kind: "symbol"` (`name`, or `Container.name`); at most 200 characters. */
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
  | 'total_cap'
  /** A symbol attachment whose symbol is not defined in that file: nothing of the file is read. */
  | 'no_symbol';

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

/**
 * One symbol the `@` completion offers (`discuss/symbols`): where a
 * definition stands, never its text. Every field is bounded by the server.
 */
export interface SymbolSuggestion {
  /** The name as a symbol attachment takes it back (at most 200 characters). */
  name: string;
  /** `function`, `class`, `method`, … */
  kind: string;
  /** The enclosing class or module, when there is one (at most 100 characters). */
  container?: string;
  /** Folder-relative, `/`-separated. */
  path: string;
  /** 1-based line of the name. */
  line: number;
}

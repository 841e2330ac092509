import { DiscussErrorCode, type RemedyCode } from '../../../shared/protocol';

export type DiscussErrorKind = keyof typeof DiscussErrorCode;

/**
 * A refused request. Its message is shown to a person as is, so it says what
 * happened and what to do next; `kind` picks the JSON-RPC error code.
 */
export class DiscussError extends Error {
  constructor(
    readonly kind: DiscussErrorKind,
    message: string,
    /** What fixes it, sent as the error's data so a client can word the fix itself. */
    readonly remedy?: RemedyCode,
  ) {
    super(message);
    this.name = 'DiscussError';
  }

  get code(): number {
    return DiscussErrorCode[this.kind];
  }
}

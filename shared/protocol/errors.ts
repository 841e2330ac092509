/** JSON-RPC error codes of refused requests; the message always says what to do. */
export const DiscussErrorCode = {
  /** Bad params: empty or oversized message, missing folder, malformed id. */
  InvalidParams: -32602,
  /** No open discussion with that id (or no saved one to resume). */
  NotFound: -32010,
  /** A turn is running: the request would interleave with it. */
  Busy: -32011,
  /** A cap was reached (open discussions), or the discussion is open elsewhere. */
  Conflict: -32012,
  /** The model could not produce a usable answer (distillation, listing models). */
  ModelFailed: -32013,
  /** The discussion's storage could not be read or written. */
  StorageFailed: -32014,
} as const;

export type DiscussErrorName = keyof typeof DiscussErrorCode;

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

/**
 * What would fix a failure, so each client can say it in its own terms: VS
 * Code names its commands, the terminal its flags, environment and config
 * file. The server's message says what went wrong.
 */
export type RemedyCode =
  /** Set (or replace) the API key. */
  | 'api_key'
  /** Pick or name a model. */
  | 'model'
  /** Pick a model that can call tools. */
  | 'tool_model'
  /** Fix the base URL (unreachable, not an API, missing /v1). */
  | 'base_url'
  /** Nothing was configured and OpenAI's default endpoint was used: name an endpoint, or a key for OpenAI. */
  | 'default_endpoint';

/** JSON-RPC error `data` of a refused request, when something in particular fixes it. */
export interface DiscussErrorData {
  remedy?: RemedyCode;
}

/** Who reads the server's messages; absent means VS Code. */
export type ClientKind = 'vscode' | 'terminal';

/**
 * Bounds on a discussion. Each one exists because something unbounded hurt.
 */

/**
 * Model calls allowed for one reply. A discussion reads and reasons; it never
 * edits, so it has no repair loop to spend calls on, and a model stuck calling
 * tools must not bill without end.
 */
export const MAX_MODEL_CALLS_PER_REPLY = 12;

/** Distillation attempts: structured output is worth a retry, not a loop. */
export const PROMOTE_MAX_ATTEMPTS = 3;

/**
 * Concurrent open discussions per server. Each holds a model thread, a replay
 * buffer and a file-access binding; past a handful the user has lost track.
 * Enforced by a reservation taken before any async work of `start`: counting
 * the registry after the work let pipelined starts all pass the check.
 */
export const MAX_OPEN_DISCUSSIONS = 8;

/**
 * A discussion idle this long is closed on the next start (and by the periodic
 * sweep), so one forgotten this morning never blocks one this afternoon.
 */
export const IDLE_TTL_MS = 60 * 60 * 1000;

/**
 * Retained events per discussion. A replay from an older cursor returns what
 * survives (`eventsReplayed` says how much) instead of growing without bound.
 */
export const EVENT_BUFFER_MAX = 2000;

/**
 * Characters of streamed text held back to join one event. Deltas that arrive
 * in the same tick of the event loop (one network read can carry hundreds)
 * go out as one event: one seq, one notification, one render, instead of one
 * each. The cap keeps a single event small when a model floods.
 */
export const DELTA_COALESCE_MAX_CHARS = 16 * 1024;

/**
 * Depth of one subscriber's outbound queue. Larger than the buffer, so a full
 * replay from seq 0 is never mistaken for a subscriber that stopped reading.
 */
export const SUBSCRIBER_QUEUE_MAX = EVENT_BUFFER_MAX + 128;

/**
 * How long one event may take to reach a subscriber before it is shed. A
 * half-open peer never fails a write; it just never completes it.
 */
export const SUBSCRIBER_SEND_TIMEOUT_MS = 30_000;

/**
 * Transcript turns kept for distillation. Promote summarizes the recent
 * exchange; keeping everything would build a prompt no model window holds.
 */
export const TRANSCRIPT_MAX_TURNS = 40;

/** Turns handed to distillation: the tail is where the user converged. */
export const DISTILL_WINDOW_TURNS = 12;

/**
 * Bytes in one user message. An accepted message is copied into the history,
 * the transcript, the replay buffer and the distill prompt; without a cap a
 * few pasted dumps retain gigabytes. This is a conversation, not an upload.
 */
export const MESSAGE_MAX_BYTES = 64 * 1024;

/** Characters of tool arguments shown in a `tool_call` event. */
export const PARAMS_PREVIEW_CHARS = 200;

/** Characters of tool output shown in a `tool_result` event. */
export const RESULT_PREVIEW_CHARS = 600;

/** Characters of a discussion title derived from its first message. */
export const TITLE_MAX_CHARS = 80;

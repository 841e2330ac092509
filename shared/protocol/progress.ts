/**
 * How a running turn is getting on, for a client to show while it waits. Not
 * a discussion event: never stored, replayed or numbered, so a client that
 * misses one (or subscribes later) loses only a sign of life.
 */
export type TurnProgress = {
  kind: 'retrying';
  /** How long the server waits before the next try. */
  retryInMs: number;
  /** The retry that wait leads to, counting from 1. */
  attempt: number;
  /** How many retries this request may make in all. */
  of: number;
  /** A few words on what failed, e.g. "rate-limited (429)". */
  reason: string;
};

/** Server → client: progress of a discussion's running turn (transient; see TurnProgress). */
export namespace ProgressNotification {
  export const method = 'discuss/progress';
  export type Params = { discussionId: string; /** Seq of the turn's `user_message`. */ turnSeq?: number } & TurnProgress;
}

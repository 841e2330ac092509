/**
 * The prepared task distilled from a discussion: one imperative intent and the
 * agreed constraints. The same shape in the `task_prepared` event, the answer
 * to `discuss/promote`, the card the user edits and the hand-off.
 */
export interface PreparedTask {
  intent: string;
  constraints: string[];
}

/** A prepared task that was handed to a coding agent. */
export interface Handoff extends PreparedTask {
  /** Epoch milliseconds. */
  at: number;
  target: string;
}

import type { StaleEvidence } from './decisions';

/**
 * The prepared task distilled from a discussion: one imperative intent and the
 * agreed constraints. The same shape in the `task_prepared` event, the answer
 * to `discuss/promote`, the card the user edits and the hand-off.
 */
export interface PreparedTask {
  intent: string;
  constraints: string[];
  /**
   * Where each constraint came from, in the order of `constraints`, when the
   * task was built from the decision log: `decision` (its id and evidence) or
   * `distilled` (the distillation added it; the log missed it). Re-checked
   * whenever the card is shown: `stale` lists cited lines that changed.
   */
  constraintSources?: ConstraintSource[];
  /** The log's open questions, shown on the card so nobody hands off past them unawares. */
  openQuestions?: string[];
}

export interface ConstraintSource {
  text: string;
  source: 'decision' | 'distilled';
  decisionId?: string;
  /** `path:line` (or `path`) of each cited place. */
  evidence?: string[];
  stale?: StaleEvidence[];
}

/** A prepared task that was handed to a coding agent. */
export interface Handoff extends PreparedTask {
  /** Epoch milliseconds. */
  at: number;
  target: string;
  /** HEAD when handed off, when the folder is a git repository: where a review's diff starts. */
  commit?: string;
}

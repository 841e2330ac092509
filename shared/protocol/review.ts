/**
 * A review of an implementation against the task that was handed off: per
 * constraint, whether the change since the hand-off kept it, with `path:line`
 * evidence from the diff, and what the change did that the task did not ask
 * for. Produced by one read-only model request; it never changes a file.
 */
export type ReviewStatus = 'met' | 'not met' | 'cannot tell';

export const REVIEW_STATUSES: readonly ReviewStatus[] = ['met', 'not met', 'cannot tell'];

export interface ReviewItem {
  /** The constraint as the hand-off stated it. */
  constraint: string;
  status: ReviewStatus;
  /** `path:line` (or `path`) in the diff that shows it. */
  evidence: string[];
  /** Why, in a sentence (the model's words, bounded). */
  note?: string;
  /**
   * Places the model cited that the diff does not show (outside the folder,
   * a file the change did not touch, a line past its hunks): left out of
   * `evidence`. When every cited place was, a `met` or `not met` reads as
   * `cannot tell`: the verdict rested on nothing the diff shows.
   */
  droppedEvidence?: number;
}

/** Something the diff does that the task did not ask for. */
export interface UnrequestedChange {
  text: string;
  evidence: string[];
  /** As in ReviewItem: cited places the diff does not show, left out. */
  droppedEvidence?: number;
}

export interface Review {
  /** The task's intent as handed off. */
  intent: string;
  /** What the diff was taken from: the hand-off's commit, the `base` asked for, or none (the working tree). */
  base?: string;
  /** In words: "changes since 1a2b3c4d5e (commits and the working tree)". */
  compared: string;
  /** One per constraint of the hand-off, in its order. */
  items: ReviewItem[];
  unrequested: UnrequestedChange[];
  /** Epoch milliseconds. */
  at: number;
}

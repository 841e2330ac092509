/**
 * The decision log of a discussion: what was agreed, rejected, left open or
 * settled, recorded as it happens (the model's `record_decision` tool, or the
 * user's edits) so a long discussion or a hand-off never loses it.
 */
export type DecisionKind = 'constraint' | 'rejected' | 'question' | 'resolved';

export const DECISION_KINDS: readonly DecisionKind[] = ['constraint', 'rejected', 'question', 'resolved'];

/** One cited place in the repository, checked through the read boundary when recorded. */
export interface DecisionEvidence {
  /** Relative to the folder root, `/`-separated. */
  path: string;
  /** 1-based; absent when the whole file is cited. */
  line?: number;
  /** sha256 (hex) of the cited line, or of the file when no line is cited. */
  hash: string;
  /** The cited line as it was (bounded), so a later change can be shown as a diff. */
  text?: string;
  /** HEAD when recorded, when the folder is a git repository. */
  commit?: string;
}

export interface Decision {
  /** `d1`, `d2`, … in the order recorded; never reused in a discussion. */
  id: string;
  kind: DecisionKind;
  text: string;
  evidence: DecisionEvidence[];
  /** The entry this one supersedes (it leaves the current log). */
  replaces?: string;
  /** Epoch milliseconds of the recording or of the last edit. */
  at: number;
  by: 'model' | 'user';
}

/** A cited place whose lines changed since the decision was recorded. */
export interface StaleEvidence {
  path: string;
  line?: number;
  /** `-` the recorded line, `+` what is there now (or why it cannot be read). */
  diff: string;
  /** The commit recorded with the evidence and HEAD now, when either is known. */
  recordedCommit?: string;
  currentCommit?: string;
}

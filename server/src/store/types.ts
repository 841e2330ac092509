import type { DiscussionEvent, DiscussionSummary } from '../protocol';
import type { DiscussionSnapshot } from '../core/discussion';

export interface LoadedDiscussion {
  snapshot: DiscussionSnapshot;
  /** The saved event log (compacted), replayed to subscribers on resume. */
  events: DiscussionEvent[];
}

/** Proof that this process holds a discussion open; released on close. */
export interface Lease {
  release(): Promise<void>;
}

/**
 * Where discussions are kept between runs. Writes are queued and ordered, so
 * the turn never waits on the disk; `flush` waits for them.
 */
export interface DiscussionStore {
  readonly persistent: boolean;
  load(discussionId: string): Promise<LoadedDiscussion | undefined>;
  save(snapshot: DiscussionSnapshot): void;
  appendEvent(discussionId: string, event: DiscussionEvent): void;
  list(): Promise<DiscussionSummary[]>;
  /** Refuses ("already open") when another live process holds the discussion. */
  acquire(discussionId: string): Promise<Lease>;
  /** Removes a saved discussion; false when there was none. Refused while another process holds it. */
  delete(discussionId: string): Promise<boolean>;
  flush(): Promise<void>;
}

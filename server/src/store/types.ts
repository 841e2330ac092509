import type { DiscussionEvent, DiscussionSummary } from '../../../shared/protocol';
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
 * Where discussions are kept between runs. `save` and `appendEvent` return
 * once the write is done (or has failed and been reported), so whatever a
 * client was told is already on disk.
 */
export interface DiscussionStore {
  readonly persistent: boolean;
  /** A folder of the store's own where small caches are kept across runs; none for a store that keeps nothing. */
  readonly stateDirectory?: string;
  load(discussionId: string): Promise<LoadedDiscussion | undefined>;
  save(snapshot: DiscussionSnapshot): void;
  appendEvent(discussionId: string, event: DiscussionEvent): void;
  list(): Promise<DiscussionSummary[]>;
  /** Refuses ("already open") when another live process holds the discussion. */
  acquire(discussionId: string): Promise<Lease>;
  /** Removes a saved discussion; false when there was none. Refused while another process holds it. */
  delete(discussionId: string): Promise<boolean>;
  flush(): Promise<void>;
  /** Removes what a start that failed half-way left behind (never a saved discussion). */
  discard(discussionId: string): Promise<void>;
}

import type { PreparedTask } from './task';
import type { Decision } from './decisions';
import type { AttachmentOutcome } from './attachments';
import type { Review } from './review';
import type { RemedyCode } from './errors';

/** Fields every event carries. */
export interface EventBase {
  discussionId: string;
  /** Counts from 0 per discussion, assigned by a single writer; never reused. */
  seq: number;
  /** Epoch milliseconds. */
  ts: number;
}

export type DiscussionEventBody =
  /** `attachments`: what was attached and how each fared, paths and ranges only, never contents. */
  | { type: 'user_message'; text: string; attachments?: AttachmentOutcome[] }
  | { type: 'assistant_delta'; text: string }
  | { type: 'assistant_message'; text: string }
  | { type: 'tool_call'; tool: string; paramsPreview: string }
  | { type: 'tool_result'; tool: string; ok: boolean; preview: string }
  | ({ type: 'task_prepared' } & PreparedTask)
  | { type: 'turn_complete' }
  /** `remedy`: what fixes it, for the client to word (see RemedyCode); the message says what went wrong. */
  | { type: 'error'; message: string; remedy?: RemedyCode }
  /** The model's reasoning, streamed; shown collapsed and never part of the answer. */
  | { type: 'reasoning_delta'; text: string }
  /** Tokens one turn used, when the endpoint reports them. */
  | { type: 'usage'; promptTokens: number; completionTokens: number }
  /** An entry of the decision log was recorded or edited (same id: the edit replaces it). */
  | { type: 'decision_recorded'; decision: Decision }
  /** The user deleted an entry of the decision log. */
  | { type: 'decision_deleted'; id: string }
  /** A review of the implementation against the last hand-off (discuss/review). */
  | { type: 'review'; review: Review }
  /**
   * The oldest turns were summarized into `note`, which requests carry instead
   * of them (the saved history keeps them). `firstKeptSeq`: the `user_message`
   * of the first turn still sent whole, absent when it is older than the
   * replay. The newest one holds: each note folds in the previous one.
   */
  | { type: 'history_summarized'; note: string; firstKeptSeq?: number }
  /** The user handed the prepared task off (discuss/consumeTask): a review of the implementation can follow. */
  | { type: 'task_handed_off'; target: string; commit?: string };

export type DiscussionEvent = EventBase & DiscussionEventBody;
export type DiscussionEventType = DiscussionEventBody['type'];
/** One event type's full shape, e.g. `EventOf<'tool_call'>`. */
export type EventOf<T extends DiscussionEventType> = Extract<DiscussionEvent, { type: T }>;

/** Server → client: one event of a discussion the connection subscribed to. */
export namespace EventNotification {
  export const method = 'discuss/event';
  export type Params = DiscussionEvent;
}

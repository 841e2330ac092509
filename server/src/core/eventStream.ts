import type { DiscussionEvent, DiscussionEventBody } from '../../../shared/protocol';
import { DELTA_COALESCE_MAX_CHARS, EVENT_BUFFER_MAX, SUBSCRIBER_QUEUE_MAX, SUBSCRIBER_SEND_TIMEOUT_MS } from './limits';
import { errorText } from '../../../shared/errorText';

/** Events whose text may be joined with the next one of the same type. */
export type TextEventType = 'assistant_delta' | 'reasoning_delta';

/** Where one subscriber's events go (a JSON-RPC connection, in production). */
export interface EventSink {
  /** Resolves once the event is handed to the transport; may never resolve on a dead peer. */
  deliver(event: DiscussionEvent): Promise<void> | void;
}

export interface EventStreamOptions {
  discussionId: string;
  now: () => number;
  /** First seq to assign; a resumed discussion continues its saved numbering. */
  nextSeq?: number;
  bufferMax?: number;
  queueMax?: number;
  sendTimeoutMs?: number;
  onShed?: (subscriberId: string, reason: string) => void;
  /**
   * Called before a seq at or past `ceiling` is handed out, to persist a new
   * ceiling. Streamed deltas are not saved one by one, so after a crash the
   * saved ceiling is what guarantees a resumed stream never reuses a seq a
   * client may already hold.
   */
  reserve?: (ceiling: number) => void;
  /** The highest seq already reserved (persisted); defaults to `nextSeq`. */
  ceiling?: number;
  /** A failure while emitting held text at the end of a tick. */
  onFlushError?: (error: unknown) => void;
}

/** Seqs reserved per persisted ceiling: one small write per this many events. */
export const SEQ_RESERVE_BLOCK = 1000;

/**
 * One subscriber's outbound lane: its own bounded queue and its own pump.
 *
 * The stream never awaits a subscriber. When one writer did the sends itself,
 * a peer that stopped reading parked that writer, the next emit waited behind
 * it, and a single wedged client stalled the whole turn. Here the emit only
 * enqueues; a lane that falls too far behind, or whose send hangs past the
 * timeout, is shed and the turn never notices.
 */
class SubscriberLane {
  private readonly queue: DiscussionEvent[] = [];
  private head = 0;
  private pumping = false;
  dead = false;

  constructor(
    private readonly sink: EventSink,
    private readonly queueMax: number,
    private readonly sendTimeoutMs: number,
    private readonly shed: (reason: string) => void,
  ) {}

  /** False when the lane is full or dead: the caller sheds it. */
  offer(event: DiscussionEvent): boolean {
    if (this.dead) return false;
    if (this.queue.length - this.head >= this.queueMax) return false;
    this.queue.push(event);
    if (!this.pumping) void this.pump();
    return true;
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (!this.dead && this.head < this.queue.length) {
        const event = this.queue[this.head++];
        // Compact occasionally so a long-lived lane does not keep every event.
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        const delivered = this.sink.deliver(event);
        if (delivered && typeof (delivered as Promise<void>).then === 'function') {
          const ok = await withTimeout(delivered as Promise<void>, this.sendTimeoutMs);
          if (!ok) {
            this.shed('a send did not complete in time');
            return;
          }
        }
      }
    } catch (err) {
      this.shed(`a send failed: ${errorText(err)}`);
    } finally {
      this.pumping = false;
    }
  }
}

/** Resolves true when `p` settles in time, false on timeout or rejection. */
function withTimeout(p: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    p.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

/**
 * A discussion's numbered event stream: the replay buffer and its subscribers.
 *
 * `emit` is synchronous and is the only place a seq is assigned, so the buffer
 * is always in seq order; `subscribe` replays and registers in one synchronous
 * step, so no emit can fall between the replay and the live stream (no gap, no
 * duplicate across the attach).
 *
 * Streamed text (`emitText`) is held until the current tick ends and goes out
 * as one event; every other operation sends held text first, so the order of
 * what a client sees is the order things happened.
 */
export class EventStream {
  private readonly buffer: DiscussionEvent[] = [];
  private bufferHead = 0;
  private nextSeq: number;
  private ceiling: number;
  private disposed = false;
  private readonly lanes = new Map<string, SubscriberLane>();
  private readonly listeners = new Set<(event: DiscussionEvent) => void>();
  private readonly bufferMax: number;
  private readonly queueMax: number;
  private readonly sendTimeoutMs: number;
  /** Text not yet emitted, and the scheduled flush that will emit it. */
  private pendingText: { type: TextEventType; text: string } | null = null;
  private flushTimer: ReturnType<typeof setImmediate> | undefined;

  constructor(private readonly options: EventStreamOptions) {
    this.nextSeq = options.nextSeq ?? 0;
    this.ceiling = Math.max(options.ceiling ?? this.nextSeq, this.nextSeq);
    this.bufferMax = options.bufferMax ?? EVENT_BUFFER_MAX;
    this.queueMax = options.queueMax ?? SUBSCRIBER_QUEUE_MAX;
    this.sendTimeoutMs = options.sendTimeoutMs ?? SUBSCRIBER_SEND_TIMEOUT_MS;
  }

  /** Appends an event and fans it out; returns its seq. Never waits on a subscriber. */
  emit(body: DiscussionEventBody): DiscussionEvent {
    this.flushText();
    return this.append(body);
  }

  /**
   * Streams text: joined with the text emitted in the same tick (up to
   * DELTA_COALESCE_MAX_CHARS) and emitted as one event when the tick ends or
   * anything else is emitted, whichever comes first.
   */
  emitText(type: TextEventType, text: string): void {
    if (!text) return;
    if (this.pendingText && this.pendingText.type !== type) this.flushText();
    if (this.pendingText) this.pendingText.text += text;
    else this.pendingText = { type, text };
    if (this.pendingText.text.length >= DELTA_COALESCE_MAX_CHARS) this.flushText();
    else this.flushTimer ??= setImmediate(() => this.flushLater());
  }

  /**
   * The end-of-tick flush. It runs outside the turn, so a throw here (an
   * observer failing) would end the process instead of the turn: it is
   * reported through `onFlushError` instead.
   */
  private flushLater(): void {
    try {
      this.flushText();
    } catch (err) {
      this.options.onFlushError?.(err);
    }
  }

  /** Emits held text now. */
  flushText(): void {
    if (this.flushTimer !== undefined) {
      clearImmediate(this.flushTimer);
      this.flushTimer = undefined;
    }
    const pending = this.pendingText;
    if (!pending) return;
    this.pendingText = null;
    this.append({ type: pending.type, text: pending.text });
  }

  private append(body: DiscussionEventBody): DiscussionEvent {
    if (this.nextSeq >= this.ceiling && this.options.reserve) {
      this.ceiling = this.nextSeq + SEQ_RESERVE_BLOCK;
      this.options.reserve(this.ceiling);
    }
    const event = {
      discussionId: this.options.discussionId,
      seq: this.nextSeq++,
      ts: this.options.now(),
      ...body,
    } as DiscussionEvent;
    this.buffer.push(event);
    // Trim in amortized batches: shifting one element per emit is quadratic.
    if (this.buffer.length - this.bufferHead > this.bufferMax) {
      this.bufferHead = this.buffer.length - this.bufferMax;
      if (this.bufferHead > this.bufferMax) {
        this.buffer.splice(0, this.bufferHead);
        this.bufferHead = 0;
      }
    }
    // Saved before any client can see it: a lane's transport may write in
    // this same call (node-ipc and our stdio writer do), and an event a client
    // saw but the log did not keep came back missing after a crash.
    try {
      if (!this.disposed) for (const listener of this.listeners) listener(event);
    } finally {
      for (const [id, lane] of this.lanes) {
        if (!lane.offer(event)) this.shed(id, 'it stopped reading events');
      }
    }
    return event;
  }

  /**
   * Seeds the buffer with a saved log (a resumed discussion), continuing its
   * numbering so a client's cursor from before the restart still means the
   * same events.
   */
  restore(events: DiscussionEvent[]): void {
    this.flushText();
    const kept = events.slice(-this.bufferMax);
    this.buffer.splice(0, this.buffer.length, ...kept);
    this.bufferHead = 0;
    const last = kept[kept.length - 1];
    if (last && last.seq + 1 > this.nextSeq) this.nextSeq = last.seq + 1;
    // Deltas after the last save were never written; the reserved ceiling is
    // past every seq the previous process could have handed out.
    if (this.ceiling > this.nextSeq) this.nextSeq = this.ceiling;
  }

  get reservedCeiling(): number {
    return this.ceiling;
  }

  /**
   * Attaches a subscriber under `subscriberId` (replacing an earlier one),
   * queues every buffered event with `seq >= fromSeq`, and returns how many.
   */
  subscribe(subscriberId: string, sink: EventSink, fromSeq = 0): number {
    if (this.disposed) return 0;
    this.flushText();
    this.unsubscribe(subscriberId);
    const lane = new SubscriberLane(sink, this.queueMax, this.sendTimeoutMs, (reason) =>
      this.shed(subscriberId, reason, lane),
    );
    let replayed = 0;
    for (let i = this.bufferHead; i < this.buffer.length; i++) {
      const event = this.buffer[i];
      if (event.seq < fromSeq) continue;
      if (!lane.offer(event)) break;
      replayed++;
    }
    this.lanes.set(subscriberId, lane);
    return replayed;
  }

  hasSubscriber(subscriberId: string): boolean {
    return this.lanes.has(subscriberId);
  }

  unsubscribe(subscriberId: string): boolean {
    const lane = this.lanes.get(subscriberId);
    if (!lane) return false;
    lane.dead = true;
    this.lanes.delete(subscriberId);
    return true;
  }

  /**
   * Removes retained events matching `test` (a superseded task card, a
   * finished reply's deltas). Their seqs are not reused; a replay just skips
   * them.
   */
  drop(test: (event: DiscussionEvent) => boolean): void {
    this.flushText();
    let write = this.bufferHead;
    for (let read = this.bufferHead; read < this.buffer.length; read++) {
      const event = this.buffer[read];
      if (!test(event)) this.buffer[write++] = event;
    }
    this.buffer.length = write;
  }

  /**
   * In-process observers (persistence, tests). Called synchronously on each
   * emit, before any subscriber is offered the event. An observer must not
   * emit: its event would reach the subscribers before the one it observes.
   */
  onEvent(listener: (event: DiscussionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The retained events, oldest first. */
  events(): DiscussionEvent[] {
    this.flushText();
    return this.buffer.slice(this.bufferHead);
  }

  get seqNext(): number {
    return this.nextSeq;
  }

  get subscriberCount(): number {
    return this.lanes.size;
  }

  /**
   * The discussion is closing: no new subscribers or observers, but every
   * lane finishes delivering what it already holds, so a client watching a
   * turn that a close cut short still receives its `turn_complete`.
   */
  dispose(): void {
    this.flushText();
    this.disposed = true;
    this.lanes.clear();
    this.listeners.clear();
  }

  private shed(subscriberId: string, reason: string, only?: SubscriberLane): void {
    const lane = this.lanes.get(subscriberId);
    if (!lane || (only && lane !== only)) return;
    this.unsubscribe(subscriberId);
    this.options.onShed?.(subscriberId, reason);
  }
}

import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { TokenReply, TokenRequest } from './tokenWorker';
import { WORKER_YOUNG_GENERATION_MB } from '../heapTuning';

/**
 * Token counts from a worker thread. The tokenizer loaded on the main thread
 * in the middle of a turn (the first request that did not fit at a glance):
 * that turn took 300–400 ms instead of 6–9 ms and every other discussion's
 * stream stalled meanwhile; and each new tool result was then counted there.
 *
 * The worker is started on first need and stopped once unused for a while,
 * giving back the tokenizer's tens of MB.
 */
const WORKER_SCRIPT = path.join(__dirname, 'tokenWorker.js');
/** An idle worker is stopped after this long; the next count starts a new one. */
const IDLE_STOP_MS = 60_000;

export class TokenCounter {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (counts: number[]) => void; reject: (err: Error) => void }>();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly script = WORKER_SCRIPT) {}

  /** Tokens in each text, counted off the main thread. Rejects if the worker fails. */
  count(texts: string[]): Promise<number[]> {
    if (texts.length === 0) return Promise.resolve([]);
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts } satisfies TokenRequest);
    });
  }

  /** Stops the worker now (pending counts are rejected). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.failAll(new Error('the token counter was closed'));
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.worker) return this.worker;
    // V8's default young generation (two 16 MB semi-spaces) stayed fully committed while counting texts that live a moment.
    const worker = new Worker(this.script, { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB.background } });
    // Never what keeps a finished process (or a test run) alive.
    worker.unref();
    worker.on('message', (reply: TokenReply) => this.onReply(reply));
    worker.on('error', (err) => this.onExit(worker, err));
    worker.on('exit', (code) => this.onExit(worker, new Error(`the token worker exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private onReply(reply: TokenReply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if ('error' in reply) waiter.reject(new Error(reply.error));
    else waiter.resolve(reply.counts);
    if (this.pending.size === 0 && this.worker) {
      const worker = this.worker;
      this.idleTimer = setTimeout(() => {
        if (this.worker === worker && this.pending.size === 0) {
          this.worker = null;
          void worker.terminate();
        }
      }, IDLE_STOP_MS);
      this.idleTimer.unref();
    }
  }

  private onExit(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.failAll(err);
  }

  private failAll(err: Error): void {
    const waiters = [...this.pending.values()];
    this.pending.clear();
    for (const waiter of waiters) waiter.reject(err);
  }
}

let shared: TokenCounter | undefined;

/** The process's one token worker. */
export function sharedTokenCounter(): TokenCounter {
  shared ??= new TokenCounter();
  return shared;
}

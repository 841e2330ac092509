import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { WORKER_YOUNG_GENERATION_MB } from '../../heapTuning';
import { ChatModel, ChatRequest, ChatResponse, ModelError, ModelSettings, RetryNotice, StreamObserver } from '../types';
import type { OpenAIModelOptions } from '../openai/chatModel';
import type { FromModelThread, ModelThreadData, StreamItem, ThreadError, ToModelThread } from './messages';

/**
 * The OpenAI-compatible model run in a thread of its own (modelWorker.ts),
 * with the token counts of what its requests carry. On the main thread,
 * eight discussions streaming at once spent most of their time in the SDK,
 * undici and the parsing of each chunk, and in the garbage those left: many
 * short tasks back to back, with no turn of the event loop between them,
 * which held every other discussion's events and the client's requests
 * 30-40 ms at a time on two busy CPUs. Here the main thread gets one message
 * per turn of the model thread's event loop, with every delta that turn
 * streamed. The counts share the thread rather than keep one of their own:
 * each thread holds about 10 MB of its own.
 *
 * The thread starts on first use and stays while it is used: its modules
 * and compiled code are what keep a question after a pause as quick as one
 * back to back. Unused for IDLE_STOP_MS, it stops and gives back its memory
 * (the SDK's and the tokenizer's ranks among it); the next request starts it
 * again, cold, and what the model had learnt of an endpoint (a parameter it
 * refuses, its first listed model) is learnt again.
 */
const WORKER_SCRIPT = path.join(__dirname, 'modelWorker.js');
/** How long the thread stays with nothing asked of it. */
const IDLE_STOP_MS = 10 * 60_000;

type Distributive<T> = T extends unknown ? Omit<T, 'id'> : never;

interface Waiter {
  onStream?(items: StreamItem[]): void;
  settle(message: FromModelThread): void;
}

export class ModelThread {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();

  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private exited: Promise<void> = Promise.resolve();

  private readonly script: string;
  private readonly idleStopMs: number;
  private readonly modelOptions: OpenAIModelOptions;

  constructor(options: { script?: string; idleStopMs?: number; /** The model's retries and timeouts. */ modelOptions?: OpenAIModelOptions } = {}) {
    this.script = options.script ?? WORKER_SCRIPT;
    this.idleStopMs = options.idleStopMs ?? IDLE_STOP_MS;
    this.modelOptions = options.modelOptions ?? {};
  }

  /** A model whose requests this thread makes, with `settings` read as each is made. */
  model(settings: () => ModelSettings): ChatModel {
    return {
      complete: (request, onDelta, observer) => this.complete(settings(), request, onDelta, observer),
      listModels: (signal) => this.list(settings(), signal),
    };
  }

  /** Runs the model's code once in the thread (warmup.ts): its modules loaded, its request path compiled. */
  async warm(): Promise<void> {
    await this.ask({ kind: 'warm' }, 'warmed');
  }

  /** Tokens in each text, counted in the thread by the o200k tokenizer. Rejects if the thread fails. */
  async count(texts: string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    return (await this.ask({ kind: 'count', texts }, 'counted')).counts;
  }

  /** The running thread's id; undefined while none runs. */
  get threadId(): number | undefined {
    return this.worker?.threadId;
  }

  /** Settles once the thread that runs now has stopped (at once if none runs). */
  stopped(): Promise<void> {
    return this.exited;
  }

  /** Stops the thread now; what it was asked fails. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.stopIdleTimer();
    this.failAll(new Error('the model thread was closed'));
    await worker?.terminate();
  }

  private async complete(settings: ModelSettings, request: ChatRequest, onDelta: (text: string) => void, observer: StreamObserver = {}): Promise<ChatResponse> {
    const { signal, ...rest } = request;
    // A delta the main thread failed to take ends the request with that failure, as it did in-thread.
    let callbackFailure: { error: unknown } | undefined;
    const tookNoMore = new AbortController();
    const onStream = (items: StreamItem[]): void => {
      if (callbackFailure) return;
      try {
        for (const item of items) {
          if (item.kind === 'delta') onDelta(item.text);
          else if (item.kind === 'reasoning') observer.onReasoning?.(item.text);
          else if (item.kind === 'retracted') observer.onAnswerRetracted?.();
          else notifyRetry(observer, item.notice);
        }
      } catch (error) {
        callbackFailure = { error };
        tookNoMore.abort();
      }
    };
    try {
      return (await this.ask({ kind: 'complete', settings, request: rest }, 'completed', AbortSignal.any([signal, tookNoMore.signal]), onStream)).response;
    } catch (error) {
      throw callbackFailure ? callbackFailure.error : error;
    }
  }

  private async list(settings: ModelSettings, signal?: AbortSignal): Promise<string[]> {
    return (await this.ask({ kind: 'list', settings }, 'listed', signal)).models;
  }

  /**
   * Asks the thread and settles with its answer of `kind`, or its failure.
   * As in-thread, nothing is started, not even the thread, for a request
   * already stopped; an abort is a message of its own.
   */
  private ask<K extends FromModelThread['kind']>(
    message: Distributive<Exclude<ToModelThread, { kind: 'abort' }>>,
    kind: K,
    signal?: AbortSignal,
    onStream?: (items: StreamItem[]) => void,
  ): Promise<Extract<FromModelThread, { kind: K }>> {
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise((resolve, reject) => {
      const onAbort = (): void => this.abort(id);
      const id = this.post(message, {
        onStream,
        settle: (answer) => {
          signal?.removeEventListener('abort', onAbort);
          // A reply that ended in the thread before the abort reached it is still a stopped one, as in-thread:
          // resolved, the whole reply went into the history after a Stop that had cut its deltas short.
          if (signal?.aborted) reject(cancelled());
          else if (answer.kind === kind) resolve(answer as Extract<FromModelThread, { kind: K }>);
          else if (answer.kind === 'failed') reject(fromThread(answer.error));
          else reject(new Error(`the model thread answered ${answer.kind} where ${kind} was due`));
        },
      });
      if (this.waiting.has(id)) signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private abort(id: number): void {
    if (this.waiting.has(id)) this.worker?.postMessage({ kind: 'abort', id } satisfies ToModelThread);
  }

  private post(message: Distributive<Exclude<ToModelThread, { kind: 'abort' }>>, waiter: Waiter): number {
    const id = this.nextId++;
    this.stopIdleTimer();
    this.waiting.set(id, waiter);
    try {
      this.start().postMessage({ ...message, id } as ToModelThread);
    } catch (error) {
      // A request that cannot be copied to the thread fails alone.
      this.waiting.delete(id);
      waiter.settle({ kind: 'failed', id, error: { message: (error as Error).message } });
      if (this.waiting.size === 0) this.stopWhenIdle();
    }
    return id;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.script, { workerData: { modelOptions: this.modelOptions } satisfies ModelThreadData, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB.model } });
    // Never what keeps a finished process (or a test run) alive.
    worker.unref();
    worker.on('message', (message: FromModelThread) => this.onMessage(message));
    worker.on('error', (err) => this.onExit(worker, new Error(`The model's thread failed (${err.message}) — send the message again; a new one starts.`)));
    this.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.on('exit', (code) => this.onExit(worker, new Error(`The model's thread stopped (exit code ${code}) — send the message again; a new one starts.`)));
    this.worker = worker;
    return worker;
  }

  private onMessage(message: FromModelThread): void {
    const waiter = this.waiting.get(message.id);
    if (!waiter) return;
    if (message.kind === 'stream') {
      waiter.onStream?.(message.items);
      return;
    }
    this.waiting.delete(message.id);
    waiter.settle(message);
    if (this.waiting.size === 0) this.stopWhenIdle();
  }

  private stopWhenIdle(): void {
    const worker = this.worker;
    if (!worker || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.worker === worker && this.waiting.size === 0) {
        this.worker = null;
        void worker.terminate();
      }
    }, this.idleStopMs);
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private onExit(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.failAll(err);
  }

  private failAll(err: Error): void {
    const waiters = [...this.waiting.entries()];
    this.waiting.clear();
    for (const [id, waiter] of waiters) waiter.settle({ kind: 'failed', id, error: { message: err.message } });
  }
}

let shared: ModelThread | undefined;

/** The process's one model thread: its requests and its token counts. */
export function sharedModelThread(): ModelThread {
  shared ??= new ModelThread();
  return shared;
}

/** As the in-thread model words it (openai/failures.ts, not imported here: it would load the SDK on this thread). */
function cancelled(): ModelError {
  return new ModelError('cancelled', 'The model request was cancelled.');
}

/** A listener's failure must not turn a retry into a failed turn (as in chatModel.ts). */
function notifyRetry(observer: StreamObserver, notice: RetryNotice): void {
  try {
    observer.onRetry?.(notice);
  } catch {
    // ignored: the retry is what matters
  }
}

function fromThread(error: ThreadError): Error {
  if (!error.modelError) return new Error(error.message);
  const { kind, status, remedy } = error.modelError;
  return new ModelError(kind, error.message, status, remedy);
}

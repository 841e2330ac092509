import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sumOfCells } from './contentCache';
import { WORKER_YOUNG_GENERATION_MB } from '../heapTuning';
import { PID_CELLS } from './ripgrep';
import type { SearchJob, SearchJobResult } from './searchJobs';
import type { WorkerOptions, WorkerReply, WorkerRequest } from './searchWorker';

/**
 * A few worker threads that run find_files and grep_files, so a search over
 * a large tree, or a regular expression that backtracks for minutes, never
 * holds the server's event loop. A job that runs past its time limit has its
 * worker terminated (and the ripgrep it started killed); the caller gets a
 * clear failure and the next job gets a fresh worker.
 */

export type PoolOutcome =
  | { ok: true; result: SearchJobResult }
  | { ok: false; reason: 'timeout' | 'cancelled' | 'failed'; message?: string };

export interface SearchPoolOptions {
  /** Default: one per CPU, at most 4. */
  maxWorkers?: number;
  /** An idle worker is stopped after this long (it costs memory, not CPU). */
  idleMs?: number;
  /** The worker script, speaking searchWorker.ts's protocol. Default: searchWorker.js. */
  script?: string;
  /** Each thread's young generation in MB (heapTuning.ts). Default: the search threads'. */
  youngGenerationMb?: number;
}

/** How long a thread that owns a folder's warm index is kept while idle (the index's own idle limit). */
const INDEX_OWNER_IDLE_MS = 10 * 60_000;


interface Slot {
  worker: Worker;
  stopFlag: Int32Array;
  /** The pids of the ripgreps the thread runs now, noted by the thread itself, and the cells that keep it from starting more at exit (ripgrep.ts PID_CELLS). */
  ripgrepPids: Int32Array;
  job?: RunningJob;
  idleTimer?: NodeJS.Timeout;
}

interface RunningJob {
  id: number;
  pids: Set<number>;
  settle: (outcome: PoolOutcome) => void;
  /** A part of the answer the worker posted ahead of it; dropped once the job is answered. */
  receive: (part: unknown) => void;
}

/** Takes each part of an answer the worker posts ahead of it, in order (WorkerReply 'part'). */
export type PartReceiver = (part: unknown) => void;

export interface RunOptions {
  signal?: AbortSignal;
  onPart?: PartReceiver;
  /** Buffers the job holds that move to the worker rather than being copied (packedRecords.ts); unusable here once the job starts. */
  transfer?: readonly ArrayBuffer[];
}

interface QueuedJob extends RunOptions {
  job: SearchJob;
  timeoutMs: number;
  resolve: (outcome: PoolOutcome) => void;
  /** Stops listening for a cancel while queued: the job is starting. */
  dequeued?: () => void;
}

const WORKER_SCRIPT = path.join(__dirname, 'searchWorker.js');

/** Whether a buffer was moved to another thread already (a view cannot be made of it then). */
function isMoved(buffer: ArrayBuffer): boolean {
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

/**
 * The pools not closed, whose workers' ripgreps are killed when the process
 * exits: a worker's own exit handlers do not run when it is terminated or
 * the process exits, and a ripgrep blocked opening a FIFO in a hostile
 * folder would outlive the server.
 */
const openPools = new Set<SearchPool>();
/** More than the ripgreps one job runs at once; past them a pid is known from the worker's message alone. */
const RIPGREP_PID_CELLS = PID_CELLS.FIRST_PID + 8;
let killsOnExit = false;

function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

export class SearchPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: QueuedJob[] = [];
  private readonly maxWorkers: number;
  private readonly idleMs: number;
  private readonly script: string;
  private readonly youngGenerationMb: number;
  /** The thread that owns each folder's warm index: that folder's jobs go there when it is free. */
  private readonly owners = new Map<string, Slot>();
  private nextId = 1;
  /**
   * The threads' kept file contents, a cell each (contentCache.ts). Twice as
   * many cells as threads: a thread being terminated keeps its cell until it
   * has exited, while its replacement starts on another.
   */
  private readonly contentCells: Int32Array;
  private readonly cellsInUse = new Set<number>();

  constructor(options: SearchPoolOptions = {}) {
    const cpus = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    this.maxWorkers = Math.max(1, options.maxWorkers ?? Math.min(4, cpus));
    this.contentCells = new Int32Array(new SharedArrayBuffer(4 * 2 * this.maxWorkers));
    this.idleMs = options.idleMs ?? 60_000;
    this.script = options.script ?? WORKER_SCRIPT;
    this.youngGenerationMb = options.youngGenerationMb ?? WORKER_YOUNG_GENERATION_MB.search;
    openPools.add(this);
    if (!killsOnExit) {
      killsOnExit = true;
      process.once('exit', () => {
        for (const pool of openPools) pool.killRipgreps();
      });
    }
  }

  /** Kills every ripgrep the workers' running jobs started. */
  private killRipgreps(): void {
    for (const slot of this.slots) {
      const cells = slot.ripgrepPids;
      Atomics.store(cells, PID_CELLS.CLOSING, 1);
      // A start under way is noted within moments; the thread runs on until the process ends, and would start no more.
      for (let waits = 0; waits < 50 && Atomics.load(cells, PID_CELLS.SPAWNING) > 0; waits++) Atomics.wait(cells, PID_CELLS.SPAWNING, Atomics.load(cells, PID_CELLS.SPAWNING), 2);
      for (const pid of slot.job?.pids ?? []) killQuietly(pid, 'SIGKILL');
      for (let cell = PID_CELLS.FIRST_PID; cell < cells.length; cell++) if (cells[cell] > 0) killQuietly(cells[cell], 'SIGKILL');
    }
  }

  /** Starts a worker ahead of the first search, so that search does not pay for the thread's start. */
  warm(): void {
    if (this.slots.size === 0) this.release(this.spawn());
  }

  /** Bytes of file contents the threads keep now, by their own count (contentCache.ts). */
  get contentBytesKept(): number {
    return sumOfCells(this.contentCells);
  }

  /** How many jobs can run at once. */
  get parallelism(): number {
    return this.maxWorkers;
  }

  get workerCount(): number {
    return this.slots.size;
  }

  run(job: SearchJob, timeoutMs: number, options: RunOptions = {}): Promise<PoolOutcome> {
    const { signal } = options;
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'cancelled' });
    return new Promise((resolve) => {
      const queued: QueuedJob = { ...options, job, timeoutMs, resolve };
      if (signal) {
        // Cancelled while it waits: answered at once and never run (start()'s own
        // listener, added to a signal already aborted, would never fire).
        const onAbort = (): void => {
          const at = this.queue.indexOf(queued);
          if (at === -1) return;
          this.queue.splice(at, 1);
          resolve({ ok: false, reason: 'cancelled' });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        queued.dequeued = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(queued);
      this.pump();
    });
  }

  /** Stops every worker (tests, shutdown). Running jobs fail. */
  async close(): Promise<void> {
    openPools.delete(this);
    for (const queued of this.queue.splice(0)) {
      queued.dequeued?.();
      queued.resolve({ ok: false, reason: 'cancelled' });
    }
    await Promise.all([...this.slots].map((slot) => this.discard(slot)));
  }

  private pump(): void {
    for (let i = 0; i < this.queue.length; ) {
      const queued = this.queue[i];
      const root = queued.job.root;
      const slot = this.slotFor(queued.job);
      if (!slot) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      queued.dequeued?.();
      if (!this.owners.has(root)) this.owners.set(root, slot);
      // Only the owner holds the folder's index; another thread (the owner busy) searches cold.
      const useIndex = queued.job.indexable === true && this.owners.get(root) === slot;
      this.start(slot, { ...queued, job: { ...queued.job, useIndex } });
    }
  }

  /**
   * The thread a job can start on now, if any: its folder's owner when free,
   * else a free one that owns no folder, else (for a folder not yet indexed) a
   * new one while there is room, else any free one. A preparation of a folder
   * that has an owner waits for that owner.
   */
  private slotFor(job: SearchJob): Slot | undefined {
    const owner = this.owners.get(job.root);
    if (owner && !owner.job) return owner;
    // Only the owner holds a folder's index: elsewhere a preparation would answer that there
    // is none, and questions asked at once kept a second thread (about 9 MB) alive for it.
    if (owner && job.kind === 'prepareIndex') return undefined;
    const free = [...this.slots].filter((candidate) => !candidate.job);
    // Not another folder's owner while there is a choice: a folder whose index a thread shares
    // with another waits behind that folder's jobs, and its own search then runs cold elsewhere.
    const ownsNothing = free.find((candidate) => !this.ownsAnIndex(candidate));
    if (ownsNothing) return ownsNothing;
    if (!owner && job.indexable === true && this.slots.size < this.maxWorkers) return this.spawn();
    if (free.length > 0) return free[0];
    return this.slots.size < this.maxWorkers ? this.spawn() : undefined;
  }

  private spawn(): Slot {
    const stopBuffer = new SharedArrayBuffer(4);
    let contentCell = -1;
    for (let cell = 0; cell < this.contentCells.length && contentCell < 0; cell++) if (!this.cellsInUse.has(cell)) contentCell = cell;
    if (contentCell >= 0) this.cellsInUse.add(contentCell);
    const ripgrepPids = new SharedArrayBuffer(4 * RIPGREP_PID_CELLS);
    const workerData: WorkerOptions = { stopBuffer, contentCells: this.contentCells.buffer as SharedArrayBuffer, contentCell, ripgrepPids };
    const worker = new Worker(this.script, { workerData, resourceLimits: { maxYoungGenerationSizeMb: this.youngGenerationMb } });
    const slot: Slot = { worker, stopFlag: new Int32Array(stopBuffer), ripgrepPids: new Int32Array(ripgrepPids) };
    worker.on('message', (reply: WorkerReply) => this.onReply(slot, reply));
    worker.on('error', (error) => this.onCrash(slot, error.message));
    worker.on('exit', () => {
      // Only now: a thread still being terminated may yet count into its cell.
      if (contentCell >= 0) {
        Atomics.store(this.contentCells, contentCell, 0);
        this.cellsInUse.delete(contentCell);
      }
      this.onCrash(slot, 'the search worker stopped');
    });
    // An idle worker must not keep the process alive. After the listeners: attaching a
    // 'message' listener refs the worker's port again, which held mocha open for good.
    worker.unref();
    this.slots.add(slot);
    return slot;
  }

  private start(slot: Slot, queued: QueuedJob): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    const id = this.nextId++;
    let settled = false;
    const onAbort = (): void => {
      // Answer at once; the worker stops at its next check, or the timer below ends it.
      Atomics.store(slot.stopFlag, 0, id);
      settle({ ok: false, reason: 'cancelled' });
    };
    const timer = setTimeout(() => {
      settle({ ok: false, reason: 'timeout' });
      void this.discard(slot);
      this.pump();
    }, queued.timeoutMs);
    const settle = (outcome: PoolOutcome): void => {
      if (settled) return;
      settled = true;
      queued.signal?.removeEventListener('abort', onAbort);
      if (outcome.ok || outcome.reason !== 'cancelled') clearTimeout(timer);
      queued.resolve(outcome);
    };
    const running: RunningJob = {
      id,
      pids: new Set(),
      settle: (outcome) => {
        clearTimeout(timer);
        settle(outcome);
      },
      // A cancelled job's parts still arrive until the worker stops: its caller has its answer already.
      receive: (part) => {
        if (!settled) queued.onPart?.(part);
      },
    };
    slot.job = running;
    queued.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // Posted, a buffer moved already is not refused: the thread drops the message ('messageerror') and the job waits out its time limit.
      if (queued.transfer?.some(isMoved)) throw new Error('a buffer the job moves to its thread was moved already');
      slot.worker.postMessage({ id, job: queued.job } satisfies WorkerRequest, [...(queued.transfer ?? [])]);
    } catch (error) {
      // A job that cannot be posted fails alone, and the thread takes the next: thrown out of pump(), it held the thread until the job's time limit.
      slot.job = undefined;
      running.settle({ ok: false, reason: 'failed', message: error instanceof Error ? error.message : String(error) });
      this.release(slot);
    }
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    const job = slot.job;
    if (!job || reply.id !== job.id) return;
    if (reply.type === 'spawned') {
      job.pids.add(reply.pid);
      return;
    }
    if (reply.type === 'part') {
      job.receive(reply.part);
      return;
    }
    slot.job = undefined;
    job.settle(reply.type === 'done' ? { ok: true, result: reply.result as SearchJobResult } : { ok: false, reason: 'failed', message: reply.message });
    this.release(slot);
    this.pump();
  }

  private ownsAnIndex(slot: Slot): boolean {
    return [...this.owners.values()].includes(slot);
  }

  /** The thread is gone, and with it its indexes. */
  private forgetOwner(slot: Slot): void {
    for (const [root, owner] of this.owners) if (owner === slot) this.owners.delete(root);
  }

  private release(slot: Slot): void {
    if (slot.job || !this.slots.has(slot)) return;
    slot.idleTimer = setTimeout(() => void this.discard(slot), this.ownsAnIndex(slot) ? Math.max(this.idleMs, INDEX_OWNER_IDLE_MS) : this.idleMs);
    slot.idleTimer.unref();
  }

  private onCrash(slot: Slot, message: string): void {
    if (this.remove(slot, message)) this.pump();
  }

  private async discard(slot: Slot): Promise<void> {
    if (!this.remove(slot, 'the search threads were stopped')) return;
    await slot.worker.terminate().catch(() => undefined);
  }

  /**
   * Takes the slot out of the pool, its indexes with it, and answers its job
   * as failed with `message`; false when it was out already.
   */
  private remove(slot: Slot, message: string): boolean {
    if (!this.slots.has(slot)) return false;
    this.slots.delete(slot);
    this.forgetOwner(slot);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      // ripgrep is a separate process: ending the thread does not end it.
      for (const pid of job.pids) killQuietly(pid);
      // A job timed out is answered already; one still running would otherwise
      // wait out its whole time limit (15 s) for an answer.
      job.settle({ ok: false, reason: 'failed', message });
    }
    return true;
  }
}

let shared: SearchPool | undefined;

/** The pool every toolbox in this process shares, so open discussions cannot multiply the threads. */
export function sharedSearchPool(): SearchPool {
  shared ??= new SearchPool();
  return shared;
}

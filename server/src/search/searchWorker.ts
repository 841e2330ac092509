import { parentPort, workerData } from 'node:worker_threads';
import { runSearchJob, SearchJob } from './searchJobs';
import { FileIndexes } from './fileIndex';
import { CONTENT_CACHE_LIMITS, ContentBudget } from './contentCache';
import { errorText } from '../../../shared/errorText';
import { notePidsIn } from './ripgrep';

/**
 * Entry point of a search worker thread (started by searchPool.ts). It runs
 * one job at a time. A job is stopped early through a shared flag the owner
 * sets, which the job polls between files: a message would wait for an event
 * loop turn this thread may not take while a search runs.
 */

export type WorkerRequest = { id: number; job: SearchJob };

/** What the pool hands a worker when starting it. */
export interface WorkerOptions {
  stopBuffer: SharedArrayBuffer;
  /** The threads' shared count of kept file contents (contentCache.ts ContentBudget), and this thread's cell in it; -1: keep nothing. */
  contentCells: SharedArrayBuffer;
  contentCell: number;
  /** Where this thread notes its running ripgreps' pids (ripgrep.ts notePidsIn). */
  ripgrepPids: SharedArrayBuffer;
}

export type WorkerReply =
  | { type: 'spawned'; id: number; pid: number }
  /** Part of the answer, ahead of it (the symbol thread's parsed files): copied into the main thread as it arrives, not with the rest. */
  | { type: 'part'; id: number; part: unknown }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'failed'; id: number; message: string };

const port = parentPort;
if (!port) throw new Error('searchWorker.js must run as a worker thread');
const options = workerData as WorkerOptions;
const stopFlag = new Int32Array(options.stopBuffer);
notePidsIn(new Int32Array(options.ripgrepPids));

// Searches running now; the content filler (contentCache.ts) reads only when there are none.
let running = 0;
let whenIdle: Array<() => void> = [];
const idle = (): Promise<void> => (running === 0 ? Promise.resolve() : new Promise((resolve) => whenIdle.push(resolve)));
const contentBudget =
  options.contentCell < 0 ? new ContentBudget(0) : new ContentBudget(CONTENT_CACHE_LIMITS.budgetBytes, { cells: new Int32Array(options.contentCells), own: options.contentCell });
const indexes = new FileIndexes({ fillContents: { idle }, contentBudget });

function finished(): void {
  running -= 1;
  if (running > 0) return;
  const waiting = whenIdle;
  whenIdle = [];
  for (const resume of waiting) resume();
}

port.on('message', (request: WorkerRequest) => {
  // A preparation may wait for the filler, which waits for idleness: counting it would wait forever.
  const counted = request.job.kind !== 'prepareIndex';
  if (counted) running += 1;
  const control = {
    shouldStop: () => Atomics.load(stopFlag, 0) === request.id,
    onSpawn: (pid: number) => port.postMessage({ type: 'spawned', id: request.id, pid } satisfies WorkerReply),
  };
  runSearchJob(request.job, control, indexes)
    .finally(() => {
      if (counted) finished();
    })
    .then(
      (result) => port.postMessage({ type: 'done', id: request.id, result } satisfies WorkerReply),
      (error: unknown) => port.postMessage({ type: 'failed', id: request.id, message: errorText(error) } satisfies WorkerReply),
    );
});

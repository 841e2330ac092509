import { parentPort, workerData } from 'node:worker_threads';
import { runSearchJob, SearchJob } from './searchJobs';
import { FileIndexes } from './fileIndex';
import { errorText } from '../../../shared/errorText';

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
}

export type WorkerReply =
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'done'; id: number; result: unknown }
  | { type: 'failed'; id: number; message: string };

const port = parentPort;
if (!port) throw new Error('searchWorker.js must run as a worker thread');
const options = workerData as WorkerOptions;
const stopFlag = new Int32Array(options.stopBuffer);
const indexes = new FileIndexes();

port.on('message', (request: WorkerRequest) => {
  const control = {
    shouldStop: () => Atomics.load(stopFlag, 0) === request.id,
    onSpawn: (pid: number) => port.postMessage({ type: 'spawned', id: request.id, pid } satisfies WorkerReply),
  };
  runSearchJob(request.job, control, indexes).then(
    (result) => port.postMessage({ type: 'done', id: request.id, result } satisfies WorkerReply),
    (error: unknown) => port.postMessage({ type: 'failed', id: request.id, message: errorText(error) } satisfies WorkerReply),
  );
});

import { parentPort, workerData } from 'node:worker_threads';
import { runSymbolJob, SymbolJob, SymbolJobControl } from './indexer';
import type { WorkerReply } from '../search/searchWorker';
import { lowerThreadPriority } from '../backgroundPriority';

/**
 * Entry point of the symbol worker thread (started through a SearchPool by
 * symbolIndex.ts, speaking the search worker's protocol). It keeps the
 * tree-sitter runtime and grammars loaded between jobs. A job is stopped
 * early through the shared flag the pool sets, polled between files.
 */

interface SymbolRequest {
  id: number;
  job: SymbolJob;
}

lowerThreadPriority();

const port = parentPort;
if (!port) throw new Error('symbolWorker.js must run as a worker thread');
const stopFlag = new Int32Array(workerData.stopBuffer as SharedArrayBuffer);

port.on('message', (request: SymbolRequest) => {
  const control: SymbolJobControl = {
    shouldStop: () => Atomics.load(stopFlag, 0) === request.id,
    sendFiles: (files) => port.postMessage({ type: 'part', id: request.id, part: files } satisfies WorkerReply),
  };
  runSymbolJob(request.job, control).then(
    (result) => port.postMessage({ type: 'done', id: request.id, result } satisfies WorkerReply),
    (error: unknown) => port.postMessage({ type: 'failed', id: request.id, message: error instanceof Error ? error.message : String(error) } satisfies WorkerReply),
  );
});

import { parentPort } from 'node:worker_threads';
import { countTextTokens } from './tokenizer';
import { lowerThreadPriority } from '../backgroundPriority';

/** Entry point of the token worker thread (started by tokenCounter.ts): counts texts, one request at a time. */

export interface TokenRequest {
  id: number;
  texts: string[];
}

export type TokenReply = { id: number; counts: number[] } | { id: number; error: string };

lowerThreadPriority();

const port = parentPort;
if (!port) throw new Error('tokenWorker.js must run as a worker thread');
port.on('message', (request: TokenRequest) => {
  try {
    port.postMessage({ id: request.id, counts: request.texts.map(countTextTokens) } satisfies TokenReply);
  } catch (err) {
    port.postMessage({ id: request.id, error: (err as Error).message } satisfies TokenReply);
  }
});

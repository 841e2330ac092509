import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { createOpenAIModel } from '../openai/chatModel';
import { warmModelPath } from '../openai/warmup';
import { countTextTokens } from '../tokenizer';
import { ModelError, ModelSettings } from '../types';
import type { FromModelThread, ModelThreadData, StreamItem, ThreadError, ToModelThread } from './messages';

/**
 * Entry point of the model thread (started by threadedModel.ts): the openai
 * SDK, Node's fetch and the parsing of every streamed reply run here, so a
 * reply's chunks cost the server's main thread one message per turn of this
 * thread's event loop instead of their HTTP, SSE and JSON work. The token
 * counts of what the requests carry are made here too (tokenizer.ts).
 */

/**
 * The longest a count holds the thread before the replies streaming beside
 * it get a turn: a resumed discussion's whole history is one count.
 */
const COUNT_SLICE_MS = 4;

/** How long the thread sleeps after posting a request's first delta (see Outbox). */
const FIRST_DELTA_PAUSE_MS = 0.3;
/** Never written: waiting on it is a sleep. */
const pauseCell = new Int32Array(new SharedArrayBuffer(4));

const port = parentPort;
if (!port) throw new Error('modelWorker.js must run as a worker thread');
const out = port;

/** The settings of the request being started: the model reads them as a call starts, in the same turn. */
let settings: ModelSettings = {};
const model = createOpenAIModel(() => settings, ((workerData ?? {}) as ModelThreadData).modelOptions ?? {});
const running = new Map<number, AbortController>();

function describe(error: unknown): ThreadError {
  if (error instanceof ModelError) return { message: error.message, modelError: { kind: error.kind, status: error.status, remedy: error.remedy } };
  return { message: error instanceof Error ? error.message : String(error) };
}

/**
 * A request's streamed items, sent together once this turn of the event loop
 * is done with them. The first goes at once: it is what the user waits for.
 */
class Outbox {
  private items: StreamItem[] = [];
  private scheduled = false;
  private sentAny = false;
  constructor(private readonly id: number) {}

  push(item: StreamItem): void {
    this.items.push(item);
    if (!this.sentAny) {
      this.sentAny = true;
      this.flush();
      // This thread steps off its CPU for a moment, so that the main thread, woken by the message, can take the
      // first delta on to the client at once: on two CPUs that this thread and the endpoint's stream kept busy,
      // the main thread waited for one, about a millisecond at the median.
      Atomics.wait(pauseCell, 0, 0, FIRST_DELTA_PAUSE_MS);
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.scheduled = false;
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    out.postMessage({ kind: 'stream', id: this.id, items } satisfies FromModelThread);
  }
}

async function countAll(texts: string[]): Promise<number[]> {
  const counts: number[] = [];
  let since = performance.now();
  for (const text of texts) {
    counts.push(countTextTokens(text));
    if (performance.now() - since >= COUNT_SLICE_MS) {
      await nextTurn();
      since = performance.now();
    }
  }
  return counts;
}

function settle(id: number, outbox: Outbox | undefined, work: Promise<FromModelThread>): void {
  void work
    .catch((error: unknown): FromModelThread => ({ kind: 'failed', id, error: describe(error) }))
    .then((message) => {
      running.delete(id);
      // What streamed before the end goes first.
      outbox?.flush();
      try {
        out.postMessage(message);
      } catch (error) {
        // An answer that cannot be copied back (a DataCloneError) fails its request alone.
        out.postMessage({ kind: 'failed', id, error: describe(error) } satisfies FromModelThread);
      }
    });
}

// One stray rejection must not end the thread, and with it every discussion's request (as on the main thread, main.ts).
process.on('unhandledRejection', () => undefined);

out.on('message', (message: ToModelThread) => {
  switch (message.kind) {
    case 'complete': {
      const { id } = message;
      const controller = new AbortController();
      running.set(id, controller);
      const outbox = new Outbox(id);
      settings = message.settings;
      const work = model
        .complete(
          { ...message.request, signal: controller.signal },
          (text) => outbox.push({ kind: 'delta', text }),
          {
            onReasoning: (text) => outbox.push({ kind: 'reasoning', text }),
            onAnswerRetracted: () => outbox.push({ kind: 'retracted' }),
            onRetry: (notice) => outbox.push({ kind: 'retry', notice }),
          },
        )
        .then((response): FromModelThread => ({ kind: 'completed', id, response }));
      settle(id, outbox, work);
      break;
    }
    case 'list': {
      const { id } = message;
      const controller = new AbortController();
      running.set(id, controller);
      settings = message.settings;
      settle(id, undefined, model.listModels(controller.signal).then((models): FromModelThread => ({ kind: 'listed', id, models })));
      break;
    }
    case 'abort':
      running.get(message.id)?.abort();
      break;
    case 'count': {
      const { id } = message;
      settle(id, undefined, countAll(message.texts).then((counts): FromModelThread => ({ kind: 'counted', id, counts })));
      break;
    }
    case 'warm': {
      const { id } = message;
      settle(id, undefined, warmModelPath((settings) => createOpenAIModel(settings)).then((): FromModelThread => ({ kind: 'warmed', id })));
      break;
    }
  }
});

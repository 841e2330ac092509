#!/usr/bin/env node
/**
 * The discussion server's entry point: builds the real collaborators and hands
 * them to the server. `--stdio` speaks the protocol on stdin/stdout (LSP
 * framing); `--node-ipc` is what the VS Code client uses.
 */
import * as os from 'node:os';
import { ProposedFeatures, createConnection } from 'vscode-languageserver/node';
import { systemClock } from './core/deps';
import type { ChatModel, ModelSettings } from './model/types';
import { startServer } from './server';
import { defaultStorageDir } from '../../shared/storageDir';
import { FileStore } from './store/fileStore';
import { createRepoAccess } from './read/repoAccess';
import { installBenchProbe } from './benchProbe';
import { createStdioConnection } from './stdioConnection';
import { tuneHeap } from './heapTuning';
import { sharedModelThread } from './model/threaded/threadedModel';
import { withLoopbackModel } from './model/openai/loopbackEndpoint';
import { withScratchStore } from './store/scratchStore';
import { WarmGate } from './model/warmGate';

tuneHeap();

/**
 * The OpenAI-compatible model, in a thread of its own (model/threaded/):
 * started, with the openai SDK and undici loaded in it, on the first call or
 * ahead of need, never at start: a server that was started but not yet asked
 * anything held them for nothing, which kept the idle server above 60 MB.
 */
const modelThread = sharedModelThread();

function openAIModelInItsThread(settings: () => ModelSettings): ChatModel {
  const model = modelThread.model(settings);
  return {
    complete: async (request, onDelta, observer) => {
      // A question that comes before the warm-up ran waits for it (warmGate.ts).
      await modelWarmUp.pass();
      return model.complete(request, onDelta, observer);
    },
    listModels: (signal, like) => model.listModels(signal, like),
  };
}

/** The warm-up (model/openai/warmup.ts) in the model's thread, run once: ahead of need, or for the first questions to come before it. */
const modelWarmUp = new WarmGate(() => modelThread.warm(), 250);

/**
 * The loads ahead of need, once a discussion is open, on a later tick so the
 * start's answer goes first: the model thread's start, with the tokenizer's
 * ranks and a first count, about 200 ms, which a first request that does not
 * fit the window at a glance (a repo map against the default 8,192 tokens
 * does not) would wait for, and one request through the model's code to a
 * loopback server of the thread's own (model/openai/warmup.ts). Then the
 * discussion readies what its first question would wait for
 * (Discussion.prepareAhead): its search thread and folder index, and the
 * counts of what its next request carries (a new one its system prompt and
 * tools, a resumed one its history as well); and its binding what it left
 * until the discussion had opened (the repository map, a census taken
 * afresh: RepoBinding.prepare). A model thread left unused
 * stops on its own (threadedModel.ts), so an unneeded warm-up costs its
 * memory no longer.
 */
let modelLoadsAhead: Promise<void> | undefined;
/** The loads ahead of need and what the latest discussion to open did after them (the bench probe waits for both). */
let preparedAhead: Promise<void> | undefined;
/** How long after the first discussion opens the model thread is started and warmed. */
const PREPARE_AFTER_OPEN_MS = 750;

function prepareModel(afterLoads: () => Promise<void>): void {
  modelLoadsAhead ??= (async () => {
    // After the opening discussion's replay, not during it: on two cores these loads, started at once,
    // took a resume from ~60 to ~100 ms. A user takes longer than this to type the first question.
    await new Promise<void>((resolve) => setTimeout(resolve, PREPARE_AFTER_OPEN_MS).unref());
    const counted = modelThread
      .count(['warm'])
      .catch(() => undefined);
    await modelWarmUp.start();
    await counted;
  })();
  // On a tick of its own: once the loads are done this would otherwise run
  // before the answer to the start that called it is sent. What is not done
  // ahead is done, or its count taken by bytes, when the request is made.
  preparedAhead = modelLoadsAhead
    .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    .then(afterLoads)
    .catch(() => undefined);
}

const transports = ['--stdio', '--node-ipc', '--socket', '--pipe'];
if (!process.argv.some((arg) => transports.some((t) => arg === t || arg.startsWith(`${t}=`)))) {
  process.stderr.write(
    'repo-discuss-server speaks JSON-RPC (LSP framing) to one client.\n' +
      'Usage: repo-discuss-server --stdio      (stdin/stdout)\n' +
      '       repo-discuss-server --node-ipc   (when spawned by the VS Code extension)\n' +
      'Model settings come from initializationOptions, or OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL.\n',
  );
  process.exit(2);
}

const connection = process.argv.includes('--stdio') ? createStdioConnection() : createConnection(ProposedFeatures.all);

// Node ends on these signals without running 'exit' handlers, and those handlers
// end the ripgreps the server started (ripgrep.ts, searchPool.ts): one blocked on
// a FIFO in a hostile folder outlived a server its client stopped with SIGTERM.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => process.exit(128 + os.constants.signals[signal]));
}

// One failed promise must not take every open discussion down with the process.
process.on('unhandledRejection', (reason) => {
  connection.console.error(`unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}`);
});

installBenchProbe(connection, process.env, { modelPrepared: () => preparedAhead });

startServer(connection, {
  createModel: openAIModelInItsThread,
  createRepoAccess: (options) => createRepoAccess({ ...options, log: (message) => connection.console.info(message) }),
  openStore: (storageDir) =>
    FileStore.open(storageDir || defaultStorageDir(), (message) => connection.console.error(message)),
  clock: systemClock,
  env: process.env,
  prepareModel,
  // The model made as the real one is (openAIModelInItsThread), so the rehearsed turn runs the same code.
  rehearse: (turn) => withLoopbackModel(openAIModelInItsThread, (model) => withScratchStore((scratch) => turn(model, scratch))),
});

#!/usr/bin/env node
/**
 * The discussion server's entry point: builds the real collaborators and hands
 * them to the server. `--stdio` speaks the protocol on stdin/stdout (LSP
 * framing); `--node-ipc` is what the VS Code client uses.
 */
import { ProposedFeatures, createConnection } from 'vscode-languageserver/node';
import { systemClock } from './core/deps';
import { createOpenAIModel } from './model/openai/chatModel';
import { startServer } from './server';
import { defaultStorageDir } from '../../shared/storageDir';
import { FileStore } from './store/fileStore';
import { createRepoAccess } from './read/repoAccess';
import { installBenchProbe } from './benchProbe';
import { tuneHeap } from './heapTuning';

tuneHeap();

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

const connection = createConnection(ProposedFeatures.all);

// One failed promise must not take every open discussion down with the process.
process.on('unhandledRejection', (reason) => {
  connection.console.error(`unhandled rejection: ${reason instanceof Error ? reason.stack ?? reason.message : String(reason)}`);
});

installBenchProbe(connection, process.env);

startServer(connection, {
  createModel: (settings) => createOpenAIModel(settings),
  createRepoAccess: (options) => createRepoAccess({ ...options, log: (message) => connection.console.info(message) }),
  openStore: (storageDir) =>
    FileStore.open(storageDir || defaultStorageDir(), (message) => connection.console.error(message)),
  clock: systemClock,
  env: process.env,
});

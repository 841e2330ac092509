/**
 * The fallback of the activation benchmark, when no VS Code extension host
 * can be started: loads an extension bundle in plain Node with a stub
 * `vscode` module, times the require() and activate() with the same
 * boundaries the extension host uses, and prints them as one JSON line.
 * One process per run: a second require() in the same process would be
 * answered from Node's module cache and V8's compilation cache.
 *
 *   node out/test/bench/activationNodeHost.js <extensionDir>
 *
 * It overstates the extension host's figure: Node's own modules the bundle
 * needs (streams, crypto, child_process) load cold here, while the
 * extension host has loaded them before any extension.
 */
import Module from 'node:module';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ActivationSample } from './activationMarks';

/**
 * Stands for any part of the `vscode` API: every property, call and `new`
 * gives another stand-in and every assignment is taken, so activation runs
 * through whatever it touches. Not thenable, so awaiting one does not hang.
 */
function standIn(): unknown {
  return new Proxy(function stub() {}, {
    get: (_target, key) => (key === 'then' ? undefined : key === Symbol.toPrimitive ? () => '' : standIn()),
    set: () => true,
    apply: () => standIn(),
    construct: () => standIn() as object,
  });
}

function fakeContext(extensionDir: string): unknown {
  const memento = { get: () => undefined, update: async () => undefined, keys: () => [] };
  return {
    subscriptions: [],
    extensionPath: extensionDir,
    extensionUri: standIn(),
    extension: { id: 'repo-discuss.repo-discuss' },
    asAbsolutePath: (relative: string) => path.join(extensionDir, relative),
    workspaceState: memento,
    globalState: memento,
    secrets: { get: async () => undefined, store: async () => undefined, delete: async () => undefined, onDidChange: standIn() },
  };
}

async function main(): Promise<void> {
  const extensionDir = path.resolve(process.argv[2] ?? '');
  const loader = Module as unknown as { _load(request: string, ...rest: unknown[]): unknown };
  const load = loader._load;
  // A stand-in as the prototype, not the module itself: a bundle's import
  // helper copies only a module's own properties and keeps its prototype.
  const vscode = Object.create(standIn() as object) as object;
  loader._load = function (this: unknown, request: string, ...rest: unknown[]) {
    return request === 'vscode' ? vscode : load.call(this, request, ...rest);
  };

  const main = path.join(extensionDir, 'dist', 'extension.js');
  const loadStart = performance.now();
  const extension = require(main) as { activate(context: unknown): unknown };
  const activateStart = performance.now();
  await Promise.resolve(extension.activate(fakeContext(extensionDir)));
  const activated = performance.now();

  const sample: ActivationSample = { codeLoadingMs: activateStart - loadStart, activateMs: activated - activateStart };
  process.stdout.write(`${JSON.stringify(sample)}\n`);
  // Whatever activation started after it returned (the server's start) is not measured and must not keep the process.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

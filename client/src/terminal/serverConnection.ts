import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import type { DiscussMethod, DiscussionEvent, InitializationOptions, ParamsOf, ResultOf } from '../../../shared/protocol';
import type { RpcChannel } from '../common/discussionHub';
import { errorText } from '../../../shared/errorText';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS } from '../../../shared/serverNodeFlags';
import { FolderWatches, loadFileWatcher, type FileEvent } from './folderWatcher';

/**
 * The server this client runs, found relative to this file: a bundle ships
 * `server.js` beside the client; a development build has tsc's output.
 */
export function serverEntry(clientDir: string = __dirname): string {
  const candidates = [path.join(clientDir, 'server.js'), path.resolve(clientDir, '../../../server/src/main.js')];
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found) {
    throw new Error(
      `Cannot find the Repo Discuss server (looked for ${candidates.join(' and ')}). ` +
        'Build it with `npx tsc -p .` (or `npm run build`) in the repo-discuss folder.',
    );
  }
  return found;
}

/** Lines of server log kept for the message shown if it dies. */
const LOG_LINES_KEPT = 40;
/** How long a polite shutdown may take before the process is killed. */
const SHUTDOWN_GRACE_MS = 5_000;

export interface ServerStartOptions {
  initializationOptions: InitializationOptions;
  clientVersion: string;
  /** Called with each line the server logs, as it arrives. */
  onLog?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
  entry?: string;
  /** Report file changes in the folders discussed (default true, where the watcher loads): see folderWatcher.ts. */
  watchFiles?: boolean;
  /** Called with each batch of file changes once it is sent to the server. */
  onFileChangesReported?: (changes: FileEvent[]) => void;
  /** The watcher library (default: loadFileWatcher's); tests pass one that fails. */
  fileWatcher?: ReturnType<typeof loadFileWatcher>;
}

/** Why the server process ended, when it was not asked to. */
export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One server process on stdio, spoken to with JSON-RPC (LSP framing) exactly
 * as any editor would. It lives as long as this command.
 */
export class ServerConnection {
  private readonly log: string[] = [];
  private stopping = false;
  readonly exited: Promise<ServerExit>;
  private readonly watches: FolderWatches | undefined;
  /** The folders the server was told are watched (as workspace folders). */
  private readonly toldWatched = new Set<string>();

  private constructor(
    private readonly child: ChildProcess,
    readonly rpc: MessageConnection,
    onLog: ((line: string) => void) | undefined,
    fileWatcher: ReturnType<typeof loadFileWatcher>,
    onFileChangesReported?: (changes: FileEvent[]) => void,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const remember = (text: string) => {
      for (const line of text.split(/\r?\n/)) {
        if (!line.trim()) continue;
        this.log.push(line);
        if (this.log.length > LOG_LINES_KEPT) this.log.shift();
        onLog?.(line);
      }
    };
    rpc.onNotification('window/logMessage', (params: { message?: string }) => remember(String(params?.message ?? '')));
    child.stderr?.on('data', (chunk: Buffer) => remember(chunk.toString('utf8')));
    if (fileWatcher) {
      this.watches = new FolderWatches(fileWatcher, {
        report: (changes) =>
          void this.rpc.sendNotification('workspace/didChangeWatchedFiles', { changes }).then(
            () => onFileChangesReported?.(changes),
            () => undefined,
          ),
        lost: (folder, reason) => {
          remember(`file watching of ${folder} is off (${reason}); its symbol index looks at the folder before answering`);
          if (this.toldWatched.delete(folder)) void this.tellFolders([], [folder]);
        },
      });
      // The server asks to be sent file changes (and nothing else) once it is initialized.
      rpc.onRequest('client/registerCapability', () => null);
      // The only setting it asks: whether watcher excludes hide anything. None do, in a folder whose watch is live.
      rpc.onRequest('workspace/configuration', (params: { items?: Array<{ scopeUri?: string; section?: string }> }) =>
        (params?.items ?? []).map((item) => (item.section === 'files.watcherExclude' && this.isWatched(item.scopeUri) ? {} : null)),
      );
    }
  }

  /** The capabilities this client declares: file watching, when it can. */
  private get capabilities(): object {
    return this.watches ? { workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, configuration: true, workspaceFolders: true } } : {};
  }

  private isWatched(uri: string | undefined): boolean {
    if (!uri || !this.watches) return false;
    try {
      const folder = fileURLToPath(uri);
      return this.toldWatched.has(folder) && this.watches.watching(folder);
    } catch {
      return false;
    }
  }

  /**
   * Reports file changes in `folder` (a real path) to the server from now
   * on: true once the server has been told the folder is watched, false when
   * this client cannot watch it (the server then walks the folder as before).
   */
  async watchFolder(folder: string): Promise<boolean> {
    if (!this.watches || this.stopping) return false;
    if (this.toldWatched.has(folder)) return true;
    if (!(await this.watches.watch(folder)) || this.stopping) return false;
    if (!this.toldWatched.has(folder)) {
      this.toldWatched.add(folder);
      await this.tellFolders([folder], []);
    }
    return true;
  }

  /** Stops reporting `folder`'s changes, and tells the server its symbol index looks at the folder itself again. */
  async unwatchFolder(folder: string): Promise<void> {
    if (!this.watches || this.stopping) return;
    // Told before the watch has stopped: told after, it could follow the "added" of a new watch of the folder started
    // meanwhile, and the server would walk a folder that is watched.
    const told = this.toldWatched.delete(folder) ? this.tellFolders([], [folder]) : undefined;
    await this.watches.unwatch(folder);
    await told;
  }

  private async tellFolders(added: string[], removed: string[]): Promise<void> {
    const folder = (realPath: string) => ({ uri: pathToFileURL(realPath).href, name: path.basename(realPath) });
    await this.rpc.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: added.map(folder), removed: removed.map(folder) } }).catch(() => undefined);
  }

  static async start(options: ServerStartOptions): Promise<ServerConnection> {
    const entry = options.entry ?? serverEntry();
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, entry, '--stdio'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...(options.env ?? process.env), ...SERVER_ENVIRONMENT },
      // Its own process group: a Ctrl+C typed in the terminal reaches only
      // this client, which turns it into a cancel rather than killing the
      // server mid-save. The server still exits when our pipe closes.
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    const rpc = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    // A write to a server that just died must not crash the client; the exit is reported instead.
    child.stdin!.on('error', () => undefined);
    rpc.onError(() => undefined);
    const server = new ServerConnection(child, rpc, options.onLog, options.watchFiles === false ? undefined : (options.fileWatcher ?? loadFileWatcher()), options.onFileChangesReported);
    rpc.listen();
    const spawned = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`Cannot start the server (${err.message}).`))));
    const died = server.exited.then((exit): never => {
      throw new Error(`The server stopped while starting (${describeExit(exit)}).${server.logTail()}`);
    });
    try {
      await Promise.race([
        rpc.sendRequest('initialize', {
          processId: process.pid,
          clientInfo: { name: 'repo-discuss', version: options.clientVersion },
          rootUri: null,
          workspaceFolders: null,
          capabilities: server.capabilities,
          initializationOptions: options.initializationOptions,
        }),
        spawned,
        died,
      ]);
      await rpc.sendNotification('initialized', {});
    } catch (err) {
      server.child.kill('SIGKILL');
      rpc.dispose();
      throw new Error(initializeFailure(err));
    }
    return server;
  }

  /** The connection as the discussion hub wants it. */
  channel(): RpcChannel {
    return {
      request: <M extends DiscussMethod>(method: M, params: ParamsOf<M>) => this.rpc.sendRequest(method, params) as Promise<ResultOf<M>>,
      onNotification: (method, handler) => this.rpc.onNotification(method, (params: DiscussionEvent) => handler(params)),
    };
  }

  /** True unless the process ended without being asked to. */
  get expectedExit(): boolean {
    return this.stopping;
  }

  /** The last lines the server logged, as a block to append to a message. */
  logTail(lines = 8): string {
    const tail = this.log.slice(-lines);
    return tail.length ? `\nLast server log lines:\n  ${tail.join('\n  ')}` : '';
  }

  /**
   * Shutdown then exit, as the protocol asks: the server closes its
   * discussions, saves them and releases their leases. Killed if it hangs.
   */
  async stop(): Promise<void> {
    if (this.stopping) {
      await this.exited;
      return;
    }
    this.stopping = true;
    await this.watches?.close();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const grace = setTimeout(() => this.child.kill('SIGKILL'), SHUTDOWN_GRACE_MS);
    try {
      await Promise.race([
        (async () => {
          await this.rpc.sendRequest('shutdown');
          await this.rpc.sendNotification('exit');
        })(),
        this.exited,
      ]);
      await this.exited;
    } catch {
      this.child.kill('SIGKILL');
      await this.exited;
    } finally {
      clearTimeout(grace);
      this.rpc.dispose();
    }
  }
}

export function describeExit(exit: ServerExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

/** The initialize error as the server worded it, without JSON-RPC's wrapping. */
function initializeFailure(err: unknown): string {
  const message = errorText(err);
  const unwrapped = message.replace(/^Request initialize failed with message:\s*/, '');
  if (/storage setting|storageDir|save discussions/.test(unwrapped)) {
    return `${unwrapped.replace(/ with the storage setting \(initializationOptions\.storageDir\)/, '')} Use --storage-dir DIR, or "storageDir" in the config file.`;
  }
  return unwrapped;
}

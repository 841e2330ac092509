import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import {
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { EventNotification, type DiscussionEvent, type InitializationOptions } from '../../shared/protocol';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS } from '../../shared/serverNodeFlags';

/** The built server entry, as `package.json`'s bin names it. */
export const SERVER_ENTRY = path.resolve(__dirname, '../../server/src/main.js');

/** What the test's client declares, and how it answers the server's own requests (set up before the handshake, which may bring the first). */
export interface ClientSide {
  capabilities?: object;
  answer?(rpc: MessageConnection): void;
}

/**
 * The real server process, driven over stdio with vscode-jsonrpc exactly as a
 * client would, with every `discuss/event` it sends collected for waiting on.
 */
export class ServerProcess {
  readonly events: DiscussionEvent[] = [];
  readonly stderr: string[] = [];
  private readonly waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  private readonly logWaiters: Array<{ pattern: RegExp; resolve: (message: string) => void }> = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly rpc: MessageConnection,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    rpc.onNotification(EventNotification.method, (event: DiscussionEvent) => {
      this.events.push(event);
      this.check();
    });
    rpc.onNotification('window/logMessage', (p: { message: string }) => {
      this.stderr.push(p.message);
      for (const waiter of this.logWaiters.splice(0)) {
        if (waiter.pattern.test(p.message)) waiter.resolve(p.message);
        else this.logWaiters.push(waiter);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString()));
  }

  static async start(
    options: InitializationOptions = {},
    env: Record<string, string | undefined> = {},
    workspaceFolders: Array<{ uri: string; name: string }> | null = null,
    entry: string = SERVER_ENTRY,
    client: ClientSide = {},
  ): Promise<ServerProcess> {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, entry, '--stdio'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, ...SERVER_ENVIRONMENT },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const rpc = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    rpc.onError(() => undefined);
    rpc.onClose(() => undefined);
    client.answer?.(rpc);
    rpc.listen();
    const server = new ServerProcess(child, rpc);
    await rpc.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: client.capabilities ?? {}, workspaceFolders, initializationOptions: options });
    await rpc.sendNotification('initialized', {});
    return server;
  }

  request<R>(method: string, params: unknown): Promise<R> {
    return this.rpc.sendRequest(method, params) as Promise<R>;
  }

  /** Whether the server has logged (window/logMessage) a message that matches, so far. */
  logged(pattern: RegExp): boolean {
    return this.stderr.some((message) => pattern.test(message));
  }

  /** Resolves with the first message the server logs (window/logMessage) that matches, past or future. */
  untilLogged(pattern: RegExp): Promise<string> {
    const seen = this.stderr.find((message) => pattern.test(message));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.logWaiters.push({ pattern, resolve }));
  }

  /** Resolves when the collected events satisfy `test`. */
  until(test: (events: DiscussionEvent[]) => boolean): Promise<void> {
    const check = () => test(this.events);
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test: check, resolve }));
  }

  of<T extends DiscussionEvent['type']>(discussionId: string, type: T): Array<Extract<DiscussionEvent, { type: T }>> {
    return this.events.filter((e) => e.discussionId === discussionId && e.type === type) as Array<Extract<DiscussionEvent, { type: T }>>;
  }

  turnsComplete(discussionId: string, n: number): Promise<void> {
    return this.until((events) => events.filter((e) => e.discussionId === discussionId && e.type === 'turn_complete').length >= n);
  }

  /** Polite stop: shutdown then exit, as a client does. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    try {
      await this.rpc.sendRequest('shutdown');
      await this.rpc.sendNotification('exit');
    } catch {
      this.child.kill('SIGKILL');
    }
    await this.exited;
    this.rpc.dispose();
  }

  /** A crash: no shutdown, no chance to save anything more. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
    this.rpc.dispose();
  }

  private check(): void {
    for (const w of [...this.waiters]) {
      if (w.test()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
}

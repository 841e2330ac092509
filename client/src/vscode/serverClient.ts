import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { ConfigureRequest, IdeQueryRequest, LmDeltaNotification, LmModelsRequest, LmRequest, type DiscussMethod, type DiscussionEvent, type ParamsOf, type ResultOf } from '../../../shared/protocol';
import type { DiscussionHub, RpcChannel } from '../common/discussionHub';
import { bundledRipgrep } from '../common/ripgrep';
import type * as languageClient from './languageClient';
import type { ErrorHandler, LanguageClient, LanguageClientOptions, ServerOptions } from './languageClient';
import { answerIdeQuery } from './ideQueries';
import { answerLmModels, answerLmRequest } from './languageModels';
import { initializationOptions, modelConfig, readApiKey, readSettings } from './settings';
import { errorText } from '../../../shared/errorText';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS } from '../../../shared/serverNodeFlags';

/** Restart delays after a crash: quick at first, then patient. */
const RESTART_DELAYS_MS = [500, 2_000, 5_000, 15_000, 30_000];
/** A server that stayed up this long has recovered; the backoff starts over. */
const STABLE_AFTER_MS = 60_000;

/**
 * Loads the language client on first start rather than with the extension
 * (see languageClient.ts). A require() that esbuild leaves as it is
 * (client/bundle.mjs): dist/languageClient.js beside dist/extension.js.
 */
function loadLanguageClient(): typeof languageClient {
  try {
    return require('./languageClient') as typeof languageClient;
  } catch (err) {
    throw new Error(
      `the extension's language client (languageClient.js beside extension.js) could not be loaded: ${(err as Error).message}. Reinstall the extension; from a checkout, run npm run build.`,
    );
  }
}

/**
 * The language client and everything that lives exactly as long as one server
 * process. Restart is stop, dispose, start: server-lifetime disposables never
 * outlive their server, and extension-lifetime ones never die with it.
 */
export class ServerClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private serverDisposables: vscode.Disposable[] = [];
  private starting: Promise<void> | undefined;
  private crashes = 0;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private readonly stateEmitter = new vscode.EventEmitter<'running' | 'stopped'>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly settingsEmitter = new vscode.EventEmitter<void>();
  /** Fires once the server has taken changed settings or a changed key. */
  readonly onDidPushSettings = this.settingsEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly hub: DiscussionHub,
    readonly log: vscode.LogOutputChannel,
  ) {}

  get isRunning(): boolean {
    return this.client?.isRunning() ?? false;
  }

  /** Starts the server if it is not running; concurrent callers share one start. */
  ensureStarted(): Promise<void> {
    if (this.isRunning) return Promise.resolve();
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async restart(reason: string): Promise<void> {
    this.log.info(`restarting the server: ${reason}`);
    await this.stop();
    await this.ensureStarted();
    const failed = await this.hub.reconnectAll();
    for (const f of failed) this.log.warn(`could not resume ${f.id}: ${f.reason}`);
  }

  /** Pushes the current endpoint settings and key to the running server. */
  async pushSettings(): Promise<void> {
    // A change made while the server starts would otherwise be lost: start()
    // may have read the settings before the change.
    if (this.starting) await this.starting.catch(() => undefined);
    const client = this.client;
    if (!client || !this.isRunning) return;
    const apiKey = await readApiKey(this.context.secrets);
    await client.sendRequest(ConfigureRequest.method, {
      model: modelConfig(apiKey),
      denyRead: readSettings().denyRead,
    });
    this.settingsEmitter.fire();
  }

  private serverModule(): string {
    // The packaged extension ships a bundle; a development checkout runs tsc's output.
    const bundled = this.context.asAbsolutePath('dist/server.js');
    return fs.existsSync(bundled) ? bundled : this.context.asAbsolutePath('out/server/src/main.js');
  }

  private async start(): Promise<void> {
    if (this.disposed) return;
    const apiKey = await readApiKey(this.context.secrets);
    // After the first await: activation, which calls this, has returned by now.
    const { LanguageClient, State, TransportKind } = loadLanguageClient();
    const module = this.serverModule();
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc, options: { execArgv: [...SERVER_NODE_FLAGS], env: { ...SERVER_ENVIRONMENT } } },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: [...SERVER_NODE_FLAGS, '--nolazy', '--inspect=6019'], env: { ...SERVER_ENVIRONMENT } } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.log,
      initializationOptions: initializationOptions(apiKey, bundledRipgrep(vscode.env.appRoot)),
      errorHandler: this.errorHandler(),
    };
    const client = new LanguageClient('repoDiscuss', 'Repo Discuss', serverOptions, clientOptions);
    this.client = client;
    this.serverDisposables.push(
      client.onDidChangeState((e) => {
        if (e.newState === State.Running) this.stateEmitter.fire('running');
        if (e.newState === State.Stopped) this.stateEmitter.fire('stopped');
      }),
    );
    await client.start();
    this.startedAt = Date.now();
    // The symbol tools' questions to VS Code's own language providers (initializationOptions.ideQueries).
    this.serverDisposables.push(client.onRequest(IdeQueryRequest.method, (params: IdeQueryRequest.Params, token) => answerIdeQuery(params, token)));
    // Model requests of discussions held with VS Code's language models (initializationOptions.languageModels).
    this.serverDisposables.push(
      client.onRequest(LmRequest.method, async (params: LmRequest.Params, token) => {
        // Chained and awaited: the client's send is async, and a part that reached the server after the result would be lost.
        let sending: Promise<void> = Promise.resolve();
        const result = await answerLmRequest(params, token, (delta) => {
          sending = sending.then(() => client.sendNotification(LmDeltaNotification.method, delta)).catch(() => undefined);
        });
        await sending;
        return result;
      }),
      client.onRequest(LmModelsRequest.method, () => answerLmModels()),
    );
    const channel: RpcChannel = {
      request: <M extends DiscussMethod>(method: M, params: ParamsOf<M>) => client.sendRequest<ResultOf<M>>(method, params),
      onNotification: (method, handler) => client.onNotification(method, (p: DiscussionEvent) => handler(p)),
    };
    this.hub.connect(channel);
    this.log.info(`server started (${module})`);
  }

  /**
   * A crashed server is restarted here, with backoff and a message, rather
   * than by the library's fixed policy: the open discussions must be resumed
   * from disk after every restart, and the user told what happened.
   */
  private errorHandler(): ErrorHandler {
    const { CloseAction, ErrorAction } = loadLanguageClient();
    return {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        if (this.disposed) return { action: CloseAction.DoNotRestart };
        this.hub.disconnect();
        if (Date.now() - this.startedAt > STABLE_AFTER_MS) this.crashes = 0;
        const delay = RESTART_DELAYS_MS[Math.min(this.crashes, RESTART_DELAYS_MS.length - 1)];
        this.crashes++;
        this.log.error(`the server stopped unexpectedly; restarting in ${delay} ms (attempt ${this.crashes})`);
        void vscode.window
          .showWarningMessage(`Repo Discuss: the server stopped unexpectedly and is restarting. Open discussions will resume.`, 'Show logs')
          .then((choice) => choice && this.log.show());
        this.restartTimer = setTimeout(() => void this.restart('crash').catch((err) => this.log.error(String(err))), delay);
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    };
  }

  async stop(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.hub.disconnect();
    const client = this.client;
    this.client = undefined;
    for (const d of this.serverDisposables.splice(0)) d.dispose();
    if (client) {
      try {
        if (client.isRunning()) await client.stop(5_000);
      } catch (err) {
        this.log.warn(`stopping the server: ${errorText(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  dispose(): void {
    this.disposed = true;
    void this.stop();
    this.stateEmitter.dispose();
    this.settingsEmitter.dispose();
  }
}

import {
  CodeActionKind,
  ErrorCodes,
  MessageType,
  ShowMessageNotification,
  ResponseError,
  TextDocumentSyncKind,
  TextDocuments,
  type CodeAction,
  type Connection,
  type InitializeResult,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { denyReadSettingProblem } from './tools/policy';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  DISCUSS_SELECTION_COMMAND,
  PROMOTE_LOCATION_COMMAND,
  codeActionsFor,
  insideWorkspace,
  locationMessage,
  type CodeLocation,
} from './codeActions';
import {
  CancelRequest,
  CloseRequest,
  ConfigureRequest,
  ConsumeTaskRequest,
  DeleteRequest,
  ExportRequest,
  EventNotification,
  ListRequest,
  ModelsRequest,
  PromoteRequest,
  RenameRequest,
  SendRequest,
  StartRequest,
  SubscribeRequest,
  UnsubscribeRequest,
  type DiscussionEvent,
  type InitializationOptions,
  type ModelConfig,
} from './protocol';
import type { ChatModel, ModelSettings } from './model/types';
import type { Clock, Logger, RepoAccess } from './core/deps';
import { DiscussError } from './core/errors';
import { DiscussionService } from './core/service';
import type { DiscussionStore } from './store/types';

/** The real-world collaborators, built by the entry point (or by a test). */
export interface ServerDeps {
  createModel(settings: () => ModelSettings): ChatModel;
  createRepoAccess(options: { ripgrepPath?: string | null }): RepoAccess;
  openStore(storageDir: string | undefined): Promise<DiscussionStore>;
  clock: Clock;
  /** Environment fallbacks for the model settings (OPENAI_BASE_URL and friends). */
  env: Record<string, string | undefined>;
  /** Where log lines go; defaults to the connection's console. */
  logger?: Logger;
}

/** How often idle discussions are looked for, besides on every start. */
const REAP_INTERVAL_MS = 5 * 60 * 1000;

/** The one subscriber a connection is: each server process serves one client. */
const CONNECTION_SUBSCRIBER = 'connection';

/**
 * Binds the discussion protocol to `connection`. Handlers only translate:
 * params in, service call, result or an actionable error out.
 */
export function startServer(connection: Connection, deps: ServerDeps): void {
  const logger: Logger = deps.logger ?? {
    info: (m) => connection.console.info(m),
    warn: (m) => connection.console.warn(m),
    error: (m) => connection.console.error(m),
  };
  let settings: ModelSettings = modelFromEnv(deps.env);
  let denyRead: string[] = [];
  let contextTokens: number | undefined;
  let service: DiscussionService | undefined;
  let repos: RepoAccess | undefined;
  let reaper: NodeJS.Timeout | undefined;

  const ready = (): DiscussionService => {
    if (!service) throw new DiscussError('InvalidParams', 'The server is not initialized yet — send initialize first.');
    return service;
  };

  const documents = new TextDocuments(TextDocument);
  let workspaceFolders: string[] = [];

  let clientWatchesFolders = false;
  let clientRunsCommands = false;

  connection.onInitialize(async (params): Promise<InitializeResult> => {
    clientWatchesFolders = params.capabilities.workspace?.workspaceFolders === true;
    clientRunsCommands = (params.initializationOptions as InitializationOptions | undefined)?.clientCommands === true;
    workspaceFolders = (params.workspaceFolders ?? []).flatMap((f) => safePath(f.uri));
    const options = (params.initializationOptions ?? {}) as InitializationOptions;
    const invalid = invalidSettings(options);
    if (invalid) throw new ResponseError(ErrorCodes.InvalidParams, `initializationOptions: ${invalid}`);
    settings = mergeModel(settings, options.model);
    contextTokens = positiveInt(options.model?.contextTokens) ?? contextTokens;
    denyRead = stringArray(options.denyRead);
    const store = await deps.openStore(options.storageDir);
    repos = deps.createRepoAccess({ ripgrepPath: options.ripgrepPath });
    const model = deps.createModel(() => settings);
    service = new DiscussionService(
      {
        model,
        repos,
        clock: deps.clock,
        logger,
        defaultModel: () => settings.model,
        denyRead: () => denyRead,
        contextTokens: () => contextTokens,
      },
      store,
    );
    reaper = setInterval(() => void service?.reapIdle(), REAP_INTERVAL_MS);
    reaper.unref();
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        ...(options.clientCommands === true ? {} : { executeCommandProvider: { commands: [DISCUSS_SELECTION_COMMAND, PROMOTE_LOCATION_COMMAND] } }),
        workspace: { workspaceFolders: { supported: true, changeNotifications: clientWatchesFolders } },
      },
      serverInfo: { name: 'repo-discuss-server', version: '0.1.0' },
    };
  });

  connection.onRequest(StartRequest.method, (p: StartRequest.Params) => handle(() => ready().start(p ?? {})));
  connection.onRequest(SendRequest.method, (p: SendRequest.Params) =>
    handle(() => ready().send(p?.discussionId, p?.text)),
  );
  const eventSink = { deliver: (event: DiscussionEvent) => connection.sendNotification(EventNotification.method, event) };
  connection.onRequest(SubscribeRequest.method, (p: SubscribeRequest.Params) =>
    handle(() => ({ eventsReplayed: ready().subscribe(p?.discussionId, CONNECTION_SUBSCRIBER, eventSink, p?.fromSeq) })),
  );
  connection.onRequest(UnsubscribeRequest.method, (p: UnsubscribeRequest.Params) =>
    handle(() => {
      ready().unsubscribe(p?.discussionId, CONNECTION_SUBSCRIBER);
      return { ok: true as const };
    }),
  );
  connection.onRequest(CancelRequest.method, (p: CancelRequest.Params) =>
    handle(() => {
      ready().cancel(p?.discussionId);
      return { ok: true as const };
    }),
  );
  connection.onRequest(PromoteRequest.method, (p: PromoteRequest.Params) =>
    handle(() => ready().promote(p?.discussionId)),
  );
  connection.onRequest(CloseRequest.method, (p: CloseRequest.Params) =>
    handle(async () => {
      await ready().close(p?.discussionId);
      return { ok: true as const };
    }),
  );
  connection.onRequest(ListRequest.method, (p: ListRequest.Params) => handle(() => ready().list(p ?? {})));
  connection.onRequest(ModelsRequest.method, () => handle(async () => ({ models: await ready().models() })));
  connection.onRequest(RenameRequest.method, (p: RenameRequest.Params) =>
    handle(() => {
      ready().rename(p?.discussionId, p?.title);
      return { ok: true as const };
    }),
  );
  connection.onRequest(ConsumeTaskRequest.method, (p: ConsumeTaskRequest.Params) =>
    handle(() => ({ ok: true as const, handoff: ready().consumeTask(p?.discussionId, p?.target, p?.task) })),
  );
  connection.onRequest(DeleteRequest.method, (p: DeleteRequest.Params) =>
    handle(async () => {
      await ready().delete(p?.discussionId);
      return { ok: true as const };
    }),
  );
  connection.onRequest(ExportRequest.method, (p: ExportRequest.Params) =>
    handle(() => ready().export(p?.discussionId, p?.format ?? 'markdown')),
  );
  connection.onRequest(ConfigureRequest.method, (p: ConfigureRequest.Params) =>
    handle(() => {
      // Checked whole before anything changes: a malformed field must never
      // wipe a setting (a deny rule silently dropped widens what is readable).
      const invalid = invalidSettings(p ?? {});
      if (invalid) throw new DiscussError('InvalidParams', invalid);
      if (p?.model) {
        settings = mergeModel(settings, p.model);
        if (p.model.contextTokens !== undefined) contextTokens = positiveInt(p.model.contextTokens);
      }
      if (p?.denyRead) denyRead = stringArray(p.denyRead);
      return { ok: true as const };
    }),
  );

  connection.onInitialized(() => {
    // After the handshake, so it never delays the client's start.
    setImmediate(() => repos?.prepare?.());
    // Only a client that declared it sends folder changes; asking another one errors.
    if (!clientWatchesFolders) return;
    connection.workspace.onDidChangeWorkspaceFolders((change) => {
      const removed = new Set(change.removed.map((f) => f.uri));
      const kept = workspaceFolders.filter((f) => !removed.has(pathToUri(f)));
      workspaceFolders = [...kept, ...change.added.flatMap((f) => safePath(f.uri))];
    });
  });

  // "Discuss selection" and "Promote to task", on selections and TODO comments.
  connection.onCodeAction((params): CodeAction[] => {
    const document = documents.get(params.textDocument.uri);
    if (!document) return [];
    return codeActionsFor(params.textDocument.uri, document.getText(), params.range, workspaceFolders).map((action) => ({
      title: action.title,
      kind: CodeActionKind.QuickFix,
      command: { title: action.title, command: action.command, arguments: [action.location] },
    }));
  });
  /**
   * Editors without the extension (Neovim, Helix) run the code actions'
   * commands here: the location goes into the folder's open discussion (one
   * is started if needed), which this connection is subscribed to.
   */
  connection.onExecuteCommand((params) =>
    handle(async () => {
      const location = params.arguments?.[0] as CodeLocation | undefined;
      if (clientRunsCommands) {
        throw new DiscussError('InvalidParams', `${params.command} is run by this client itself, not by the server.`);
      }
      if (
        (params.command !== DISCUSS_SELECTION_COMMAND && params.command !== PROMOTE_LOCATION_COMMAND) ||
        !location ||
        typeof location.uri !== 'string'
      ) {
        throw new DiscussError('InvalidParams', `Unknown command or arguments: ${params.command}.`);
      }
      const folder = workspaceFolders
        .filter((f) => insideWorkspace(location.uri, [f]))
        .sort((a, b) => b.length - a.length)[0];
      if (!folder) throw new DiscussError('InvalidParams', 'That file is not inside a workspace folder, so a discussion cannot read it.');
      const service = ready();
      const { discussions } = await service.list({ folder });
      const discussionId = discussions[0]?.discussionId ?? (await service.start({ folder })).discussionId;
      const discussion = service.find(discussionId)!;
      // Sent first: a refused send (a turn is running) changes nothing.
      const sent = service.send(discussionId, locationMessage(location, discussion.repo, params.command === PROMOTE_LOCATION_COMMAND));
      // Subscribed from the message on, unless this connection already is:
      // replacing a live subscription would drop what it had queued.
      if (!discussion.stream.hasSubscriber(CONNECTION_SUBSCRIBER)) {
        service.subscribe(discussionId, CONNECTION_SUBSCRIBER, eventSink, sent.seq);
      }
      // A notification, not a request: a client that cannot answer requests must not be asked one.
      void connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Info, message: `Repo Discuss: sent to discussion ${discussionId}.` });
      return { discussionId, seq: sent.seq };
    }),
  );
  documents.listen(connection);

  connection.onShutdown(async () => {
    if (reaper) clearInterval(reaper);
    await service?.dispose();
  });

  connection.listen();
}

/** Runs a handler, turning a refusal into a JSON-RPC error a person can act on. */
async function handle<T>(run: () => T | Promise<T>): Promise<T | ResponseError<void>> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof DiscussError) return new ResponseError(err.code, err.message);
    const message = err instanceof Error ? err.message : String(err);
    return new ResponseError(ErrorCodes.InternalError, `The server failed: ${message}. See the server log for details.`);
  }
}

function safePath(uri: string): string[] {
  try {
    return [fileURLToPath(uri)];
  } catch {
    return [];
  }
}

function pathToUri(file: string): string {
  return pathToFileURL(file).href;
}

function modelFromEnv(env: Record<string, string | undefined>): ModelSettings {
  return {
    baseUrl: env.OPENAI_BASE_URL || undefined,
    apiKey: env.OPENAI_API_KEY || undefined,
    model: env.OPENAI_MODEL || undefined,
  };
}

/** Fields given replace the current ones; an empty string clears one. */
function mergeModel(current: ModelSettings, update: ModelConfig | undefined): ModelSettings {
  if (!update || typeof update !== 'object') return current;
  const next = { ...current };
  for (const key of ['baseUrl', 'apiKey', 'model', 'apiVersion'] as const) {
    const value = update[key];
    if (typeof value === 'string') next[key] = value.trim() === '' ? undefined : value.trim();
  }
  return next;
}

/** What is wrong with model settings or deny rules from a client, if anything. */
function invalidSettings(options: { model?: unknown; denyRead?: unknown; storageDir?: unknown }): string | undefined {
  if (options.model !== undefined && options.model !== null) {
    if (typeof options.model !== 'object' || Array.isArray(options.model)) return '"model" must be an object such as { "baseUrl": "…", "model": "…" }.';
    const model = options.model as Record<string, unknown>;
    for (const key of ['baseUrl', 'apiKey', 'model', 'apiVersion']) {
      if (model[key] !== undefined && model[key] !== null && typeof model[key] !== 'string') return `"model.${key}" must be a string.`;
    }
    if (model.contextTokens !== undefined && model.contextTokens !== null && typeof model.contextTokens !== 'number') {
      return '"model.contextTokens" must be a number of tokens.';
    }
  }
  if (options.denyRead !== undefined && options.denyRead !== null) {
    if (!Array.isArray(options.denyRead) || options.denyRead.some((g) => typeof g !== 'string')) {
      return '"denyRead" must be an array of glob strings, e.g. ["secrets/**"].';
    }
    // Checked here too, not only at start: a glob over the limits is refused before it replaces a working list.
    const problem = denyReadSettingProblem(stringArray(options.denyRead));
    if (problem) return `${problem}.`;
  }
  if (options.storageDir !== undefined && options.storageDir !== null && typeof options.storageDir !== 'string') {
    return '"storageDir" must be a folder path.';
  }
  return undefined;
}

function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

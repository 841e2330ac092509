import {
  CancellationTokenSource,
  CodeActionKind,
  MessageType,
  ShowMessageNotification,
  TextDocumentSyncKind,
  TextDocuments,
  type ClientCapabilities,
  type CodeAction,
  type Connection,
  type InitializeResult,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { codeActionsFor } from './codeActions';
import {
  CancelRequest,
  CloseRequest,
  IdeQueryRequest,
  LmDeltaNotification,
  LmModelsRequest,
  LmRequest,
  ConfigureRequest,
  ConsumeTaskRequest,
  DeleteRequest,
  ExportRequest,
  DecisionsRequest,
  EditDecisionRequest,
  DeleteDecisionRequest,
  ReviewRequest,
  EventNotification,
  ProgressNotification,
  ListRequest,
  ModelsRequest,
  PromoteRequest,
  RenameRequest,
  SendRequest,
  StartRequest,
  SubscribeRequest,
  FilesRequest,
  SymbolsRequest,
  UnsubscribeRequest,
  type DiscussionEvent,
  type InitializationOptions,
} from '../../shared/protocol';
import type { ChatModel, ModelSettings } from './model/types';
import { ProxiedChatModel, type LmClient } from './model/proxied/chatModel';
import { modelSources } from './model/sources';
import type { IdeSource } from './symbols/ideSource';
import type { Clock, Logger, RepoAccess } from './core/deps';
import { FirstTurnRehearsal, type RehearsalStage } from './core/rehearsal';
import { DiscussError } from './core/errors';
import { DiscussionService } from './core/service';
import type { DiscussionStore } from './store/types';
import { answer, asResponseError, bindRequest } from './bindRequest';
import { SERVER_COMMANDS, sendLocation } from './locationCommand';
import { ServerSettings } from './settings';
import { watchWorkspaceFiles, type FileWatching } from './fileWatching';

/** The real-world collaborators, built by the entry point (or by a test). */
export interface ServerDeps {
  createModel(settings: () => ModelSettings): ChatModel;
  createRepoAccess(options: { ripgrepPath?: string | null; ide?: IdeSource; stateDirectory?: string }): RepoAccess;
  openStore(storageDir: string | undefined): Promise<DiscussionStore>;
  clock: Clock;
  /** Environment fallbacks for the model settings (OPENAI_BASE_URL and friends). */
  env: Record<string, string | undefined>;
  /** Where log lines go; defaults to the connection's console. */
  logger?: Logger;
  /**
   * Loads ahead of need what the first model request would load, while the
   * user types the first question, then calls `afterLoads`: called after each
   * discussion opens (the loads are made once).
   */
  prepareModel?(afterLoads: () => Promise<void>): void;
  /**
   * Runs `turn` with a model that streams a short fixed reply from an
   * endpoint of our own on the loopback, and a scratch store, taking both
   * down afterwards: for the turn rehearsed ahead of a fresh server's first
   * question (core/rehearsal.ts).
   */
  rehearse?: RehearsalStage;
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
  const settings = new ServerSettings(deps.env);
  const rehearsal = deps.rehearse ? new FirstTurnRehearsal(deps.rehearse, { logger, clock: deps.clock }) : undefined;
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
  let clientCapabilities: ClientCapabilities = {};
  let fileWatching: FileWatching | undefined;

  connection.onInitialize(async (params): Promise<InitializeResult> => {
    clientWatchesFolders = params.capabilities.workspace?.workspaceFolders === true;
    clientCapabilities = params.capabilities;
    const options = (params.initializationOptions ?? {}) as InitializationOptions;
    clientRunsCommands = options.clientCommands === true;
    workspaceFolders = (params.workspaceFolders ?? []).flatMap((f) => safePath(f.uri));
    try {
      settings.initialize(options);
    } catch (err) {
      throw asResponseError(err);
    }
    const store = await deps.openStore(options.storageDir);
    repos = deps.createRepoAccess({
      ripgrepPath: options.ripgrepPath,
      stateDirectory: store.stateDirectory,
      ...(options.ideQueries === true ? { ide: ideOver(connection) } : {}),
    });
    // VS Code's language models only for a client that runs them; elsewhere their ids are explained, not sent.
    const model = modelSources(deps.createModel(settings.modelSettings), options.languageModels === true ? new ProxiedChatModel(lmClientOver(connection)) : undefined);
    service = new DiscussionService(
      {
        model,
        repos,
        clock: deps.clock,
        logger,
        defaultModel: settings.defaultModel,
        denyRead: settings.denyReadGlobs,
        contextTokens: settings.contextTokensSetting,
        onProgress: (progress) => void connection.sendNotification(ProgressNotification.method, progress),
        onQuestion: () => rehearsal?.questionAsked(),
      },
      store,
    );
    reaper = setInterval(() => void service?.reapIdle(), REAP_INTERVAL_MS);
    reaper.unref();
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        ...(clientRunsCommands ? {} : { executeCommandProvider: { commands: SERVER_COMMANDS } }),
        workspace: { workspaceFolders: { supported: true, changeNotifications: clientWatchesFolders } },
      },
      serverInfo: { name: 'repo-discuss-server', version: '0.1.0' },
    };
  });

  const eventSink = { deliver: (event: DiscussionEvent) => connection.sendNotification(EventNotification.method, event) };
  const ok = { ok: true as const };
  bindRequest(connection, StartRequest.method, async (p) => {
    const started = await ready().start(p);
    // Then what its first question would otherwise wait for: the search thread, the index, the counts,
    // the repository map, and once per server a turn rehearsed on its folder.
    deps.prepareModel?.(async () => {
      await ready().prepareAhead(started.discussionId);
      // Behind the same model sources as the real model, so the rehearsed turn makes the calls a real one makes.
      if (ready().canRehearse(started.discussionId)) {
        await rehearsal?.run((model, scratch, options) => ready().rehearse(started.discussionId, modelSources(model), scratch, options));
      }
    });

    return started;
  });
  bindRequest(connection, SendRequest.method, (p) =>
    p.attachments === undefined ? ready().send(p.discussionId, p.text) : ready().sendWithAttachments(p.discussionId, p.text, p.attachments),
  );
  bindRequest(connection, FilesRequest.method, (p) => ready().files(p.discussionId, p.query ?? ''));
  bindRequest(connection, SymbolsRequest.method, (p) => ready().symbols(p.discussionId, p.query ?? ''));
  bindRequest(connection, SubscribeRequest.method, (p) => ({
    eventsReplayed: ready().subscribe(p.discussionId, CONNECTION_SUBSCRIBER, eventSink, p.fromSeq),
  }));
  bindRequest(connection, UnsubscribeRequest.method, (p) => (ready().unsubscribe(p.discussionId, CONNECTION_SUBSCRIBER), ok));
  bindRequest(connection, CancelRequest.method, (p) => (ready().cancel(p.discussionId), ok));
  bindRequest(connection, PromoteRequest.method, (p) => ready().promote(p.discussionId));
  bindRequest(connection, CloseRequest.method, async (p) => (await ready().close(p.discussionId), ok));
  bindRequest(connection, ListRequest.method, (p) => ready().list(p));
  bindRequest(connection, ModelsRequest.method, async () => ({ models: await ready().models() }));
  bindRequest(connection, RenameRequest.method, (p) => (ready().rename(p.discussionId, p.title), ok));
  bindRequest(connection, ConsumeTaskRequest.method, async (p) => ({ ok: true, handoff: await ready().consumeTask(p.discussionId, p.target, p.task) }));
  bindRequest(connection, DecisionsRequest.method, (p) => ({ decisions: ready().decisions(p.discussionId) }));
  bindRequest(connection, EditDecisionRequest.method, (p) => ({ decision: ready().editDecision(p.discussionId, p.id, { text: p.text, kind: p.kind }) }));
  bindRequest(connection, DeleteDecisionRequest.method, (p) => (ready().deleteDecision(p.discussionId, p.id), ok));
  bindRequest(connection, ReviewRequest.method, (p) => ready().review(p.discussionId, p.base));
  bindRequest(connection, DeleteRequest.method, async (p) => (await ready().delete(p.discussionId), ok));
  bindRequest(connection, ExportRequest.method, (p) => ready().export(p.discussionId, p.format ?? 'markdown'));
  bindRequest(connection, ConfigureRequest.method, (p) => (settings.configure(p), ok));

  connection.onInitialized(() => {
    // After the handshake, so it never delays the client's start.
    setImmediate(() => repos?.prepare?.());
    fileWatching = watchWorkspaceFiles(connection, clientCapabilities, () => workspaceFolders, () => repos, logger);
    // Only a client that declared it sends folder changes; asking another one errors.
    if (!clientWatchesFolders) return;
    connection.workspace.onDidChangeWorkspaceFolders((change) => {
      const removed = new Set(change.removed.map((f) => f.uri));
      const kept = workspaceFolders.filter((f) => !removed.has(pathToUri(f)));
      workspaceFolders = [...kept, ...change.added.flatMap((f) => safePath(f.uri))];
      fileWatching?.foldersChanged();
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
  connection.onExecuteCommand((params) =>
    answer(async () => {
      if (clientRunsCommands) {
        throw new DiscussError('InvalidParams', `${params.command} is run by this client itself, not by the server.`);
      }
      const sent = await sendLocation(ready(), workspaceFolders, params.command, params.arguments?.[0], (discussionId, fromSeq) => {
        // Unless this connection already is subscribed: replacing a live
        // subscription would drop what it had queued.
        if (!ready().find(discussionId)?.stream.hasSubscriber(CONNECTION_SUBSCRIBER)) {
          ready().subscribe(discussionId, CONNECTION_SUBSCRIBER, eventSink, fromSeq);
        }
      });
      // A notification, not a request: a client that cannot answer requests must not be asked one.
      void connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Info, message: `Repo Discuss: sent to discussion ${sent.discussionId}.` });
      return sent;
    }),
  );
  documents.listen(connection);

  connection.onShutdown(async () => {
    if (reaper) clearInterval(reaper);
    await rehearsal?.stop();
    await service?.dispose();
  });

  connection.listen();
}

/** The editor's language service over this connection: the one place the symbol tools' questions meet JSON-RPC. */
function ideOver(connection: Connection): IdeSource {
  return {
    query: async (params, signal) => {
      const cancellation = new CancellationTokenSource();
      const cancel = (): void => cancellation.cancel();
      signal.addEventListener('abort', cancel, { once: true });
      try {
        return await connection.sendRequest<IdeQueryRequest.Result>(IdeQueryRequest.method, params, cancellation.token);
      } finally {
        signal.removeEventListener('abort', cancel);
        cancellation.dispose();
      }
    },
  };
}

/** The client's language models over this connection (see model/proxied/). */
function lmClientOver(connection: Connection): LmClient {
  const withCancellation = async <R>(method: string, params: unknown, signal: AbortSignal | undefined): Promise<R> => {
    const cancellation = new CancellationTokenSource();
    let onAbort = (): void => {};
    // Given up at once on abort (Stop, close): waiting for the client's answer to the cancel would hold the turn.
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        cancellation.cancel();
        reject(new Error('cancelled'));
      };
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {});
    try {
      return await Promise.race([connection.sendRequest<R>(method, params, cancellation.token), aborted]);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      cancellation.dispose();
    }
  };
  return {
    request: (params, signal) => withCancellation<LmRequest.Result>(LmRequest.method, params, signal),
    models: (signal) => withCancellation<LmModelsRequest.Result>(LmModelsRequest.method, {}, signal),
    onDelta: (listener) => void connection.onNotification(LmDeltaNotification.method, listener),
  };
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

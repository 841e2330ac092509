import { ResponseError } from 'vscode-jsonrpc';
import {
  CloseRequest,
  DeleteRequest,
  ListRequest,
  ProgressNotification,
  StartRequest,
  SubscribeRequest,
  type DiscussErrorData,
  type DiscussMethod,
  type DiscussionEvent,
  type DiscussionSummary,
  type ParamsOf,
  type RemedyCode,
  type ResultOf,
} from '../../../shared/protocol';
import { DiscussionHub, type ClientDiscussion, type RpcChannel } from '../common/discussionHub';
import { ServerConnection, describeExit, type ServerStartOptions } from './serverConnection';
import { errorText } from '../../../shared/errorText';

/** A request the server turned down; its message is written for a person and shown as is. */
export class Refusal extends Error {
  constructor(
    message: string,
    readonly code: number,
    /** What fixes it, when the server said (see RemedyCode). */
    readonly remedy?: RemedyCode,
  ) {
    super(message);
  }
}

/** The server went away without being asked to. */
export class ServerGone extends Error {}

export interface OpenedDiscussion {
  discussion: ClientDiscussion;
  started: StartRequest.Result;
  /** Resolves once the saved events the server replays on subscribe have all arrived. */
  replayed: Promise<void>;
  /** Resolves once the server is told of the folder's file changes: false when they cannot be watched here (see folderWatcher.ts). */
  watched: Promise<boolean>;
}

/**
 * A server process and the hub that drives its discussions, for one command.
 * Requests that fail come back as a `Refusal` (the server said no) or a
 * `ServerGone` (it died), never as a raw JSON-RPC error.
 */
export class Session {
  readonly hub = new DiscussionHub();
  /** `discuss/start` and `discuss/subscribe` results, which the hub does not hand back. */
  private readonly starts = new Map<string, StartRequest.Result>();
  private readonly replayCounts = new Map<string, number>();
  /**
   * What holds each watched folder: the discussions opened here with
   * `watchFiles`, and any `keepWatching` hold. The folder is watched while one
   * of them is open, so a session that moves on to another folder stops
   * watching the one it left.
   */
  private readonly watchHolders = new Map<string, Set<string | object>>();
  private goneMessage: string | undefined;

  private constructor(readonly server: ServerConnection) {
    const inner = server.channel();
    const channel: RpcChannel = {
      request: async <M extends DiscussMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> => {
        // Released whatever the answer: a close the server refuses (it closed the discussion itself after an hour idle) kept
        // the folder watched for good.
        if (method === CloseRequest.method || method === DeleteRequest.method) this.releaseWatch((params as CloseRequest.Params).discussionId);
        const result = await this.guard(inner.request(method, params));
        if (method === StartRequest.method) {
          const started = result as StartRequest.Result;
          this.starts.set(started.discussionId, started);
        } else if (method === SubscribeRequest.method) {
          const id = (params as SubscribeRequest.Params).discussionId;
          this.replayCounts.set(id, (result as SubscribeRequest.Result).eventsReplayed);
        }
        return result;
      },
      onNotification: (method, handler) => inner.onNotification(method, handler),
    };
    this.hub.connect(channel);
    void server.exited.then((exit) => {
      if (server.expectedExit) return;
      this.goneMessage = `The Repo Discuss server stopped unexpectedly (${describeExit(exit)}).${server.logTail()}`;
    });
  }

  static async start(options: ServerStartOptions): Promise<Session> {
    return new Session(await ServerConnection.start(options));
  }

  /** Resolves with the reason when the server dies without being asked to; never after `stop()`. */
  get died(): Promise<ServerGone> {
    return this.server.exited.then(() =>
      this.server.expectedExit
        ? new Promise<never>(() => undefined)
        : new ServerGone(this.goneMessage ?? 'The Repo Discuss server stopped.'),
    );
  }

  /** `watchFiles`: for a discussion that will ask questions, report the folder's file changes to the server (see folderWatcher.ts). */
  async open(params: StartRequest.Params, { watchFiles = false }: { watchFiles?: boolean } = {}): Promise<OpenedDiscussion> {
    const discussion = await this.hub.open(params);
    const started = this.starts.get(discussion.id)!;
    const expected = this.replayCounts.get(discussion.id) ?? 0;
    const replayed = waitFor(discussion, (events) => events.length >= expected);
    if (watchFiles) this.holdWatch(started.repo, discussion.id);
    // Not awaited: the first question need not wait for the watch (about 0.2 s at 20,000 files); until then the index walks.
    const watched = watchFiles ? this.server.watchFolder(started.repo).catch(() => false) : Promise.resolve(false);
    return { discussion, started, replayed, watched };
  }

  /**
   * Keeps `folder` watched until disposed, whatever closes meanwhile: a
   * discussion closed to be opened again (with another model) would
   * otherwise drop the watch and start it afresh, and the server would walk
   * the folder once more.
   */
  keepWatching(folder: string): { dispose(): void } {
    const hold = {};
    this.holdWatch(folder, hold);
    return { dispose: () => this.letGo(folder, hold) };
  }

  private holdWatch(folder: string, holder: string | object): void {
    let holders = this.watchHolders.get(folder);
    if (!holders) this.watchHolders.set(folder, (holders = new Set()));
    holders.add(holder);
  }

  private releaseWatch(discussionId: string): void {
    for (const [folder, holders] of this.watchHolders) if (holders.has(discussionId)) this.letGo(folder, discussionId);
  }

  private letGo(folder: string, holder: string | object): void {
    const holders = this.watchHolders.get(folder);
    if (!holders?.delete(holder) || holders.size > 0) return;
    this.watchHolders.delete(folder);
    void this.server.unwatchFolder(folder).catch(() => undefined);
  }

  request<M extends DiscussMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return this.hub.request(method, params);
  }

  /** Every discussion the server knows of, open here or saved. */
  async list(folder?: string): Promise<ListRequest.Result> {
    return this.request(ListRequest.method, folder ? { folder } : {});
  }

  /**
   * The saved discussion an id (or an unambiguous prefix of one) names, so a
   * resume needs no folder. Undefined when nothing matches.
   */
  async findDiscussion(idOrPrefix: string): Promise<DiscussionSummary | undefined> {
    const { discussions, saved } = await this.list();
    const rows = [...discussions, ...saved];
    const exact = rows.find((row) => row.discussionId === idOrPrefix);
    if (exact) return exact;
    const matches = rows.filter((row) => row.discussionId.startsWith(idOrPrefix));
    if (matches.length > 1) {
      throw new Refusal(
        `"${idOrPrefix}" matches ${matches.length} discussions (${matches.slice(0, 4).map((m) => m.discussionId).join(', ')}…) — give more of the id.`,
        -32602,
      );
    }
    return matches[0];
  }

  /** Calls `handler` with each progress notice of a running turn (transient: see ProgressNotification). */
  onProgress(handler: (progress: ProgressNotification.Params) => void): { dispose(): void } {
    return this.server.rpc.onNotification(ProgressNotification.method, (params: unknown) => {
      // Drawn on the terminal: a notice of a shape this client does not know is dropped, not half-shown.
      if (isRetryNotice(params)) handler(params);
    });
  }

  async stop(): Promise<void> {
    this.hub.disconnect();
    await this.server.stop();
  }

  private async guard<R>(request: Promise<R>): Promise<R> {
    try {
      return await request;
    } catch (err) {
      if (err instanceof ResponseError) throw new Refusal(err.message, err.code, remedyOf(err.data));
      throw new ServerGone(this.goneMessage ?? `The Repo Discuss server stopped answering (${errorText(err)}).`);
    }
  }
}

/** The remedy code in a refusal's data; the server is trusted for its codes, but not to send only known ones. */
function remedyOf(data: unknown): RemedyCode | undefined {
  const remedy = (data as DiscussErrorData | undefined)?.remedy;
  return typeof remedy === 'string' && (REMEDY_CODES as readonly string[]).includes(remedy) ? remedy : undefined;
}

const REMEDY_CODES: readonly RemedyCode[] = ['api_key', 'model', 'tool_model', 'base_url', 'default_endpoint'];

function isRetryNotice(params: unknown): params is ProgressNotification.Params {
  const p = params as Partial<Record<keyof ProgressNotification.Params, unknown>> | null;
  const count = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
  return (
    typeof p === 'object' && p !== null && p.kind === 'retrying' && typeof p.discussionId === 'string' && typeof p.reason === 'string' &&
    count(p.retryInMs) && count(p.attempt) && count(p.of)
  );
}

/** Resolves once the discussion's events satisfy `test`. */
export function waitFor(discussion: ClientDiscussion, test: (events: DiscussionEvent[]) => boolean): Promise<void> {
  if (test(discussion.events)) return Promise.resolve();
  return new Promise((resolve) => {
    let done = false;
    let detach: (() => void) | undefined;
    detach = discussion.attach(() => {
      if (done || !test(discussion.events)) return;
      done = true;
      detach?.();
      resolve();
    });
    // The backlog is delivered inside attach, before `detach` was assigned.
    if (done) detach();
  });
}

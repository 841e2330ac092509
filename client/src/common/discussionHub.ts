import {
  CancelRequest,
  CloseRequest,
  ConsumeTaskRequest,
  EventNotification,
  PromoteRequest,
  SendRequest,
  StartRequest,
  SubscribeRequest,
  type DiscussMethod,
  type DiscussionEvent,
  type ParamsOf,
  type PreparedTask,
  type RequestChannel,
  type ResultOf,
} from '../../../shared/protocol';
import { errorText } from '../../../shared/errorText';
import type { Attachment } from '../../../shared/protocol';

/** The slice of a JSON-RPC connection the hub needs: typed requests, and the event notifications. */
export interface RpcChannel extends RequestChannel {
  onNotification(method: typeof EventNotification.method, handler: (params: DiscussionEvent) => void): { dispose(): void };
}

export type EventListener = (events: DiscussionEvent[]) => void;

/**
 * One discussion as the extension sees it: every event since seq 0, kept in
 * order, fanned out to the views that show it. A view attaching with a cursor
 * gets exactly the events after it, so a reloaded or re-shown webview sees
 * neither a gap nor a duplicate.
 */
export class ClientDiscussion {
  readonly events: DiscussionEvent[] = [];
  private readonly listeners = new Set<EventListener>();
  answering = false;
  task: PreparedTask | null = null;
  /** Paths the model read while grounding itself, for the hand-off text. */
  readonly groundedFiles = new Set<string>();

  constructor(
    readonly id: string,
    public repo: string,
    public model: string | null,
  ) {}

  get lastSeq(): number {
    return this.events.length ? this.events[this.events.length - 1].seq : -1;
  }

  /**
   * Takes events from the server in seq order, dropping any at or below the
   * cursor: a re-subscribe after a server restart overlaps what we have.
   */
  accept(incoming: DiscussionEvent[]): void {
    const fresh: DiscussionEvent[] = [];
    for (const event of incoming) {
      if (event.seq <= this.lastSeq) continue;
      this.events.push(event);
      this.track(event);
      fresh.push(event);
    }
    if (fresh.length === 0) return;
    for (const listener of this.listeners) listener(fresh);
  }

  /** Replays what follows `afterSeq`, then streams; returns the detach function. */
  attach(listener: EventListener, afterSeq = -1): () => void {
    const backlog = this.events.filter((e) => e.seq > afterSeq);
    if (backlog.length) listener(backlog);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private track(event: DiscussionEvent): void {
    switch (event.type) {
      case 'user_message':
        this.answering = true;
        // A new turn supersedes a task prepared before it, as the server does.
        this.task = null;
        break;
      case 'turn_complete':
        this.answering = false;
        break;
      case 'task_prepared':
        this.task = { intent: event.intent, constraints: event.constraints };
        break;
      case 'tool_call':
        for (const p of citedPaths(event.tool, event.paramsPreview)) this.groundedFiles.add(p);
        break;
      default:
        break;
    }
  }
}

/** The `path` argument of a read tool call, when its preview still parses. */
function citedPaths(tool: string, paramsPreview: string): string[] {
  if (tool !== 'read_file') return [];
  try {
    const args = JSON.parse(paramsPreview) as { path?: unknown };
    return typeof args.path === 'string' && args.path ? [args.path] : [];
  } catch {
    return [];
  }
}

/**
 * The extension's side of the discussions: starts, resumes and drives them
 * through the server, and keeps each one's events so views can come and go.
 * Free of `vscode`, so it is tested against the real server process.
 */
export class DiscussionHub {
  private readonly discussions = new Map<string, ClientDiscussion>();
  private rpc: RpcChannel | undefined;
  private subscription: { dispose(): void } | undefined;

  /** Binds to a (re)started server connection. */
  connect(rpc: RpcChannel): void {
    this.subscription?.dispose();
    this.rpc = rpc;
    this.subscription = rpc.onNotification(EventNotification.method, (event) => {
      this.discussions.get(event.discussionId)?.accept([event]);
    });
  }

  disconnect(): void {
    this.subscription?.dispose();
    this.subscription = undefined;
    this.rpc = undefined;
  }

  get(id: string): ClientDiscussion | undefined {
    return this.discussions.get(id);
  }

  all(): ClientDiscussion[] {
    return [...this.discussions.values()];
  }

  /** Opens a discussion (new, or resumed by id) and subscribes from seq 0. */
  async open(params: StartRequest.Params): Promise<ClientDiscussion> {
    const rpc = this.channel();
    const started = await rpc.request(StartRequest.method, params);
    let discussion = this.discussions.get(started.discussionId);
    if (!discussion) {
      discussion = new ClientDiscussion(started.discussionId, started.repo, started.model);
      this.discussions.set(started.discussionId, discussion);
    }
    discussion.model = started.model;
    await rpc.request(SubscribeRequest.method, {
      discussionId: started.discussionId,
      fromSeq: discussion.lastSeq + 1,
    });
    return discussion;
  }

  /**
   * After the server restarted: reopens every discussion this window had and
   * re-subscribes from each one's cursor. Returns the ids that could not be
   * resumed, with why.
   */
  async reconnectAll(): Promise<Array<{ id: string; reason: string }>> {
    const failures: Array<{ id: string; reason: string }> = [];
    for (const discussion of this.all()) {
      try {
        await this.open({ folder: discussion.repo, resumeId: discussion.id });
      } catch (err) {
        failures.push({ id: discussion.id, reason: errorText(err) });
      }
    }
    return failures;
  }

  async send(id: string, text: string, attachments: Attachment[] = []): Promise<SendRequest.Result> {
    return this.channel().request(SendRequest.method, attachments.length ? { discussionId: id, text, attachments } : { discussionId: id, text });
  }

  async cancel(id: string): Promise<void> {
    await this.channel().request(CancelRequest.method, { discussionId: id });
  }

  async promote(id: string): Promise<PreparedTask> {
    const result = await this.channel().request(PromoteRequest.method, { discussionId: id });
    return { intent: result.intent, constraints: result.constraints };
  }

  async consumeTask(id: string, target: string, task: PreparedTask): Promise<ConsumeTaskRequest.Result> {
    return this.channel().request(ConsumeTaskRequest.method, { discussionId: id, target, task });
  }

  async close(id: string): Promise<void> {
    this.discussions.delete(id);
    await this.channel().request(CloseRequest.method, { discussionId: id });
  }

  /** Forgets a discussion locally (it was closed or deleted elsewhere). */
  forget(id: string): void {
    this.discussions.delete(id);
  }

  request<M extends DiscussMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return this.channel().request(method, params);
  }

  private channel(): RpcChannel {
    if (!this.rpc) throw new Error('The Repo Discuss server is not running — it is starting or restarting; try again in a moment.');
    return this.rpc;
  }
}

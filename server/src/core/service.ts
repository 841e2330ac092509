import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  Decision,
  DiscussionEvent,
  DiscussionSummary,
  Handoff,
  ListRequest,
  PreparedTask,
  PromoteRequest,
  Review,
  StartRequest,
  SymbolSuggestion,
  Untrusted,
} from '../../../shared/protocol';
import { silentLogger, type CoreDeps, type RepoBinding } from './deps';
import type { EventSink } from './eventStream';
import { Discussion, type DiscussionSnapshot } from './discussion';
import { DiscussError } from './errors';
import { IDLE_TTL_MS, MAX_OPEN_DISCUSSIONS } from './limits';
import { buildSystemPrompt } from './prompt';
import { exportMarkdown } from './export';
import { discussionIdOf, optionalString, quote } from './inputs';
import type { DiscussionStore } from '../store/types';
import { memoryStore } from '../store/memoryStore';
import { errorText } from '../../../shared/errorText';
import { ModelError, type ChatModel } from '../model/types';
import { isVscodeModelId } from '../model/sources';
import { rehearseTurn, type RehearsalOptions } from './rehearsal';

/**
 * The discussions this server holds, and every operation on them. Knows
 * nothing of JSON-RPC: the server binds requests to these methods.
 */
export class DiscussionService {
  private readonly open = new Map<string, Discussion>();
  /** Ids being resumed right now: a second concurrent resume of one id is refused. */
  private readonly opening = new Set<string>();
  /** Slots taken by starts still doing their async work; counted against the cap. */
  private reserved = 0;
  private readonly store: DiscussionStore;

  constructor(
    private readonly deps: CoreDeps,
    store?: DiscussionStore,
  ) {
    this.store = store ?? memoryStore();
  }

  get persistent(): boolean {
    return this.store.persistent;
  }

  async start(params: Untrusted<StartRequest.Params>): Promise<StartRequest.Result> {
    const repo = await resolveFolder(params?.folder);
    const resumeId = optionalString(params.resumeId, 'resumeId')?.trim() || undefined;
    const requestedModel = optionalString(params.model, 'model');
    if (resumeId) discussionIdOf(resumeId);

    // Reap first, so a discussion forgotten an hour ago never blocks this one.
    await this.reapIdle();

    if (resumeId && (this.open.has(resumeId) || this.opening.has(resumeId))) {
      throw new DiscussError(
        'Conflict',
        `Discussion ${quote(resumeId)} is already open — switch to it, or close it before resuming it again.`,
      );
    }
    // Reserve the slot before any await below. Counting the open map and
    // inserting after the async work let concurrent starts all pass the check.
    if (this.open.size + this.reserved >= MAX_OPEN_DISCUSSIONS) {
      throw new DiscussError(
        'Conflict',
        `${MAX_OPEN_DISCUSSIONS} discussions are already open — close one (discuss/close) before starting another.`,
      );
    }
    this.reserved++;
    if (resumeId) this.opening.add(resumeId);
    let lease: { release(): Promise<void> } | undefined;
    let createdId: string | undefined;
    try {
      // The binding (policy, summary, instructions) does not depend on the
      // saved discussion: a resume reads the discussion meanwhile. A folder
      // that cannot be bound (a bad policy file) must still leave nothing
      // behind in the store: see the lease below.
      const binding = this.deps.repos.bind(repo, this.deps.denyRead());
      // Awaited below; a failed load must not leave its rejection unhandled.
      binding.catch(() => undefined);
      let saved: DiscussionSnapshot | undefined;
      let savedEvents: DiscussionEvent[] = [];
      if (resumeId) {
        const loaded = await this.store.load(resumeId);
        if (!loaded) {
          throw new DiscussError(
            'NotFound',
            `No saved discussion ${quote(resumeId)} — pick one from discuss/list, or start a new discussion.`,
          );
        }
        if (loaded.snapshot.repo !== repo) {
          throw new DiscussError(
            'Conflict',
            `Discussion ${resumeId} belongs to a different repository (${loaded.snapshot.repo}) — open that folder to resume it.`,
          );
        }
        saved = loaded.snapshot;
        savedEvents = loaded.events;
      }
      const modelId = chooseModel(requestedModel, saved?.model ?? null);
      if (modelId) await this.assertModelOffered(modelId);
      const id = saved?.id ?? this.newId();
      if (!saved) createdId = id;
      // The lease is taken while the binding finishes; if either fails, the
      // `finally` below releases the lease and discards a new discussion.
      const [boundOutcome, leaseOutcome] = await Promise.allSettled([binding, this.store.acquire(id)]);
      if (leaseOutcome.status === 'fulfilled') lease = leaseOutcome.value;
      if (boundOutcome.status === 'rejected') throw boundOutcome.reason;
      if (leaseOutcome.status === 'rejected') throw leaseOutcome.reason;
      const bound = boundOutcome.value;
      const systemPrompt = buildSystemPrompt(repo, bound);
      const heldLease = leaseOutcome.value;
      const discussion = new Discussion({
        id,
        repo,
        repoSummary: bound.summary,
        systemPrompt,
        toolbox: bound.toolbox,
        repoMap: bound.repoMap ? (maxTokens) => bound.repoMap?.(maxTokens) : undefined,
        model: this.deps.model,
        modelId,
        defaultModel: this.deps.defaultModel,
        contextTokens: this.deps.contextTokens,
        clock: this.deps.clock,
        logger: this.deps.logger,
        saved,
        onChange: (d) => this.store.save(d.snapshot()),
        onProgress: this.deps.onProgress ? (progress) => this.deps.onProgress?.(progress) : undefined,
      });
      discussion.stream.onEvent((event) => this.store.appendEvent(id, event));
      if (savedEvents.length > 0) discussion.restoreEvents(savedEvents);
      this.open.set(id, discussion);
      this.bindings.set(discussion, bound);
      this.leases.set(id, heldLease);
      lease = undefined;
      createdId = undefined;
      // A resumed discussion is on disk as it was loaded: the next seq its
      // opening derives from the saved ceiling, the next resume derives
      // again; a turn a crash cut short is closed with events whose seqs
      // reserve a new ceiling, which saves it (with the answers to its open
      // calls) at once. Only a model chosen at resume is the user's and is
      // saved now. Rewriting the whole record here took 7 to 12 ms of a
      // resume on two slow CPUs.
      if (!saved || (saved.model ?? null) !== modelId) this.store.save(discussion.snapshot());
      this.deps.logger.info(`discussion ${id} ${saved ? 'resumed' : 'opened'} on ${repo}`);
      return {
        discussionId: id,
        repo,
        repoSummary: bound.summary,
        persistent: this.store.persistent,
        resumed: Boolean(saved),
        model: discussion.effectiveModel,
      };
    } finally {
      this.reserved--;
      if (resumeId) this.opening.delete(resumeId);
      if (lease) await lease.release().catch(() => undefined);
      if (createdId) await this.store.discard(createdId).catch(() => undefined);
    }
  }

  private readonly leases = new Map<string, { release(): Promise<void> }>();
  /** What each open discussion was bound with, for a turn rehearsed on it. */
  private readonly bindings = new WeakMap<Discussion, RepoBinding>();

  /**
   * Whether `rehearse` would find a turn to rehearse on this discussion: it is
   * open, bound, and asks a model the server asks. Asked first, so that a
   * discussion on a VS Code model stages no loopback endpoint and scratch
   * store only to find nothing.
   */
  canRehearse(discussionId: string): boolean {
    const source = this.open.get(discussionId);
    return source !== undefined && this.bindings.has(source) && !isVscodeModelId(source.effectiveModel);
  }

  /**
   * Rehearses one turn on an open discussion's folder (core/rehearsal.ts), in
   * a service of its own over the binding that discussion was opened with:
   * binding the folder again would do its work again (the policy, the
   * instructions, maybe a census). False when there was nothing to rehearse: the
   * discussion closed, or its model is one the client runs, which must not
   * see a rehearsal.
   */
  async rehearse(discussionId: string, model: ChatModel, scratch: DiscussionStore, options: RehearsalOptions): Promise<boolean> {
    const source = this.open.get(discussionId);
    const binding = source && this.bindings.get(source);
    if (!source || !binding || !this.canRehearse(discussionId)) return false;
    const understudy = new DiscussionService(
      // Its model the one the discussion asks, so its request is the one a question there makes.
      // Its own question must not stop it (onQuestion).
      { ...this.deps, model, logger: silentLogger, onProgress: undefined, onQuestion: undefined, repos: { bind: async () => binding }, defaultModel: () => source.effectiveModel ?? undefined },
      scratch,
    );
    await rehearseTurn(understudy, source.repo, options);
    return true;
  }

  send(discussionId: unknown, text: unknown): { ok: true; seq: number } {
    this.deps.onQuestion?.();
    const seq = this.get(discussionId).send(text);
    return { ok: true, seq };
  }

  /** A send that may carry attachments (read through the discussion's read boundary first). */
  async sendWithAttachments(discussionId: unknown, text: unknown, attachments: unknown): Promise<{ ok: true; seq: number }> {
    // Before the attachments are read: the question has come, whatever the read takes.
    this.deps.onQuestion?.();
    const seq = await this.get(discussionId).sendWithAttachments(text, attachments);
    return { ok: true, seq };
  }

  async files(discussionId: unknown, query: unknown): Promise<{ files: string[] }> {
    return { files: await this.get(discussionId).files(query) };
  }

  /**
   * Readies what a discussion's next question would wait for (Discussion.prepareAhead),
   * and what its binding left until it had opened, once the model's loads are
   * done (an open discussion only: one closed meanwhile is left alone).
   */
  async prepareAhead(discussionId: string): Promise<void> {
    const discussion = this.open.get(discussionId);
    if (!discussion) return;
    const binding = this.bindings.get(discussion);
    await Promise.all([discussion.prepareAhead(), binding?.prepare?.()]);
    // A map built meanwhile changed the system prompt: counted now, or the first question would count it.
    if (binding?.prepare) await discussion.precountNextRequest();
  }

  async symbols(discussionId: unknown, query: unknown): Promise<{ symbols: SymbolSuggestion[] }> {
    return { symbols: await this.get(discussionId).symbols(query) };
  }

  subscribe(discussionId: unknown, subscriberId: string, sink: EventSink, fromSeq?: unknown): number {
    const discussion = this.get(discussionId);
    const from = typeof fromSeq === 'number' && Number.isFinite(fromSeq) && fromSeq > 0 ? Math.floor(fromSeq) : 0;
    return discussion.stream.subscribe(subscriberId, sink, from);
  }

  unsubscribe(discussionId: unknown, subscriberId: string): void {
    this.get(discussionId).stream.unsubscribe(subscriberId);
  }

  cancel(discussionId: unknown): void {
    this.get(discussionId).cancel();
  }

  async promote(discussionId: unknown): Promise<PromoteRequest.Result> {
    const discussion = this.get(discussionId);
    const task: PreparedTask = await discussion.promote();
    return { discussionId: discussion.id, ...task };
  }

  consumeTask(discussionId: unknown, target?: unknown, task?: unknown): Promise<Handoff> {
    return this.get(discussionId).consumeTask(target, task);
  }

  decisions(discussionId: unknown): Decision[] {
    return [...this.get(discussionId).decisions.current];
  }

  editDecision(discussionId: unknown, id: unknown, change: { text?: unknown; kind?: unknown }): Decision {
    return this.get(discussionId).editDecision(id, change);
  }

  async review(discussionId: unknown, base?: unknown): Promise<{ review: Review }> {
    return { review: await this.get(discussionId).review(base) };
  }

  deleteDecision(discussionId: unknown, id: unknown): void {
    this.get(discussionId).deleteDecision(id);
  }

  /** Deletes a saved discussion, closing it first if it is open here. */
  async delete(discussionId: unknown): Promise<void> {
    const id = discussionIdOf(discussionId);
    const open = this.open.get(id);
    if (open) await this.closeDiscussion(open);
    const found = await this.store.delete(id);
    if (!found && !open) {
      throw new DiscussError('NotFound', `No saved discussion ${quote(id)} to delete — it may already be gone.`);
    }
  }

  /** A discussion, open or saved, as text a person can keep. */
  async export(discussionId: unknown, format: unknown = 'markdown'): Promise<{ format: 'markdown' | 'json'; text: string }> {
    if (format !== 'markdown' && format !== 'json') {
      throw new DiscussError('InvalidParams', `Unknown export format ${quote(format, 40)} — use "markdown" or "json".`);
    }
    const id = discussionIdOf(discussionId);
    const open = this.open.get(id);
    const saved = open ? undefined : await this.store.load(id);
    const snapshot = open?.snapshot() ?? saved?.snapshot;
    if (!snapshot) throw new DiscussError('NotFound', `No discussion ${quote(id)} to export — pick one from discuss/list.`);
    const events = open?.stream.events() ?? saved?.events ?? [];
    const { seqCeiling: _ceiling, ...portable } = snapshot as typeof snapshot & { historyLength?: number };
    delete (portable as { historyLength?: number }).historyLength;
    return { format, text: format === 'json' ? JSON.stringify(portable, null, 2) : exportMarkdown(snapshot, events) };
  }

  rename(discussionId: unknown, title: unknown): void {
    if (typeof title !== 'string') throw new DiscussError('InvalidParams', 'Give the new title as a string.');
    const id = discussionIdOf(discussionId);
    const discussion = this.open.get(id);
    if (discussion) {
      discussion.rename(title);
      return;
    }
    throw new DiscussError('NotFound', `No open discussion ${quote(id)} to rename — resume it first.`);
  }

  async close(discussionId: unknown): Promise<void> {
    const discussion = this.get(discussionId);
    await this.closeDiscussion(discussion);
  }

  async list(params?: Untrusted<ListRequest.Params>): Promise<ListRequest.Result> {
    const filter = params?.folder ? await resolveFolder(params.folder).catch(() => params.folder) : undefined;
    const discussions: DiscussionSummary[] = [...this.open.values()]
      .filter((d) => !filter || d.repo === filter)
      .map((d) => ({
        discussionId: d.id,
        repo: d.repo,
        createdAt: d.createdAt,
        updatedAt: d.lastUpdated,
        turns: d.turns,
        title: d.title,
        model: d.modelId,
        answering: d.answering,
      }))
      .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
    const saved = (await this.store.list())
      .filter((s) => !this.open.has(s.discussionId))
      .filter((s) => !filter || s.repo === filter)
      .sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
    return { discussions, saved };
  }

  async models(): Promise<Array<{ id: string }>> {
    try {
      const ids = await this.deps.model.listModels();
      return ids.map((id) => ({ id }));
    } catch (err) {
      throw new DiscussError('ModelFailed', errorText(err), err instanceof ModelError ? err.remedy : undefined);
    }
  }

  /**
   * Refuses a model the endpoint does not offer, before anything is saved. An
   * endpoint that cannot list its models gets the benefit of the doubt.
   */
  private async assertModelOffered(modelId: string): Promise<void> {
    let offered: string[];
    try {
      offered = await this.deps.model.listModels(undefined, modelId);
    } catch (err) {
      // A source that cannot be reached from this client (a VS Code model in the terminal) is said so now, not at the first send.
      if (err instanceof ModelError && err.kind === 'unknown_model') throw new DiscussError('InvalidParams', err.message, err.remedy);
      return;
    }
    if (offered.length === 0 || offered.includes(modelId)) return;
    const some = offered.slice(0, 8).join(', ') + (offered.length > 8 ? ', …' : '');
    throw new DiscussError(
      'InvalidParams',
      `The endpoint does not offer model ${quote(modelId, 80)} — pick one it lists (${some}), or "auto" for its default.`,
    );
  }

  /** The discussion with this id, for in-process callers (tests, the code action). */
  find(discussionId: string): Discussion | undefined {
    return this.open.get(discussionId);
  }

  get openCount(): number {
    return this.open.size;
  }

  /** Closes every discussion idle past the TTL. */
  async reapIdle(): Promise<void> {
    const stale = [...this.open.values()].filter((d) => d.idleMs > IDLE_TTL_MS && !d.answering);
    for (const discussion of stale) {
      this.deps.logger.info(`discussion ${discussion.id} closed after an hour idle`);
      await this.closeDiscussion(discussion);
    }
  }

  /** Closes everything (server shutdown); saved discussions stay resumable. */
  async dispose(): Promise<void> {
    await Promise.all([...this.open.values()].map((d) => this.closeDiscussion(d)));
    await this.store.flush();
  }

  private async closeDiscussion(discussion: Discussion): Promise<void> {
    // Removed from the map first, so nothing new reaches it while the turn unwinds.
    this.open.delete(discussion.id);
    await discussion.close();
    this.store.save(discussion.snapshot());
    await this.store.flush();
    const lease = this.leases.get(discussion.id);
    this.leases.delete(discussion.id);
    await lease?.release().catch(() => undefined);
  }

  private get(discussionId: unknown): Discussion {
    const id = discussionIdOf(discussionId);
    const discussion = this.open.get(id);
    if (!discussion) {
      throw new DiscussError(
        'NotFound',
        `No open discussion ${quote(id)} — it was closed, or closed after an hour idle. Start a new one, or resume it from the saved list.`,
      );
    }
    return discussion;
  }

  private newId(): string {
    return this.deps.newId?.() ?? `disc-${randomUUID().replace(/-/g, '')}`;
  }
}

/** `"auto"` or empty clears a choice; absent keeps the saved one. */
function chooseModel(requested: unknown, saved: string | null): string | null {
  if (typeof requested !== 'string') return saved;
  const trimmed = requested.trim();
  return trimmed === '' || trimmed === 'auto' ? null : trimmed;
}

/** The real path of an existing directory named by a path or `file:` URI. */
export async function resolveFolder(folder: unknown): Promise<string> {
  if (typeof folder !== 'string' || folder.trim() === '') {
    throw new DiscussError('InvalidParams', 'Say which folder to discuss: pass "folder" as an absolute path or a file: URI.');
  }
  if (folder.length > 4096) {
    throw new DiscussError('InvalidParams', `The folder path ${quote(folder)} is too long to be a folder on this machine.`);
  }
  let candidate = folder.trim();
  if (/^file:/i.test(candidate)) {
    try {
      candidate = fileURLToPath(candidate);
    } catch (err) {
      throw new DiscussError('InvalidParams', `${quote(folder)} is not a usable file: URI (${errorText(err)}).`);
    }
  } else if (/^[a-z][a-z0-9+.-]+:\/\//i.test(candidate)) {
    throw new DiscussError('InvalidParams', `${quote(folder)} is not on this machine's disk — only local folders can be discussed.`);
  }
  if (!path.isAbsolute(candidate)) {
    throw new DiscussError('InvalidParams', `${quote(folder)} is not an absolute path — pass the folder's full path.`);
  }
  let real: string;
  try {
    real = await fs.realpath(candidate);
  } catch {
    throw new DiscussError('InvalidParams', `The folder ${candidate} does not exist — open an existing folder.`);
  }
  const stat = await fs.stat(real);
  if (!stat.isDirectory()) {
    throw new DiscussError('InvalidParams', `${candidate} is a file, not a folder — discuss the folder that contains it.`);
  }
  return real;
}

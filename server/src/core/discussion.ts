import type { Decision, DiscussionEvent, Handoff, PreparedTask, ProgressNotification, Review, SymbolSuggestion } from '../../../shared/protocol';
import type { ChatMessage, ChatModel, TokenUsage, ToolCall, ToolSpec } from '../model/types';
import type { Toolbox } from '../read/types';
import type { Clock, Logger } from './deps';
import { DiscussError } from './errors';
import { EventStream } from './eventStream';
import { MESSAGE_MAX_BYTES, TITLE_MAX_CHARS, TRANSCRIPT_MAX_TURNS } from './limits';
import { PREPARE_TASK_TOOL, RECORD_DECISION_TOOL, repoMapSection } from './prompt';
import { DecisionLog, type Cite } from './decisions';
import { distill } from './distill';
import { reviewImplementation } from './review';
import { boundaryAfterTurns, firstKeptSeq, summarizeTurns, summarySection, type SummaryNote } from './compaction';
import { TASK_LIMITS } from './inputs';
import { contextWindowFor, countedBound, fitToBudget, PrecountedTokens, repoMapTokensFor, reserveForReplyFor } from '../model/budget';
import { sharedModelThread } from '../model/threaded/threadedModel';
import { TASK_PREPARED_ANSWER, handoffNote, taskFromToolCall, validTask } from './task';
import { firstLine } from './text';
import { cutText } from '../../../shared/cutText';
import { answerUnansweredCalls, runTurn, type TurnHost } from './turn';
import { errorText } from '../../../shared/errorText';
import type { ReadAttachment } from '../read/attachments';
import { unreadable, validAttachments, withAttachments } from './attachments';
import { settledWithin } from '../settledWithin';

export type TranscriptRole = 'User' | 'Assistant';
export interface TranscriptTurn {
  role: TranscriptRole;
  text: string;
}

/** The durable part of a discussion: what a save writes and a resume reads. */
export interface DiscussionSnapshot {
  id: string;
  repo: string;
  createdAt: number;
  updatedAt: number;
  title: string;
  model: string | null;
  turns: number;
  /** Model history without the system prompt, tool calls and results included. */
  history: ChatMessage[];
  transcript: TranscriptTurn[];
  preparedTask: PreparedTask | null;
  /** Tasks already handed to a coding agent, oldest first. */
  handoffs: Handoff[];
  nextSeq: number;
  /** Seqs below this may have been handed out (see EventStream's `reserve`). */
  seqCeiling?: number;
  /** The current decision log (absent in discussions saved before it existed). */
  decisions?: Decision[];
  nextDecisionId?: number;
  /** The "so far" note requests carry instead of the oldest turns, once they no longer fit. */
  summary?: SummaryNote;
}

export interface DiscussionInit {
  id: string;
  repo: string;
  repoSummary: string;
  systemPrompt: string;
  toolbox: Toolbox;
  /** The repository map within a token budget, once built (see RepoBinding.repoMap). */
  repoMap?: (maxTokens: number) => string | undefined;
  model: ChatModel;
  /** This discussion's model, or null to use the endpoint's configured default. */
  modelId: string | null;
  defaultModel: () => string | undefined;
  /** The user's context window override in tokens. */
  contextTokens?: () => number | undefined;
  clock: Clock;
  logger: Logger;
  saved?: DiscussionSnapshot;
  /** Called after every change worth saving (a completed step of a turn, a rename, a task). */
  onChange?: (discussion: Discussion) => void;
  /** A running turn's transient progress (see CoreDeps.onProgress). */
  onProgress?: (progress: ProgressNotification.Params) => void;
}

/**
 * One open discussion: its model thread, transcript, prepared task, event
 * stream, and the single turn that may be running.
 */
export class Discussion {
  readonly id: string;
  readonly repo: string;
  readonly repoSummary: string;
  readonly createdAt: number;
  readonly stream: EventStream;
  modelId: string | null;
  title: string;

  private systemPrompt: string;
  private readonly toolbox: Toolbox;
  private readonly repoMap?: (maxTokens: number) => string | undefined;
  readonly model: ChatModel;
  private readonly clock: Clock;
  readonly logger: Logger;
  private readonly onChange?: (discussion: Discussion) => void;
  private readonly onProgress?: (progress: ProgressNotification.Params) => void;
  private readonly defaultModel: () => string | undefined;
  private readonly contextTokens: () => number | undefined;

  readonly history: ChatMessage[];
  private transcript: TranscriptTurn[];
  private preparedTask: PreparedTask | null;
  private handoffs: Handoff[];
  readonly decisions: DecisionLog;
  private summary: SummaryNote | null;
  private turnCount: number;
  private updatedAt: number;
  private lastActive: number;

  /**
   * The running turn's abort handle, and the terminal `closed` latch. Both are
   * read and written only in synchronous code, so a close either aborts the
   * turn that is running or is seen by a turn before its next model call: a
   * close racing a send can never leave a turn billing a model nobody reads.
   */
  private turn: { abort: AbortController; done: Promise<void> } | null = null;
  private closed = false;
  /**
   * Set once a close has finished: the lease is released and another process
   * may resume the discussion, so a turn that outlived the close (a model
   * call that ignored its abort) must never write to the store again.
   */
  private released = false;
  /** The running distillation, aborted by close and cancel like a turn. */
  private promoting: AbortController | null = null;
  /** The running review, aborted by close and cancel like a turn. */
  private reviewing: AbortController | null = null;
  /** Bumped by every send: a distillation that saw an older one is stale. */
  private generation = 0;

  constructor(init: DiscussionInit) {
    this.id = init.id;
    this.repo = init.repo;
    this.repoSummary = init.repoSummary;
    this.systemPrompt = init.systemPrompt;
    this.toolbox = init.toolbox;
    this.repoMap = init.repoMap;
    this.model = init.model;
    this.modelId = init.modelId;
    this.defaultModel = init.defaultModel;
    this.contextTokens = init.contextTokens ?? (() => undefined);
    this.clock = init.clock;
    this.logger = init.logger;
    this.onChange = init.onChange;
    this.onProgress = init.onProgress;
    const saved = init.saved;
    const now = this.clock.now();
    this.createdAt = saved?.createdAt ?? now;
    this.updatedAt = saved?.updatedAt ?? now;
    this.lastActive = now;
    this.title = saved?.title ?? '';
    this.history = saved ? [...saved.history] : [];
    this.transcript = saved ? [...saved.transcript] : [];
    this.preparedTask = saved?.preparedTask ?? null;
    this.handoffs = saved?.handoffs ? [...saved.handoffs] : [];
    this.decisions = new DecisionLog(saved);
    this.summary = validSummary(saved?.summary, this.history.length);
    this.turnCount = saved?.turns ?? 0;
    this.stream = new EventStream({
      discussionId: this.id,
      now: () => this.clock.now(),
      // Past the saved ceiling: deltas after the last save were never written.
      nextSeq: saved ? Math.max(saved.nextSeq, saved.seqCeiling ?? 0) : 0,
      ceiling: saved?.seqCeiling,
      reserve: () => this.changed(),
      onShed: (subscriber, reason) =>
        this.logger.warn(`discussion ${this.id}: subscriber ${subscriber} shed: ${reason}`),
      onFlushError: (err) => this.logger.error(`discussion ${this.id}: streaming text failed: ${errorText(err)}`),
    });
    // A save taken mid-turn (the process died in a tool call) can end in
    // calls with no results; answer them so the next request is valid.
    if (saved) answerUnansweredCalls(this.history, false);
  }

  /**
   * Puts a saved event log back in the stream. A log whose last turn never
   * completed (the process died mid-reply) is closed with an `error` and
   * `turn_complete`, so no client waits for a reply that will never come.
   */
  restoreEvents(events: DiscussionEvent[]): void {
    // A handed-off or superseded task is not offered again.
    const lastTask = events.map((e) => e.type).lastIndexOf('task_prepared');
    // Each note folds in the one before: only the newest says what requests carry.
    const lastSummary = events.map((e) => e.type).lastIndexOf('history_summarized');
    this.stream.restore(
      events.filter(
        (e, i) => (e.type !== 'task_prepared' || (this.preparedTask !== null && i === lastTask)) && (e.type !== 'history_summarized' || i === lastSummary),
      ),
    );
    // A discussion saved before the event existed, or whose event aged out of
    // the log, still shows where its summary ends.
    if (this.summary && !this.stream.events().some((e) => e.type === 'history_summarized')) this.announceSummary();
    const lastUser = events.map((e) => e.type).lastIndexOf('user_message');
    const lastDone = events.map((e) => e.type).lastIndexOf('turn_complete');
    if (lastUser > lastDone) {
      this.stream.emit({
        type: 'error',
        message: 'This reply was interrupted when the server stopped. Send your message again to continue.',
      });
      this.stream.emit({ type: 'turn_complete' });
    }
  }

  get answering(): boolean {
    return this.turn !== null;
  }

  get turns(): number {
    return this.turnCount;
  }

  get lastUpdated(): number {
    return this.updatedAt;
  }

  get idleMs(): number {
    return this.clock.now() - this.lastActive;
  }

  get effectiveModel(): string | null {
    return this.modelId ?? this.defaultModel() ?? null;
  }

  get task(): PreparedTask | null {
    return this.preparedTask;
  }

  snapshot(): DiscussionSnapshot {
    return {
      id: this.id,
      repo: this.repo,
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
      title: this.title,
      model: this.modelId,
      turns: this.turnCount,
      history: [...this.history],
      transcript: [...this.transcript],
      preparedTask: this.preparedTask,
      handoffs: [...this.handoffs],
      nextSeq: this.stream.seqNext,
      seqCeiling: this.stream.reservedCeiling,
      ...this.decisions.state(),
      ...(this.summary ? { summary: { ...this.summary } } : {}),
    };
  }

  /** The request the next model call would carry (system prompt first). */
  modelMessages(): ChatMessage[] {
    // One object while the prompt is unchanged: the token budget counts each
    // message object once, and re-counting a long system prompt on every
    // model call was a measurable share of a turn.
    // The map is built in the background: it joins from the first call after
    // it is ready. The decision log rides in the system message too, which no
    // trimming ever drops.
    // The "so far" note stands in for the turns it covers, which the saved history still holds.
    const content =
      this.systemPrompt +
      repoMapSection(this.repoMap?.(repoMapTokensFor(this.contextWindow()))) +
      handoffNote(this.handoffs) +
      summarySection(this.summary) +
      this.decisions.promptSection();
    if (this.systemMessage?.content !== content) this.systemMessage = { role: 'system', content };
    return [this.systemMessage, ...(this.summary ? this.history.slice(this.summary.upTo) : this.history)];
  }

  private systemMessage: { role: 'system'; content: string } | undefined;

  private contextWindow(): number {
    const modelId = this.effectiveModel ?? '';
    // A source that knows the model's window (VS Code's maxInputTokens) is believed over the endpoint setting.
    return this.model.contextWindow?.(modelId) ?? contextWindowFor(modelId, this.contextTokens() || undefined);
  }

  /**
   * Records that the prepared task (as the user edited it) went to a coding
   * agent. The only step that leads to work, and it is the user's.
   */
  async consumeTask(target: unknown, edited?: unknown): Promise<Handoff> {
    this.assertOpen();
    const task = edited === undefined || edited === null ? this.preparedTask : validTask(edited);
    if (!task) {
      throw new DiscussError(
        'InvalidParams',
        'There is no prepared task to hand off — prepare one first (Prepare coding task), or pass the edited task.',
      );
    }
    if (target !== undefined && target !== null && (typeof target !== 'string' || target.length > TASK_LIMITS.targetChars)) {
      throw new DiscussError('InvalidParams', `"target" must be a short name such as chat, markdown or clipboard (at most ${TASK_LIMITS.targetChars} characters).`);
    }
    // Evidence is re-checked at hand-off: the agent is told which agreed
    // constraints cite code that changed since they were agreed.
    const checked = await this.decisions.recheck(task, this.cite);
    this.assertOpen();
    const commit = await this.headCommit();
    this.assertOpen();
    const handoff: Handoff = {
      at: this.clock.now(),
      target: typeof target === 'string' && target.trim() ? target.trim() : 'unspecified',
      intent: task.intent,
      constraints: task.constraints,
      ...(checked.constraintSources ? { constraintSources: checked.constraintSources } : {}),
      ...(checked.openQuestions?.length ? { openQuestions: checked.openQuestions } : {}),
      ...(commit ? { commit } : {}),
    };
    this.handoffs.push(handoff);
    this.clearTask();
    this.stream.emit({ type: 'task_handed_off', target: handoff.target, ...(commit ? { commit } : {}) });
    this.touch();
    this.changed();
    return handoff;
  }

  /**
   * Forgets the pending task and takes its card out of the replay buffer, so
   * a reloaded panel does not offer to hand off a task that is used or stale.
   */
  private clearTask(): void {
    if (!this.preparedTask) return;
    this.preparedTask = null;
    this.stream.drop((e) => e.type === 'task_prepared');
  }

  /** The user's edit of a log entry; the model reads the new text on its next call. */
  editDecision(id: unknown, change: { text?: unknown; kind?: unknown }): Decision {
    this.assertOpen();
    const decision = this.decisions.edit(id, change, this.clock.now());
    this.stream.emit({ type: 'decision_recorded', decision });
    this.touch();
    this.changed();
    return decision;
  }

  deleteDecision(id: unknown): void {
    this.assertOpen();
    const found = this.decisions.find(id);
    this.decisions.delete(id);
    this.stream.emit({ type: 'decision_deleted', id: found!.id });
    this.touch();
    this.changed();
  }

  /** Reads cited lines through the folder's read boundary. */
  private get cite(): Cite | undefined {
    const toolbox = this.toolbox;
    return toolbox.cite ? (path, line, signal) => toolbox.cite!(path, line, signal) : undefined;
  }

  private async headCommit(): Promise<string | undefined> {
    return (await this.toolbox.headCommit?.().catch(() => undefined)) ?? undefined;
  }

  rename(title: string): void {
    const trimmed = title.trim();
    if (!trimmed) throw new DiscussError('InvalidParams', 'The title is empty — give the discussion a name.');
    this.title = cutText(trimmed, TITLE_MAX_CHARS, 'after');
    this.changed();
  }

  /**
   * Starts the reply turn for one user message and returns the seq of its
   * `user_message` event.
   *
   * Every check runs before anything is recorded or emitted, and the
   * recording, the event and the dispatch happen in one synchronous step: a
   * refused send leaves no question in the transcript that no turn will ever
   * answer (distilling from one makes the model invent a confident intent),
   * and no `user_message` followed by silence on the stream.
   *
   * One turn at a time: a second send is refused, never queued. Two turns on
   * one model thread interleave and the later one silently overwrites the
   * earlier exchange.
   */
  send(text: unknown, attachments: readonly ReadAttachment[] = []): number {
    this.checkSendable(text);
    const message = text as string;
    const abort = new AbortController();
    this.touch();
    // A new turn moves the conversation on: a task prepared before it no
    // longer says what was agreed.
    this.clearTask();
    this.generation++;
    if (!this.title) this.title = cutText(firstLine(message), TITLE_MAX_CHARS, 'after');
    this.history.push({ role: 'user', content: withAttachments(message, attachments) });
    const outcomes = attachments.map((a) => a.outcome);
    this.recordTranscript('User', outcomes.length ? `${message}\n(attached: ${outcomes.filter((o) => o.status !== 'refused').map(attachmentLabel).join(', ') || 'none readable'})` : message);
    // Paths, ranges and reasons only: the event is replayed, saved and shown, and must never carry file contents.
    const seq = this.stream.emit(outcomes.length ? { type: 'user_message', text: message, attachments: outcomes } : { type: 'user_message', text: message }).seq;
    // The model may search as soon as it answers. Made ready ahead of the
    // first question (prepareAhead), and asked again here: an index dropped
    // while idle, or lost with its thread, is built again while the request is out.
    void this.toolbox.warm?.();
    const done = runTurn(this.makeTurnHost(seq), abort.signal);
    this.turn = { abort, done };
    this.changed();
    return seq;
  }

  /**
   * A send with attachments: the text and the attachments are checked, then
   * the attachments are read through the toolbox's read boundary, then `send`
   * runs its checks again and starts the turn in one synchronous step (a
   * close or another send during the read is seen there).
   */
  async sendWithAttachments(text: unknown, rawAttachments: unknown): Promise<number> {
    const attachments = validAttachments(rawAttachments);
    this.checkSendable(text);
    if (attachments.length === 0) return this.send(text);
    const read = this.toolbox.attach ? await this.toolbox.attach(attachments) : unreadable(attachments);
    return this.send(text, read);
  }

  /** Folder files for the panel's `@` completion (through the read boundary; none denied). */
  async files(query: unknown): Promise<string[]> {
    this.assertOpen();
    if (typeof query !== 'string') throw new DiscussError('InvalidParams', 'query must be a string.');
    return this.toolbox.files ? this.toolbox.files(query) : [];
  }

  /** The query `symbols` is answering now: a newer one stops it, so keystrokes never queue up lookups. */
  private symbolQuery: AbortController | undefined;

  /** Folder symbols for the panel's `@` completion (the editor's language service or the symbol index). */
  async symbols(query: unknown): Promise<SymbolSuggestion[]> {
    this.assertOpen();
    if (typeof query !== 'string') throw new DiscussError('InvalidParams', 'query must be a string.');
    this.symbolQuery?.abort();
    const current = new AbortController();
    this.symbolQuery = current;
    try {
      return this.toolbox.symbols ? await this.toolbox.symbols(query, current.signal) : [];
    } finally {
      if (this.symbolQuery === current) this.symbolQuery = undefined;
    }
  }

  private checkSendable(text: unknown): void {
    this.assertOpen();
    if (typeof text !== 'string' || text.trim() === '') {
      throw new DiscussError('InvalidParams', 'The message is empty — type a question or a request first.');
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MESSAGE_MAX_BYTES) {
      throw new DiscussError(
        'InvalidParams',
        `That message is ${bytes} bytes; the limit is ${MESSAGE_MAX_BYTES}. ` +
          'Point at a file in the repository instead of pasting it: the model can read it.',
      );
    }
    if (this.turn) {
      throw new DiscussError(
        'Busy',
        `Discussion ${this.id} is still answering the previous message — wait for it to finish, or cancel it, before sending another.`,
      );
    }
  }

  /** Stops the running turn; it still ends with `turn_complete`. */
  cancel(): void {
    this.assertOpen();
    this.turn?.abort.abort();
    this.promoting?.abort();
    this.reviewing?.abort();
  }

  /**
   * Latches the discussion closed and aborts any running turn. Terminal: the
   * latch is what stops a turn that is between steps from calling the model
   * again.
   */
  close(): Promise<void> {
    this.closed = true;
    const running = this.turn;
    running?.abort.abort();
    this.promoting?.abort();
    this.reviewing?.abort();
    this.symbolQuery?.abort();
    // A model call that ignores its abort must not hang the close: the turn
    // is latched out of every further step either way.
    const done = running ? settledWithin(running.done, CLOSE_WAIT_MS) : Promise.resolve();
    return done.finally(() => {
      this.changed();
      this.released = true;
      this.stream.dispose();
    });
  }

  /**
   * Distills the recent transcript into an intent and constraints. Starts
   * nothing. Refused while a turn runs: distilling then reads the user's
   * question with no answer beside it, and the model invents the rest.
   */
  async promote(signal?: AbortSignal): Promise<PreparedTask> {
    this.assertOpen();
    if (this.turn) {
      throw new DiscussError(
        'Busy',
        `Discussion ${this.id} is still answering — wait for the reply to finish (or cancel it), then prepare the task.`,
      );
    }
    if (this.transcript.length === 0) {
      throw new DiscussError(
        'InvalidParams',
        'This discussion has no turns yet — say what you are trying to do first, then prepare the task.',
      );
    }
    if (this.promoting) {
      throw new DiscussError('Busy', `Discussion ${this.id} is already preparing a task — wait for it to finish.`);
    }
    const abort = new AbortController();
    signal?.addEventListener('abort', () => abort.abort(), { once: true });
    this.promoting = abort;
    const generation = this.generation;
    let task: PreparedTask;
    try {
      task = await distill(this.model, {
        transcript: this.transcript,
        repoSummary: this.repoSummary,
        model: this.effectiveModel ?? undefined,
        signal: abort.signal,
      });
      if (abort.signal.aborted) throw new Error('cancelled');
    } catch (err) {
      this.assertOpen();
      if (abort.signal.aborted) {
        throw new DiscussError('InvalidParams', 'Preparing the task was cancelled — nothing was changed.');
      }
      throw err;
    } finally {
      this.promoting = null;
    }
    this.assertOpen();
    // A message sent while distilling moved the conversation on: this task
    // no longer says what was agreed, so it is not kept.
    if (generation !== this.generation) {
      throw new DiscussError(
        'Busy',
        `Discussion ${this.id} moved on while the task was being prepared — prepare it again once the reply finishes.`,
      );
    }
    const offered = await this.decisions.recheck(this.decisions.taskFrom(task), this.cite, abort.signal);
    this.assertOpen();
    if (generation !== this.generation) {
      throw new DiscussError('Busy', `Discussion ${this.id} moved on while the task was being prepared — prepare it again once the reply finishes.`);
    }
    this.touch();
    this.setTask(offered);
    return offered;
  }

  /**
   * Reviews what changed since the last hand-off against its task: one
   * read-only model request over git_diff's text (from the hand-off's commit,
   * or `base`, or the uncommitted changes when neither is known). Emits and
   * saves a `review` event; never changes a file.
   */
  async review(base?: unknown, signal?: AbortSignal): Promise<Review> {
    this.assertOpen();
    if (base !== undefined && base !== null && (typeof base !== 'string' || base.trim() === '' || base.length > 200)) {
      throw new DiscussError('InvalidParams', '"base" must be a commit hash, branch or tag (at most 200 characters).');
    }
    const handoff = this.handoffs[this.handoffs.length - 1];
    if (!handoff) {
      throw new DiscussError(
        'InvalidParams',
        'Nothing has been handed off in this discussion yet — prepare a coding task and hand it off, then review the implementation.',
      );
    }
    if (this.turn || this.promoting || this.reviewing) {
      throw new DiscussError('Busy', `Discussion ${this.id} is busy — wait for the reply (or the task, or the review) to finish, then review.`);
    }
    if (!this.toolbox.diffSince || this.toolbox.isDenied('git_diff')) {
      throw new DiscussError('InvalidParams', 'The review needs git_diff, which this folder\'s policy denies (or the folder cannot run it).');
    }
    const from = typeof base === 'string' ? base.trim() : handoff.commit;
    const abort = new AbortController();
    signal?.addEventListener('abort', () => abort.abort(), { once: true });
    this.reviewing = abort;
    let review: Review;
    try {
      const diff = await this.toolbox.diffSince(from, abort.signal);
      if (abort.signal.aborted) throw new DiscussError('InvalidParams', 'The review was cancelled — nothing was changed.');
      if (!diff.ok) throw new DiscussError('InvalidParams', `The diff to review could not be taken: ${cutText(diff.output, 400, 'after')}`);
      review = await reviewImplementation(this.model, {
        handoff,
        diff: diff.output,
        compared: cutText(firstLine(diff.output).replace(/:.*$/, ''), 200, 'after'),
        ...(from ? { base: from } : {}),
        model: this.effectiveModel ?? undefined,
        now: this.clock.now(),
        signal: abort.signal,
        onUsage: (usage) => this.stream.emit({ type: 'usage', ...usage }),
      });
    } finally {
      this.reviewing = null;
    }
    this.assertOpen();
    this.stream.emit({ type: 'review', review });
    this.touch();
    this.changed();
    return review;
  }

  /** Tells clients the current note and where the turns it covers end; only the newest is replayed. */
  private announceSummary(): void {
    if (!this.summary) return;
    const seq = firstKeptSeq(this.history, this.summary.upTo, this.stream.events());
    this.stream.drop((e) => e.type === 'history_summarized');
    this.stream.emit({ type: 'history_summarized', note: this.summary.note, ...(seq !== undefined ? { firstKeptSeq: seq } : {}) });
  }

  private setTask(task: PreparedTask): void {
    // Only the newest card is worth replaying.
    this.stream.drop((e) => e.type === 'task_prepared');
    this.preparedTask = task;
    this.stream.emit({ type: 'task_prepared', ...task });
    this.changed();
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new DiscussError(
        'NotFound',
        `Discussion ${this.id} is closed — start a new discussion, or resume this one from the saved list.`,
      );
    }
  }

  private touch(): void {
    this.lastActive = this.clock.now();
    this.updatedAt = this.lastActive;
  }

  private changed(): void {
    if (this.released) return;
    try {
      this.onChange?.(this);
    } catch (err) {
      this.logger.error(`discussion ${this.id}: could not save: ${errorText(err)}`);
    }
  }

  private recordTranscript(role: TranscriptRole, text: string): void {
    if (!text.trim()) return;
    this.transcript.push({ role, text });
    if (this.transcript.length > TRANSCRIPT_MAX_TURNS) {
      this.transcript.splice(0, this.transcript.length - TRANSCRIPT_MAX_TURNS);
    }
  }

  /** The advertised tools: fixed for a discussion, so built once (and their cost counted once). */
  private toolSet: ToolSpec[] | undefined;

  private tools(): ToolSpec[] {
    if (!this.toolSet) {
      const tools = this.toolbox.definitions();
      if (!this.toolbox.isDenied(PREPARE_TASK_TOOL.name)) tools.push(PREPARE_TASK_TOOL);
      if (!this.toolbox.isDenied(RECORD_DECISION_TOOL.name)) tools.push(RECORD_DECISION_TOOL);
      this.toolSet = tools;
    }
    return this.toolSet;
  }

  /** What a turn may see and do of this discussion. */
  private makeTurnHost(turnSeq: number): TurnHost {
    // The configured default model can change between turns (discuss/configure): read it live.
    const discussion = this;
    return {
      id: this.id,
      model: this.model,
      stream: this.stream,
      logger: this.logger,
      history: this.history,
      get effectiveModel() {
        return discussion.effectiveModel;
      },
      isClosed: () => this.closed,
      tools: () => this.tools(),
      requestMessages: (tools, signal) => this.requestMessages(tools, signal),
      runTool: (toolCall, signal) => this.runTool(toolCall, signal),
      saveProgress: () => this.changed(),
      progress: (progress) => this.onProgress?.({ discussionId: this.id, turnSeq, ...progress }),
      finish: (answer) => {
        if (answer) this.recordTranscript('Assistant', answer);
        this.turnCount++;
        // Free the discussion before announcing it: a client that sends on
        // `turn_complete` must not be told the turn is still running.
        this.turn = null;
        this.touch();
        this.changed();
        this.precountNextRequest().catch(() => undefined); // counted, or taken by bytes, when the request is made
      },
    };
  }

  /**
   * What the next question would otherwise wait for, done while it is typed
   * (after a start, once the model's loads are done): the search thread and
   * the folder's index made ready, where the first question started a thread
   * that booted beside its request on two CPUs, and the next request's counts.
   */
  async prepareAhead(): Promise<void> {
    if (this.closed) return;
    await Promise.all([this.toolbox.warm?.(), this.precountNextRequest()]);
  }

  /**
   * Counts what the next request carries and is not counted yet in the token
   * worker now, while the user reads or types, so the next question's request
   * does not wait for it: after a turn, the reply just finished and its tool
   * results (counting a long reply was on the path to its first delta); in a
   * discussion just opened, the system prompt and the tools (a fresh server's
   * first question waited 10-24 ms for their first count), and a resumed
   * one's history.
   */
  async precountNextRequest(): Promise<void> {
    if (this.closed) return;
    const contextTokens = this.contextWindow();
    const messages = this.modelMessages();
    const tools = this.tools();
    if (countedBound(messages, tools, tokenCounts) <= contextTokens - reserveForReplyFor(contextTokens)) return;
    await tokenCounts.prepare(messages, tools).catch(() => undefined); // counted again, or by bytes, when the request is made
  }

  /**
   * The history as the next request carries it, fitted to the model's
   * context window. When the oldest turns would have to go, they are
   * summarized instead (one model request, at most COMPACTION_ROUNDS per
   * call) into the "so far" note, kept with the discussion for later
   * requests; only if summarizing fails are they left out. Oldest tool results
   * are still stubbed first; the system prompt (the decision log in it), the
   * latest user message and this turn's tool exchange are never touched. The
   * saved history keeps everything.
   */
  private async requestMessages(tools: ToolSpec[], signal: AbortSignal): Promise<{ messages: ChatMessage[]; usage?: TokenUsage }> {
    let usage: TokenUsage | undefined;
    for (let round = 0; ; round++) {
      const contextTokens = this.contextWindow();
      const messages = this.modelMessages();
      let latestUser = messages.length - 1;
      while (latestUser > 0 && messages[latestUser].role !== 'user') latestUser--;
      const reserveForReply = reserveForReplyFor(contextTokens);
      // What does not fit at a glance is counted in the model thread first: never the tokenizer on this thread.
      const room = contextTokens - reserveForReply;
      if (countedBound(messages, tools, tokenCounts) > room) {
        try {
          await tokenCounts.countsUnderWay(messages, tools);
          if (countedBound(messages, tools, tokenCounts) > room) await tokenCounts.prepare(messages, tools);
        } catch (err) {
          this.logger.warn(`discussion ${this.id}: counting tokens failed (${errorText(err)}); budgeting by bytes`);
        }
      }
      const fitted = fitToBudget(messages, { contextTokens, reserveForReply, protectFrom: Math.max(1, latestUser), tools, counted: tokenCounts });
      const from = this.summary?.upTo ?? 0;
      const upTo = fitted.droppedTurns ? boundaryAfterTurns(this.history, from, fitted.droppedTurns) : from;
      if (upTo <= from || round >= COMPACTION_ROUNDS || signal.aborted || this.closed) {
        if (fitted.elidedToolResults || fitted.droppedTurns) {
          this.logger.info(
            `discussion ${this.id}: fitted to ${contextTokens} tokens by eliding ${fitted.elidedToolResults} tool results and ${fitted.droppedTurns} turns`,
          );
        }
        return { messages: fitted.messages, ...(usage ? { usage } : {}) };
      }
      const maxTokens = Math.max(64, Math.min(1_024, Math.floor(contextTokens / 8)));
      try {
        const summarized = await summarizeTurns(this.model, {
          previous: this.summary,
          turns: this.history.slice(from, upTo),
          // One character per token at least: the summary request fits the window as well.
          maxInputChars: Math.max(0, contextTokens - reserveForReply - maxTokens),
          maxTokens,
          model: this.effectiveModel ?? undefined,
          signal,
        });
        if (summarized.usage) {
          usage = {
            promptTokens: (usage?.promptTokens ?? 0) + summarized.usage.promptTokens,
            completionTokens: (usage?.completionTokens ?? 0) + summarized.usage.completionTokens,
          };
        }
        if (this.closed || signal.aborted) return { messages: fitted.messages, ...(usage ? { usage } : {}) };
        this.summary = { note: summarized.note, upTo };
        this.announceSummary();
        this.logger.info(`discussion ${this.id}: summarized history up to message ${upTo} to fit ${contextTokens} tokens`);
        this.changed();
      } catch (err) {
        this.logger.warn(`discussion ${this.id}: ${errorText(err)}; leaving the oldest turns out instead`);
        return { messages: fitted.messages, ...(usage ? { usage } : {}) };
      }
    }
  }

  private runTool(toolCall: ToolCall, signal: AbortSignal): Promise<{ ok: boolean; output: string }> {
    if (toolCall.name === PREPARE_TASK_TOOL.name && !this.toolbox.isDenied(toolCall.name)) {
      return this.prepareTask(toolCall.arguments, signal);
    }
    if (toolCall.name === RECORD_DECISION_TOOL.name && !this.toolbox.isDenied(toolCall.name)) {
      return this.recordDecision(toolCall.arguments, signal);
    }
    // Everything else, mutating and invented names included, goes through
    // the toolbox, which runs only its read tools and refuses the rest.
    return this.toolbox.run(toolCall.name, toolCall.arguments, signal);
  }

  private async prepareTask(rawArguments: string, signal: AbortSignal): Promise<{ ok: boolean; output: string }> {
    const prepared = taskFromToolCall(rawArguments);
    if ('problem' in prepared) return { ok: false, output: prepared.problem };
    const offered = await this.decisions.recheck(this.decisions.taskFrom(prepared.task), this.cite, signal);
    if (this.closed || signal.aborted) return { ok: false, output: 'Cancelled.' };
    this.setTask(offered);
    return { ok: true, output: TASK_PREPARED_ANSWER };
  }

  private async recordDecision(rawArguments: string, signal: AbortSignal): Promise<{ ok: boolean; output: string }> {
    const recorded = await this.decisions.recordFromToolCall(rawArguments, this.cite, this.clock.now(), signal);
    if ('problem' in recorded) return { ok: false, output: recorded.problem };
    if (this.closed) return { ok: false, output: 'Cancelled.' };
    this.stream.emit({ type: 'decision_recorded', decision: recorded.decision });
    this.changed();
    const replaced = recorded.decision.replaces ? `, replacing ${recorded.decision.replaces}` : '';
    return { ok: true, output: `Recorded as ${recorded.decision.id}${replaced}. It stays in the decision log you see on every call.` };
  }
}

function attachmentLabel(outcome: { path: string; shownStart?: number; shownEnd?: number }): string {
  return outcome.shownStart !== undefined ? `${outcome.path}:${outcome.shownStart}-${outcome.shownEnd}` : outcome.path;
}

/** Counts per message object, shared by every discussion of the process, made in the one model thread. */
const tokenCounts = new PrecountedTokens((texts) => sharedModelThread().count(texts));

/** Summaries one model call may ask for before falling back to leaving turns out. */
const COMPACTION_ROUNDS = 2;

/** A saved note that still fits the saved history (an edited or truncated file must not slice past it). */
function validSummary(saved: SummaryNote | undefined, historyLength: number): SummaryNote | null {
  if (!saved || typeof saved.note !== 'string' || typeof saved.upTo !== 'number') return null;
  if (!Number.isInteger(saved.upTo) || saved.upTo < 1 || saved.upTo > historyLength) return null;
  return { note: saved.note, upTo: saved.upTo };
}

/** How long a close waits for a running turn to unwind before letting go of it. */
const CLOSE_WAIT_MS = 5_000;

import type { DiscussionEvent, Handoff, PreparedTask } from '../protocol';
import type { ChatMessage, ChatModel, ToolCall, ToolSpec } from '../model/types';
import { ModelError } from '../model/types';
import type { Toolbox } from '../tools/types';
import type { Clock, Logger } from './deps';
import { DiscussError } from './errors';
import { EventStream } from './eventStream';
import {
  MAX_MODEL_CALLS_PER_REPLY,
  MESSAGE_MAX_BYTES,
  PARAMS_PREVIEW_CHARS,
  RESULT_PREVIEW_CHARS,
  TITLE_MAX_CHARS,
  TRANSCRIPT_MAX_TURNS,
} from './limits';
import { PREPARE_TASK_TOOL } from './prompt';
import { distill } from './distill';
import { TASK_LIMITS } from './inputs';
import { contextWindowFor, fitToBudget, reserveForReplyFor } from '../model/budget';

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
}

export interface DiscussionInit {
  id: string;
  repo: string;
  repoSummary: string;
  systemPrompt: string;
  toolbox: Toolbox;
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
}

/**
 * One open discussion: its model thread, transcript, prepared task, event
 * stream, and the single turn that may be running.
 */
/** Ends a reply in the history that was stopped or cut off part-way. */
export const INTERRUPTED_REPLY_NOTE = '[This reply was interrupted before it finished.]';

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
  private readonly model: ChatModel;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly onChange?: (discussion: Discussion) => void;
  private readonly defaultModel: () => string | undefined;
  private readonly contextTokens: () => number | undefined;

  private history: ChatMessage[];
  private transcript: TranscriptTurn[];
  private preparedTask: PreparedTask | null;
  private handoffs: Handoff[];
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
  /** Bumped by every send: a distillation that saw an older one is stale. */
  private generation = 0;

  constructor(init: DiscussionInit) {
    this.id = init.id;
    this.repo = init.repo;
    this.repoSummary = init.repoSummary;
    this.systemPrompt = init.systemPrompt;
    this.toolbox = init.toolbox;
    this.model = init.model;
    this.modelId = init.modelId;
    this.defaultModel = init.defaultModel;
    this.contextTokens = init.contextTokens ?? (() => undefined);
    this.clock = init.clock;
    this.logger = init.logger;
    this.onChange = init.onChange;
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
    if (saved) this.reconcileHistory(false);
  }

  /**
   * Puts a saved event log back in the stream. A log whose last turn never
   * completed (the process died mid-reply) is closed with an `error` and
   * `turn_complete`, so no client waits for a reply that will never come.
   */
  restoreEvents(events: DiscussionEvent[]): void {
    // A handed-off or superseded task is not offered again.
    const lastTask = events.map((e) => e.type).lastIndexOf('task_prepared');
    this.stream.restore(
      events.filter((e, i) => e.type !== 'task_prepared' || (this.preparedTask !== null && i === lastTask)),
    );
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

  get isClosed(): boolean {
    return this.closed;
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

  /** Resolves when the running turn (if any) has fully ended. */
  whenIdle(): Promise<void> {
    return this.turn?.done ?? Promise.resolve();
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
    };
  }

  /** The request the next model call would carry (system prompt first). */
  modelMessages(): ChatMessage[] {
    // One object while the prompt is unchanged: the token budget counts each
    // message object once, and re-counting a long system prompt on every
    // model call was a measurable share of a turn.
    const content = this.systemPrompt + this.handoffNote();
    if (this.systemMessage?.content !== content) this.systemMessage = { role: 'system', content };
    return [this.systemMessage, ...this.history];
  }

  private systemMessage: { role: 'system'; content: string } | undefined;

  /**
   * Tasks already handed off, told to the model on every later turn so it
   * builds on them instead of proposing the same work again.
   */
  private handoffNote(): string {
    if (this.handoffs.length === 0) return '';
    const lines = this.handoffs.map((h) => {
      const constraints = h.constraints.length ? ` Constraints: ${h.constraints.join('; ')}.` : '';
      return `- ${new Date(h.at).toISOString()} (to ${h.target}): ${h.intent}${constraints}`;
    });
    return (
      '\n\n## Tasks already handed off from this discussion\n' +
      'These were given to a coding agent and may be done or under way. Build on them; do not propose them again as new work.\n' +
      lines.join('\n')
    );
  }

  get handedOff(): Handoff[] {
    return [...this.handoffs];
  }

  /**
   * Records that the prepared task (as the user edited it) went to a coding
   * agent. The only step that leads to work, and it is the user's.
   */
  consumeTask(target: unknown, edited?: unknown): Handoff {
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
    const handoff: Handoff = {
      at: this.clock.now(),
      target: typeof target === 'string' && target.trim() ? target.trim() : 'unspecified',
      intent: task.intent,
      constraints: task.constraints,
    };
    this.handoffs.push(handoff);
    this.clearTask();
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

  rename(title: string): void {
    const trimmed = title.trim();
    if (!trimmed) throw new DiscussError('InvalidParams', 'The title is empty — give the discussion a name.');
    this.title = bound(trimmed, TITLE_MAX_CHARS);
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
  send(text: unknown): number {
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

    const abort = new AbortController();
    this.touch();
    // A new turn moves the conversation on: a task prepared before it no
    // longer says what was agreed.
    this.clearTask();
    this.generation++;
    if (!this.title) this.title = bound(firstLine(text), TITLE_MAX_CHARS);
    this.history.push({ role: 'user', content: text });
    this.recordTranscript('User', text);
    const seq = this.stream.emit({ type: 'user_message', text }).seq;
    // The model may search as soon as it answers: get a search thread ready
    // now, while the request is out, rather than at the start, where starting
    // a thread competed with the replay for the CPU.
    this.toolbox.warm?.();
    const done = this.runTurn(abort.signal);
    this.turn = { abort, done };
    this.changed();
    return seq;
  }

  /** Stops the running turn; it still ends with `turn_complete`. */
  cancel(): void {
    this.assertOpen();
    this.turn?.abort.abort();
    this.promoting?.abort();
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
    // A model call that ignores its abort must not hang the close: the turn
    // is latched out of every further step either way.
    const done = running ? Promise.race([running.done, delay(CLOSE_WAIT_MS)]) : Promise.resolve();
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
    this.touch();
    this.setTask(task);
    return task;
  }

  /** Replaces the system prompt (a resume rebuilds it from the folder as it is now). */
  setSystemPrompt(prompt: string): void {
    this.systemPrompt = prompt;
  }

  private setTask(task: PreparedTask): void {
    // Only the newest card is worth replaying.
    this.stream.drop((e) => e.type === 'task_prepared');
    this.preparedTask = task;
    this.stream.emit({ type: 'task_prepared', proposedIntent: task.intent, constraints: task.constraints });
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
      this.toolSet = tools;
    }
    return this.toolSet;
  }

  /**
   * One reply: model calls and tool calls until the model answers in prose,
   * capped at MAX_MODEL_CALLS_PER_REPLY. Every exit ends with `turn_complete`;
   * a failure emits `error` first, and the discussion takes the next message.
   */
  private async runTurn(signal: AbortSignal): Promise<void> {
    // Let `send` return (and publish `turn`) before the first model call.
    await Promise.resolve();
    // What the user saw this turn, across every model call: the final
    // `assistant_message` must match the deltas it replaces.
    let turnText = '';
    // Text streamed by the current call and not yet in the history.
    let streamed = '';
    let finished = false;
    const usage = { promptTokens: 0, completionTokens: 0, reported: false };
    try {
      for (let call = 0; call < MAX_MODEL_CALLS_PER_REPLY; call++) {
        // The closed latch and the abort are checked before every model call,
        // so a close that landed between steps never reaches the model.
        if (this.closed || signal.aborted) break;
        if (turnText && !turnText.endsWith('\n')) this.showText('\n\n', (t) => (turnText += t));
        streamed = '';
        const tools = this.tools();
        const response = await this.model.complete(
          {
            messages: this.requestMessages(tools),
            tools,
            model: this.effectiveModel ?? undefined,
            signal,
          },
          (delta) => {
            if (!delta || signal.aborted) return;
            streamed += delta;
            this.showText(delta, (t) => (turnText += t));
          },
          {
            // Reasoning is shown (collapsed) but never joins the answer, the
            // history or the distilled transcript.
            onReasoning: (text) => {
              if (text && !signal.aborted) this.stream.emitText('reasoning_delta', text);
            },
            // Streamed text that turned out to be reasoning leaves the turn's answer (and so
            // assistant_message and the transcript); clients already shown it replace it then.
            onAnswerRetracted: () => {
              turnText = turnText.slice(0, turnText.length - streamed.length);
              streamed = '';
            },
          },
        );
        if (response.usage) {
          usage.promptTokens += response.usage.promptTokens;
          usage.completionTokens += response.usage.completionTokens;
          usage.reported = true;
        }
        // Providers that do not stream content still return it whole.
        if (!streamed && response.content) this.showText(response.content, (t) => (turnText += t));
        const content = response.content || streamed;
        streamed = '';
        this.history.push({
          role: 'assistant',
          content,
          ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
        });
        if (response.toolCalls.length === 0) {
          if (response.finishReason === 'length') {
            this.showText("\n\n_(The reply was cut off at the model's output limit.)_", (t) => (turnText += t));
          }
          finished = true;
          break;
        }
        for (const toolCall of response.toolCalls) {
          await this.runTool(toolCall, signal);
        }
        this.changed();
      }
      if (!finished && !signal.aborted && !this.closed) {
        this.stream.emit({
          type: 'error',
          message: `The model made ${MAX_MODEL_CALLS_PER_REPLY} calls without finishing its reply, so the turn was stopped. Ask a narrower question, or name the files to look at.`,
        });
      }
    } catch (err) {
      if (!(signal.aborted || (err instanceof ModelError && err.kind === 'cancelled'))) {
        this.logger.warn(`discussion ${this.id}: turn failed: ${errorText(err)}`);
        this.stream.emit({ type: 'error', message: errorText(err) });
      }
    } finally {
      // A reply cut short keeps what was said, so the model sees it next
      // turn, marked, so it does not take it for an answer it finished.
      if (streamed.trim()) this.history.push({ role: 'assistant', content: `${streamed}\n\n${INTERRUPTED_REPLY_NOTE}` });
      this.reconcileHistory(signal.aborted);
      const text = turnText.trim();
      if (text) {
        this.recordTranscript('Assistant', text);
        this.stream.emit({ type: 'assistant_message', text });
      }
      if (usage.reported) {
        this.stream.emit({ type: 'usage', promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });
      }
      this.turnCount++;
      // Free the discussion before announcing it: a client that sends on
      // `turn_complete` must not be told the turn is still running.
      this.turn = null;
      this.touch();
      this.changed();
      this.stream.emit({ type: 'turn_complete' });
    }
  }

  /**
   * The history as the next request carries it: trimmed to the model's
   * context window (oldest tool results elided first, then the oldest turns;
   * never the system prompt, the latest user message or this turn's tool
   * exchange). The saved history keeps everything.
   */
  private requestMessages(tools: ToolSpec[]): ChatMessage[] {
    const messages = this.modelMessages();
    let latestUser = messages.length - 1;
    while (latestUser > 0 && messages[latestUser].role !== 'user') latestUser--;
    const contextTokens = contextWindowFor(this.effectiveModel ?? '', this.contextTokens() || undefined);
    const fitted = fitToBudget(messages, {
      contextTokens,
      reserveForReply: reserveForReplyFor(contextTokens),
      protectFrom: Math.max(1, latestUser),
      tools,
    });
    if (fitted.elidedToolResults || fitted.droppedTurns) {
      this.logger.info(
        `discussion ${this.id}: fitted to ${contextTokens} tokens by eliding ${fitted.elidedToolResults} tool results and ${fitted.droppedTurns} turns`,
      );
    }
    return fitted.messages;
  }

  private showText(text: string, append: (text: string) => void): void {
    append(text);
    this.stream.emitText('assistant_delta', text);
  }

  private async runTool(toolCall: ToolCall, signal: AbortSignal): Promise<void> {
    // The name is the model's output: bounded like everything else it shows.
    const shownName = bound(toolCall.name, TOOL_NAME_CHARS);
    this.stream.emit({
      type: 'tool_call',
      tool: shownName,
      paramsPreview: bound(toolCall.arguments, PARAMS_PREVIEW_CHARS),
    });
    let ok: boolean;
    let output: string;
    if (toolCall.name === PREPARE_TASK_TOOL.name && !this.toolbox.isDenied(toolCall.name)) {
      ({ ok, output } = this.prepareTask(toolCall.arguments));
    } else {
      // Everything else, mutating and invented names included, goes through
      // the toolbox, which runs only its read tools and refuses the rest.
      ({ ok, output } = await this.toolbox.run(toolCall.name, toolCall.arguments, signal));
    }
    // Every later request carries this answer: one oversized result (a huge
    // error echoing its input) must not grow them all.
    // A refusal or error needs a sentence, not the megabyte of input it may quote.
    const limit = ok ? TOOL_OUTPUT_MAX_CHARS : TOOL_ERROR_MAX_CHARS;
    if (output.length > limit) {
      output = `${output.slice(0, limit)}\n[cut: this result was ${output.length} characters; ask for less]`;
    }
    this.history.push({ role: 'tool', toolCallId: toolCall.id, content: output });
    this.stream.emit({ type: 'tool_result', tool: shownName, ok, preview: bound(output, RESULT_PREVIEW_CHARS) });
  }

  private prepareTask(rawArguments: string): { ok: boolean; output: string } {
    let args: unknown;
    try {
      args = JSON.parse(rawArguments || '{}');
    } catch {
      return { ok: false, output: 'prepare_coding_task needs JSON arguments: {"intent": string, "constraints": string[]}.' };
    }
    let task: PreparedTask;
    try {
      task = validTask(args);
    } catch (err) {
      return { ok: false, output: `prepare_coding_task: ${errorText(err)}` };
    }
    this.setTask(task);
    return {
      ok: true,
      output:
        'Task prepared for the user to review and edit. Nothing has started and no file has changed; ' +
        'tell the user the task is ready and summarize it briefly.',
    };
  }

  /**
   * An interrupted turn can leave an assistant message whose tool calls have
   * no results; providers reject that history on the next request, which
   * would brick the discussion. Answer each missing call as interrupted.
   */
  private reconcileHistory(cancelled: boolean): void {
    const answered = new Set<string>();
    for (let i = this.history.length - 1; i >= 0; i--) {
      const message = this.history[i];
      if (message.role === 'tool') {
        answered.add(message.toolCallId);
        continue;
      }
      if (message.role === 'assistant' && message.toolCalls) {
        for (const call of message.toolCalls) {
          if (!answered.has(call.id)) {
            this.history.push({
              role: 'tool',
              toolCallId: call.id,
              content: cancelled ? 'Not run: the user stopped this reply.' : 'Not run: the reply ended before this call.',
            });
          }
        }
      }
      break;
    }
  }
}

/** How long a close waits for a running turn to unwind before letting go of it. */
const CLOSE_WAIT_MS = 5_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Characters of a tool name shown in events. */
const TOOL_NAME_CHARS = 100;

/** Characters of one tool result kept for the model (a full read is 256 KiB). */
const TOOL_OUTPUT_MAX_CHARS = 300_000;

/** Characters of a failed call's answer kept for the model. */
const TOOL_ERROR_MAX_CHARS = 4_000;

/**
 * A task as the model prepared it or the user edited it: an intent and
 * string constraints, bounded, since every later turn carries hand-offs in
 * its system prompt.
 */
function validTask(value: unknown): PreparedTask {
  const record = (value ?? {}) as { intent?: unknown; constraints?: unknown };
  const intent = typeof record.intent === 'string' ? record.intent.trim() : '';
  if (!intent) throw new DiscussError('InvalidParams', 'The task needs a non-empty "intent": one imperative paragraph of what to change.');
  if (intent.length > TASK_LIMITS.intentChars) {
    throw new DiscussError('InvalidParams', `The intent is ${intent.length} characters; keep it under ${TASK_LIMITS.intentChars}.`);
  }
  const constraints = Array.isArray(record.constraints)
    ? record.constraints.filter((c): c is string => typeof c === 'string').map((c) => c.trim()).filter(Boolean)
    : [];
  if (constraints.length > TASK_LIMITS.constraints || constraints.some((c) => c.length > TASK_LIMITS.constraintChars)) {
    throw new DiscussError(
      'InvalidParams',
      `Keep the task to ${TASK_LIMITS.constraints} constraints of at most ${TASK_LIMITS.constraintChars} characters each.`,
    );
  }
  return { intent, constraints };
}

function firstLine(text: string): string {
  return text.trim().split(/\r?\n/, 1)[0];
}

/** Cuts `text` to `max` characters, marking the cut. */
export function bound(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, max) + '…';
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The chat panel's conversation, built from what the extension posts. Pure:
 * no DOM, so the rules (dedupe by seq, replay, superseding, error fixes) are
 * tested in Node, and the webview only maps the changes it reports onto DOM.
 *
 * Each message is applied in time proportional to its own size: a delta
 * touches only the open turn, never the history before it.
 */
import type { AttachmentOutcome, Decision, DiscussionEvent, ExtensionToWebview, PreparedTask, Review, WebviewToExtension } from '../../../shared/protocol';
import { inertLine, printablePath } from '../../../shared/printablePath';

export type FixCommand = (WebviewToExtension & { type: 'runCommand' })['command'];

export interface FixAction {
  command: FixCommand;
  label: string;
}

export interface ToolChip {
  /** Seq of the `tool_call` event: unique within the discussion. */
  id: number;
  tool: string;
  params: string;
  /** Null until the result arrives (and for good if the turn ended first). */
  ok: boolean | null;
  preview: string;
  /** The call was turned down (read-only, denied path), as opposed to failing. */
  refused: boolean;
}

export interface TurnError {
  message: string;
  fix?: FixAction;
}

export interface Turn {
  /** Seq of the event that opened the turn. */
  id: number;
  /** Null when the replay started after this turn's question. */
  user: { text: string; ts: number; attachments?: AttachmentOutcome[] } | null;
  tools: ToolChip[];
  /** Markdown as streamed, or the final `assistant_message` once it arrived. */
  reply: string;
  /** True once `assistant_message` replaced the deltas. */
  replyFinal: boolean;
  /** The model's reasoning, shown collapsed; never part of the reply. */
  reasoning: string;
  /** Tokens the turn used, when the endpoint reports them. */
  usage: { promptTokens: number; completionTokens: number } | null;
  errors: TurnError[];
  complete: boolean;
}

export interface Banner {
  level: 'info' | 'error';
  message: string;
  fix?: FixAction;
}

export interface ConversationState {
  discussionId: string | null;
  repo: string | null;
  model: string | null;
  /** Highest seq applied; -1 before any. */
  lastSeq: number;
  answering: boolean;
  turns: Turn[];
  /** The prepared task as the user last edited it. */
  task: PreparedTask | null;
  /** A hand-off was posted and its outcome (a notice) has not arrived yet. */
  handingOff: boolean;
  banner: Banner | null;
  /** Why the panel lost its discussion, while it has none. */
  detached: string | null;
  /** The current decision log, in the order recorded (edited entries keep their place). */
  decisions: Decision[];
  /** The latest review of an implementation against the hand-off. */
  review: Review | null;
  /** A task was handed off in this discussion, so its implementation can be reviewed. */
  handedOff: boolean;
  /**
   * The "so far" note requests carry instead of the oldest turns, and the
   * turn (its id) that the summarized part ends before; null when that turn
   * is older than what the panel holds.
   */
  summary: { note: string; beforeTurn: number | null } | null;
}

/** What changed, so the webview redraws only that. */
export type ViewChange =
  | { kind: 'reset' }
  | { kind: 'header' }
  | { kind: 'answering' }
  | { kind: 'turnAdded'; turnId: number }
  | { kind: 'replyAppended'; turnId: number; text: string }
  | { kind: 'replyReplaced'; turnId: number }
  | { kind: 'reasoningAppended'; turnId: number; text: string }
  /** Tools, errors or completion of a turn. */
  | { kind: 'turnUpdated'; turnId: number }
  | { kind: 'task' }
  /** The decision log or the review changed. */
  | { kind: 'decisions' }
  /** The earlier turns were summarized (again). */
  | { kind: 'summary' }
  | { kind: 'banner' }
  /** The panel dropped history it could not trust: ask the extension for all of it again. */
  | { kind: 'resync' };

export interface ConversationSnapshot extends ConversationState {
  version: typeof SNAPSHOT_VERSION;
}

const SNAPSHOT_VERSION = 1;

const FIX_LABELS: Record<FixCommand, string> = {
  setApiKey: 'Set API key',
  selectModel: 'Select model',
  openSettings: 'Open settings',
  showLogs: 'Show logs',
};

/** Tokens the whole discussion used, over every turn that reported usage. */
export function discussionUsage(turns: ReadonlyArray<{ usage?: { promptTokens: number; completionTokens: number } | null }>): {
  promptTokens: number;
  completionTokens: number;
} | null {
  let total: { promptTokens: number; completionTokens: number } | null = null;
  for (const turn of turns) {
    if (!turn.usage) continue;
    total ??= { promptTokens: 0, completionTokens: 0 };
    total.promptTokens += turn.usage.promptTokens;
    total.completionTokens += turn.usage.completionTokens;
  }
  return total;
}

export class ConversationModel {
  private readonly current: ConversationState;
  /**
   * Id of the latest hand-off posted. Seeded from the clock so a page
   * reloaded while a hand-off was out does not reuse that request's id.
   */
  handOffRequestId = Date.now();

  private constructor(state: ConversationState) {
    this.current = state;
  }

  static empty(): ConversationModel {
    return new ConversationModel(emptyState());
  }

  /**
   * A model from saved webview state. Anything unrecognized (an older panel
   * version, a damaged value) yields an empty model: the extension then
   * replays the whole discussion. The snapshot's turn objects are adopted as
   * they are, not copied.
   */
  static restore(saved: unknown): ConversationModel {
    return new ConversationModel(isSnapshot(saved) ? fromSnapshot(saved) : emptyState());
  }

  get state(): Readonly<ConversationState> {
    return this.current;
  }

  /** JSON-safe; `restore` takes it back. */
  snapshot(): ConversationSnapshot {
    return { version: SNAPSHOT_VERSION, ...this.current };
  }

  apply(message: ExtensionToWebview): ViewChange[] {
    switch (message.type) {
      case 'attached':
        return this.attach(message.discussionId, message.repo, message.model, message.reset);
      case 'events': {
        const changes: ViewChange[] = [];
        for (const event of message.events) this.applyEvent(event, changes);
        return changes;
      }
      case 'status': {
        const changes: ViewChange[] = [];
        if (this.current.model !== message.model) {
          this.current.model = message.model;
          changes.push({ kind: 'header' });
        }
        if (this.current.answering !== message.answering) {
          this.current.answering = message.answering;
          changes.push({ kind: 'answering' });
        }
        return changes;
      }
      case 'handOffResult': {
        // While a newer hand-off is pending, the answer to an earlier one
        // must not settle the card the user is waiting on.
        if (this.current.handingOff && message.requestId !== this.handOffRequestId) return [];
        // The task went out (and the server consumed it), or it did not and
        // the card stays for another try.
        this.current.handingOff = false;
        if (message.ok) this.current.task = null;
        this.current.banner = {
          level: message.ok ? 'info' : 'error',
          message: message.message,
          fix: message.ok ? undefined : fixForError(message.message),
        };
        return [{ kind: 'task' }, { kind: 'banner' }];
      }
      case 'notice': {
        const changes: ViewChange[] = [{ kind: 'banner' }];
        this.current.banner = {
          level: message.level,
          message: message.message,
          fix: message.action
            ? { command: message.action.command, label: FIX_LABELS[message.action.command] }
            : message.level === 'error'
              ? fixForError(message.message)
              : undefined,
        };
        return changes;
      }
      case 'detached': {
        this.current.detached = message.message;
        // The reason shows in the banner region, with a way to start over.
        const changes: ViewChange[] = [{ kind: 'header' }, { kind: 'banner' }];
        if (this.current.answering) {
          this.current.answering = false;
          changes.push({ kind: 'answering' });
        }
        return changes;
      }
      default:
        return [];
    }
  }

  /** The user edited the task card. */
  editTask(task: PreparedTask): void {
    // The card's fields carry only intent and constraints; where each
    // constraint came from and the open questions stay with the task.
    const previous = this.current.task;
    this.current.task = copyTask({
      ...task,
      constraintSources: task.constraintSources ?? previous?.constraintSources,
      openQuestions: task.openQuestions ?? previous?.openQuestions,
    });
  }

  /** A task drafted in the panel (a review's follow-up) takes the card, for the user to edit and hand off. */
  offerTask(task: PreparedTask): ViewChange[] {
    this.current.task = copyTask(task);
    this.current.handingOff = false;
    return [{ kind: 'task' }];
  }

  discardTask(): ViewChange[] {
    this.current.task = null;
    this.current.handingOff = false;
    return [{ kind: 'task' }];
  }

  /** The user handed `task` off; the card waits for the answer to request `handOffRequestId`. */
  startHandOff(task: PreparedTask): ViewChange[] {
    this.current.task = copyTask(task);
    this.current.handingOff = true;
    this.handOffRequestId += 1;
    return [{ kind: 'task' }];
  }

  dismissBanner(): ViewChange[] {
    if (!this.current.banner) return [];
    this.current.banner = null;
    return [{ kind: 'banner' }];
  }

  private attach(discussionId: string, repo: string, model: string | null, reset: boolean): ViewChange[] {
    const previous = this.current.discussionId;
    // The extension says when to reset; a different id with history on screen
    // is cleared too, so two discussions never share one transcript.
    const foreign = previous !== null && previous !== discussionId && this.current.lastSeq >= 0;
    if (reset || foreign) {
      Object.assign(this.current, emptyState(), { discussionId, repo, model });
      return foreign && !reset ? [{ kind: 'reset' }, { kind: 'resync' }] : [{ kind: 'reset' }];
    }
    const wasDetached = this.current.detached !== null;
    this.current.discussionId = discussionId;
    this.current.repo = repo;
    this.current.model = model;
    this.current.detached = null;
    return wasDetached ? [{ kind: 'header' }, { kind: 'banner' }] : [{ kind: 'header' }];
  }

  private applyEvent(event: DiscussionEvent, changes: ViewChange[]): void {
    // Replays overlap what the panel already has; seq is the only identity.
    if (event.seq <= this.current.lastSeq) return;
    if (this.current.discussionId === null) this.current.discussionId = event.discussionId;
    else if (event.discussionId !== this.current.discussionId) return;
    this.current.lastSeq = event.seq;

    switch (event.type) {
      case 'user_message': {
        const turn = this.startTurn(event.seq, changes);
        turn.user = event.attachments?.length ? { text: event.text, ts: event.ts, attachments: event.attachments } : { text: event.text, ts: event.ts };
        if (this.current.task) {
          // A new turn moves the discussion on: the server drops a task
          // prepared before it, and so does the panel.
          this.current.task = null;
          this.current.handingOff = false;
          changes.push({ kind: 'task' });
        }
        if (this.current.banner?.level === 'error') {
          // A new question starts afresh; the failure stays in its own turn.
          this.current.banner = null;
          changes.push({ kind: 'banner' });
        }
        this.setAnswering(true, changes);
        return;
      }
      case 'assistant_delta': {
        const turn = this.openTurn(event.seq, changes);
        if (turn.replyFinal || !event.text) return;
        turn.reply += event.text;
        changes.push({ kind: 'replyAppended', turnId: turn.id, text: event.text });
        return;
      }
      case 'assistant_message': {
        const turn = this.openTurn(event.seq, changes);
        turn.reply = event.text;
        turn.replyFinal = true;
        changes.push({ kind: 'replyReplaced', turnId: turn.id });
        return;
      }
      case 'reasoning_delta': {
        const turn = this.openTurn(event.seq, changes);
        if (!event.text) return;
        turn.reasoning += event.text;
        changes.push({ kind: 'reasoningAppended', turnId: turn.id, text: event.text });
        return;
      }
      case 'usage': {
        const turn = this.openTurn(event.seq, changes);
        const previous = turn.usage ?? { promptTokens: 0, completionTokens: 0 };
        turn.usage = {
          promptTokens: previous.promptTokens + event.promptTokens,
          completionTokens: previous.completionTokens + event.completionTokens,
        };
        changes.push({ kind: 'turnUpdated', turnId: turn.id }, { kind: 'header' });
        return;
      }
      case 'tool_call': {
        const turn = this.openTurn(event.seq, changes);
        turn.tools.push({ id: event.seq, tool: event.tool, params: event.paramsPreview, ok: null, preview: '', refused: false });
        changes.push({ kind: 'turnUpdated', turnId: turn.id });
        return;
      }
      case 'tool_result': {
        const turn = this.openTurn(event.seq, changes);
        // Results come in call order; the earliest unanswered call of that tool is this one.
        let chip = turn.tools.find((candidate) => candidate.ok === null && candidate.tool === event.tool);
        if (!chip) {
          chip = { id: event.seq, tool: event.tool, params: '', ok: null, preview: '', refused: false };
          turn.tools.push(chip);
        }
        chip.ok = event.ok;
        chip.preview = event.preview;
        chip.refused = !event.ok && isRefusal(event.preview);
        changes.push({ kind: 'turnUpdated', turnId: turn.id });
        return;
      }
      case 'error': {
        const turn = this.openTurn(event.seq, changes);
        const error: TurnError = { message: event.message };
        const fix = fixForError(event.message);
        if (fix) error.fix = fix;
        turn.errors.push(error);
        changes.push({ kind: 'turnUpdated', turnId: turn.id });
        this.current.banner = { level: 'error', message: event.message, ...(fix ? { fix } : {}) };
        changes.push({ kind: 'banner' });
        return;
      }
      case 'turn_complete': {
        const turn = this.lastTurn();
        if (turn && !turn.complete) {
          turn.complete = true;
          changes.push({ kind: 'turnUpdated', turnId: turn.id });
        }
        this.setAnswering(false, changes);
        return;
      }
      case 'task_prepared':
        this.current.task = copyTask(event);
        changes.push({ kind: 'task' });
        return;
      case 'decision_recorded': {
        const { decision } = event;
        const log = this.current.decisions.filter((entry) => entry.id !== decision.replaces);
        const at = log.findIndex((entry) => entry.id === decision.id);
        if (at >= 0) log[at] = decision;
        else log.push(decision);
        this.current.decisions = log;
        changes.push({ kind: 'decisions' });
        return;
      }
      case 'decision_deleted':
        this.current.decisions = this.current.decisions.filter((entry) => entry.id !== event.id);
        changes.push({ kind: 'decisions' });
        return;
      case 'review':
        this.current.review = event.review;
        changes.push({ kind: 'decisions' });
        return;
      case 'task_handed_off':
        if (!this.current.handedOff) {
          this.current.handedOff = true;
          changes.push({ kind: 'header' });
        }
        return;
      case 'history_summarized': {
        const before = typeof event.firstKeptSeq === 'number' && this.current.turns.some((turn) => turn.id === event.firstKeptSeq);
        this.current.summary = { note: event.note, beforeTurn: before ? event.firstKeptSeq! : null };
        changes.push({ kind: 'summary' });
        return;
      }
      default:
        return;
    }
  }

  private lastTurn(): Turn | undefined {
    return this.current.turns[this.current.turns.length - 1];
  }

  /** The turn still being answered, or a new one when a reply arrives without its question. */
  private openTurn(seq: number, changes: ViewChange[]): Turn {
    const last = this.lastTurn();
    return last && !last.complete ? last : this.startTurn(seq, changes);
  }

  private startTurn(seq: number, changes: ViewChange[]): Turn {
    const last = this.lastTurn();
    if (last && !last.complete) {
      // A question arriving before the previous turn_complete (one was lost)
      // closes that turn rather than mixing two replies.
      last.complete = true;
      changes.push({ kind: 'turnUpdated', turnId: last.id });
    }
    const turn: Turn = {
      id: seq,
      user: null,
      tools: [],
      reply: '',
      replyFinal: false,
      reasoning: '',
      usage: null,
      errors: [],
      complete: false,
    };
    this.current.turns.push(turn);
    changes.push({ kind: 'turnAdded', turnId: turn.id });
    return turn;
  }

  private setAnswering(answering: boolean, changes: ViewChange[]): void {
    if (this.current.answering === answering) return;
    this.current.answering = answering;
    changes.push({ kind: 'answering' });
  }
}

/**
 * The command that fixes the failure a message describes, if one does. The
 * server's messages name the remedy; these patterns follow its wording and
 * the common provider phrasings.
 */
export function fixForError(message: string): FixAction | undefined {
  const command = fixCommandFor(message);
  return command ? { command, label: FIX_LABELS[command] } : undefined;
}

function fixCommandFor(message: string): FixCommand | undefined {
  // "answered a 404 on both /chat/completions and /models: the base URL is probably missing /v1": the URL, not the model.
  if (/the base URL (?:is )?probably/i.test(message)) return 'openSettings';
  if (/\b40[13]\b|api[ _-]?key|unauthori[sz]ed|invalid[_ ]auth/i.test(message)) return 'setApiKey';
  if (/\b404\b|unknown model|model_not_found|does not offer the model|no model is set|model .*not found|select model/i.test(message)) {
    return 'selectModel';
  }
  if (/(?:could ?not|cannot|can't|unable to) reach|did not answer in time|ECONNREFUSED|ENOTFOUND|connection refused|host not found|base url/i.test(message)) {
    return 'openSettings';
  }
  if (/server error|\b5\d\d\b|check the server/i.test(message)) return 'showLogs';
  return undefined;
}

/** A failed tool result that is a refusal (read-only, denied, outside the folder), not a crash. */
export function isRefusal(preview: string): boolean {
  return /read-only|\brefused\b|\bdenied\b|not allowed|outside the folder/i.test(preview);
}

/**
 * Tool arguments as a short line: `path: src/a.ts, line: 3` rather than raw
 * JSON. Falls back to the text as sent (it may be cut mid-JSON). A value
 * holding a line break, control or bidi character is shown quoted and
 * escaped, as the tools show such names, so it cannot pose as another name.
 */
export function describeParams(params: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(params);
  } catch {
    return inertLine(params.trim());
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return inertLine(params.trim());
  return Object.entries(parsed as Record<string, unknown>)
    .map(([key, value]) => `${inertLine(key)}: ${typeof value === 'string' ? printablePath(value) : inertLine(JSON.stringify(value))}`)
    .join(', ');
}

function emptyState(): ConversationState {
  return {
    discussionId: null,
    repo: null,
    model: null,
    lastSeq: -1,
    answering: false,
    turns: [],
    task: null,
    handingOff: false,
    banner: null,
    detached: null,
    decisions: [],
    review: null,
    handedOff: false,
    summary: null,
  };
}

function copyTask(task: PreparedTask): PreparedTask {
  const copy: PreparedTask = { intent: task.intent, constraints: [...task.constraints] };
  if (task.constraintSources) copy.constraintSources = task.constraintSources.map((source) => ({ ...source }));
  if (task.openQuestions) copy.openQuestions = [...task.openQuestions];
  return copy;
}

function fromSnapshot(snapshot: ConversationSnapshot): ConversationState {
  return {
    discussionId: snapshot.discussionId ?? null,
    repo: typeof snapshot.repo === 'string' ? snapshot.repo : null,
    model: typeof snapshot.model === 'string' ? snapshot.model : null,
    lastSeq: snapshot.lastSeq,
    // A reply cut off by the reload is still running as far as the panel
    // knows; the replay's turn_complete or the extension's status settles it.
    answering: snapshot.answering === true,
    turns: snapshot.turns.map(withTurnDefaults),
    task: snapshot.task ?? null,
    // The notice that would settle it went to the page that was unloaded.
    handingOff: false,
    banner: snapshot.banner ?? null,
    detached: typeof snapshot.detached === 'string' ? snapshot.detached : null,
    // Snapshots from before the decision log have neither; the replay does not resend them.
    decisions: Array.isArray(snapshot.decisions) ? snapshot.decisions : [],
    review: snapshot.review ?? null,
    handedOff: snapshot.handedOff === true,
    summary: isSummary(snapshot.summary) ? snapshot.summary : null,
  };
}

/** Fills fields a snapshot may lack; adopts the object rather than copying it. */
function withTurnDefaults(turn: Turn): Turn {
  if (typeof turn.reasoning !== 'string') turn.reasoning = '';
  if (turn.usage === undefined) turn.usage = null;
  if (turn.user === undefined) turn.user = null;
  return turn;
}

function isSnapshot(value: unknown): value is ConversationSnapshot {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Partial<ConversationSnapshot>;
  return (
    candidate.version === SNAPSHOT_VERSION &&
    typeof candidate.lastSeq === 'number' &&
    Number.isInteger(candidate.lastSeq) &&
    Array.isArray(candidate.turns) &&
    candidate.turns.every(isTurn) &&
    (candidate.discussionId == null || typeof candidate.discussionId === 'string') &&
    (candidate.task == null || isTask(candidate.task))
  );
}

function isSummary(value: unknown): value is ConversationState['summary'] & object {
  if (value === null || typeof value !== 'object') return false;
  const summary = value as { note?: unknown; beforeTurn?: unknown };
  return typeof summary.note === 'string' && (summary.beforeTurn === null || typeof summary.beforeTurn === 'number');
}

function isTurn(value: unknown): value is Turn {
  if (value === null || typeof value !== 'object') return false;
  const turn = value as Partial<Turn>;
  return (
    typeof turn.id === 'number' &&
    typeof turn.reply === 'string' &&
    typeof turn.complete === 'boolean' &&
    Array.isArray(turn.tools) &&
    Array.isArray(turn.errors)
  );
}

function isTask(value: unknown): value is PreparedTask {
  if (value === null || typeof value !== 'object') return false;
  const task = value as Partial<PreparedTask>;
  return typeof task.intent === 'string' && Array.isArray(task.constraints) && task.constraints.every((c) => typeof c === 'string');
}

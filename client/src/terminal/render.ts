import type { Decision, DecisionKind, DiscussionEvent, DiscussionSummary, PreparedTask, Review, ReviewStatus, TurnProgress } from '../../../shared/protocol';
import { cutText } from '../../../shared/cutText';
import { evidenceLabel } from '../../../shared/evidenceLabel';
import { attachmentLabel } from '../../../shared/mentions';
import { oneLine } from '../../../shared/oneLine';
import { inertLine } from '../../../shared/printablePath';
import { isRefusal, summarizeTool } from '../common/toolSummary';
import type { ResolvedSettings } from './config';
import { remedyLine } from './remedies';
import { usageLine, type TokenTotals } from './usage';
import { TerminalText, inert, term, type Printable } from './inertText';
import { wrapLine, type MarkdownRenderer } from './markdown';
import type { Progress } from './progress';
import { StreamingMarkdown, type ScreenSize } from './streamingMarkdown';

// ---------------------------------------------------------------------------
// Colour

/** Each colour takes untrusted text as well as styled text: a plain string is made inert before it is coloured. */
export interface Style {
  readonly enabled: boolean;
  bold(text: Printable): TerminalText;
  dim(text: Printable): TerminalText;
  red(text: Printable): TerminalText;
  green(text: Printable): TerminalText;
  yellow(text: Printable): TerminalText;
  cyan(text: Printable): TerminalText;
}

/**
 * Colours only on a terminal, and never when NO_COLOR is set (no-color.org)
 * or the terminal says it cannot show them: escape codes in a file or a pipe
 * are garbage to whoever reads it.
 */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv, disabledByFlag: boolean): boolean {
  if (disabledByFlag) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export function createStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (text: Printable) => {
    const inner = TerminalText.from(text);
    return enabled && inner.length ? TerminalText.sgr(open, close, inner) : inner;
  };
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

// ---------------------------------------------------------------------------
// Output that knows where the cursor is

/**
 * A stream plus whether the last thing written ended a line, so notes never
 * land mid-sentence. It is the one way to the terminal: a plain string is
 * made inert on the way (see inertText.ts), so no path can forget to.
 */
export class LineWriter {
  private atLineStart = true;
  /** Runs before anything is written: a spinner on the same terminal clears its line first. */
  beforeWrite: (() => void) | undefined;

  constructor(
    readonly stream: NodeJS.WritableStream & { isTTY?: boolean },
    readonly style: Style,
  ) {}

  get isTTY(): boolean {
    return this.stream.isTTY === true;
  }

  /** The terminal's width, to wrap at; undefined for a pipe or a file, which are not wrapped. */
  get columns(): number | undefined {
    if (!this.isTTY) return undefined;
    return (this.stream as { columns?: number }).columns || 80;
  }

  /** The terminal's size; a pseudo-terminal nobody sized reports 0, read as 80 by 24. */
  get screen(): ScreenSize {
    const { columns, rows } = this.stream as { columns?: number; rows?: number };
    return { columns: columns || 80, rows: rows || 24 };
  }

  write(text: Printable): void {
    const safe = TerminalText.from(text);
    if (!safe.length) return;
    this.beforeWrite?.();
    this.stream.write(safe.value);
    this.atLineStart = safe.endsWith('\n');
  }

  /** Writes `text` on a line of its own. */
  line(text: Printable = ''): void {
    this.endLine();
    this.write(term`${text}\n`);
  }

  endLine(): void {
    if (!this.atLineStart) this.write('\n');
  }

  /** Erases from the cursor back to the start of the row `rowsUp` above it, and leaves the cursor there. */
  eraseBack(rowsUp: number): void {
    this.write(TerminalText.control({ eraseUp: rowsUp }));
    this.atLineStart = true;
  }
}

// ---------------------------------------------------------------------------
// Tool calls

const RESULT_REASON_CHARS = 140;

export type ToolVerdict = 'ok' | 'refused' | 'failed';

/**
 * A refusal is the boundary or the read-only rule saying no (a secret, a path
 * outside the folder, a write tool); anything else that did not work merely
 * failed (a missing file). The two look different on screen.
 */
export function toolVerdict(ok: boolean, preview: string): ToolVerdict {
  if (ok) return 'ok';
  return isRefusal(preview) ? 'refused' : 'failed';
}

/** What came back: the summary's count when it has one ("37 in 12 files"), else ok / refused / failed with the reason. */
function verdictText(verdict: ToolVerdict, preview: string, style: Style, outcome?: string): TerminalText {
  if (verdict === 'ok') return style.green(outcome ?? 'ok');
  const reason = cutText(preview.trim().split(/\r?\n/, 1)[0].replace(/^Refused:\s*/, ''), RESULT_REASON_CHARS, 'within');
  const word = verdict === 'refused' ? style.yellow(style.bold('refused')) : style.red('failed');
  return term`${word}${reason ? style.dim(` — ${reason}`) : ''}`;
}

// ---------------------------------------------------------------------------
// A turn as it streams

export interface TurnPrinterOptions {
  /** Where the answer goes. */
  answer: LineWriter;
  /** Where tool calls, task cards and progress go; null hides them. */
  notes: LineWriter | null;
  /** Where `error` events go. */
  errors: LineWriter;
  settings: Pick<ResolvedSettings, 'sources' | 'configPath'>;
  /** A "thinking…" note when a reasoning model thinks before answering. */
  showThinking: boolean;
  /** The discussion's token totals so far: with it, a dim line after the reply tells the turn's and the discussion's usage. */
  discussionUsage?: () => TokenTotals;
  /** Renders the answer as Markdown as it streams (a terminal only; plain text otherwise). */
  markdown?: MarkdownRenderer;
  /** A spinner while the model is awaited and while a tool runs (a terminal only). */
  progress?: Progress;
}

/** What the spinner says while the model has not answered yet. */
export const WAITING_LABEL = 'waiting for the model';

/**
 * Renders one turn's events: the reply as it streams, each tool call as one
 * compact line completed by its result, a prepared task as a card, and an
 * error with what to do about it.
 */
export class TurnPrinter {
  private openToolLine = false;
  /** The call whose result is awaited: its arguments name what the result line counts. */
  private lastCall: { tool: string; paramsPreview: string } | undefined;
  private thinkingShown = false;
  private answered = false;
  private turnTokens: TokenTotals | undefined;
  private readonly markdown: StreamingMarkdown | undefined;
  sawError = false;

  constructor(private readonly options: TurnPrinterOptions) {
    const { answer, markdown } = options;
    if (markdown && answer.isTTY && answer.style.enabled) this.markdown = new StreamingMarkdown(answer, markdown, () => answer.screen);
  }

  /** The turn has been sent and nothing has come back yet. */
  awaiting(): void {
    this.options.progress?.show(WAITING_LABEL, Date.now());
  }

  /** The server's word on the turn between events: a retry's wait counts down in the spinner (nothing without one). */
  progressed(progress: TurnProgress): void {
    const spinner = this.options.progress;
    if (!spinner || progress.kind !== 'retrying') return;
    this.markdown?.finish();
    this.closeToolLine();
    this.beforeNote();
    // Once the wait is over the spinner says what it waits for again.
    if (!spinner.active) spinner.show(WAITING_LABEL);
    spinner.retrying(progress);
  }

  event(event: DiscussionEvent): void {
    const { answer, notes, errors } = this.options;
    switch (event.type) {
      case 'assistant_delta':
        this.closeToolLine();
        if (this.markdown) this.markdown.write(event.text);
        else answer.write(event.text);
        if (event.text.trim()) this.answered = true;
        break;
      case 'reasoning_delta':
        if (this.options.progress && this.options.showThinking && !this.answered) {
          this.options.progress.show('thinking');
        } else if (this.options.showThinking && notes && !this.thinkingShown && !this.answered) {
          this.thinkingShown = true;
          this.beforeNote();
          notes.line(notes.style.dim('  thinking…'));
        }
        break;
      case 'tool_call': {
        if (!notes) break;
        this.closeToolLine();
        this.beforeNote();
        notes.endLine();
        this.lastCall = { tool: event.tool, paramsPreview: event.paramsPreview };
        // The subject ("references to `x`") is the model's and the repository's text: the writer (or the spinner) makes it inert.
        const subject = term`${notes.style.dim('·')} ${notes.style.cyan(summarizeTool(this.lastCall).subject)}`;
        if (this.options.progress) {
          // The spinner stands for the line until the result completes it.
          this.options.progress.show(subject, Date.now());
          break;
        }
        notes.write(term`  ${subject}`);
        this.openToolLine = true;
        break;
      }
      case 'tool_result': {
        if (!notes) break;
        const call = this.lastCall?.tool === event.tool ? this.lastCall : { tool: event.tool };
        this.lastCall = undefined;
        const summary = summarizeTool(call, { ok: event.ok, preview: event.preview });
        const verdict = verdictText(toolVerdict(event.ok, event.preview), event.preview, notes.style, summary.outcome);
        if (this.openToolLine) {
          notes.write(term` ${notes.style.dim('→')} ${verdict}\n`);
          this.openToolLine = false;
        } else {
          notes.line(term`  ${notes.style.dim('·')} ${notes.style.cyan(summary.subject)} ${notes.style.dim('→')} ${verdict}`);
        }
        // The model reads the result next.
        this.options.progress?.show(WAITING_LABEL, Date.now());
        break;
      }
      case 'task_prepared':
        if (!notes) break;
        this.closeToolLine();
        this.beforeNote();
        notes.line();
        for (const line of taskCard({ intent: event.intent, constraints: event.constraints }, notes.style, notes.columns)) notes.line(line);
        notes.line(notes.style.dim('  /promote to review it, edit it and hand it off.'));
        break;
      case 'error': {
        this.sawError = true;
        this.markdown?.finish();
        this.closeToolLine();
        answer.endLine();
        errors.line(term`${errors.style.red(errors.style.bold('error:'))} ${event.message}`);
        const remedy = remedyLine(event.remedy, this.options.settings);
        if (remedy) errors.line(errors.style.dim(remedy));
        break;
      }
      case 'usage':
        this.turnTokens = {
          prompt: (this.turnTokens?.prompt ?? 0) + event.promptTokens,
          completion: (this.turnTokens?.completion ?? 0) + event.completionTokens,
        };
        break;
      case 'turn_complete': {
        this.markdown?.finish();
        this.closeToolLine();
        this.options.progress?.stop();
        answer.endLine();
        const usage = notes && this.options.discussionUsage ? usageLine(this.turnTokens, this.options.discussionUsage(), notes.style) : undefined;
        if (usage) notes!.line(usage);
        break;
      }
      case 'user_message':
        // The chips: what was attached and what was refused, paths and reasons only (the writer makes them inert).
        // A refused one is shown even without notes: the user asked for it and must learn it was not given.
        for (const chip of event.attachments ?? []) {
          const label = attachmentLabel(chip);
          const out = chip.status === 'refused' ? (notes ?? errors) : notes;
          if (!out) continue;
          if (chip.status === 'refused') out.line(term`  ${out.style.dim('@')} ${label} ${out.style.red(`— not attached: ${chip.note ?? chip.refusal ?? 'refused'}`)}`);
          else out.line(term`  ${out.style.dim('@')} ${out.style.cyan(label)}${chip.status === 'cut' ? out.style.dim(` — ${chip.note ?? 'cut'}`) : ''}`);
        }
        break;
      default:
        // assistant_message repeats the streamed deltas.
        break;
    }
  }

  private closeToolLine(): void {
    if (!this.openToolLine || !this.options.notes) return;
    this.options.notes.write('\n');
    this.openToolLine = false;
  }

  /** A note on another stream of the same terminal must not start mid-line of the answer, nor inside its open Markdown block. */
  private beforeNote(): void {
    this.markdown?.finish();
    const { answer, notes } = this.options;
    if (notes && notes !== answer && answer.isTTY && notes.isTTY) answer.endLine();
    else if (notes === answer) answer.endLine();
  }
}

// ---------------------------------------------------------------------------
// Tasks and lists

/** The task as a card behind a `│` gutter; on a terminal `columns` wide, each line wraps at words and keeps the gutter. */
export function taskCard(task: PreparedTask, style: Style, columns?: number): TerminalText[] {
  const lines = [term`  ${style.bold('Task prepared')}`];
  const gutter = (text: string) => {
    // Made inert before it is measured, so the wrap counts what the terminal will show.
    const rows = columns ? wrapLine(inert(text), columns - 4) : [text];
    for (const row of rows) lines.push(term`  ${style.dim('│')} ${row}`);
  };
  for (const line of task.intent.trim().split(/\r?\n/)) gutter(line);
  if (task.constraints.length) {
    lines.push(term`  ${style.dim('│')}`, term`  ${style.dim('│')} ${style.bold('Constraints')}`);
    for (const constraint of task.constraints) gutter(`- ${oneLine(constraint)}`);
  }
  return lines;
}

const DECISION_HEADINGS: Record<DecisionKind, string> = {
  constraint: 'Constraints',
  rejected: 'Rejected alternatives',
  question: 'Open questions',
  resolved: 'Resolved',
};

/** The decision log grouped by kind, each entry with its id and cited places; every string from the model made inert. */
export function decisionLog(decisions: readonly Decision[], style: Style): TerminalText[] {
  if (decisions.length === 0) return [term`  ${style.dim('No decisions recorded yet.')}`];
  const lines: TerminalText[] = [];
  for (const kind of ['constraint', 'rejected', 'question', 'resolved'] as const) {
    const entries = decisions.filter((decision) => decision.kind === kind);
    if (entries.length === 0) continue;
    lines.push(term`  ${style.bold(DECISION_HEADINGS[kind])}`);
    for (const entry of entries) {
      // A cited name is the repository's: quoted as the panel shows it, so a line break in it cannot print a forged entry.
      const cited = entry.evidence.map(evidenceLabel).join(', ');
      lines.push(term`    ${style.cyan(entry.id)} ${oneLine(entry.text)}${cited ? term`  ${style.dim(cited)}` : ''}`);
    }
  }
  return lines;
}

const STATUS_MARKS: Record<ReviewStatus, (style: Style) => TerminalText> = {
  met: (style) => style.green('✓ met'),
  'not met': (style) => style.red('✗ not met'),
  'cannot tell': (style) => style.yellow('? cannot tell'),
};

/** A review as a checklist: each constraint met, not met or cannot tell with its evidence, then what was not asked for. */
export function reviewChecklist(review: Review, style: Style): TerminalText[] {
  const lines = [term`  ${style.bold('Review')} ${style.dim(review.compared)}`];
  for (const item of review.items) {
    const mark = (STATUS_MARKS[item.status] ?? STATUS_MARKS['cannot tell'])(style);
    lines.push(term`  ${mark}  ${oneLine(item.constraint)}`);
    if (item.evidence.length) lines.push(term`      ${style.dim(item.evidence.map(inertLine).join(', '))}`);
    if (item.note) lines.push(term`      ${oneLine(item.note)}`);
  }
  if (review.unrequested.length) {
    lines.push(term`  ${style.bold('Not asked for')}`);
    for (const change of review.unrequested) {
      lines.push(term`    - ${oneLine(change.text)}${change.evidence.length ? term`  ${style.dim(change.evidence.map(inertLine).join(', '))}` : ''}`);
    }
  }
  return lines;
}

export function discussionRow(row: DiscussionSummary, now: number, style: Style, note = ''): TerminalText {
  const when = relativeTime(row.updatedAt ?? row.createdAt, now);
  const details = [`${row.turns} turn${row.turns === 1 ? '' : 's'}`, when, row.model ? `model ${row.model}` : ''].filter(Boolean).join(' · ');
  return term`  ${style.cyan(row.discussionId)}  ${style.bold(cutText(row.title || '(untitled)', 60, 'within'))}${note ? term`  ${style.yellow(note)}` : ''}\n      ${style.dim(`${details} · ${row.repo}`)}`;
}

export function relativeTime(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 60) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 30) return `${days} days ago`;
  return new Date(at).toISOString().slice(0, 10);
}

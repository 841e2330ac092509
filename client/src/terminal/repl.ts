import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import {
  DeleteRequest,
  DecisionsRequest,
  ModelsRequest,
  ReviewRequest,
  type DiscussionEvent,
  type PreparedTask,
  type StartRequest,
} from '../../../shared/protocol';
import type { ClientDiscussion } from '../common/discussionHub';
import { renderTaskMarkdown, renderTaskText } from '../common/taskText';
import type { Options } from './args';
import { printFailure, type Context } from './context';
import { ExitCode } from './exitCodes';
import { exportedText, taskContextOf, writeOutputFile } from './outputFiles';
import { TerminalText, term, type Printable } from './inertText';
import { switchEndpoint } from './endpointSwitch';
import { discussionUsage, usageReport } from './usage';
import { TurnPrinter, decisionLog, discussionRow, reviewChecklist, taskCard } from './render';
import type { OpenedDiscussion, Session } from './session';
import { configuredEditor, editTask, editText } from './taskEdit';
import { defaultStorageDir } from '../../../shared/storageDir';
import { HISTORY_SIZE, InputHistory } from './inputHistory';
import { KeyboardFilter, LINE_BREAK_MARK } from './keyboard';
import { PLAIN_LOOKS, terminalLooks, type Looks } from './looks';
import { SLASH_COMMANDS } from './slashCommands';
import { followUpTask } from '../../../shared/reviewFollowUp';
import { cutText } from '../../../shared/cutText';
import { errorText } from '../../../shared/errorText';
import { attachmentLabel, mentionOf, mentionsIn } from '../../../shared/mentions';
import type { Attachment } from '../../../shared/protocol';

/** A second Ctrl+C within this long of the first quits even if the reply has not stopped yet. */
const DOUBLE_INTERRUPT_MS = 2_000;
/** Turns of a resumed discussion shown as a reminder of where it was. */
const RECAP_TURNS = 2;
const RECAP_LINES = 6;

const HELP = `Commands:
${SLASH_COMMANDS}
Anything else is sent as a question (start it with // to send a leading /).
A pasted question is sent whole; Alt+Enter, or \\ at the end of a line, starts another line of it.
What you type while a reply streams waits in the next prompt. Up and Down recall this folder's earlier lines.
Ctrl+C stops a reply; Ctrl+C again, or when idle, quits; Ctrl+D quits.`;

/**
 * Lines from the user, one at a time. Lines typed (or piped) while a reply
 * streams wait their turn instead of being lost, so a piped script of
 * questions and commands runs in order.
 */
class LineSource {
  private readonly queue: string[] = [];
  private waiter: ((line: string | null) => void) | undefined;
  private ended = false;

  constructor(
    private readonly rl: readline.Interface,
    /** Without a terminal nothing echoes what was read; echoing it keeps the transcript readable. */
    private readonly echo: ((prompt: TerminalText, line: string, prompted: boolean) => void) | undefined,
    /** In a terminal: holds what is typed while no prompt is shown, and hands it to the next one. */
    private readonly keyboard?: KeyboardFilter,
  ) {
    rl.on('line', (typed) => {
      // At once, within the keystrokes that sent it: whatever is typed after Enter waits for the next prompt.
      keyboard?.hold();
      const line = keyboard ? typed.split(LINE_BREAK_MARK).join('\n') : typed;
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter(line);
      else this.queue.push(line);
    });
    rl.on('close', () => {
      this.ended = true;
      this.abandon();
    });
  }

  /** True while a prompt is on screen waiting for a line. */
  get waiting(): boolean {
    return this.waiter !== undefined;
  }

  /** The next line, prompting for it if none is waiting; null at the end of input. */
  next(untrustedPrompt: Printable): Promise<string | null> {
    // readline writes the prompt itself, past the writer: it must be inert already.
    const prompt = TerminalText.from(untrustedPrompt);
    const queued = this.queue.shift();
    if (queued !== undefined) {
      this.echo?.(prompt, queued, false);
      return Promise.resolve(queued);
    }
    if (this.ended) return Promise.resolve(null);
    this.rl.setPrompt(prompt.value);
    this.rl.prompt();
    this.keyboard?.release();
    return new Promise((resolve) => {
      this.waiter = (line) => {
        if (line !== null) this.echo?.(prompt, line, true);
        resolve(line);
      };
    });
  }

  /** Ends the current wait as if input had ended (a Ctrl+C on a question, a quit). */
  abandon(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(null);
  }
}

type State =
  | { kind: 'idle' }
  | { kind: 'turn'; cancelledAt: number | null }
  | { kind: 'busy'; what: string; interrupted: boolean }
  | { kind: 'question' };

export async function runInteractive(context: Context, options: Options, positionals: string[]): Promise<number> {
  const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const keyboard: KeyboardFilter | undefined = terminal ? new KeyboardFilter(process.stdin, () => ({ line: rl.line, cursor: rl.cursor })) : undefined;
  const rl: readline.Interface = readline.createInterface({
    input: (keyboard ?? process.stdin) as NodeJS.ReadableStream,
    output: process.stdout,
    terminal,
    history: [],
    historySize: HISTORY_SIZE,
  });
  const looks = terminal ? await terminalLooks(context, 'stdout') : PLAIN_LOOKS;
  const repl = new Repl(context, rl, terminal, keyboard, looks);
  const pasteModeOff = () => {
    // Left on, the shell after us would get every paste wrapped in markers.
    if (terminal) fs.writeSync(1, TerminalText.control('bracketedPasteOff').value);
  };
  if (terminal) {
    context.out.write(TerminalText.control('bracketedPasteOn'));
    process.once('exit', pasteModeOff);
  }
  try {
    return await repl.run(options, positionals);
  } finally {
    looks.progress.stop();
    pasteModeOff();
    process.off('exit', pasteModeOff);
    rl.close();
  }
}

/** The interactive discussion: one discussion at a time, driven line by line. */
class Repl {
  private readonly lines: LineSource;
  private session: Session | undefined;
  private current: ClientDiscussion | undefined;
  private folder = process.cwd();
  private state: State = { kind: 'idle' };
  /** Discussions this process started (not resumed): only those may be dropped when left empty or unanswered. */
  private readonly createdHere = new Set<string>();
  /** --keep: a discussion whose question got no answer is kept all the same. */
  private keepUnanswered = false;
  private exitCode: number | undefined;
  /** Wakes whatever is awaited when the user quits or the server dies. */
  private wake: () => void = () => undefined;
  private readonly woken: Promise<void>;

  /** This folder's saved input lines (a terminal only). */
  private history: InputHistory | undefined;

  constructor(
    private readonly context: Context,
    private readonly rl: readline.Interface,
    private readonly terminal: boolean,
    keyboard: KeyboardFilter | undefined,
    private readonly looks: Looks,
  ) {
    this.lines = new LineSource(
      rl,
      terminal ? undefined : (prompt, line, prompted) => this.out.write(term`${prompted ? '' : prompt}${line}\n`),
      keyboard,
    );
    if (terminal) rl.on('history', (lines) => this.history?.save(lines));
    this.woken = new Promise((resolve) => (this.wake = resolve));
  }

  private get out() {
    return this.context.out;
  }

  private get style() {
    return this.context.out.style;
  }

  async run(options: Options, positionals: string[]): Promise<number> {
    const interrupt = () => this.interrupt();
    const terminate = () => this.quit(ExitCode.Interrupted);
    // A terminal's Ctrl+C reaches readline as a key in raw mode; a signal
    // (kill -INT, or a pipe-fed session) reaches the process.
    this.rl.on('SIGINT', interrupt);
    process.on('SIGINT', interrupt);
    process.on('SIGTERM', terminate);
    process.on('SIGHUP', terminate);
    try {
      return await this.openAndConverse(options, positionals);
    } finally {
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', terminate);
      process.off('SIGHUP', terminate);
    }
  }

  private async openAndConverse(options: Options, positionals: string[]): Promise<number> {
    this.keepUnanswered = options.keep === true;
    this.state = { kind: 'busy', what: 'starting', interrupted: false };
    try {
      this.session = await this.context.startSession();
    } catch (err) {
      this.context.err.line(term`${this.context.err.style.red(this.context.err.style.bold('error:'))} ${errorText(err)}`);
      return ExitCode.ServerFailed;
    }
    const session = this.session;
    if (this.exitCode !== undefined) {
      await session.stop();
      return this.exitCode;
    }
    void session.died.then((gone) => {
      if (this.exitCode !== undefined) return;
      this.out.endLine();
      this.context.err.line(term`${this.context.err.style.red(this.context.err.style.bold('error:'))} ${gone.message}`);
      if (this.current) this.context.err.line(`Your discussion is saved; continue it with: repo-discuss --resume ${this.current.id}`);
      this.quit(ExitCode.ServerFailed);
    });
    try {
      if (positionals[0]) this.folder = path.resolve(positionals[0]);
      try {
        let resumeId = options.resume;
        let title: string | undefined;
        if (resumeId) {
          const row = await session.findDiscussion(resumeId);
          if (row) {
            resumeId = row.discussionId;
            title = row.title;
            if (!positionals[0]) this.folder = row.repo;
          }
        }
        const opened = await session.open(
          {
            folder: this.folder,
            ...(resumeId ? { resumeId } : {}),
            ...(options.model ? { model: options.model } : {}),
          },
          { watchFiles: true },
        );
        await this.adopt(opened, title);
      } catch (err) {
        if (this.exitCode !== undefined) return this.exitCode;
        return printFailure(this.context, err);
      } finally {
        this.state = { kind: 'idle' };
      }
      this.out.line(this.style.dim('Ask about the code; the model reads this folder and changes nothing. /help lists commands.'));
      await this.loop();
      if (this.current && this.exitCode !== ExitCode.ServerFailed) {
        const left = await this.leave(this.current).catch((): Left => 'kept');
        if (left === 'kept') this.out.line(this.style.dim(`Saved. Continue with: repo-discuss --resume ${this.current.id}`));
        else this.saidWhyNotKept(left);
      }
      return this.exitCode ?? ExitCode.Ok;
    } finally {
      await session.stop();
    }
  }

  private async loop(): Promise<void> {
    while (this.exitCode === undefined) {
      this.out.line();
      const line = await this.lines.next(this.style.cyan('› '));
      if (line === null) {
        // Ctrl+D leaves the cursor after the prompt.
        if (this.terminal && this.exitCode === undefined) this.out.write('\n');
        break;
      }
      const text = line.trim();
      if (!text) continue;
      try {
        if (text.startsWith('/') && !text.startsWith('//')) await this.command(text);
        else await this.turn(text.startsWith('//') ? text.slice(1) : text);
      } catch (err) {
        if (this.exitCode !== undefined) break;
        this.out.endLine();
        printFailure(this.context, err);
      } finally {
        this.state = { kind: 'idle' };
      }
    }
  }

  // -------------------------------------------------------------------------
  // Ctrl+C and quitting

  private interrupt(): void {
    const state = this.state;
    switch (state.kind) {
      case 'turn': {
        const now = Date.now();
        if (state.cancelledAt !== null && now - state.cancelledAt < DOUBLE_INTERRUPT_MS) {
          this.quit(ExitCode.Interrupted);
          return;
        }
        state.cancelledAt = now;
        this.out.endLine();
        this.out.line(this.style.dim('(stopping the reply — Ctrl+C again to quit)'));
        if (this.current) this.session?.hub.cancel(this.current.id).catch((err) => printFailure(this.context, err));
        return;
      }
      case 'question':
        this.out.endLine();
        this.clearTypedLine();
        this.lines.abandon();
        return;
      case 'busy':
        if (state.interrupted || state.what === 'starting') {
          this.quit(ExitCode.Interrupted);
          return;
        }
        state.interrupted = true;
        this.out.line(this.style.dim(`(still ${state.what} — Ctrl+C again to quit)`));
        return;
      case 'idle':
        if (this.terminal && this.rl.line) {
          // Like a shell: Ctrl+C on a half-typed line drops the line.
          this.clearTypedLine();
          this.out.write('\n');
          this.rl.prompt();
          return;
        }
        // The cursor sits after the prompt, which this writer did not draw.
        if (this.terminal && this.lines.waiting) this.out.write('\n');
        this.out.endLine();
        this.quit(ExitCode.Ok);
        return;
    }
  }

  private clearTypedLine(): void {
    if (!this.terminal) return;
    this.rl.write(null, { ctrl: true, name: 'e' });
    this.rl.write(null, { ctrl: true, name: 'u' });
  }

  private quit(code: number): void {
    if (this.exitCode !== undefined) return;
    this.exitCode = code;
    this.wake();
    this.lines.abandon();
  }

  // -------------------------------------------------------------------------
  // Discussions

  /** Makes an opened discussion the current one and says where we are. */
  private async adopt(opened: OpenedDiscussion, title?: string): Promise<void> {
    // Wait for the replayed history, so the recap and /promote see all of it.
    await Promise.race([opened.replayed, this.woken]);
    if (!opened.started.resumed) this.createdHere.add(opened.discussion.id);
    this.current = opened.discussion;
    this.folder = opened.started.repo;
    this.recallHistoryOf(this.folder);
    this.banner(opened.started, title ?? this.titleOf(opened.discussion));
    if (opened.started.resumed) this.recap(opened.discussion);
  }

  /** Up and Down recall what was typed about this folder before, in this run or an earlier one. */
  private recallHistoryOf(folder: string): void {
    if (!this.terminal) return;
    const storageDir = this.context.settings.initializationOptions.storageDir ?? defaultStorageDir(this.context.env);
    this.history = InputHistory.of(storageDir, folder);
    // readline keeps (and mutates) the array it was given; it is refilled, not replaced.
    const lines = (this.rl as unknown as { history: string[] }).history;
    lines.splice(0, lines.length, ...this.history.load());
  }

  private banner(started: StartRequest.Result, title: string): void {
    const { style } = this;
    const model = started.model ? `model ${started.model}` : "the endpoint's default model";
    this.out.line(term`${style.bold('Repo Discuss')} ${style.dim('·')} ${started.repo}`);
    const what = started.resumed ? term`Resumed ${style.cyan(started.discussionId)}` : term`New discussion ${style.cyan(started.discussionId)}`;
    this.out.line(term`${what}${title ? term` ${style.bold(`“${cutText(title, 60, 'within')}”`)}` : ''} ${style.dim('·')} ${model}`);
  }

  private titleOf(discussion: ClientDiscussion): string {
    const first = discussion.events.find((e) => e.type === 'user_message') as Extract<DiscussionEvent, { type: 'user_message' }> | undefined;
    return first ? first.text.trim().split(/\r?\n/, 1)[0] : '';
  }

  /** The last turns of a resumed discussion, dimmed, and a pending task if there is one. */
  private recap(discussion: ClientDiscussion): void {
    const { style } = this;
    const turns: Array<{ user?: string; reply?: string; error?: string }> = [];
    for (const event of discussion.events) {
      if (event.type === 'user_message') turns.push({ user: event.text });
      else if (event.type === 'assistant_message' && turns.length) turns[turns.length - 1].reply = event.text;
      else if (event.type === 'error') {
        if (!turns.length) turns.push({});
        turns[turns.length - 1].error = event.message;
      }
    }
    if (turns.length > RECAP_TURNS) this.out.line(style.dim(`(${turns.length - RECAP_TURNS} earlier turns — /export shows them all)`));
    for (const turn of turns.slice(-RECAP_TURNS)) {
      // Not the prompt's mark: a past question is not something to answer now.
      if (turn.user) this.out.line(style.dim(`> ${clip(turn.user, 2)}`));
      if (turn.reply) this.out.line(style.dim(clip(turn.reply, RECAP_LINES)));
      if (turn.error) this.out.line(style.dim(`error: ${turn.error}`));
    }
    if (discussion.task) {
      this.out.line();
      for (const line of taskCard(discussion.task, style, this.out.columns)) this.out.line(line);
      this.out.line(style.dim('  /promote to review it, edit it and hand it off.'));
    }
  }

  /**
   * Lets go of a discussion: closes it, or deletes it when this client
   * created it and it holds nothing: no question was asked, or the only one
   * failed before any answer (unless --keep). Saved discussions piled up
   * with these, from trying the client out or from a wrong endpoint.
   */
  private async leave(discussion: ClientDiscussion): Promise<Left> {
    const session = this.session!;
    const left: Left = !this.createdHere.has(discussion.id)
      ? 'kept'
      : !discussion.events.some((e) => e.type === 'user_message')
        ? 'empty'
        : onlyTurnUnanswered(discussion.events) && !this.keepUnanswered
          ? 'unanswered'
          : 'kept';
    if (left !== 'kept') {
      session.hub.forget(discussion.id);
      await session.request(DeleteRequest.method, { discussionId: discussion.id });
      return left;
    }
    await session.hub.close(discussion.id);
    return left;
  }

  /** An empty discussion goes without a word; one whose question failed is worth a line, since the user typed it. */
  private saidWhyNotKept(left: Left): void {
    if (left === 'unanswered') this.out.line(this.style.dim('The question got no answer, so the discussion was not kept (--keep keeps it).'));
  }

  private requireCurrent(): ClientDiscussion {
    if (!this.current) throw new Error('No discussion is open — /new starts one, /resume ID continues a saved one.');
    return this.current;
  }

  // -------------------------------------------------------------------------
  // A turn

  private async turn(text: string): Promise<void> {
    const discussion = this.requireCurrent();
    const session = this.session!;
    const state: State = { kind: 'turn', cancelledAt: null };
    this.state = state;
    // `/add` attachments go with this message, and so does every `@path` in it.
    const attachments = [...this.pendingAttachments, ...mentionsIn(text)];
    const printer = new TurnPrinter({
      answer: this.out,
      notes: this.out,
      errors: this.context.err,
      settings: this.context.settings,
      showThinking: this.terminal,
      discussionUsage: () => discussionUsage(discussion.events),
      markdown: this.looks.markdown,
      progress: this.looks.progress,
    });
    printer.awaiting();
    const progress = session.onProgress((notice) => {
      if (notice.discussionId === discussion.id) printer.progressed(notice);
    });
    try {
      await this.streamTurn(discussion, session, text, attachments, printer);
    } finally {
      progress.dispose();
      this.looks.progress.stop();
    }
    if (state.cancelledAt !== null && this.exitCode === undefined) this.out.line(this.style.dim('(stopped)'));
  }

  private async streamTurn(discussion: ClientDiscussion, session: Session, text: string, attachments: Attachment[], printer: TurnPrinter): Promise<void> {
    const sent = await session.hub.send(discussion.id, text, attachments);
    this.pendingAttachments = [];
    await Promise.race([
      this.woken,
      new Promise<void>((resolve) => {
        let finished = false;
        let detach: (() => void) | undefined;
        detach = discussion.attach((events) => {
          for (const event of events) {
            if (finished || event.seq < sent.seq) continue;
            printer.event(event);
            if (event.type === 'turn_complete') finished = true;
          }
          if (finished) {
            detach?.();
            resolve();
          }
        }, sent.seq - 1);
        if (finished) detach();
      }),
    ]);
  }

  // -------------------------------------------------------------------------
  // Slash commands

  /** Attachments for the next message (`/add PATH[:START-END]`). */
  private pendingAttachments: Attachment[] = [];

  private add(spec: string): void {
    const attachment = spec ? mentionOf(spec.replace(/^@/, '')) : undefined;
    if (!attachment) {
      this.out.line(this.style.dim('usage: /add PATH or /add PATH:START-END (attached to your next message)'));
      return;
    }
    this.pendingAttachments.push(attachment);
    // The path is the user's text, but still written inert.
    this.out.line(term`  ${this.style.dim('@')} ${this.style.cyan(attachmentLabel(attachment))} ${this.style.dim('— goes with your next message')}`);
  }

  private async command(text: string): Promise<void> {
    const [name, ...args] = text.split(/\s+/);
    const rest = text.slice(name.length).trim();
    switch (name) {
      case '/help':
      case '/?':
        this.out.line(HELP);
        return;
      case '/add':
        return this.add(rest);
      case '/edit':
        return this.editQuestion(rest);
      case '/promote':
        return this.promote(args);
      case '/list':
        return this.list(args[0] === 'all' || args[0] === '--all');
      case '/resume':
        return this.resume(rest);
      case '/model':
        return this.switchModel(rest);
      case '/models':
        return this.models();
      case '/endpoint':
        for (const line of await switchEndpoint(this.session!, this.context.settings, this.context.env, args.filter(Boolean))) this.out.line(line);
        return;
      case '/usage':
        for (const line of usageReport(this.requireCurrent().events, this.style)) this.out.line(line);
        return;
      case '/export':
        return this.exportMarkdown(rest);
      case '/decisions':
        return this.decisions();
      case '/review':
        return this.review(rest);
      case '/new':
        return this.newDiscussion();
      case '/close':
      case '/quit':
      case '/exit':
        return this.close(name === '/close');
      default:
        this.out.line(`Unknown command ${name} — /help lists the commands. Start a line with // to send it as a question.`);
    }
  }

  private busy(what: string): void {
    this.state = { kind: 'busy', what, interrupted: false };
  }

  private async question(prompt: string): Promise<string | null> {
    this.state = { kind: 'question' };
    try {
      const answer = await this.lines.next(prompt);
      return answer === null ? null : answer.trim();
    } finally {
      this.state = { kind: 'idle' };
    }
  }

  /**
   * Prints the task (the one the model prepared, or a fresh distillation),
   * offers the editor, then hands it off to a file or stdout. Only the hand-off
   * is recorded with the server; looking at a task commits to nothing.
   */
  private async promote(args: string[]): Promise<void> {
    const discussion = this.requireCurrent();
    const session = this.session!;
    const { style } = this;
    let task: PreparedTask;
    if (discussion.task) {
      task = discussion.task;
    } else {
      this.busy('preparing the task');
      this.out.line(style.dim('Preparing the task from the discussion…'));
      const promoted = await Promise.race([session.hub.promote(discussion.id), this.woken.then(() => undefined)]);
      if (!promoted) return;
      task = promoted;
      this.state = { kind: 'idle' };
    }
    const taskContext = () => taskContextOf(discussion, task);
    this.out.line();
    for (const line of taskCard(task, style, this.out.columns)) this.out.line(line);
    this.out.line();

    let target: 'file' | 'stdout' | undefined;
    let file: string | undefined;
    if (args[0] === 'stdout') target = 'stdout';
    else if (args[0] === 'file' && args[1]) {
      target = 'file';
      file = args.slice(1).join(' ');
    } else if (args.length) {
      this.out.line('Use /promote, /promote stdout, or /promote file PATH.');
      return;
    } else {
      const editor = configuredEditor(this.context.env);
      if (editor) {
        const edit = await this.question(`Edit it in ${editor} first? [y/N] `);
        if (edit === null) return this.keptTask();
        if (/^y(es)?$/i.test(edit)) {
          const edited = this.runEditor(task, editor);
          if ('problem' in edited) {
            this.out.line(style.yellow(`Not handed off: ${edited.problem}. The prepared task is unchanged; /promote to try again.`));
            return;
          }
          task = edited.task;
          this.out.line(style.dim('The edited task:'));
          for (const line of taskCard(task, style, this.out.columns)) this.out.line(line);
          this.out.line();
        }
      } else {
        this.out.line(style.dim('(Set $EDITOR or $VISUAL to edit the task before handing it off.)'));
      }
      const choice = await this.question('Hand it off: write it to a (f)ile, print it to (s)tdout, or (n)ot now? [f/s/N] ');
      if (choice === null || !/^[fs]/i.test(choice)) return this.keptTask();
      target = /^f/i.test(choice) ? 'file' : 'stdout';
      if (target === 'file') {
        const answer = await this.question('File to write [TASK.md]: ');
        if (answer === null) return this.keptTask();
        file = answer || 'TASK.md';
        const resolved = path.resolve(file);
        if (fs.existsSync(resolved)) {
          const overwrite = await this.question(`${resolved} exists. Overwrite it? [y/N] `);
          if (overwrite === null || !/^y(es)?$/i.test(overwrite)) return this.keptTask();
        }
      }
    }

    if (target === 'file') {
      const resolved = writeOutputFile(file!, renderTaskMarkdown(task, taskContext()));
      await session.hub.consumeTask(discussion.id, 'file', task);
      this.out.line(term`Wrote the task to ${style.bold(resolved)} and recorded the hand-off.`);
    } else {
      this.out.line(style.dim('─'.repeat(40)));
      this.out.write(`${renderTaskText(task, taskContext())}\n`);
      this.out.line(style.dim('─'.repeat(40)));
      await session.hub.consumeTask(discussion.id, 'stdout', task);
      this.out.line(style.dim('Recorded the hand-off.'));
    }
    // The server forgets a handed-off task; so does this view of it.
    discussion.task = null;
  }

  private keptTask(): void {
    this.out.line(this.style.dim('Not handed off. /promote again when you are ready.'));
  }

  private runEditor(task: PreparedTask, editor: string): ReturnType<typeof editTask> {
    return this.handTerminalTo(() => editTask(task, editor));
  }

  /** `/edit [TEXT]`: the question written in $VISUAL or $EDITOR (starting from TEXT), sent when saved non-empty. */
  private async editQuestion(initial: string): Promise<void> {
    const { style } = this;
    const editor = configuredEditor(this.context.env);
    if (!editor) {
      this.out.line('Set $VISUAL or $EDITOR to write a question in an editor.');
      return;
    }
    const edited = this.handTerminalTo(() => editText(initial ? `${initial}\n` : '', editor, 'QUESTION.md'));
    if ('problem' in edited) {
      this.out.line(style.yellow(`Nothing sent: ${edited.problem}.`));
      return;
    }
    const question = edited.text.trim();
    if (!question) {
      this.out.line(style.dim('The file was left empty; nothing sent.'));
      return;
    }
    // What the editor wrote does not show in the prompt: the transcript says what was asked.
    this.out.line(style.dim(`> ${clip(question, 4).split('\n').join('\n> ')}`));
    await this.turn(question);
  }

  /** Runs an editor: it needs the terminal as it found it (cooked mode, no paste markers, nobody else reading). */
  private handTerminalTo<T>(run: () => T): T {
    this.rl.pause();
    const raw = this.terminal && process.stdin.isTTY ? process.stdin.isRaw : false;
    if (raw) process.stdin.setRawMode(false);
    if (this.terminal) this.out.write(TerminalText.control('bracketedPasteOff'));
    try {
      return run();
    } finally {
      if (this.terminal) this.out.write(TerminalText.control('bracketedPasteOn'));
      if (raw) process.stdin.setRawMode(true);
      this.rl.resume();
    }
  }

  private async list(all: boolean): Promise<void> {
    const session = this.session!;
    const { discussions, saved } = await session.list(all ? undefined : this.folder);
    const rows = [...discussions, ...saved];
    if (rows.length === 0) {
      this.out.line(all ? 'No saved discussions.' : `No saved discussions of ${this.folder}. /list all shows every folder.`);
      return;
    }
    const now = Date.now();
    for (const row of rows) {
      this.out.line(discussionRow(row, now, this.style, row.discussionId === this.current?.id ? '(this one)' : ''));
    }
    this.out.line(this.style.dim('/resume ID continues one.'));
  }

  private async resume(id: string): Promise<void> {
    if (!id) {
      this.out.line('Say which: /resume ID (/list shows the ids).');
      return;
    }
    const session = this.session!;
    const row = await session.findDiscussion(id);
    if (!row) {
      this.out.line(`No saved discussion "${id}" — /list all shows them.`);
      return;
    }
    if (row.discussionId === this.current?.id) {
      this.out.line('That is the current discussion.');
      return;
    }
    this.busy('opening the discussion');
    const previous = this.current;
    // Open first, close after: a refused resume leaves you where you were.
    const opened = await session.open({ folder: row.repo, resumeId: row.discussionId }, { watchFiles: true });
    if (previous) this.saidWhyNotKept(await this.leave(previous));
    await this.adopt(opened, row.title);
  }

  /**
   * A discussion's model is chosen when it is opened, so switching closes it
   * and resumes it with the new model; a refused model reopens it as it was.
   */
  private async switchModel(name: string): Promise<void> {
    const discussion = this.requireCurrent();
    const session = this.session!;
    if (!name) {
      this.out.line(`Model: ${discussion.model ?? "the endpoint's default"}. /model NAME switches, /models lists them, /model auto uses the default.`);
      return;
    }
    this.busy('switching the model');
    // The same folder, a moment later: its watch is kept rather than started afresh.
    const watch = session.keepWatching(discussion.repo);
    let opened: OpenedDiscussion;
    try {
      await session.hub.close(discussion.id);
      this.current = undefined;
      try {
        opened = await session.open({ folder: discussion.repo, resumeId: discussion.id, model: name }, { watchFiles: true });
      } catch (err) {
        printFailure(this.context, err);
        opened = await session.open({ folder: discussion.repo, resumeId: discussion.id }, { watchFiles: true });
        await Promise.race([opened.replayed, this.woken]);
        this.current = opened.discussion;
        this.out.line(this.style.dim(`Still on ${opened.discussion.model ?? "the endpoint's default model"}.`));
        return;
      }
    } finally {
      watch.dispose();
    }
    await Promise.race([opened.replayed, this.woken]);
    this.current = opened.discussion;
    this.out.line(term`Continuing with ${opened.started.model ? term`model ${this.style.bold(opened.started.model)}` : "the endpoint's default model"}.`);
  }

  private async models(): Promise<void> {
    const session = this.session!;
    this.busy('asking the endpoint');
    const { models } = await session.request(ModelsRequest.method, {});
    if (models.length === 0) {
      this.out.line('The endpoint lists no models.');
      return;
    }
    for (const { id } of models) this.out.line(term`  ${id === this.current?.model ? this.style.bold(`${id}  (current)`) : id}`);
  }

  private async decisions(): Promise<void> {
    const discussion = this.requireCurrent();
    const { decisions } = await this.session!.request(DecisionsRequest.method, { discussionId: discussion.id });
    for (const line of decisionLog(decisions, this.style)) this.out.line(line);
  }

  /** `base`: a commit, branch or tag to diff from instead of the hand-off's commit. */
  private async review(base: string): Promise<void> {
    const discussion = this.requireCurrent();
    this.busy('reviewing the change against the task');
    const { review } = await this.session!.request(ReviewRequest.method, base ? { discussionId: discussion.id, base } : { discussionId: discussion.id });
    for (const line of reviewChecklist(review, this.style)) this.out.line(line);
    // What the review found to fix becomes a draft for /promote, to edit and hand back; nothing starts on its own.
    const followUp = followUpTask(review);
    if (!followUp) return;
    if (discussion.task) {
      this.out.line(this.style.dim('A prepared task is still waiting: /promote hands that one off first; /review again for the follow-up.'));
      return;
    }
    discussion.task = followUp;
    this.out.line(this.style.dim('/promote to edit this review\'s follow-up task and hand it back to the coding agent.'));
  }

  private async exportMarkdown(file: string): Promise<void> {
    const discussion = this.requireCurrent();
    const text = await exportedText(this.session!, discussion.id, 'markdown');
    if (file) {
      const resolved = writeOutputFile(file, text);
      this.out.line(term`Wrote ${this.style.bold(resolved)}`);
    } else {
      this.out.write(text);
    }
  }

  private async newDiscussion(): Promise<void> {
    const session = this.session!;
    this.busy('starting a discussion');
    const opened = await session.open({ folder: this.folder }, { watchFiles: true });
    if (this.current) this.saidWhyNotKept(await this.leave(this.current));
    await this.adopt(opened);
  }

  private async close(closeDiscussion: boolean): Promise<void> {
    if (closeDiscussion && this.current) {
      const id = this.current.id;
      const left = await this.leave(this.current);
      this.current = undefined;
      this.out.line(
        left === 'kept'
          ? `Closed ${id}. It stays saved: repo-discuss --resume ${id}`
          : left === 'empty'
            ? `Closed ${id}; nothing was asked in it, so it was not kept.`
            : `Closed ${id}; its question got no answer, so it was not kept (--keep keeps it).`,
      );
    }
    this.quit(ExitCode.Ok);
  }
}

/** What became of a discussion let go of: kept, or deleted for holding nothing. */
type Left = 'kept' | 'empty' | 'unanswered';

/** One question whose turn failed (an `error`) before any answer text: a record of nothing. A stopped turn is no failure. */
function onlyTurnUnanswered(events: readonly DiscussionEvent[]): boolean {
  const questions = events.filter((e) => e.type === 'user_message').length;
  const failed = events.some((e) => e.type === 'error');
  const answered = events.some((e) => (e.type === 'assistant_delta' || e.type === 'assistant_message') && e.text.trim() !== '');
  return questions === 1 && failed && !answered;
}

/** The first `lines` lines of `text`, marked when cut. */
function clip(text: string, lines: number): string {
  const all = text.trim().split(/\r?\n/);
  return all.length <= lines ? all.join('\n') : `${all.slice(0, lines).join('\n')}\n…`;
}

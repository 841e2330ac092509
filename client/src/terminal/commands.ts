import * as path from 'node:path';
import {
  DeleteRequest,
  DiscussErrorCode,
  RenameRequest,
  type DiscussionEvent,
  type DiscussionSummary,
  type SendRequest,
} from '../../../shared/protocol';
import { renderTaskMarkdown, renderTaskText } from '../common/taskText';
import { UsageError, type Options } from './args';
import { failureExit, printFailure, type Context } from './context';
import { ExitCode } from './exitCodes';
import { exportedText, taskContextOf, writeOutputFile } from './outputFiles';
import { inertJson, inertJsonText, term } from './inertText';
import { TurnPrinter, discussionRow } from './render';
import { Refusal, type Session } from './session';
import { errorText } from '../../../shared/errorText';
import { mentionsIn } from '../../../shared/mentions';
import { discussionUsage } from './usage';
import { PLAIN_LOOKS, terminalLooks } from './looks';

/**
 * Runs `work` against a fresh server and always stops it afterwards. A
 * refusal or a dead server becomes a message on stderr and its exit code.
 */
async function withSession(context: Context, work: (session: Session) => Promise<number>, onFailure?: (err: unknown) => void): Promise<number> {
  let session: Session;
  try {
    session = await context.startSession();
  } catch (err) {
    onFailure?.(err);
    context.err.line(term`${context.err.style.red(context.err.style.bold('error:'))} ${errorText(err)}`);
    return ExitCode.ServerFailed;
  }
  try {
    return await work(session);
  } catch (err) {
    onFailure?.(err);
    return printFailure(context, err);
  } finally {
    await session.stop();
  }
}

/** A saved discussion by id or id prefix, or a refusal saying how to find one. */
async function savedDiscussion(session: Session, id: string): Promise<DiscussionSummary> {
  const row = await session.findDiscussion(id);
  if (!row) {
    throw new Refusal(`No saved discussion "${id}" — \`repo-discuss list\` shows the saved ones.`, DiscussErrorCode.NotFound);
  }
  return row;
}

// ---------------------------------------------------------------------------
// ask

export async function runAsk(context: Context, options: Options, positionals: string[]): Promise<number> {
  const fromStdin = positionals.length === 1 && positionals[0] === '-';
  const question = fromStdin || (positionals.length === 0 && !process.stdin.isTTY) ? await readAll(process.stdin) : positionals.join(' ');
  if (!question.trim()) {
    throw new UsageError('ask needs a question: repo-discuss ask "…", or pipe one in with `repo-discuss ask -`.', 'ask');
  }
  const json = options.json === true;
  const emit = (value: unknown) => context.out.write(term`${inertJson(value)}\n`);
  // A script reading JSON lines learns of a refusal on the same stream.
  const reportAsJson = json ? (err: unknown) => emit(failureLine(err)) : undefined;

  return withSession(
    context,
    async (session) => {
      let folder = options.folder ? path.resolve(options.folder) : undefined;
      let resumeId = options.resume;
      if (resumeId) {
        const row = await savedDiscussion(session, resumeId);
        resumeId = row.discussionId;
        folder ??= row.repo;
      }
      const { discussion } = await session.open(
        {
          folder: folder ?? process.cwd(),
          ...(resumeId ? { resumeId } : {}),
          ...(options.model ? { model: options.model } : {}),
        },
        { watchFiles: true },
      );

      // JSON lines are for a program: never rendered, never a spinner among them.
      const looks = json ? PLAIN_LOOKS : await terminalLooks(context, 'stderr');
      const printer = new TurnPrinter({
        answer: context.out,
        // stdout is the answer alone; the rest is for a person watching.
        notes: context.err.isTTY || context.verbose ? context.err : null,
        errors: context.err,
        settings: context.settings,
        showThinking: context.err.isTTY,
        discussionUsage: () => discussionUsage(discussion.events),
        markdown: looks.markdown,
        progress: looks.progress,
      });
      const progress = session.onProgress((notice) => {
        if (notice.discussionId === discussion.id) printer.progressed(notice);
      });
      let sawError = false;
      let answered = false;
      let cancelRequested = false;
      let forced: (() => void) | undefined;
      const forcedExit = new Promise<'forced'>((resolve) => (forced = () => resolve('forced')));
      const stopInterrupts = onInterrupt(() => {
        if (cancelRequested) {
          forced?.();
          return;
        }
        cancelRequested = true;
        context.err.line(context.err.style.dim('(stopping the reply — Ctrl+C again to quit now)'));
        session.hub.cancel(discussion.id).catch(() => forced?.());
      });
      try {
        let sent: SendRequest.Result;
        if (!json) printer.awaiting();
        try {
          sent = await session.hub.send(discussion.id, question, mentionsIn(question));
        } catch (err) {
          // A new discussion whose only question was refused holds nothing worth keeping.
          if (!resumeId) await session.request(DeleteRequest.method, { discussionId: discussion.id }).catch(() => undefined);
          throw err;
        }
        const turnDone = new Promise<'done'>((resolve) => {
          let finished = false;
          let detach: (() => void) | undefined;
          detach = discussion.attach((events: DiscussionEvent[]) => {
            for (const event of events) {
              if (event.seq < sent.seq || finished) continue;
              if (json) emit(event);
              else printer.event(event);
              if (event.type === 'error') sawError = true;
              if (event.type === 'assistant_delta' && event.text.trim()) answered = true;
              if (event.type === 'turn_complete') finished = true;
            }
            if (finished) {
              detach?.();
              resolve('done');
            }
          }, sent.seq - 1);
          if (finished) detach();
        });
        const outcome = await Promise.race([turnDone, forcedExit, session.died.then((gone) => Promise.reject(gone))]);
        if (outcome === 'forced') return ExitCode.Interrupted;
        await session.hub.close(discussion.id);
        // A new discussion whose one question failed before any answer is a record of nothing: saved
        // discussions piled up with these. --keep is for whoever wants it, e.g. to export the error.
        const discard = !resumeId && sawError && !answered && !cancelRequested && options.keep !== true;
        if (discard) {
          await session.request(DeleteRequest.method, { discussionId: discussion.id }).catch(() => undefined);
          if (!json) context.err.line(context.err.style.dim('The question got no answer, so the discussion was not kept (--keep keeps it).'));
        } else if (!json && context.err.isTTY) {
          context.err.line(context.err.style.dim(`discussion ${discussion.id} — continue it: repo-discuss ask --resume ${discussion.id} "…"`));
        }
        if (cancelRequested) return ExitCode.Interrupted;
        return sawError ? ExitCode.ModelFailed : ExitCode.Ok;
      } finally {
        progress.dispose();
        looks.progress.stop();
        stopInterrupts();
      }
    },
    reportAsJson,
  );
}

/** `{"type":"refused"}` when the server said no, `{"type":"failed"}` when it could not answer at all. */
function failureLine(err: unknown): { type: 'refused' | 'failed'; code?: number; message: string; exitCode: number } {
  const { code, message } = failureExit(err);
  return err instanceof Refusal
    ? { type: 'refused', code: err.code, message, exitCode: code }
    : { type: 'failed', message, exitCode: code };
}

// ---------------------------------------------------------------------------
// list

export async function runList(context: Context, options: Options): Promise<number> {
  return withSession(context, async (session) => {
    const folder = options.folder ? path.resolve(options.folder) : undefined;
    const result = await session.list(folder);
    if (options.json) {
      context.out.write(term`${inertJson(result, 2)}\n`);
      return ExitCode.Ok;
    }
    const rows = [...result.discussions, ...result.saved];
    if (rows.length === 0) {
      context.out.line(folder ? `No saved discussions of ${folder}.` : 'No saved discussions yet. Start one with: repo-discuss [folder]');
      return ExitCode.Ok;
    }
    const now = Date.now();
    for (const row of rows) context.out.line(discussionRow(row, now, context.out.style));
    return ExitCode.Ok;
  });
}

// ---------------------------------------------------------------------------
// delete and rename

export async function runDelete(context: Context, options: Options, ids: string[]): Promise<number> {
  return withSession(context, async (session) => {
    // Every id is found before anything is deleted, so a typo in the third deletes none.
    const rows = [];
    for (const id of ids) rows.push(await savedDiscussion(session, id));
    const deleted: string[] = [];
    for (const row of rows) {
      // The store refuses a discussion open elsewhere (VS Code, another terminal): it is never deleted under its feet.
      await session.request(DeleteRequest.method, { discussionId: row.discussionId });
      deleted.push(row.discussionId);
      if (!options.json) context.out.line(term`Deleted ${context.out.style.cyan(row.discussionId)}  ${row.title || '(untitled)'}`);
    }
    if (options.json) context.out.write(term`${inertJson({ deleted })}\n`);
    return ExitCode.Ok;
  });
}

export async function runRename(context: Context, options: Options, id: string, titleWords: string[]): Promise<number> {
  const title = titleWords.join(' ').trim();
  if (!title) throw new UsageError('rename needs a title that is not blank: repo-discuss rename ID "new title".', 'rename');
  return withSession(context, async (session) => {
    const row = await savedDiscussion(session, id);
    // The server renames open discussions only; opening takes the lease, so one open elsewhere is refused, not overwritten.
    const { discussion } = await session.open({ folder: row.repo, resumeId: row.discussionId });
    try {
      await session.request(RenameRequest.method, { discussionId: discussion.id, title });
    } finally {
      await session.hub.close(discussion.id);
    }
    const renamed = (await session.findDiscussion(discussion.id))?.title ?? title;
    if (options.json) context.out.write(term`${inertJson({ discussionId: discussion.id, title: renamed })}\n`);
    else context.out.line(term`Renamed ${context.out.style.cyan(discussion.id)} to ${context.out.style.bold(renamed)}`);
    return ExitCode.Ok;
  });
}

// ---------------------------------------------------------------------------
// promote

export async function runPromote(context: Context, options: Options, id: string): Promise<number> {
  return withSession(context, async (session) => {
    const row = await savedDiscussion(session, id);
    const { discussion, replayed } = await session.open({ folder: row.repo, resumeId: row.discussionId });
    // The files the discussion read come from its replayed tool calls.
    await replayed;
    const task = await session.hub.promote(discussion.id);
    const taskContext = taskContextOf(discussion, task);
    if (options.json) {
      context.out.write(term`${inertJson({ discussionId: discussion.id, intent: task.intent, constraints: task.constraints })}\n`);
    } else {
      context.out.write(`${renderTaskText(task, taskContext)}\n`);
    }
    if (options.output) {
      const file = writeOutputFile(options.output, renderTaskMarkdown(task, taskContext));
      context.err.line(context.err.style.dim(`Wrote the task to ${file}`));
    }
    if (options.handoff) {
      await session.hub.consumeTask(discussion.id, options.output ? 'file' : 'stdout', task);
      context.err.line(context.err.style.dim('Recorded as handed off: later turns of the discussion are told about it.'));
    }
    await session.hub.close(discussion.id);
    return ExitCode.Ok;
  });
}

// ---------------------------------------------------------------------------
// export

export async function runExport(context: Context, options: Options, id: string): Promise<number> {
  return withSession(context, async (session) => {
    const row = await session.findDiscussion(id);
    const text = await exportedText(session, row?.discussionId ?? id, options.json ? 'json' : 'markdown');
    if (options.output) {
      const file = writeOutputFile(options.output, text);
      context.err.line(context.err.style.dim(`Wrote ${file}`));
    } else {
      // JSON keeps its meaning with C1 and bidi characters escaped; Markdown shows them as stand-ins.
      context.out.write(options.json ? inertJsonText(text) : text);
    }
    return ExitCode.Ok;
  });
}

// ---------------------------------------------------------------------------

/** Routes Ctrl+C (SIGINT) to `handler` until the returned function is called. */
export function onInterrupt(handler: () => void): () => void {
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer | string) => chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

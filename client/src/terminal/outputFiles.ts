import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExportRequest, type PreparedTask } from '../../../shared/protocol';
import type { ClientDiscussion } from '../common/discussionHub';
import type { TaskContext } from '../common/taskText';
import type { Session } from './session';

/**
 * What `export`, `promote` and their slash commands share: the discussion as
 * text, the task's context, and writing either to a file.
 */

/** A discussion (open or saved) as Markdown or JSON text, ending in a line break. */
export async function exportedText(session: Session, discussionId: string, format: 'markdown' | 'json'): Promise<string> {
  const { text } = await session.request(ExportRequest.method, { discussionId, format });
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * The task's surroundings for its text: the folder, the files the discussion
 * read, the discussion, and a heading taken from the task's intent (the
 * discussion's title is its first question, which may not be the task at all).
 */
export function taskContextOf(discussion: ClientDiscussion, task: PreparedTask): TaskContext {
  return { repo: discussion.repo, files: [...discussion.groundedFiles], discussionId: discussion.id, title: taskTitle(task.intent) };
}

const TASK_TITLE_CHARS = 72;

/** The intent's first sentence (or line), cut at a word to fit a heading. */
export function taskTitle(intent: string): string {
  const first = intent.trim().split(/\r?\n/, 1)[0].split(/(?<=[.!?])\s/, 1)[0].replace(/[.!?:;,]+$/, '').trim();
  if (first.length <= TASK_TITLE_CHARS) return first;
  const cut = first.slice(0, TASK_TITLE_CHARS - 1);
  const atWord = cut.lastIndexOf(' ');
  return `${(atWord > TASK_TITLE_CHARS / 2 ? cut.slice(0, atWord) : cut).replace(/[.,;:]+$/, '')}…`;
}

/** Writes `text` to `file` (relative to the working directory) and returns the absolute path. */
export function writeOutputFile(file: string, text: string): string {
  const resolved = path.resolve(file);
  fs.writeFileSync(resolved, text);
  return resolved;
}

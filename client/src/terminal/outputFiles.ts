import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExportRequest } from '../../../shared/protocol';
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

/** The task's surroundings for its text: the folder, the files the discussion read, the discussion. */
export function taskContextOf(discussion: ClientDiscussion, title: string): TaskContext {
  return { repo: discussion.repo, files: [...discussion.groundedFiles], discussionId: discussion.id, title };
}

/** Writes `text` to `file` (relative to the working directory) and returns the absolute path. */
export function writeOutputFile(file: string, text: string): string {
  const resolved = path.resolve(file);
  fs.writeFileSync(resolved, text);
  return resolved;
}

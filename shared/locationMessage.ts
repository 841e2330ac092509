import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CodeLocation } from './protocol';

/**
 * The message that brings a location into a discussion: its path and lines
 * relative to the folder and its text, and, for "Promote to task", the
 * request to prepare a task grounded there. Shared by the server (editors
 * without the extension) and the extension, so both send the same words.
 */
export function locationMessage(location: CodeLocation, repo: string, promote: boolean): string {
  let file: string;
  try {
    // `repo` is a real path; the editor's URI may go through a symlink.
    const onDisk = fileURLToPath(location.uri);
    let real = onDisk;
    try {
      real = realpathSync(onDisk);
    } catch {
      // An unsaved or deleted file: its path as given is the best we have.
    }
    file = path.relative(repo, real).split(path.sep).join('/');
  } catch {
    file = location.uri;
  }
  const lines = `${location.range.start.line + 1}-${location.range.end.line + 1}`;
  const fence = location.text.includes('```') ? '~~~~' : '```';
  const quoted = `${file}:${lines}\n${fence}\n${location.text}\n${fence}`;
  return promote
    ? `Prepare a coding task for this ${location.kind === 'todo' ? 'TODO' : 'code'} in ${quoted}\nRead what you need around it first, then call prepare_coding_task.`
    : `Let's discuss this code from ${quoted}`;
}

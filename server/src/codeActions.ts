import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where an action points, handed back to the client's command. */
export interface CodeLocation {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  text: string;
  kind: 'selection' | 'todo';
}

export interface OfferedAction {
  title: string;
  command: string;
  location: CodeLocation;
}

export const DISCUSS_SELECTION_COMMAND = 'repoDiscuss.discussSelection';
export const PROMOTE_LOCATION_COMMAND = 'repoDiscuss.promoteLocation';

/** A marker inside a comment: `// TODO:`, `# FIXME`, `/* XXX`, `<!-- HACK`, `-- TODO`, `; TODO`. */
const TODO_COMMENT = /(?:\/\/+|#+|\/\*+|^\s*\*+|<!--|--|;+)\s*\b(TODO|FIXME|XXX|HACK)\b[^\n]*/;

/** Characters of selected text carried in an action; more is pointless in a chat message. */
const MAX_SELECTION_CHARS = 8000;

/**
 * The actions offered for a range of a document: on a selection, discuss it
 * or promote it to a task; on a TODO-style comment, promote it.
 */
export function codeActionsFor(
  uri: string,
  documentText: string,
  range: CodeLocation['range'],
  workspaceFolders: string[],
): OfferedAction[] {
  if (!insideWorkspace(uri, workspaceFolders)) return [];
  const actions: OfferedAction[] = [];
  const lines = documentText.split(/\r?\n/);
  const hasSelection = range.start.line !== range.end.line || range.start.character !== range.end.character;
  if (hasSelection) {
    const text = sliceRange(lines, range).slice(0, MAX_SELECTION_CHARS);
    if (text.trim()) {
      const location: CodeLocation = { uri, range, text, kind: 'selection' };
      actions.push({ title: 'Discuss selection', command: DISCUSS_SELECTION_COMMAND, location });
      actions.push({ title: 'Promote to task', command: PROMOTE_LOCATION_COMMAND, location });
    }
  }
  for (let line = range.start.line; line <= Math.min(range.end.line, lines.length - 1); line++) {
    const match = TODO_COMMENT.exec(lines[line] ?? '');
    if (!match) continue;
    const start = match.index;
    const location: CodeLocation = {
      uri,
      range: { start: { line, character: start }, end: { line, character: lines[line].length } },
      text: lines[line].trim(),
      kind: 'todo',
    };
    if (!hasSelection || actions.every((a) => a.command !== PROMOTE_LOCATION_COMMAND)) {
      actions.push({ title: `Promote ${match[1]} to task`, command: PROMOTE_LOCATION_COMMAND, location });
    }
    break;
  }
  return actions;
}

/**
 * The message that brings a location into a discussion: its path and lines
 * relative to the folder and its text, and, for "Promote to task", the
 * request to prepare a task grounded there. Shared by every client.
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

function sliceRange(lines: string[], range: CodeLocation['range']): string {
  const out: string[] = [];
  for (let line = range.start.line; line <= range.end.line && line < lines.length; line++) {
    const text = lines[line];
    const from = line === range.start.line ? range.start.character : 0;
    const to = line === range.end.line ? range.end.character : text.length;
    out.push(text.slice(from, to));
  }
  return out.join('\n');
}

/** Only files of an open workspace folder: the discussion cannot read anything else. */
export function insideWorkspace(uri: string, workspaceFolders: string[]): boolean {
  if (!uri.startsWith('file:')) return false;
  let file: string;
  try {
    file = fileURLToPath(uri);
  } catch {
    return false;
  }
  return workspaceFolders.some((folder) => {
    const rel = path.relative(folder, file);
    return rel !== '' && rel.split(path.sep)[0] !== '..' && !path.isAbsolute(rel);
  });
}

import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DISCUSS_SELECTION_COMMAND, PROMOTE_LOCATION_COMMAND, type CodeLocation } from '../../shared/protocol';
import { relativeStaysInside } from '../../shared/pathContainment';

export interface OfferedAction {
  title: string;
  command: string;
  location: CodeLocation;
}

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
    return rel !== '' && relativeStaysInside(rel);
  });
}

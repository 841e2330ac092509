import { fileURLToPath } from 'node:url';
import { cutText } from '../../../shared/cutText';
import { inertLine, printablePath } from '../../../shared/printablePath';
import { openVerified, readHead, type ReadBoundary } from '../access/boundary';
import type { ToolOutcome } from '../read/types';
import { INDEX_LIMITS } from './limits';
import { currentIndex, FolderIndex } from './symbolIndex';

/**
 * What the symbol tools share, whichever source answers them (the tree-sitter
 * index or the editor's language service): limits, argument checks and
 * reading the cited lines through the boundary.
 */

export type Args = Record<string, unknown>;

export const ok = (output: string): ToolOutcome => ({ ok: true, output });
export const failed = (output: string): ToolOutcome => ({ ok: false, output });

export const SYMBOL_LIMITS = Object.freeze({
  findMaxResults: 100,
  definitionMaxResults: 10,
  definitionSignatureLines: 5,
  referencesMax: 200,
  outlineMax: 500,
  diagnosticsMax: 100,
  /** A query longer than this is not a symbol name. */
  maxNameChars: 200,
});


export function stringArgument(args: Args, name: string): string | undefined {
  const value = args[name];
  return typeof value === 'string' ? value : undefined;
}

/** The last part of a qualified name ("Server.listen", "pkg::f", "A#m"); the rest, if any, names its container. */
export function splitQualified(symbol: string): { name: string; qualifier?: string } {
  const match = /^(.*?)(?:\.|::|#|->)([^.:#>-]+)$/.exec(symbol.trim());
  return match && match[1] !== '' ? { name: match[2], qualifier: match[1].split(/\.|::|#|->/).pop() } : { name: symbol.trim() };
}

export function validName(symbol: string | undefined, argument: string): string | undefined {
  if (symbol === undefined || symbol.trim() === '') return `"${argument}" is empty. Pass a symbol name such as "createServer".`;
  if (symbol.length > SYMBOL_LIMITS.maxNameChars) return `"${argument}" is longer than ${SYMBOL_LIMITS.maxNameChars} characters; pass a symbol name.`;
  return undefined;
}

export async function loadIndex(boundary: ReadBoundary, signal?: AbortSignal): Promise<FolderIndex | ToolOutcome> {
  const outcome = await currentIndex(boundary, signal);
  if (signal?.aborted) return failed('Cancelled.');
  return outcome.ok ? outcome.result : failed(outcome.message);
}

export function isOutcome(value: FolderIndex | ToolOutcome): value is ToolOutcome {
  return !(value instanceof FolderIndex);
}

/** The lines [start, end] of a file the index holds, read again through the boundary (the index keeps no file text). */
export async function readLines(boundary: ReadBoundary, relativePath: string, start: number, end: number): Promise<string[] | undefined> {
  return (await readFileLines(boundary, relativePath))?.slice(start - 1, end);
}

/** Every line of a file (each shortened), read through the boundary; undefined when it is refused, missing, too large or changed. */
export async function readFileLines(boundary: ReadBoundary, relativePath: string): Promise<string[] | undefined> {
  const resolved = await boundary.resolve(relativePath);
  if (!resolved.ok || resolved.kind !== 'file' || resolved.size > INDEX_LIMITS.maxFileBytes) return undefined;
  // Opened as read_file opens (boundary.ts), not read again by name: a file
  // swapped for a link to an outside file right after the check had
  // go_to_definition print the outside file's lines, and a FIFO swapped in
  // held the read open.
  const opened = await openVerified(resolved.realPath, 'file');
  if (!opened.ok) return undefined;
  let text: string;
  try {
    // The size at open, bounded as the check was: a file grown since is not read past it.
    if (opened.stats.size > INDEX_LIMITS.maxFileBytes) return undefined;
    text = (await readHead(opened.handle, opened.stats.size)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await opened.handle.close().catch(() => undefined);
  }
  return text
    .split('\n')
    .map((line) => {
      const trimmed = line.replace(/\r$/, '');
      return trimmed.length > INDEX_LIMITS.maxLineChars ? `${trimmed.slice(0, INDEX_LIMITS.maxLineChars)}…` : trimmed;
    });
}

/**
 * The folder-relative path of a file the editor names by URI, resolved
 * through the boundary once per `cache`; undefined for one that is not a
 * readable file in the folder (untitled:, git:, a virtual document among them).
 */
export function pathOfFileUri(boundary: ReadBoundary, cache: Map<string, Promise<string | undefined>>, uri: unknown): Promise<string | undefined> {
  if (typeof uri !== 'string' || !uri.startsWith('file:')) return Promise.resolve(undefined);
  let known = cache.get(uri);
  if (!known) {
    known = (async () => {
      let absolute: string;
      try {
        absolute = fileURLToPath(uri);
      } catch {
        return undefined;
      }
      const resolved = await boundary.resolve(absolute);
      return resolved.ok && resolved.kind === 'file' ? resolved.relativePath : undefined;
    })();
    cache.set(uri, known);
  }
  return known;
}

/** Text the editor or the index supplied (a name, a kind, a message) as one inert line, cut after `max` characters; anything but a string is empty. */
export function inertBoundedLine(text: unknown, max: number): string {
  return cutText(inertLine(typeof text === 'string' ? text : ''), max, 'after');
}

/**
 * `path:line: text`, the name printed as grep_files prints it, so that a name
 * holding a newline or `:12:` cannot pose as another result line. Callers
 * pass source text through escapeLineBreaks for the same reason.
 */
export function resultLine(relativePath: string, line: number | string, text: string): string {
  return `${printablePath(relativePath)}:${line}: ${text}`;
}

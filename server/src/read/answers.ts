import type { ToolOutcome } from './types';
import { ReadBoundary, ResolvedPath } from '../access/boundary';
import { compileGlobTest, GlobError, PathTest } from '../access/globs';
import { SearchScope } from '../search/searchJobs';
import type { PoolOutcome } from '../search/searchPool';
import { printablePath, quotedPath } from '../../../shared/printablePath';
import { IGNORE_FILE_LIMITS } from '../search/ignoreRules';
import { READ_LIMITS } from './limits';

/**
 * What the read tools (readFile.ts, listDir.ts, findFiles.ts, grepFiles.ts)
 * share: outcomes, notes, how a shown path is written, and the search scope.
 * Each tool takes arguments already validated by the toolbox and resolves
 * every path through the read boundary; nothing touches a path the boundary
 * did not return. find_files and grep_files run in a worker thread through
 * the search engine (ripgrep or the Node walk).
 */

export const READ_CHUNK_BYTES = 64 * 1024;
export const NOT_READABLE_NOTE = '  (contents not readable)';
export const WALK_EXCLUSIONS = 'gitignored files, node_modules/ and .git/ are left out';

export function ok(output: string): ToolOutcome {
  return { ok: true, output };
}
export function failed(output: string): ToolOutcome {
  return { ok: false, output };
}
export function cancelled(): ToolOutcome {
  return failed('Cancelled.');
}

export function displayPath(requested: string | undefined, resolved: ResolvedPath): string {
  return requested === undefined || requested === '' ? '.' : printablePath(resolved.relativePath);
}

/**
 * Said once in an answer that shows a quoted name. Only a quoted name starts
 * a line with `"` (printablePath quotes every name that starts with one).
 */
export const QUOTED_NAMES_NOTE =
  '[Names in double quotes are JSON-escaped: they hold a line break, control or bidi character, or ":N:". Pass one back as path exactly as shown.]';

export function withQuotedNamesNote(lines: string[], notes: string[]): string[] {
  return lines.some((line) => line.startsWith('"')) ? [...notes, QUOTED_NAMES_NOTE] : notes;
}

export function looksBinary(sample: Buffer): boolean {
  return sample.subarray(0, READ_LIMITS.binarySniffBytes).includes(0);
}

/** Drops a trailing partial UTF-8 sequence left by cutting at a byte count. */
export function trimToUtf8Boundary(bytes: Buffer): Buffer {
  let end = bytes.length;
  let continuation = 0;
  while (end > 0 && continuation < 3 && (bytes[end - 1] & 0xc0) === 0x80) {
    end -= 1;
    continuation += 1;
  }
  if (end === 0) return bytes;
  const lead = bytes[end - 1];
  const expected = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return expected === continuation + 1 ? bytes : bytes.subarray(0, end - 1);
}

export function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Notes for what a search left out on purpose: entries that changed under it, ignore files cut short. */
export function leftOutNotes(result: { changedEntries?: number; cutIgnoreFiles?: string[] }): string[] {
  const notes: string[] = [];
  if (result.changedEntries) {
    notes.push(`[Left out ${result.changedEntries} file(s) or folder(s) that changed while being searched (replaced or moved). Search again to see them.]`);
  }
  const cut = result.cutIgnoreFiles ?? [];
  if (cut.length > 0) {
    const listed = cut.slice(0, 5).map((file) => JSON.stringify(file)).join(', ');
    notes.push(
      `[Only the first ${IGNORE_FILE_LIMITS.maxRules} rules (${IGNORE_FILE_LIMITS.maxBytes / 1024} KiB) of ${cut.length > 5 ? `${listed} and ${cut.length - 5} more` : listed} were used; files the rest would have left out may be included.]`,
    );
  }
  return notes;
}

export function listingStopNote(stopped: boolean): string | undefined {
  if (stopped) {
    return `[The search stopped after ${READ_LIMITS.walkMaxEntries.toLocaleString('en-US')} entries; pass path to search a smaller part of the folder.]`;
  }
  return undefined;
}

export async function resolveSearchScope(
  boundary: ReadBoundary,
  requested: string | undefined,
): Promise<{ ok: true; scope: ResolvedPath } | { ok: false; outcome: ToolOutcome }> {
  const resolved = await boundary.resolve(requested ?? '.');
  if (!resolved.ok) return { ok: false, outcome: failed(resolved.message) };
  if (resolved.kind === 'other') return { ok: false, outcome: failed(`${quotedPath(requested ?? '.')} is not a file or directory.`) };
  return { ok: true, scope: resolved };
}

export function jobScope(scope: ResolvedPath): SearchScope {
  return { realPath: scope.realPath, relativePath: scope.relativePath, kind: scope.kind === 'file' ? 'file' : 'directory' };
}

/** The model-facing answer when the worker did not finish. */
export function unfinished(tool: string, outcome: Exclude<PoolOutcome, { ok: true }>, timeoutMs: number): ToolOutcome {
  if (outcome.reason === 'cancelled') return cancelled();
  if (outcome.reason === 'timeout') {
    const seconds = Math.round(timeoutMs / 100) / 10;
    return failed(
      `${tool} stopped after ${seconds} s without finishing. The pattern may be too slow to match (nested repetition such as (a+)+ can take exponential time) or the search too wide. ` +
        'Use a simpler pattern, or pass path or glob to search less of the folder.',
    );
  }
  return failed(`The ${tool} call failed. Try again with other arguments.`);
}

/**
 * The model's glob compiled, or the answer to one over the limits or in
 * unsupported syntax, given before any search starts (an extglob once held
 * the event loop for 80 s here).
 */
export function compileModelGlob(argument: string, glob: string): PathTest | ToolOutcome {
  try {
    return compileGlobTest(glob);
  } catch (error) {
    if (!(error instanceof GlobError)) throw error;
    const shown = glob.length > 80 ? `${JSON.stringify(glob.slice(0, 80)).slice(0, -1)}…"` : JSON.stringify(glob);
    return failed(`The ${argument} argument ${shown} cannot be used: ${error.message}`);
  }
}


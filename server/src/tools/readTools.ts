import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ToolOutcome } from './types';
import { describeOpenRefusal, listVerifiedDirectory, openVerified, shortenForMessage, ReadBoundary, ResolvedPath } from './boundary';
import { compilePattern, GREP_LIMITS } from './grepCore';
import { compileGlobTest, GlobError, normalizeGlob, PathTest } from './globs';
import { SearchEngine } from './searchEngine';
import { SEARCH_LIMITS, SearchScope } from './searchJobs';
import type { PoolOutcome } from './searchPool';
import { escapeLineBreaks, printableListItem, printablePath, quoteAsJson, quotedPath } from '../../../shared/printablePath';
import { IGNORE_FILE_LIMITS } from './walk';

/**
 * The four read tools. Each takes arguments already validated by the toolbox
 * and resolves every path through the read boundary; nothing here touches a
 * path the boundary did not return. find_files and grep_files run in a
 * worker thread through the search engine (ripgrep or the Node walk).
 */

export const READ_LIMITS = Object.freeze({
  readMaxLines: 2000,
  readMaxBytes: 256 * 1024,
  /** Below this size a cut read_file still counts the file's lines so the model knows how much is left. */
  readCountTotalBelowBytes: 32 * 1024 * 1024,
  /**
   * How far into a file read_file looks for start_line. Finding a line means
   * reading every byte before it, and the model waits for the answer: a deep
   * start_line in a multi-GiB file (a log, a sparse file) took seconds to
   * minutes. Lines further in are out of reach, and the model is told so.
   * At least readCountTotalBelowBytes, so a line count given in one answer
   * is always reachable in the next.
   */
  readScanMaxBytes: 64 * 1024 * 1024,
  /**
   * A read stops here whatever the file does. A file that grew while it was
   * read (or became a huge sparse file after it was checked) kept read_file
   * reading for over a minute; a read never goes past the size the file had
   * when it was opened, nor runs longer than this.
   */
  readMaxMs: 10_000,
  listMaxEntries: 500,
  findMaxResults: SEARCH_LIMITS.findMaxResults,
  grepMaxMatches: GREP_LIMITS.maxMatches,
  grepMaxLineChars: GREP_LIMITS.maxLineChars,
  /** Bigger files are not searched line by line; ones that match are named (with a note). */
  grepMaxFileBytes: GREP_LIMITS.maxFileBytes,
  /** A walk stops here even without enough results, so one call cannot run for minutes. */
  walkMaxEntries: SEARCH_LIMITS.walkMaxEntries,
  binarySniffBytes: GREP_LIMITS.binarySniffBytes,
});

export interface ReadFileArgs {
  path: string;
  start_line?: number;
  end_line?: number;
}
export interface ListDirArgs {
  path?: string;
}
export interface FindFilesArgs {
  pattern: string;
  path?: string;
}
export interface GrepFilesArgs {
  pattern: string;
  path?: string;
  glob?: string;
}

const READ_CHUNK_BYTES = 64 * 1024;
const NOT_READABLE_NOTE = '  (contents not readable)';
const WALK_EXCLUSIONS = 'gitignored files, node_modules/ and .git/ are left out';

function ok(output: string): ToolOutcome {
  return { ok: true, output };
}
function failed(output: string): ToolOutcome {
  return { ok: false, output };
}
function cancelled(): ToolOutcome {
  return failed('Cancelled.');
}

function displayPath(requested: string | undefined, resolved: ResolvedPath): string {
  return requested === undefined || requested === '' ? '.' : printablePath(resolved.relativePath);
}

/**
 * Said once in an answer that shows a quoted name. Only a quoted name starts
 * a line with `"` (printablePath quotes every name that starts with one).
 */
const QUOTED_NAMES_NOTE =
  '[Names in double quotes are JSON-escaped: they hold a line break, control or bidi character, or ":N:". Pass one back as path exactly as shown.]';

function withQuotedNamesNote(lines: string[], notes: string[]): string[] {
  return lines.some((line) => line.startsWith('"')) ? [...notes, QUOTED_NAMES_NOTE] : notes;
}

function looksBinary(sample: Buffer): boolean {
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

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Notes for what a search left out on purpose: entries that changed under it, ignore files cut short. */
function leftOutNotes(result: { changedEntries?: number; cutIgnoreFiles?: string[] }): string[] {
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

function listingStopNote(stopped: boolean): string | undefined {
  if (stopped) {
    return `[The search stopped after ${READ_LIMITS.walkMaxEntries.toLocaleString('en-US')} entries; pass path to search a smaller part of the folder.]`;
  }
  return undefined;
}

// ---------------------------------------------------------------- read_file

function sizeText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${Math.round(mib)} MiB`;
}

/** The answer when start_line lies past the scan budget: how far the scan got, and what to do instead. */
function outOfReach(requestedPath: string, fileSize: number, startLine: number, lastReachable: number): string {
  const budget = sizeText(READ_LIMITS.readScanMaxBytes);
  return (
    `Stopped looking for line ${startLine} of ${quotedPath(requestedPath)} (${sizeText(fileSize)}): read_file looks for start_line only in the first ${budget} of a file, ` +
    `which go as far as line ${lastReachable}. Pass a start_line of at most ${lastReachable}. ` +
    'Lines further in cannot be read here; ask the user which part of the file matters, or to save that part as a smaller file.'
  );
}

export async function readFile(boundary: ReadBoundary, args: ReadFileArgs, signal?: AbortSignal): Promise<ToolOutcome> {
  const resolved = await boundary.resolve(args.path);
  if (!resolved.ok) return failed(resolved.message);
  if (resolved.kind === 'directory') {
    return failed(`${quotedPath(args.path)} is a directory. Use list_dir to see its entries or find_files to search it.`);
  }
  if (resolved.kind !== 'file') return failed(`${quotedPath(args.path)} is not a regular file.`);

  const startLine = args.start_line ?? 1;
  const endLine = args.end_line ?? Number.POSITIVE_INFINITY;
  if (endLine < startLine) return failed(`end_line (${endLine}) is before start_line (${startLine}).`);

  // Opened without following links and proved to be the checked file (see boundary.ts).
  const opened = await openVerified(resolved.realPath, 'file');
  if (!opened.ok) return failed(describeOpenRefusal(args.path, opened.refusal));
  const handle = opened.handle;
  try {
    return await readLineWindow(handle, args.path, opened.stats.size, startLine, endLine, signal);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Streams the file once, keeping only the bytes of lines inside the window,
 * so a deep start_line in a huge file costs a scan, not memory; the scan for
 * start_line stops at readScanMaxBytes.
 */
async function readLineWindow(
  handle: fs.promises.FileHandle,
  requestedPath: string,
  fileSize: number,
  startLine: number,
  endLine: number,
  signal: AbortSignal | undefined,
): Promise<ToolOutcome> {
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  const shown: string[] = [];
  let shownBytes = 0;
  let firstShown: number | undefined;
  let lastShown: number | undefined;
  let currentLine: Buffer[] = [];
  let currentLineBytes = 0;
  let lineNumber = 1;
  let position = 0;
  let lastByte = -1;
  let stoppedBy: 'end_line' | 'line_cap' | 'byte_cap' | 'time_limit' | undefined;
  let overlongLine: number | undefined;
  let continueAt: number | undefined;
  const countTotal = fileSize <= READ_LIMITS.readCountTotalBelowBytes;
  // Bytes past the size at open were written since: not read (a growing file never ends).
  // At most what finding start_line may take, what the answer can carry, and one chunk to see its cap passed.
  const readLimit = Math.min(fileSize, READ_LIMITS.readScanMaxBytes + READ_LIMITS.readMaxBytes + READ_CHUNK_BYTES);
  const deadline = performance.now() + READ_LIMITS.readMaxMs;
  let stoppedEarly = false;
  let hitByteBound = false;

  const emit = (bytes: Buffer): void => {
    // A stray carriage return or U+2028 inside a line must not read as the start of another numbered line.
    shown.push(`${lineNumber}: ${escapeLineBreaks(stripCarriageReturn(bytes.toString('utf8')))}`);
    shownBytes += bytes.length;
    firstShown ??= lineNumber;
    lastShown = lineNumber;
  };

  for (;;) {
    if (signal?.aborted) return cancelled();
    if (position >= readLimit) {
      // The size at open, or the byte bound (a cap or the scan budget stops a read before it).
      hitByteBound = position < fileSize;
      break;
    }
    if (performance.now() > deadline) {
      stoppedEarly = true;
      break;
    }
    const { bytesRead } = await handle.read(chunk, 0, Math.min(READ_CHUNK_BYTES, readLimit - position), position);
    if (bytesRead === 0) break;
    if (lineNumber < startLine && position >= READ_LIMITS.readScanMaxBytes) {
      // The scan budget is spent before the window began, and the file goes on.
      return failed(outOfReach(requestedPath, fileSize, startLine, lineNumber));
    }
    const data = chunk.subarray(0, bytesRead);
    if (position === 0 && looksBinary(data)) {
      return failed(`Refused: ${quotedPath(requestedPath)} looks like a binary file (it contains NUL bytes), so it is not shown as text.`);
    }
    position += bytesRead;
    lastByte = data[bytesRead - 1];

    let offset = 0;
    while (offset < bytesRead) {
      const newline = data.indexOf(10, offset);
      const pieceEnd = newline === -1 ? bytesRead : newline;
      if (!stoppedBy && lineNumber >= startLine) {
        const room = READ_LIMITS.readMaxBytes - shownBytes - currentLineBytes;
        const pieceLength = pieceEnd - offset;
        if (pieceLength > room) {
          if (shown.length > 0) {
            // Leave the partial line out; the model continues from it, whole.
            continueAt = lineNumber;
          } else {
            // A single line longer than the cap (minified or generated): show its start.
            currentLine.push(Buffer.from(data.subarray(offset, offset + room)));
            emit(trimToUtf8Boundary(Buffer.concat(currentLine)));
            overlongLine = lineNumber;
            continueAt = lineNumber + 1;
          }
          currentLine = [];
          currentLineBytes = 0;
          stoppedBy = 'byte_cap';
        } else if (pieceLength > 0) {
          currentLine.push(Buffer.from(data.subarray(offset, pieceEnd)));
          currentLineBytes += pieceLength;
        }
      }
      if (newline === -1) break;
      if (!stoppedBy && lineNumber >= startLine) {
        emit(Buffer.concat(currentLine, currentLineBytes));
        currentLine = [];
        currentLineBytes = 0;
        if (lineNumber >= endLine) {
          stoppedBy = 'end_line';
        } else if (shown.length >= READ_LIMITS.readMaxLines) {
          stoppedBy = 'line_cap';
          continueAt = lineNumber + 1;
        }
      }
      lineNumber += 1;
      offset = newline + 1;
    }
    if (stoppedBy && !countTotal) break;
  }

  if (hitByteBound && !stoppedBy) {
    return failed(`Stopped reading "${requestedPath}" at its read limit before line ${startLine}. Pass a smaller start_line.`);
  }
  if (stoppedEarly && !stoppedBy) {
    if (shown.length === 0) {
      return failed(
        `Stopped reading "${requestedPath}" after ${READ_LIMITS.readMaxMs / 1000} s, at line ${lineNumber}, before reaching line ${startLine}. Pass a smaller start_line, or ask the user which part of the file matters.`,
      );
    }
    // The line being read when time ran out is left out; the model continues from it.
    stoppedBy = 'time_limit';
    continueAt = lineNumber;
  }
  const reachedEnd = !stoppedEarly && (!stoppedBy || countTotal);
  // A last line without a trailing newline is still a line.
  if (!stoppedBy && lastByte !== -1 && lastByte !== 10 && lineNumber >= startLine) {
    emit(Buffer.concat(currentLine, currentLineBytes));
  }
  const totalLines = reachedEnd ? (lastByte === -1 ? 0 : lastByte === 10 ? lineNumber - 1 : lineNumber) : undefined;

  if (totalLines === 0) return ok(`(empty file: ${quotedPath(requestedPath)})`);
  if (firstShown === undefined || lastShown === undefined) {
    return failed(`${quotedPath(requestedPath)} has ${totalLines} lines; start_line ${startLine} is past the end. Pass a start_line between 1 and ${totalLines}.`);
  }

  const ofTotal = totalLines !== undefined ? `of ${totalLines}` : `of more than ${lastShown}`;
  const continuation =
    continueAt !== undefined && (totalLines === undefined || continueAt <= totalLines)
      ? ` To continue, call read_file with {"path": ${quoteAsJson(requestedPath)}, "start_line": ${continueAt}}.`
      : '';
  let note: string | undefined;
  if (stoppedBy === 'line_cap') {
    note = `[Cut at ${READ_LIMITS.readMaxLines} lines: showing lines ${firstShown}-${lastShown} ${ofTotal}.${continuation}]`;
  } else if (stoppedBy === 'byte_cap' && overlongLine !== undefined) {
    note = `[Cut: line ${overlongLine} is longer than ${READ_LIMITS.readMaxBytes / 1024} KiB (probably minified or generated); only its start is shown.${continuation}]`;
  } else if (stoppedBy === 'time_limit') {
    note = `[Stopped after ${READ_LIMITS.readMaxMs / 1000} s: showing lines ${firstShown}-${lastShown} ${ofTotal}.${continuation}]`;
  } else if (stoppedBy === 'byte_cap') {
    note = `[Cut at ${READ_LIMITS.readMaxBytes / 1024} KiB: showing lines ${firstShown}-${lastShown} ${ofTotal}.${continuation}]`;
  } else if (firstShown > 1 || totalLines === undefined || lastShown < totalLines) {
    note = `[Showing lines ${firstShown}-${lastShown} ${ofTotal}.]`;
  }
  return ok(note ? `${shown.join('\n')}\n${note}` : shown.join('\n'));
}

// ----------------------------------------------------------------- list_dir

interface ListedEntry {
  name: string;
  label: string;
}

export async function listDir(boundary: ReadBoundary, args: ListDirArgs, signal?: AbortSignal): Promise<ToolOutcome> {
  const resolved = await boundary.resolve(args.path ?? '.');
  if (!resolved.ok) return failed(resolved.message);
  if (resolved.kind !== 'directory') {
    return failed(`${quotedPath(args.path ?? '.')} is not a directory. Use read_file to read a file.`);
  }

  // The listing is proved to be of the checked directory, not of a link swapped in since (see boundary.ts).
  const listing = await listVerifiedDirectory(resolved.realPath);
  if (!listing.ok) {
    return failed(listing.refusal === 'changed' ? describeOpenRefusal(args.path ?? '.', 'changed') : `${quotedPath(args.path ?? '.')} could not be listed.`);
  }
  const entries = listing.entries;
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const base = resolved.relativePath === '.' ? '' : `${resolved.relativePath}/`;
  const listed: ListedEntry[] = [];
  for (const entry of entries.slice(0, READ_LIMITS.listMaxEntries)) {
    if (signal?.aborted) return cancelled();
    listed.push(await describeEntry(boundary, resolved.realPath, base, entry));
  }

  const shownPath = displayPath(args.path, resolved);
  if (entries.length === 0) return ok([`${shownPath}/ is empty.`, ...withQuotedNamesNote([shownPath], [])].join('\n'));
  const lines = listed.map((entry) => entry.label);
  const header = `${shownPath === '.' ? './' : `${shownPath}/`} (${entries.length} entries)`;
  const notes: string[] = [];
  if (entries.length > READ_LIMITS.listMaxEntries) {
    notes.push(`[Showing the first ${READ_LIMITS.listMaxEntries} of ${entries.length} entries. Use find_files with a pattern to narrow.]`);
  }
  return ok([header, ...lines, ...withQuotedNamesNote([header, ...lines], notes)].join('\n'));
}

async function describeEntry(boundary: ReadBoundary, directory: string, base: string, entry: fs.Dirent): Promise<ListedEntry> {
  const name = entry.name;
  const relativePath = `${base}${name}`;
  const shown = printablePath(name);
  if (entry.isSymbolicLink()) {
    // Resolve through the boundary so a link out of the folder is named but never followed.
    const target = await boundary.resolve(path.join(directory, name));
    if (target.ok) {
      return { name, label: target.kind === 'directory' ? `${shown}/  (symbolic link)` : `${shown}  (symbolic link)` };
    }
    if (target.kind === 'outside') return { name, label: `${shown}  (symbolic link leading outside the folder; not readable)` };
    if (target.kind === 'denied') return { name, label: `${shown}${NOT_READABLE_NOTE}` };
    return { name, label: `${shown}  (broken symbolic link)` };
  }
  const isDirectory = entry.isDirectory();
  const denial = boundary.denyRules.entryDenialOf(relativePath);
  if (denial?.kind === 'git') return { name, label: `${shown}${isDirectory ? '/' : ''}  (Git internals; not listable)` };
  if (denial) return { name, label: `${shown}${isDirectory ? '/' : ''}${NOT_READABLE_NOTE}` };
  return { name, label: isDirectory ? `${shown}/` : shown };
}

// --------------------------------------------------------------- find_files

async function resolveSearchScope(
  boundary: ReadBoundary,
  requested: string | undefined,
): Promise<{ ok: true; scope: ResolvedPath } | { ok: false; outcome: ToolOutcome }> {
  const resolved = await boundary.resolve(requested ?? '.');
  if (!resolved.ok) return { ok: false, outcome: failed(resolved.message) };
  if (resolved.kind === 'other') return { ok: false, outcome: failed(`${quotedPath(requested ?? '.')} is not a file or directory.`) };
  return { ok: true, scope: resolved };
}

function jobScope(scope: ResolvedPath): SearchScope {
  return { realPath: scope.realPath, relativePath: scope.relativePath, kind: scope.kind === 'file' ? 'file' : 'directory' };
}

/** The model-facing answer when the worker did not finish. */
function unfinished(tool: string, outcome: Exclude<PoolOutcome, { ok: true }>, timeoutMs: number): ToolOutcome {
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
function compileModelGlob(argument: string, glob: string): PathTest | ToolOutcome {
  try {
    return compileGlobTest(glob);
  } catch (error) {
    if (!(error instanceof GlobError)) throw error;
    const shown = glob.length > 80 ? `${JSON.stringify(glob.slice(0, 80)).slice(0, -1)}…"` : JSON.stringify(glob);
    return failed(`The ${argument} argument ${shown} cannot be used: ${error.message}`);
  }
}

export async function findFiles(boundary: ReadBoundary, args: FindFilesArgs, signal: AbortSignal | undefined, engine: SearchEngine): Promise<ToolOutcome> {
  if (normalizeGlob(args.pattern) === '') return failed('pattern is empty. Pass a glob such as "**/*.ts" or "package.json".');
  const matches = compileModelGlob('pattern', args.pattern);
  if (typeof matches !== 'function') return matches;
  const scopeResult = await resolveSearchScope(boundary, args.path);
  if (!scopeResult.ok) return scopeResult.outcome;
  const scope = scopeResult.scope;

  if (scope.kind === 'file') {
    const shown = printablePath(scope.relativePath);
    if (!matches(scope.relativePath)) return ok(`No files match "${shortenForMessage(args.pattern)}" at ${shown}.`);
    return ok([shown, ...withQuotedNamesNote([shown], [])].join('\n'));
  }

  const outcome = await engine.run({ kind: 'find', root: boundary.root, denyRead: boundary.denyRules.policyGlobs, scope: jobScope(scope), pattern: args.pattern }, signal);
  if (signal?.aborted) return cancelled();
  if (!outcome.ok) return unfinished('find_files', outcome, engine.timeoutMs);
  const result = outcome.result;
  if (result.kind !== 'find') return failed('The find_files call failed. Try again with other arguments.');

  const where = scope.relativePath === '.' ? 'the folder' : `${printablePath(scope.relativePath)}/`;
  const notes: string[] = [];
  if (result.more) {
    notes.push(`[Showing the first ${READ_LIMITS.findMaxResults} matches; there are more. Use a narrower pattern or pass path.]`);
  }
  const stopNote = listingStopNote(result.listingStopped);
  if (stopNote) notes.push(stopNote);
  notes.push(...leftOutNotes(result));
  if (result.results.length === 0) {
    return ok([`No files match "${shortenForMessage(args.pattern)}" in ${where} (${WALK_EXCLUSIONS}).`, ...notes].join('\n'));
  }
  const lines = result.results.map((file) => `${printablePath(file.relativePath)}${file.denied ? NOT_READABLE_NOTE : ''}`);
  return ok([...lines, ...withQuotedNamesNote(lines, notes)].join('\n'));
}

// --------------------------------------------------------------- grep_files

/**
 * V8's message repeats the whole pattern ("Invalid regular expression: /…/m:
 * Unterminated group"), which made a megabyte pattern a two-megabyte answer;
 * the reason alone is kept, after the (cut) pattern.
 */
function regexpProblem(message: string): string {
  return shortenForMessage(message.replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, ''));
}

export async function grepFiles(boundary: ReadBoundary, args: GrepFilesArgs, signal: AbortSignal | undefined, engine: SearchEngine): Promise<ToolOutcome> {
  if (args.pattern === '') return failed('pattern is empty. Pass a JavaScript regular expression such as "createToolbox\\(".');
  // Compiled here only to answer a bad pattern at once; the worker compiles its own copy.
  const pattern = compilePattern(args.pattern);
  if (typeof pattern === 'string') {
    return failed(`Invalid regular expression ${JSON.stringify(shortenForMessage(args.pattern))}: ${regexpProblem(pattern)}. Pass a JavaScript regular expression; escape special characters such as ( [ { . * + ? with a backslash.`);
  }
  const glob = args.glob !== undefined && normalizeGlob(args.glob) !== '' ? args.glob : undefined;
  // Compiled here only to answer a bad glob at once; the worker compiles its own copy.
  const globTest = glob === undefined ? undefined : compileModelGlob('glob', glob);
  if (globTest !== undefined && typeof globTest !== 'function') return globTest;
  const scopeResult = await resolveSearchScope(boundary, args.path);
  if (!scopeResult.ok) return scopeResult.outcome;
  const scope = scopeResult.scope;

  const outcome = await engine.run(
    { kind: 'grep', root: boundary.root, denyRead: boundary.denyRules.policyGlobs, scope: jobScope(scope), pattern: args.pattern, glob },
    signal,
  );
  if (signal?.aborted) return cancelled();
  if (!outcome.ok) return unfinished('grep_files', outcome, engine.timeoutMs);
  const result = outcome.result;
  if (result.kind !== 'grep') return failed('The grep_files call failed. Try again with other arguments.');
  if (result.namedFileBinary) {
    return failed(`${quotedPath(args.path ?? '.')} looks like a binary file (it contains NUL bytes), so it is not searched.`);
  }

  const notes: string[] = [];
  if (result.more) {
    notes.push(`[Stopped at ${READ_LIMITS.grepMaxMatches} matches; there are more. Use a more specific pattern, or pass path or glob.]`);
  }
  if (result.oversized.length > 0) {
    const listed = result.oversized.slice(0, 5).map(printableListItem).join(', ');
    const rest = result.oversized.length > 5 ? ` and ${result.oversized.length - 5} more` : '';
    notes.push(
      `[Skipped ${result.oversized.length} file(s) larger than ${READ_LIMITS.grepMaxFileBytes / (1024 * 1024)} MiB: ${listed}${rest}. ` +
        'They contain matches; use read_file with start_line/end_line to inspect them.]',
    );
  }
  const stopNote = listingStopNote(result.listingStopped);
  if (stopNote) notes.push(stopNote);
  notes.push(...leftOutNotes(result));

  const shownNames = [...result.lines, ...result.oversized.map(printableListItem)];
  if (result.matchCount === 0) {
    const where = scope.relativePath === '.' ? 'the folder' : printablePath(scope.relativePath);
    const filter = glob !== undefined ? ` matching glob "${shortenForMessage(glob)}"` : '';
    return ok([`No matches for ${JSON.stringify(shortenForMessage(args.pattern))} in ${where}${filter} (${WALK_EXCLUSIONS}; binary files are skipped).`, ...withQuotedNamesNote(shownNames, notes)].join('\n'));
  }
  return ok([...result.lines, ...withQuotedNamesNote(shownNames, notes)].join('\n'));
}

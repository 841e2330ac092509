import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Minimatch } from 'minimatch';
import type { ToolOutcome } from './types';
import { ReadBoundary, ResolvedPath } from './boundary';
import { walkFiles, WalkStats } from './walk';

/**
 * The four read tools. Each takes arguments already validated by the toolbox
 * and resolves every path through the read boundary; nothing here touches a
 * path the boundary did not return.
 */

export const READ_LIMITS = Object.freeze({
  readMaxLines: 2000,
  readMaxBytes: 256 * 1024,
  /** Below this size a cut read_file still counts the file's lines so the model knows how much is left. */
  readCountTotalBelowBytes: 32 * 1024 * 1024,
  listMaxEntries: 500,
  findMaxResults: 500,
  grepMaxMatches: 200,
  grepMaxLineChars: 300,
  /** Bigger files are skipped by grep (with a note) rather than loaded whole. */
  grepMaxFileBytes: 4 * 1024 * 1024,
  /** A walk stops here even without enough results, so one call cannot run for minutes. */
  walkMaxEntries: 1_000_000,
  binarySniffBytes: 8192,
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
  return requested === undefined || requested === '' ? '.' : resolved.relativePath;
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

function walkStopNote(stats: WalkStats): string | undefined {
  if (stats.stoppedBy === 'entry_limit') {
    return `[The search stopped after ${READ_LIMITS.walkMaxEntries.toLocaleString('en-US')} entries; pass path to search a smaller part of the folder.]`;
  }
  return undefined;
}

// ---------------------------------------------------------------- read_file

export async function readFile(boundary: ReadBoundary, args: ReadFileArgs, signal?: AbortSignal): Promise<ToolOutcome> {
  const resolved = await boundary.resolve(args.path);
  if (!resolved.ok) return failed(resolved.message);
  if (resolved.kind === 'directory') {
    return failed(`"${args.path}" is a directory. Use list_dir to see its entries or find_files to search it.`);
  }
  if (resolved.kind !== 'file') return failed(`"${args.path}" is not a regular file.`);

  const startLine = args.start_line ?? 1;
  const endLine = args.end_line ?? Number.POSITIVE_INFINITY;
  if (endLine < startLine) return failed(`end_line (${endLine}) is before start_line (${startLine}).`);

  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(resolved.realPath, 'r');
  } catch {
    return failed(`"${args.path}" could not be opened.`);
  }
  try {
    return await readLineWindow(handle, args.path, resolved.size, startLine, endLine, signal);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Streams the file once, keeping only the bytes of lines inside the window,
 * so a deep start_line in a huge file costs a scan, not memory.
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
  let stoppedBy: 'end_line' | 'line_cap' | 'byte_cap' | undefined;
  let overlongLine: number | undefined;
  let continueAt: number | undefined;
  const countTotal = fileSize <= READ_LIMITS.readCountTotalBelowBytes;

  const emit = (bytes: Buffer): void => {
    shown.push(`${lineNumber}: ${stripCarriageReturn(bytes.toString('utf8'))}`);
    shownBytes += bytes.length;
    firstShown ??= lineNumber;
    lastShown = lineNumber;
  };

  for (;;) {
    if (signal?.aborted) return cancelled();
    const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const data = chunk.subarray(0, bytesRead);
    if (position === 0 && looksBinary(data)) {
      return failed(`Refused: "${requestedPath}" looks like a binary file (it contains NUL bytes), so it is not shown as text.`);
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

  const reachedEnd = !stoppedBy || countTotal;
  // A last line without a trailing newline is still a line.
  if (!stoppedBy && lastByte !== -1 && lastByte !== 10 && lineNumber >= startLine) {
    emit(Buffer.concat(currentLine, currentLineBytes));
  }
  const totalLines = reachedEnd ? (lastByte === -1 ? 0 : lastByte === 10 ? lineNumber - 1 : lineNumber) : undefined;

  if (totalLines === 0) return ok(`(empty file: "${requestedPath}")`);
  if (firstShown === undefined || lastShown === undefined) {
    return failed(`"${requestedPath}" has ${totalLines} lines; start_line ${startLine} is past the end. Pass a start_line between 1 and ${totalLines}.`);
  }

  const ofTotal = totalLines !== undefined ? `of ${totalLines}` : `of more than ${lastShown}`;
  const continuation =
    continueAt !== undefined && (totalLines === undefined || continueAt <= totalLines)
      ? ` To continue, call read_file with {"path": ${JSON.stringify(requestedPath)}, "start_line": ${continueAt}}.`
      : '';
  let note: string | undefined;
  if (stoppedBy === 'line_cap') {
    note = `[Cut at ${READ_LIMITS.readMaxLines} lines: showing lines ${firstShown}-${lastShown} ${ofTotal}.${continuation}]`;
  } else if (stoppedBy === 'byte_cap' && overlongLine !== undefined) {
    note = `[Cut: line ${overlongLine} is longer than ${READ_LIMITS.readMaxBytes / 1024} KiB (probably minified or generated); only its start is shown.${continuation}]`;
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
    return failed(`"${args.path}" is not a directory. Use read_file to read a file.`);
  }

  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(resolved.realPath, { withFileTypes: true });
  } catch {
    return failed(`"${args.path ?? '.'}" could not be listed.`);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const base = resolved.relativePath === '.' ? '' : `${resolved.relativePath}/`;
  const listed: ListedEntry[] = [];
  for (const entry of entries.slice(0, READ_LIMITS.listMaxEntries)) {
    if (signal?.aborted) return cancelled();
    listed.push(await describeEntry(boundary, resolved.realPath, base, entry));
  }

  const shownPath = displayPath(args.path, resolved);
  if (entries.length === 0) return ok(`${shownPath}/ is empty.`);
  const lines = listed.map((entry) => entry.label);
  const header = `${shownPath === '.' ? './' : `${shownPath}/`} (${entries.length} entries)`;
  if (entries.length > READ_LIMITS.listMaxEntries) {
    lines.push(`[Showing the first ${READ_LIMITS.listMaxEntries} of ${entries.length} entries. Use find_files with a pattern to narrow.]`);
  }
  return ok(`${header}\n${lines.join('\n')}`);
}

async function describeEntry(boundary: ReadBoundary, directory: string, base: string, entry: fs.Dirent): Promise<ListedEntry> {
  const name = entry.name;
  const relativePath = `${base}${name}`;
  if (entry.isSymbolicLink()) {
    // Resolve through the boundary so a link out of the folder is named but never followed.
    const target = await boundary.resolve(path.join(directory, name));
    if (target.ok) {
      return { name, label: target.kind === 'directory' ? `${name}/  (symbolic link)` : `${name}  (symbolic link)` };
    }
    if (target.kind === 'outside') return { name, label: `${name}  (symbolic link leading outside the folder; not readable)` };
    if (target.kind === 'denied') return { name, label: `${name}${NOT_READABLE_NOTE}` };
    return { name, label: `${name}  (broken symbolic link)` };
  }
  const isDirectory = entry.isDirectory();
  const denial = boundary.denyRules.entryDenialOf(relativePath);
  if (denial?.kind === 'git') return { name, label: `${name}${isDirectory ? '/' : ''}  (Git internals; not listable)` };
  if (denial) return { name, label: `${name}${isDirectory ? '/' : ''}${NOT_READABLE_NOTE}` };
  return { name, label: isDirectory ? `${name}/` : name };
}

// --------------------------------------------------------------- find_files

function normalizeGlob(pattern: string): string {
  let normalized = pattern.trim().replace(/\\/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  while (normalized.startsWith('/')) normalized = normalized.slice(1);
  return normalized;
}

/**
 * A pattern without `/` matches file names at any depth (`*.ts`), like
 * .gitignore and ripgrep's --glob; with `/` it matches the whole relative path.
 */
function compileGlob(pattern: string): Minimatch {
  const normalized = normalizeGlob(pattern);
  return new Minimatch(normalized, { dot: true, matchBase: !normalized.includes('/') });
}

async function resolveSearchScope(
  boundary: ReadBoundary,
  requested: string | undefined,
): Promise<{ ok: true; scope: ResolvedPath } | { ok: false; outcome: ToolOutcome }> {
  const resolved = await boundary.resolve(requested ?? '.');
  if (!resolved.ok) return { ok: false, outcome: failed(resolved.message) };
  if (resolved.kind === 'other') return { ok: false, outcome: failed(`"${requested}" is not a file or directory.`) };
  return { ok: true, scope: resolved };
}

export async function findFiles(boundary: ReadBoundary, args: FindFilesArgs, signal?: AbortSignal): Promise<ToolOutcome> {
  if (normalizeGlob(args.pattern) === '') return failed('pattern is empty. Pass a glob such as "**/*.ts" or "package.json".');
  const matcher = compileGlob(args.pattern);
  const scopeResult = await resolveSearchScope(boundary, args.path);
  if (!scopeResult.ok) return scopeResult.outcome;
  const scope = scopeResult.scope;

  const scopePrefix = scope.relativePath === '.' ? '' : `${scope.relativePath}/`;
  // Also match relative to `path`, so {"path": "src", "pattern": "lib/*.ts"} finds src/lib/a.ts.
  const matches = (relativePath: string): boolean =>
    matcher.match(relativePath) ||
    (scopePrefix !== '' && relativePath.startsWith(scopePrefix) && matcher.match(relativePath.slice(scopePrefix.length)));

  if (scope.kind === 'file') {
    return ok(matches(scope.relativePath) ? scope.relativePath : `No files match "${args.pattern}" at ${scope.relativePath}.`);
  }

  const results: string[] = [];
  let more = false;
  const stats = await walkFiles(
    { boundary, startDirectory: scope.realPath, signal, maxEntries: READ_LIMITS.walkMaxEntries },
    (file) => {
      if (!matches(file.relativePath)) return;
      if (results.length >= READ_LIMITS.findMaxResults) {
        more = true;
        return false;
      }
      results.push(file.denial ? `${file.relativePath}${NOT_READABLE_NOTE}` : file.relativePath);
    },
  );
  if (signal?.aborted) return cancelled();

  const where = scope.relativePath === '.' ? 'the folder' : `${scope.relativePath}/`;
  const notes: string[] = [];
  if (more) {
    notes.push(`[Showing the first ${READ_LIMITS.findMaxResults} matches; there are more. Use a narrower pattern or pass path.]`);
  }
  const stopNote = walkStopNote(stats);
  if (stopNote) notes.push(stopNote);
  if (results.length === 0) {
    return ok([`No files match "${args.pattern}" in ${where} (${WALK_EXCLUSIONS}).`, ...notes].join('\n'));
  }
  return ok([...results, ...notes].join('\n'));
}

// --------------------------------------------------------------- grep_files

interface CompiledPattern {
  /** Global, multiline: scans a whole file for candidate lines in one pass. */
  wholeText: RegExp;
  /** Confirms a candidate line on its own, so results are strictly per line. */
  singleLine: RegExp;
  /** Lookaround can see across line ends in the whole text, so test line by line instead. */
  lineByLine: boolean;
  /** For a pattern that is a plain string: its bytes, so files without it are skipped before decoding. */
  literal?: Buffer;
}

/** The string a pattern matches literally, if it has no regex operators (escaped punctuation allowed). */
function literalOf(pattern: string): string | undefined {
  let literal = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') {
      const next = pattern[i + 1];
      // `\(` is a literal "("; `\d`, `\b`, `\1`… are operators.
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return undefined;
      literal += next;
      i += 1;
    } else if ('^$.*+?()[]{}|'.includes(char)) {
      return undefined;
    } else {
      literal += char;
    }
  }
  return literal === '' ? undefined : literal;
}

function compilePattern(pattern: string): CompiledPattern | string {
  const literal = literalOf(pattern);
  const attempt = (flags: string): CompiledPattern => ({
    wholeText: new RegExp(pattern, `g${flags}`),
    singleLine: new RegExp(pattern, flags),
    lineByLine: /\(\?<?[=!]/.test(pattern),
    literal: literal === undefined ? undefined : Buffer.from(literal, 'utf8'),
  });
  try {
    // `u` first so \p{…} works; fall back for patterns only valid without it (e.g. `\-`).
    return attempt('mu');
  } catch {
    try {
      return attempt('m');
    } catch (error) {
      return (error as Error).message;
    }
  }
}

interface GrepState {
  readonly pattern: CompiledPattern;
  readonly output: string[];
  matchCount: number;
  more: boolean;
  readonly oversized: string[];
  buffer: Buffer;
  /** Why the last file was not searched, for a file named explicitly. */
  lastSkip?: 'binary' | 'oversized';
}

function formatMatchLine(relativePath: string, lineNumber: number, line: string, matchIndex: number): string {
  const max = READ_LIMITS.grepMaxLineChars;
  let text = line;
  if (line.length > max) {
    const windowStart = matchIndex > max - 100 ? matchIndex - 100 : 0;
    text = `${windowStart > 0 ? '…' : ''}${line.slice(windowStart, windowStart + max)}…`;
  }
  return `${relativePath}:${lineNumber}: ${text}`;
}

/** Records a match; returns false once the cap is reached. */
function recordMatch(state: GrepState, relativePath: string, lineNumber: number, line: string, matchIndex: number): boolean {
  if (state.matchCount >= READ_LIMITS.grepMaxMatches) {
    state.more = true;
    return false;
  }
  state.output.push(formatMatchLine(relativePath, lineNumber, line, matchIndex));
  state.matchCount += 1;
  return true;
}

/** Reads one file whole (bounded by size) into the shared buffer; undefined when skipped. */
function loadTextForGrep(state: GrepState, realPath: string, relativePath: string): string | undefined {
  let descriptor: number;
  try {
    descriptor = fs.openSync(realPath, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(descriptor).size;
    state.lastSkip = undefined;
    if (size === 0) return undefined;
    if (size > READ_LIMITS.grepMaxFileBytes) {
      state.oversized.push(relativePath);
      state.lastSkip = 'oversized';
      return undefined;
    }
    if (state.buffer.length < size) state.buffer = Buffer.allocUnsafe(Math.max(size, state.buffer.length * 2));
    let filled = 0;
    while (filled < size) {
      const read = fs.readSync(descriptor, state.buffer, filled, size - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    const bytes = state.buffer.subarray(0, filled);
    if (looksBinary(bytes)) {
      state.lastSkip = 'binary';
      return undefined;
    }
    // Most files cannot match a plain-string pattern: skip them before paying for decoding.
    if (state.pattern.literal && bytes.indexOf(state.pattern.literal) === -1) return undefined;
    // latin1 decodes pure ASCII to the same string, faster than utf8.
    return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  } catch {
    return undefined;
  } finally {
    fs.closeSync(descriptor);
  }
}

/** Searches one file's text; returns false once the match cap is reached. */
function grepText(state: GrepState, relativePath: string, text: string): boolean {
  const { wholeText, singleLine, lineByLine } = state.pattern;

  if (lineByLine) {
    let lineStart = 0;
    let lineNumber = 1;
    while (lineStart <= text.length) {
      let lineEnd = text.indexOf('\n', lineStart);
      if (lineEnd === -1) lineEnd = text.length;
      if (lineEnd === text.length && lineStart === lineEnd && lineStart > 0) break; // after a final newline
      const line = stripCarriageReturn(text.slice(lineStart, lineEnd));
      const match = singleLine.exec(line);
      if (match && !recordMatch(state, relativePath, lineNumber, line, match.index)) return false;
      lineStart = lineEnd + 1;
      lineNumber += 1;
    }
    return true;
  }

  // One regex pass over the whole text finds candidate lines; line numbers are counted incrementally.
  wholeText.lastIndex = 0;
  let lineNumber = 1;
  let countedUpTo = 0;
  while (wholeText.lastIndex <= text.length) {
    const candidate = wholeText.exec(text);
    if (!candidate) break;
    const lineStart = text.lastIndexOf('\n', candidate.index - 1) + 1;
    let lineEnd = text.indexOf('\n', candidate.index);
    if (lineEnd === -1) lineEnd = text.length;
    if (candidate.index === text.length && lineStart === lineEnd && text.endsWith('\n')) break; // nothing after a final newline
    for (let newline = text.indexOf('\n', countedUpTo); newline !== -1 && newline < lineStart; newline = text.indexOf('\n', newline + 1)) {
      lineNumber += 1;
    }
    countedUpTo = lineStart;
    const line = stripCarriageReturn(text.slice(lineStart, lineEnd));
    const match = singleLine.exec(line);
    if (match && !recordMatch(state, relativePath, lineNumber, line, match.index)) return false;
    wholeText.lastIndex = lineEnd + 1;
  }
  return true;
}

export async function grepFiles(boundary: ReadBoundary, args: GrepFilesArgs, signal?: AbortSignal): Promise<ToolOutcome> {
  if (args.pattern === '') return failed('pattern is empty. Pass a JavaScript regular expression such as "createToolbox\\(".');
  const pattern = compilePattern(args.pattern);
  if (typeof pattern === 'string') {
    return failed(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${pattern}. Pass a JavaScript regular expression; escape special characters such as ( [ { . * + ? with a backslash.`);
  }
  const globMatcher = args.glob !== undefined && normalizeGlob(args.glob) !== '' ? compileGlob(args.glob) : undefined;
  const scopeResult = await resolveSearchScope(boundary, args.path);
  if (!scopeResult.ok) return scopeResult.outcome;
  const scope = scopeResult.scope;

  const state: GrepState = {
    pattern,
    output: [],
    matchCount: 0,
    more: false,
    oversized: [],
    buffer: Buffer.allocUnsafe(64 * 1024),
  };
  const searchFile = (realPath: string, relativePath: string): boolean => {
    if (globMatcher && !globMatcher.match(relativePath)) return true;
    const text = loadTextForGrep(state, realPath, relativePath);
    return text === undefined ? true : grepText(state, relativePath, text);
  };

  let stats: WalkStats | undefined;
  if (scope.kind === 'file') {
    // Named explicitly, so searched even if gitignored; the boundary already refused secrets.
    searchFile(scope.realPath, scope.relativePath);
    if (state.lastSkip === 'binary') {
      return failed(`"${args.path}" looks like a binary file (it contains NUL bytes), so it is not searched.`);
    }
  } else {
    stats = await walkFiles(
      { boundary, startDirectory: scope.realPath, signal, maxEntries: READ_LIMITS.walkMaxEntries },
      (file) => {
        // Secret and policy-denied files are skipped silently: their contents never reach the model.
        if (file.denial) return;
        return searchFile(file.realPath, file.relativePath);
      },
    );
  }
  if (signal?.aborted) return cancelled();

  const notes: string[] = [];
  if (state.more) {
    notes.push(`[Stopped at ${READ_LIMITS.grepMaxMatches} matches; there are more. Use a more specific pattern, or pass path or glob.]`);
  }
  if (state.oversized.length > 0) {
    const listed = state.oversized.slice(0, 5).join(', ');
    const rest = state.oversized.length > 5 ? ` and ${state.oversized.length - 5} more` : '';
    notes.push(`[Skipped ${state.oversized.length} file(s) larger than ${READ_LIMITS.grepMaxFileBytes / (1024 * 1024)} MiB: ${listed}${rest}. Use read_file with start_line/end_line to inspect them.]`);
  }
  const stopNote = stats ? walkStopNote(stats) : undefined;
  if (stopNote) notes.push(stopNote);

  if (state.matchCount === 0) {
    const where = scope.relativePath === '.' ? 'the folder' : scope.relativePath;
    const filter = globMatcher ? ` matching glob "${args.glob}"` : '';
    return ok([`No matches for ${JSON.stringify(args.pattern)} in ${where}${filter} (${WALK_EXCLUSIONS}; binary files are skipped).`, ...notes].join('\n'));
  }
  return ok([...state.output, ...notes].join('\n'));
}


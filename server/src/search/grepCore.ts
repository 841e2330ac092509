import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import { escapeLineBreaks, printablePath } from '../../../shared/printablePath';
import { openChildFileSync, openVerifiedSync } from '../access/boundary';
import type { FileContents } from './contentCache';
import { nowNs } from './directoryStamps';

/**
 * The line matcher both search paths share. Whether files come from
 * ripgrep or from our own walk, every reported line is found, numbered and
 * formatted here with the JavaScript regular expression the model wrote, so
 * the two paths cannot disagree on what a match is.
 */

export const GREP_LIMITS = Object.freeze({
  maxMatches: 200,
  maxLineChars: 300,
  /** Bigger files are not searched line by line: they flood results (bundles, logs, dumps). Ones that match are named. */
  maxFileBytes: 4 * 1024 * 1024,
  binarySniffBytes: 8192,
});

/** Reads happen in pieces this big; a file that fits is read in one call (and may be kept: contentCache.ts). */
export const READ_CHUNK_BYTES = 256 * 1024;

/** A NUL in the first bytes: searched no further, as ripgrep does. */
export function looksBinary(firstBytes: Buffer): boolean {
  return firstBytes.subarray(0, GREP_LIMITS.binarySniffBytes).includes(0);
}

export interface CompiledPattern {
  source: string;
  /** Global, multiline: scans a whole chunk of lines for candidate lines in one pass. */
  wholeText: RegExp;
  /** Confirms a candidate line on its own, so results are strictly per line. */
  singleLine: RegExp;
  /** Lookaround can see across line ends in the whole text, so test line by line instead. */
  lineByLine: boolean;
  /** Compiled with the `u` flag (the pattern's meaning differs without it). */
  unicode: boolean;
  /** For a pattern that is a plain string: the string, so files without its bytes are skipped before decoding. */
  literal?: string;
  literalBytes?: Buffer;
}

/** The string a pattern matches literally, if it has no regex operators (escaped punctuation allowed). */
export function literalOf(pattern: string): string | undefined {
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

/** Compiles the model's pattern once per search; a string result is the engine's error message. */
export function compilePattern(pattern: string): CompiledPattern | string {
  const literal = literalOf(pattern);
  const attempt = (flags: string): CompiledPattern => ({
    source: pattern,
    wholeText: new RegExp(pattern, `g${flags}`),
    singleLine: new RegExp(pattern, flags),
    lineByLine: /\(\?<?[=!]/.test(pattern),
    unicode: flags.includes('u'),
    literal,
    literalBytes: literal === undefined ? undefined : Buffer.from(literal, 'utf8'),
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

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** Called per matching line; return false to stop. */
type LineMatch = (lineNumber: number, line: string, matchIndex: number) => boolean;

/**
 * Finds matching lines in `text`, which holds whole lines starting at line
 * `firstLine`. Returns false when `onMatch` asked to stop.
 */
function scanText(pattern: CompiledPattern, text: string, firstLine: number, onMatch: LineMatch): boolean {
  const { wholeText, singleLine, lineByLine } = pattern;

  if (lineByLine) {
    let lineStart = 0;
    let lineNumber = firstLine;
    while (lineStart <= text.length) {
      let lineEnd = text.indexOf('\n', lineStart);
      if (lineEnd === -1) lineEnd = text.length;
      if (lineEnd === text.length && lineStart === lineEnd && lineStart > 0) break; // after a final newline
      const line = stripCarriageReturn(text.slice(lineStart, lineEnd));
      const match = singleLine.exec(line);
      if (match && !onMatch(lineNumber, line, match.index)) return false;
      lineStart = lineEnd + 1;
      lineNumber += 1;
    }
    return true;
  }

  // One regex pass over the whole text finds candidate lines; line numbers are counted incrementally.
  wholeText.lastIndex = 0;
  let lineNumber = firstLine;
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
    if (match && !onMatch(lineNumber, line, match.index)) return false;
    wholeText.lastIndex = lineEnd + 1;
  }
  return true;
}

function countNewlines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count += 1;
  return count;
}

function decode(bytes: Buffer): string {
  // latin1 decodes pure ASCII to the same string, faster than utf8.
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

export function formatMatchLine(relativePath: string, lineNumber: number, line: string, matchIndex: number): string {
  const max = GREP_LIMITS.maxLineChars;
  let text = line;
  if (line.length > max) {
    const windowStart = matchIndex > max - 100 ? matchIndex - 100 : 0;
    text = `${windowStart > 0 ? '…' : ''}${line.slice(windowStart, windowStart + max)}…`;
  }
  // A hostile name is quoted and a stray line break in the text escaped, so one match is one line.
  return `${printablePath(relativePath)}:${lineNumber}: ${escapeLineBreaks(text)}`;
}

/** Everything one grep produces, in the order files were searched. */
export interface GrepResult {
  lines: string[];
  matchCount: number;
  /** A match past the cap exists. */
  more: boolean;
  /** Files over the size limit that match, named instead of searched line by line. */
  oversized: string[];
  /** Files left out because they were replaced or moved between being listed and being opened. */
  changedFiles: number;
  /** Files read from the folder's kept contents instead of the disk (contentCache.ts). */
  filesFromMemory: number;
}

export type FileOutcome = 'searched' | 'binary' | 'unreadable' | 'capped';

/**
 * Searches files one at a time into one result, stopping at the match cap.
 * One buffer is reused for every file.
 */
export class Grep {
  readonly result: GrepResult = { lines: [], matchCount: 0, more: false, oversized: [], changedFiles: 0, filesFromMemory: 0 };
  private buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  /** The sizes of the files read from the disk so far. */
  bytesFromDisk = 0;

  /**
   * `contents`: the folder's kept file contents, read instead of the disk while they are the files on it.
   * `placed`: told the file of each line and of the first match past the cap (a shard's, grepShards.ts).
   */
  constructor(
    private readonly pattern: CompiledPattern,
    private readonly contents?: FileContents,
    private readonly placed?: { linePaths: string[]; capPath?: string },
  ) {}

  get capped(): boolean {
    return this.result.more;
  }

  /**
   * Searches one file (a real path the boundary already approved). `inDirectory`: the open directory it is in
   * and its name there (a walk's, walk.ts `WalkFile.inDirectory`), to open it there instead of by its path.
   */
  searchFile(realPath: string, relativePath: string, inDirectory?: { fd: number; name: string }): FileOutcome {
    const kept = this.contents?.lookup(realPath);
    if (kept !== undefined) {
      this.result.filesFromMemory += 1;
      if (kept === 'binary') return 'binary';
      return kept.length === 0 || this.searchLines(kept, 1, relativePath) ? 'searched' : 'capped';
    }
    // Proved to be the listed file: a swapped-in link (here or in a directory above) is not read.
    const opened = inDirectory ? openChildFileSync(inDirectory.fd, inDirectory.name) : openVerifiedSync(realPath, 'file');
    if (!opened.ok) {
      if (opened.refusal === 'changed') this.result.changedFiles += 1;
      return 'unreadable';
    }
    const descriptor = opened.fd;
    try {
      if (!this.contents?.accepting) return this.searchOpenFile(descriptor, opened.stats.size, relativePath);
      // The identity is taken before the read, so a write during it makes the kept copy miss (contentCache.ts).
      const takenAt = nowNs();
      const stats = fs.fstatSync(descriptor, { bigint: true });
      const contents = this.contents;
      return this.searchOpenFile(descriptor, Number(stats.size), relativePath, (kept) => contents.keep(realPath, stats, takenAt, kept));
    } catch {
      return 'unreadable';
    } finally {
      fs.closeSync(descriptor);
    }
  }

  /** `size` is the size at open: bytes written since are not read, so a growing file cannot hold the search. */
  private searchOpenFile(descriptor: number, size: number, relativePath: string, keep?: (kept: Buffer | 'binary') => void): FileOutcome {
    this.sizeAtOpen = size;
    this.bytesFromDisk += size;
    const first = this.readAt(descriptor, 0, this.buffer.length, 0);
    const firstBytes = this.buffer.subarray(0, first);
    if (looksBinary(firstBytes)) {
      keep?.('binary');
      return 'binary';
    }
    if (first < this.buffer.length) {
      // The whole file is in hand: the common case, one read. Offered only if it fits the first read
      // at its size: a buffer grown for a long line once would have let much larger files in.
      if (first < READ_CHUNK_BYTES) keep?.(firstBytes);
      return first === 0 || this.searchLines(firstBytes, 1, relativePath) ? 'searched' : 'capped';
    }
    if (size > GREP_LIMITS.maxFileBytes) {
      if (this.fileMatches(descriptor, first)) this.result.oversized.push(relativePath);
      return 'searched';
    }
    return this.streamLines(descriptor, first, relativePath);
  }

  /** Searches a file in pieces of whole lines, so memory stays bounded by the longest line. */
  private streamLines(descriptor: number, alreadyRead: number, relativePath: string): FileOutcome {
    let filled = alreadyRead;
    let position = alreadyRead;
    let lineNumber = 1;
    for (;;) {
      const atEnd = filled < this.buffer.length;
      const data = this.buffer.subarray(0, filled);
      const cut = atEnd ? filled : data.lastIndexOf(10) + 1;
      if (cut === 0) {
        // One line longer than the buffer: grow to hold it (bounded by the file size limit).
        this.grow(filled * 2);
      } else {
        const piece = data.subarray(0, cut);
        if (!this.searchLines(piece, lineNumber, relativePath)) return 'capped';
        lineNumber += countNewlines(piece);
        data.copy(this.buffer, 0, cut, filled);
        filled -= cut;
      }
      if (atEnd) return 'searched';
      const read = this.readAt(descriptor, filled, this.buffer.length - filled, position);
      position += read;
      filled += read;
      if (read === 0 && filled === 0) return 'searched';
      if (read === 0) {
        // The file ended without a newline: what is left is its last line.
        if (!this.searchLines(this.buffer.subarray(0, filled), lineNumber, relativePath)) return 'capped';
        return 'searched';
      }
    }
  }

  /** Whether any line of an oversized file matches, reading until the first match. */
  private fileMatches(descriptor: number, alreadyRead: number): boolean {
    let filled = alreadyRead;
    let position = alreadyRead;
    let found = false;
    const onMatch: LineMatch = () => {
      found = true;
      return false;
    };
    for (;;) {
      const atEnd = filled < this.buffer.length;
      const data = this.buffer.subarray(0, filled);
      let cut = atEnd ? filled : data.lastIndexOf(10) + 1;
      // A line longer than the size limit is judged by its first part, not held whole.
      if (cut === 0 && filled >= GREP_LIMITS.maxFileBytes) cut = filled;
      if (cut === 0) {
        this.grow(filled * 2);
      } else {
        const piece = data.subarray(0, cut);
        if (!this.pattern.literalBytes || piece.includes(this.pattern.literalBytes)) {
          scanText(this.pattern, decode(piece), 1, onMatch);
          if (found) return true;
        }
        data.copy(this.buffer, 0, cut, filled);
        filled -= cut;
      }
      if (atEnd) return false;
      const read = this.readAt(descriptor, filled, this.buffer.length - filled, position);
      position += read;
      filled += read;
      if (read === 0) {
        if (filled > 0) scanText(this.pattern, decode(this.buffer.subarray(0, filled)), 1, onMatch);
        return found;
      }
    }
  }

  private sizeAtOpen = 0;

  /** One read, never past the size the file had when it was opened. */
  private readAt(descriptor: number, offset: number, length: number, position: number): number {
    const allowed = Math.min(length, this.sizeAtOpen - position);
    return allowed <= 0 ? 0 : fs.readSync(descriptor, this.buffer, offset, allowed, position);
  }

  private grow(size: number): void {
    const bigger = Buffer.allocUnsafe(size);
    this.buffer.copy(bigger);
    this.buffer = bigger;
  }

  /** Searches whole lines; returns false once the match cap is reached. */
  private searchLines(bytes: Buffer, firstLine: number, relativePath: string): boolean {
    // Most files cannot match a plain-string pattern: skip them before paying for decoding.
    if (this.pattern.literalBytes && !bytes.includes(this.pattern.literalBytes)) return true;
    const result = this.result;
    const placed = this.placed;
    return scanText(this.pattern, decode(bytes), firstLine, (lineNumber, line, matchIndex) => {
      if (result.matchCount >= GREP_LIMITS.maxMatches) {
        result.more = true;
        if (placed) placed.capPath = relativePath;
        return false;
      }
      placed?.linePaths.push(relativePath);
      result.lines.push(formatMatchLine(relativePath, lineNumber, line, matchIndex));
      result.matchCount += 1;
      return true;
    });
  }
}

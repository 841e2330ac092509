import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ToolOutcome } from './types';
import { describeOpenRefusal, openVerified, ReadBoundary } from '../access/boundary';
import { escapeLineBreaks, quoteAsJson, quotedPath } from '../../../shared/printablePath';
import { READ_CHUNK_BYTES, cancelled, failed, looksBinary, ok, stripCarriageReturn, trimToUtf8Boundary } from './answers';
import { READ_LIMITS } from './limits';

/** read_file: a window of a file's lines, bounded in bytes, lines and time. */

export interface ReadFileArgs {
  path: string;
  start_line?: number;
  end_line?: number;
}

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
      return { ...failed(`Refused: ${quotedPath(requestedPath)} looks like a binary file (it contains NUL bytes), so it is not shown as text.`), refusal: 'binary' };
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

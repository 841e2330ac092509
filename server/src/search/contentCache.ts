import * as fs from 'node:fs';
import { openVerifiedSync } from '../access/boundary';
import { isRacy, nowNs, RACY_WINDOW_NS } from './directoryStamps';
import { looksBinary, READ_CHUNK_BYTES } from './grepCore';

/**
 * The contents of a warm folder's small files, kept in the search thread
 * that owns the folder, so that a grep_files there reads memory instead of
 * the disk: ripgrep reads every file again on every search, and a model
 * greps the same folder many times in one discussion. On vite (2,800 files,
 * 7.9 MB under READ_CHUNK_BYTES each) a full scan from memory, one lstat per
 * file included, took about 14 ms against ripgrep's 34 to 44.
 *
 * A kept file is served only while an lstat of its real path gives the
 * identity it had when it was read: device, inode, size, and modification
 * and change times to the nanosecond. A write changes the times, a rename or
 * link changes the change time, and a directory above swapped for a link
 * lands the lstat on another inode, where the search falls back to the
 * verified open (boundary.ts), which refuses it. A file last changed within
 * RACY_WINDOW_NS of being read is not kept: a second write in the same
 * clock tick would leave its times as they were (directoryStamps.ts).
 *
 * Memory is bounded for all search threads together (ContentBudget). A
 * folder whose small files do not all fit keeps none: a partial cache cannot
 * answer a whole search, and ripgrep is the faster way to read the rest. The
 * sizes are summed before anything is read, so a folder too large costs one
 * stat per file, once, and holds nothing.
 */

export const CONTENT_CACHE_LIMITS = Object.freeze({
  /** Bytes of file contents the search threads keep, over all their folders. */
  budgetBytes: 32 * 1024 * 1024,
  /**
   * What one entry costs beside its bytes: its key, identity, map slot and
   * buffer object (100,000 one-line files took 32 MB of heap beside their
   * 3.5 MB of contents).
   */
  entryOverheadBytes: 400,
  /** The filler reads for this long between turns of the thread's event loop. */
  fillSliceMs: 4,
});

/**
 * Where a budget counts what is kept. The search threads share one
 * allowance: each counts its own bytes in its own cell of a shared array,
 * and a thread may keep more only while the sum of all cells stays under the
 * limit. A thread's cell is its alone, so the pool can zero it when the
 * thread exits (a terminated thread frees nothing itself). Two threads
 * keeping at once can pass the limit by one file each.
 */
export interface SharedCells {
  cells: Int32Array;
  own: number;
}

/** The allowance for kept contents: one thread's (tests), or the search threads' together (searchPool.ts). */
export class ContentBudget {
  private readonly shared: SharedCells;

  constructor(
    readonly limitBytes: number = CONTENT_CACHE_LIMITS.budgetBytes,
    shared?: SharedCells,
  ) {
    this.shared = shared ?? { cells: new Int32Array(1), own: 0 };
  }

  /** Bytes kept by every thread sharing the allowance. */
  get usedBytes(): number {
    let sum = 0;
    for (let cell = 0; cell < this.shared.cells.length; cell++) sum += Atomics.load(this.shared.cells, cell);
    return sum;
  }

  take(bytes: number): boolean {
    if (this.usedBytes + bytes > this.limitBytes) return false;
    Atomics.add(this.shared.cells, this.shared.own, bytes);
    return true;
  }

  give(bytes: number): void {
    Atomics.sub(this.shared.cells, this.shared.own, bytes);
  }
}

type Kept = Buffer | 'binary';

function statQuietly(realPath: string): fs.Stats | undefined {
  try {
    return fs.statSync(realPath, { throwIfNoEntry: false });
  } catch {
    return undefined; // unreadable or a loop: not read, so not counted
  }
}

interface Entry {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  kept: Kept;
  charge: number;
}

/**
 * off: nothing is kept (the thread does not fill caches). filling, filled:
 * kept, and a search may keep what it reads. tooLarge: the folder's small
 * files did not fit the budget. cleared: the folder's index is gone.
 */
export type ContentsState = 'off' | 'filling' | 'filled' | 'tooLarge' | 'cleared';

/** The files the filler offers: the index's, in walk order. */
export interface FillableFile {
  realPath: string;
  denied: boolean;
}

export interface FillOptions {
  /** Resolves when the thread runs no search: the filler gives way to every job. */
  idle: () => Promise<void>;
}

/** One folder's kept contents, by real path. */
export class FileContents {
  private readonly entries = new Map<string, Entry>();
  private charged = 0;
  private current: ContentsState = 'off';

  constructor(
    private readonly budget: ContentBudget,
    private readonly racyWindowNs: bigint = RACY_WINDOW_NS,
  ) {}

  get state(): ContentsState {
    return this.current;
  }

  /** Every small file of the folder was offered and kept: a whole grep can be answered from here. */
  get filled(): boolean {
    return this.current === 'filled';
  }

  get size(): number {
    return this.entries.size;
  }

  /** A file's kept contents, or undefined when it is not kept or is not the file it was. */
  lookup(realPath: string): Kept | undefined {
    const entry = this.entries.get(realPath);
    if (!entry) return undefined;
    let stats: fs.BigIntStats | undefined;
    try {
      stats = fs.lstatSync(realPath, { bigint: true, throwIfNoEntry: false });
    } catch {
      stats = undefined;
    }
    if (stats && stats.isFile() && stats.ino === entry.ino && stats.dev === entry.dev && stats.size === entry.size && stats.mtimeNs === entry.mtimeNs && stats.ctimeNs === entry.ctimeNs) {
      return entry.kept;
    }
    this.drop(realPath, entry);
    return undefined;
  }

  /** Whether a search reading a file should offer it (keep): only while the folder is being kept whole. */
  get accepting(): boolean {
    return this.current === 'filling' || this.current === 'filled';
  }

  /**
   * Keeps what was read of a file whose identity `stats` was taken, by
   * fstat of the open file, at `takenAtNs` before the read. `bytes` must be
   * the whole file (a copy: the caller's buffer is reused); a binary file is
   * kept as a marker. False when the budget refused it.
   */
  keep(realPath: string, stats: fs.BigIntStats, takenAtNs: bigint, kept: Kept): boolean {
    if (!this.accepting) return true;
    // Read past a write that came after the stat: the bytes are not of that identity.
    if (kept !== 'binary' && BigInt(kept.length) !== stats.size) return true;
    if (isRacy({ ino: stats.ino, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, size: stats.size, directory: false }, takenAtNs, this.racyWindowNs)) return true;
    const previous = this.entries.get(realPath);
    if (previous) this.drop(realPath, previous);
    const charge = (kept === 'binary' ? 0 : kept.length) + CONTENT_CACHE_LIMITS.entryOverheadBytes;
    if (!this.budget.take(charge)) return false;
    this.charged += charge;
    this.entries.set(realPath, { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, kept, charge });
    return true;
  }

  /**
   * Reads the folder's files into memory in walk order, a slice at a time
   * and only while the thread is idle, so no search waits on it. Files over
   * READ_CHUNK_BYTES are left to be read from the disk each time (a binary
   * one is marked). Stops when `isGone` says the folder's index was dropped.
   */
  async fill(files: readonly FillableFile[], options: FillOptions, isGone: () => boolean): Promise<void> {
    if (this.current !== 'off') return;
    this.current = 'filling';
    if (!(await this.fits(files, options, isGone))) {
      if (this.current === 'filling') this.current = isGone() ? 'cleared' : 'tooLarge';
      return;
    }
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    let next = 0;
    while (next < files.length) {
      await options.idle();
      if (isGone() || this.current !== 'filling') return;
      const sliceEnd = performance.now() + CONTENT_CACHE_LIMITS.fillSliceMs;
      do {
        const file = files[next++];
        // Secret and policy-denied files are never read, so never kept.
        if (file.denied || this.entries.has(file.realPath)) continue;
        if (!this.readInto(file.realPath, buffer)) {
          this.giveUp();
          return;
        }
      } while (next < files.length && performance.now() < sliceEnd);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (!isGone() && this.current === 'filling') this.current = 'filled';
  }

  /** Whether the files' projected charge fits what is left of the budget, summed from one stat each (in slices, like the fill). */
  private async fits(files: readonly FillableFile[], options: FillOptions, isGone: () => boolean): Promise<boolean> {
    const room = this.budget.limitBytes - this.budget.usedBytes;
    let projected = 0;
    let next = 0;
    while (next < files.length) {
      await options.idle();
      if (isGone() || this.current !== 'filling') return false;
      const sliceEnd = performance.now() + CONTENT_CACHE_LIMITS.fillSliceMs;
      do {
        const file = files[next++];
        if (file.denied) continue;
        const stats = statQuietly(file.realPath);
        if (!stats?.isFile()) continue;
        projected += (stats.size < READ_CHUNK_BYTES ? stats.size : 0) + CONTENT_CACHE_LIMITS.entryOverheadBytes;
        if (projected > room) return false;
      } while (next < files.length && performance.now() < sliceEnd);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return true;
  }

  /** Reads one file through the verified open and keeps it; false when the budget is spent. */
  private readInto(realPath: string, buffer: Buffer): boolean {
    const opened = openVerifiedSync(realPath, 'file');
    if (!opened.ok) return true;
    try {
      const takenAt = nowNs();
      const stats = fs.fstatSync(opened.fd, { bigint: true });
      const size = Number(stats.size);
      const read = fs.readSync(opened.fd, buffer, 0, Math.min(size, buffer.length), 0);
      const first = buffer.subarray(0, read);
      if (looksBinary(first)) return this.keep(realPath, stats, takenAt, 'binary');
      if (size >= buffer.length) return true; // read from the disk each time
      return this.keep(realPath, stats, takenAt, Buffer.from(first));
    } catch {
      return true;
    } finally {
      fs.closeSync(opened.fd);
    }
  }

  private drop(realPath: string, entry: Entry): void {
    this.entries.delete(realPath);
    this.charged -= entry.charge;
    this.budget.give(entry.charge);
  }

  private release(): void {
    this.entries.clear();
    this.budget.give(this.charged);
    this.charged = 0;
  }

  /** The folder does not fit: keeping part of it would hold memory that answers no whole search. */
  private giveUp(): void {
    this.release();
    this.current = 'tooLarge';
  }

  /** The folder's index is gone: its contents go with it. */
  clear(): void {
    this.release();
    this.current = 'cleared';
  }
}

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
 * Every kept byte was read inside the folder through the verified open
 * (boundary.ts), and is served only while an lstat of its real path gives
 * the identity the file had before that read: device, inode, size, and
 * modification and change times to the nanosecond. A write moves the times
 * and a rename or link the change time; a file swapped for a link, or
 * reached through a directory swapped for a link to another one, is another
 * inode, and the search reads it through the verified open, which refuses
 * it. What a hit can serve is only ever bytes that were inside the folder,
 * unchanged since: a directory moved out of the folder whole and linked
 * back keeps its files' identities, and in the moment before the index's
 * check sees the move (fileIndex.ts freshFiles) its files are served as
 * they were inside. A file last changed within RACY_WINDOW_NS of being read
 * is not kept: a second write in the same clock tick would leave its times
 * as they were (directoryStamps.ts); times in whole seconds are a coarse
 * file system's, and get two seconds more. On Linux nothing is kept from
 * a network, FUSE or virtual machine share, whose lstat may answer from a
 * cache of attributes the open would have refreshed, and a folder with
 * files there is not kept whole (statfs; elsewhere it is not recognised).
 * A write through a shared memory map that does not move the modification
 * time is not seen, as by git.
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
   * What one entry costs beside its bytes: its identity, map slot and
   * buffer object (100,000 one-line files, each in a buffer of its own, took
   * 46.1 MB of heap beside their contents, in each of three runs).
   */
  entryOverheadBytes: 500,
  /** The filler reads for this long between turns of the thread's event loop. */
  fillSliceMs: 4,
  /**
   * A grep of a folder kept whole reads to its end in the thread only while
   * it has read no more than this from the disk (files too large to keep,
   * or changed since): past it ripgrep, which reads only the files that
   * match, is the faster way to the rest.
   */
  maxDiskBytesReadToTheEnd: 4 * 1024 * 1024,
});

/** Whole-second times: a file system with a two-second clock (FAT) or one-second (ext3, HFS+). */
const COARSE_CLOCK_EXTRA_NS = 2_000_000_000n;

/**
 * statfs types whose stat may come from a client's cache of attributes:
 * NFS, SMB, CIFS, SMB2, FUSE (sshfs, fuseblk and virtiofs among them), 9P,
 * AFS, kAFS, Ceph, Lustre, GPFS, BeeGFS, PanFS, Coda, and the shares of
 * VirtualBox, VMware, Parallels and Docker Desktop (fakeowner).
 */
const REMOTE_FILE_SYSTEMS = new Set([
  0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, 0x5346414f, 0x6b414653, 0x00c36400, 0x0bd00bd0, 0x47504653, 0x19830326, 0xaad7aaea, 0x73757245,
  0x786f4256, 0xbacbacbc, 0x7c7c6673, 0x6a656a63,
]);

/** Whether the file system holding `realPath` is local; undefined when that could not be told. */
export function isLocalFileSystem(realPath: string): boolean | undefined {
  if (process.platform !== 'linux') return true; // not recognised elsewhere (docs/performance.md)
  try {
    return !REMOTE_FILE_SYSTEMS.has(fs.statfsSync(realPath).type);
  } catch {
    return undefined;
  }
}

export interface FileContentsOptions {
  /** RACY_WINDOW_NS unless a test needs another. */
  racyWindowNs?: bigint;
  /** isLocalFileSystem unless a test stands in for a network file system. */
  isLocal?: (realPath: string) => boolean | undefined;
}

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

/** What every thread counts together (the budget, and the pool reading it). */
export function sumOfCells(cells: Int32Array): number {
  let sum = 0;
  for (let cell = 0; cell < cells.length; cell++) sum += Atomics.load(cells, cell);
  return sum;
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
    return sumOfCells(this.shared.cells);
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

/** The entry itself (links not followed), or undefined when it is gone or cannot be looked at. */
function lstatQuietly(realPath: string): fs.BigIntStats | undefined {
  try {
    return fs.lstatSync(realPath, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
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
 * files do not fit the whole allowance. noRoom: they fit it, but not what
 * other folders left of it; filled again once that much is free
 * (roomToFillAgain). notLocal: some are on a network file system. cleared:
 * the folder's index is gone.
 */
export type ContentsState = 'off' | 'filling' | 'filled' | 'tooLarge' | 'noRoom' | 'notLocal' | 'cleared';

type Fit = 'fits' | 'tooLarge' | 'noRoom' | 'stopped';

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
  /** By device: whether its file system is local (isLocalFileSystem). */
  private readonly localDevices = new Map<bigint, boolean>();
  private charged = 0;
  private current: ContentsState = 'off';
  /** A file was passed over for its file system: the folder cannot be kept whole. */
  private passedNonLocal = false;
  /** The charge the folder's small files came to when last summed (fits). */
  private needed = 0;
  private readonly racyWindowNs: bigint;
  private readonly isLocal: (realPath: string) => boolean | undefined;

  constructor(
    private readonly budget: ContentBudget,
    options: FileContentsOptions = {},
  ) {
    this.racyWindowNs = options.racyWindowNs ?? RACY_WINDOW_NS;
    this.isLocal = options.isLocal ?? isLocalFileSystem;
  }

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
    const stats = lstatQuietly(realPath);
    if (stats && stats.isFile() && stats.ino === entry.ino && stats.dev === entry.dev && stats.size === entry.size && stats.mtimeNs === entry.mtimeNs && stats.ctimeNs === entry.ctimeNs) {
      return entry.kept;
    }
    this.drop(realPath, entry);
    return undefined;
  }

  /**
   * Whether the folder was turned away for room other folders held, and that
   * much is free now. Without this, a folder that met a full allowance kept
   * nothing until its index was built again, though another folder's index
   * had since been dropped and its share given back.
   */
  get roomToFillAgain(): boolean {
    return this.current === 'noRoom' && this.budget.limitBytes - this.budget.usedBytes >= this.needed;
  }

  /** Whether a search reading a file should offer it (keep): only while the folder is being kept whole. */
  get accepting(): boolean {
    return this.current === 'filling' || this.current === 'filled';
  }

  /**
   * Offers what was read of a file whose identity `stats` was taken, by
   * fstat of the open file, at `takenAtNs` before the read: `read` is the
   * whole file (copied if kept: the caller's buffer is reused), or 'binary'
   * for a marker. 'noRoom' when the allowance is spent; 'passed' when the
   * file is not one to keep.
   */
  keep(realPath: string, stats: fs.BigIntStats, takenAtNs: bigint, read: Kept): 'kept' | 'passed' | 'noRoom' {
    if (!this.accepting) return 'passed';
    // Read past a write that came after the stat: the bytes are not of that identity.
    if (read !== 'binary' && BigInt(read.length) !== stats.size) return 'passed';
    const coarse = stats.mtimeNs % 1_000_000_000n === 0n && stats.ctimeNs % 1_000_000_000n === 0n;
    const window = coarse ? this.racyWindowNs + COARSE_CLOCK_EXTRA_NS : this.racyWindowNs;
    if (isRacy({ ino: stats.ino, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, size: stats.size, directory: false }, takenAtNs, window)) return 'passed';
    if (!this.onLocalFileSystem(realPath, stats.dev)) {
      this.passedNonLocal = true;
      return 'passed';
    }
    const previous = this.entries.get(realPath);
    if (previous) this.drop(realPath, previous);
    const charge = (read === 'binary' ? 0 : read.length) + CONTENT_CACHE_LIMITS.entryOverheadBytes;
    if (!this.budget.take(charge)) return 'noRoom';
    // A buffer of its own: a small copy from Node's shared pool would hold a whole 8 KB slab.
    let kept: Kept = 'binary';
    if (read !== 'binary') {
      kept = Buffer.allocUnsafeSlow(read.length);
      read.copy(kept);
    }
    this.charged += charge;
    this.entries.set(realPath, { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, kept, charge });
    return 'kept';
  }

  /**
   * Whether `dev` is a local file system, asked once per device. An answer
   * is kept only while an lstat still gives that device: statfs follows a
   * link swapped in meanwhile. A failed statfs is not kept.
   */
  private onLocalFileSystem(realPath: string, dev: bigint): boolean {
    const known = this.localDevices.get(dev);
    if (known !== undefined) return known;
    const local = this.isLocal(realPath);
    if (local === undefined) return false;
    if (lstatQuietly(realPath)?.dev === dev) this.localDevices.set(dev, local);
    return local;
  }

  /** Drops a file's kept copy (it left the index). */
  forget(realPath: string): void {
    const entry = this.entries.get(realPath);
    if (entry) this.drop(realPath, entry);
  }

  /** Drops every kept copy of a file not among `realPaths` (the index was walked again). */
  retainOnly(realPaths: ReadonlySet<string>): void {
    for (const [realPath, entry] of [...this.entries]) if (!realPaths.has(realPath)) this.drop(realPath, entry);
  }

  /**
   * Reads the folder's files into memory in walk order, a slice at a time
   * and only while the thread is idle, so no search waits on it. Files over
   * READ_CHUNK_BYTES are left to be read from the disk each time (a binary
   * one is marked). Stops when `isGone` says the folder's index was dropped.
   */
  async fill(files: readonly FillableFile[], options: FillOptions, isGone: () => boolean): Promise<void> {
    if (this.current !== 'off' && !this.roomToFillAgain) return;
    this.current = 'filling';
    this.passedNonLocal = false;
    const fit = await this.fits(files, options, isGone);
    if (fit !== 'fits') {
      // Searches between the slices may have kept files: given back with the rest.
      if (this.current === 'filling') this.giveUp(fit === 'stopped' ? 'tooLarge' : fit);
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
          // It fitted when summed: another thread took the room meanwhile.
          this.giveUp('noRoom');
          return;
        }
      } while (next < files.length && performance.now() < sliceEnd);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (isGone() || this.current !== 'filling') return;
    if (this.passedNonLocal) {
      // Those files would be read from the disk, each over the network, by every grep read to the end.
      this.release();
      this.current = 'notLocal';
      return;
    }
    this.current = 'filled';
  }

  /**
   * Whether the files' projected charge fits the allowance, and what other
   * folders left of it, summed from one stat each (in slices, like the fill).
   */
  private async fits(files: readonly FillableFile[], options: FillOptions, isGone: () => boolean): Promise<Fit> {
    let projected = 0;
    let next = 0;
    while (next < files.length) {
      await options.idle();
      if (isGone() || this.current !== 'filling') return 'stopped';
      const sliceEnd = performance.now() + CONTENT_CACHE_LIMITS.fillSliceMs;
      do {
        const file = files[next++];
        if (file.denied) continue;
        const stats = statQuietly(file.realPath);
        if (!stats?.isFile()) continue;
        projected += (stats.size < READ_CHUNK_BYTES ? stats.size : 0) + CONTENT_CACHE_LIMITS.entryOverheadBytes;
        if (projected > this.budget.limitBytes) return 'tooLarge';
      } while (next < files.length && performance.now() < sliceEnd);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.needed = projected;
    // What searches between the slices kept of this folder is part of `projected`, not of the others' share.
    const othersUse = this.budget.usedBytes - this.charged;
    return projected > this.budget.limitBytes - othersUse ? 'noRoom' : 'fits';
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
      if (looksBinary(first)) return this.keep(realPath, stats, takenAt, 'binary') !== 'noRoom';
      if (size >= buffer.length) return true; // read from the disk each time
      return this.keep(realPath, stats, takenAt, first) !== 'noRoom';
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
  private giveUp(why: 'tooLarge' | 'noRoom'): void {
    this.release();
    this.current = why;
  }

  /** The folder's index is gone: its contents go with it. */
  clear(): void {
    this.release();
    this.current = 'cleared';
  }
}

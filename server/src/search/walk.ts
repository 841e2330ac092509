import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CAN_OPEN_INSIDE_OPEN_DIRECTORY, listVerifiedDirectorySync, lstatVerifiedEntrySync, openListedChildSync, openListedDirectorySync, ReadBoundary } from '../access/boundary';
import { ReadDenial } from '../access/secrets';
import { type CutIgnoreFiles, ignoreStacksFor, type IgnoreStacks, isIgnored, isRepositoryRoot, NO_LAYERS, type RuleNamesIn, startRepository, withIgnoreFiles } from './ignoreRules';
import { isWithin, joinRelative } from './relativePaths';

/**
 * A bounded, sorted, depth-first walk of the files under one directory inside
 * the read boundary. It honors ignore files at every level, skips
 * node_modules/ and .git/, and never follows a symlink out of the root.
 * Ignore files are read as ripgrep reads them (ignoreRules.ts).
 *
 * File system calls are synchronous (much faster than the promise API for the
 * many small calls a walk makes) but the walk yields to the event loop every
 * few milliseconds so cancellation and other requests stay responsive.
 */

/** Directory names never descended into by find, grep or the summary. */
export const ALWAYS_SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['node_modules', '.git']);
/** How long the walk may hold the event loop before yielding. */
const TIME_SLICE_MS = 8;

export interface WalkFile {
  /** Root-relative, `/`-separated path as found in the tree (a symlink's own path, not its target). */
  relativePath: string;
  /** Real path to read from: always inside the root. */
  realPath: string;
  /** Set when the file's contents may not be shown (secret or policy); names may still be listed. */
  denial?: ReadDenial;
  /** A symlinked file: `realPath` is its target's, resolved through the boundary. */
  viaLink?: true;
  /**
   * In a walk that lists each directory inside its parent's descriptor
   * (`listInsideParents`), a file that is no link: the open descriptor of its
   * directory and its name there, to open it inside that directory
   * (boundary.ts `openChildFileSync`) rather than by `realPath`. Valid only
   * during the visit: the walk closes the descriptor when it leaves the
   * directory.
   */
  inDirectory?: { fd: number; name: string };
}

export interface WalkOptions {
  boundary: ReadBoundary;
  /** Real path of the directory to walk (from `boundary.resolve`). */
  startDirectory: string;
  signal?: AbortSignal;
  /** Polled like `signal`; lets a worker thread stop a walk without an event loop turn. */
  shouldStop?: () => boolean;
  /** Stop after visiting this many directory entries (files and directories). */
  maxEntries?: number;
  /** Stop once `performance.now()` passes this. */
  deadline?: number;
  /**
   * Asked when the deadline passes: a later deadline to keep going (the walk
   * looks sure to end soon), or undefined to stop. Lets a capped search go on
   * from where it is instead of starting over elsewhere.
   */
  extendDeadline?: (progress: WalkProgress) => number | undefined;
  /** Told of each symlinked file left out (it leads outside the folder or to a denied file), so callers can count them. */
  onLinkLeftOut?: (relativePath: string) => void;
  /**
   * The files the caller wants, by root-relative path: the others are passed
   * over before their ignore verdict is asked (find_files, whose glob most
   * files fail; each verdict is a test against every layer of rules).
   */
  wanted?: (relativePath: string) => boolean;
  /**
   * A test of base names that every file `wanted` takes passes (a glob's
   * last segment): a file or link failing it is passed over before its
   * paths are even built, which on 100,000 files was most of what a selective
   * find_files spent outside the kernel.
   */
  wantedName?: (name: string) => boolean;
  /**
   * Lists each directory through its parent's open descriptor (boundary.ts
   * `openListedChildSync`) instead of through the verified open, whose
   * realpath and stat were half of the walk's time: the chain from the
   * verified start still proves every listing is of a directory inside.
   * The walk opens no file; a caller that reads one opens it inside its
   * directory's descriptor (`WalkFile.inDirectory`, grep_files) or through
   * the verified open (the symbol index), never by the path alone. Where
   * directories cannot be opened that way (not Linux), the verified open is
   * used and `inDirectory` is never set.
   */
  listInsideParents?: boolean;
  /**
   * This walk is one of `of` that together walk the tree (a find_files split
   * across the search threads, findShards.ts). The first directory with two
   * or more subdirectories to walk is where they split. Every walk lists it
   * and its subdirectories; what those subdirectories hold is dealt, each
   * walk entering the directories and visiting the files whose path hashes
   * to its `index`, and only walk 0 visits the files in the split and above
   * it. Each file is visited by exactly one of them while the tree holds
   * still.
   */
  shard?: WalkShard;
  /**
   * This walk is one of `of` that together visit the files: each lists every
   * directory, and visits only the files whose path hashes to its `index`
   * (grep_files split across the search threads, grepShards.ts, whose cost is
   * in the files it reads: dealt by path they split evenly, where a split by
   * directory left vite's two largest ones to one shard).
   */
  fileShard?: WalkShard;
  /**
   * Told of each directory the walk enters, with its entries, right after
   * listing it and before its ignore files are read (the warm index stamps
   * both then, so a change made while they are read is seen later).
   */
  onDirectory?: (relativeDirectory: string, absolutePath: string, entries: readonly fs.Dirent[]) => void;
}

export interface WalkShard {
  index: number;
  of: number;
}

export interface WalkStats {
  entriesVisited: number;
  /** Directories left out because they were replaced or moved between being listed and being entered. */
  changedDirectories: number;
  /**
   * Of a walk split into shards, these instead, by root-relative path: the
   * shards list some of the same directories (the split and above it, or,
   * split by file, all), so theirs are counted once as a union. Counted by
   * each shard, a split search said twice as many had changed.
   */
  changedSharedDirectories: string[];
  /** Root-relative paths of ignore files of which only the first rules counted (IGNORE_FILE_LIMITS). */
  cutIgnoreFiles: string[];
  /** Why the walk ended before covering everything, if it did. */
  stoppedBy?: 'entry_limit' | 'deadline' | 'aborted' | 'visitor';
}

export interface WalkProgress {
  entriesVisited: number;
  /**
   * An estimate of the share of the tree walked, 0 to 1, from the position in
   * each directory on the way down (the first levels weigh the most): the
   * walk is depth-first, so this is exact at the root level's boundaries.
   */
  fractionDone: number;
}

/** Return `false` to stop the walk. */
export type WalkVisitor = (file: WalkFile) => boolean | void;

interface DirectoryFrame {
  absolutePath: string;
  relativePath: string;
  entries: fs.Dirent[];
  index: number;
  ignore: IgnoreStacks;
  /** The directory's open descriptor, in a walk that opens each directory inside its parent's. */
  fd?: number;
  /** In a shard of a walk (WalkOptions.shard): the split is this directory or below it, not yet passed; its files are the first shard's. */
  aboveSplit?: boolean;
  /** In a shard of a walk: the split, whose subdirectories every shard enters, to deal theirs. */
  split?: boolean;
  /** In a shard of a walk: a subdirectory of the split, whose entries the shards deal out. */
  deals?: boolean;
}

/**
 * A directory's entries, sorted. The directory was a real directory in its
 * parent's listing, but may have been swapped for a link to an outside one
 * since: the listing is proved to be of the checked directory (see
 * boundary.ts `listVerifiedDirectorySync`); a changed one is left out.
 */
function readSortedEntries(directory: string, stats: WalkStats, sharedAs: string | undefined): fs.Dirent[] {
  const listing = listVerifiedDirectorySync(directory);
  if (!listing.ok) {
    if (listing.refusal === 'changed') countChange(stats, sharedAs);
    return []; // unreadable or changed directory: nothing to show
  }
  return sortEntries(listing.entries);
}

/** Code-unit order: stable across locales, so results are reproducible. */
function sortEntries(entries: fs.Dirent[]): fs.Dirent[] {
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A directory that changed: counted, or, in a split walk, named (`sharedAs`, its root-relative path). */
function countChange(stats: WalkStats, sharedAs: string | undefined): void {
  if (sharedAs === undefined) stats.changedDirectories += 1;
  else stats.changedSharedDirectories.push(sharedAs);
}

/**
 * A directory's sorted entries and, for a walk that opens each directory
 * inside its parent (`listInsideParents`), its open descriptor: `parentFd` and
 * `name` when it is not the start directory. `sharedAs`: the directory's
 * root-relative path, in a split walk.
 */
function listDirectory(absolutePath: string, stats: WalkStats, chained: boolean, sharedAs: string | undefined, parent?: { fd: number; name: string }): { entries: fs.Dirent[]; fd?: number } {
  if (!chained) return { entries: readSortedEntries(absolutePath, stats, sharedAs) };
  const listing = parent ? openListedChildSync(parent.fd, parent.name) : openListedDirectorySync(absolutePath);
  if (!listing.ok) {
    if (listing.refusal === 'changed') countChange(stats, sharedAs);
    return { entries: [] };
  }
  return { entries: sortEntries(listing.entries), fd: listing.fd };
}

/** The names among `entries` that matter to ignore rules: the ignore files and `.git`. */
function ignoreFileNames(entries: fs.Dirent[]): ReadonlySet<string> {
  const found = new Set<string>();
  for (const entry of entries) {
    const name = entry.name;
    // Sorted entries: every such name starts with '.', so stop at the first name past them.
    if (name > '.rgignore') break;
    if (name === '.git' || name === '.gitignore' || name === '.ignore' || name === '.rgignore') found.add(name);
  }
  return found;
}

type EntryType = 'file' | 'directory' | 'symlink' | 'other';

function entryType(entry: fs.Dirent, absolutePath: string): EntryType {
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isBlockDevice() || entry.isCharacterDevice() || entry.isFIFO() || entry.isSocket()) return 'other';
  // Some file systems report no type in readdir; ask lstat.
  try {
    const stats = fs.lstatSync(absolutePath);
    if (stats.isSymbolicLink()) return 'symlink';
    if (stats.isFile()) return 'file';
    if (stats.isDirectory()) return 'directory';
  } catch {
    // vanished mid-walk
  }
  return 'other';
}

/** Walks files under `startDirectory`, calling `visit` for each in sorted order. */
export async function walkFiles(options: WalkOptions, visit: WalkVisitor): Promise<WalkStats> {
  const cut: CutIgnoreFiles = new Set();
  const stats = await walkWithin(options, visit, cut);
  stats.cutIgnoreFiles = [...cut].map((filePath) => options.boundary.relativeOf(filePath));
  return stats;
}

/** Whether this walk is one of several that together walk the tree. */
function isSplit(options: WalkOptions): boolean {
  return (options.shard?.of ?? 1) > 1 || (options.fileShard?.of ?? 1) > 1;
}

async function walkWithin(options: WalkOptions, visit: WalkVisitor, cut: CutIgnoreFiles): Promise<WalkStats> {
  const { boundary } = options;
  const stats: WalkStats = { entriesVisited: 0, changedDirectories: 0, changedSharedDirectories: [], cutIgnoreFiles: [] };
  if (!boundary.isInside(options.startDirectory)) return stats;

  const startRelative = boundary.relativeOf(options.startDirectory);
  const chained = options.listInsideParents === true && CAN_OPEN_INSIDE_OPEN_DIRECTORY;
  const start = listDirectory(options.startDirectory, stats, chained, isSplit(options) ? (startRelative === '.' ? '' : startRelative) : undefined);
  const stack: DirectoryFrame[] = [
    {
      absolutePath: options.startDirectory,
      relativePath: startRelative === '.' ? '' : startRelative,
      entries: start.entries,
      index: 0,
      ignore: NO_LAYERS,
      fd: start.fd,
    },
  ];
  try {
    options.onDirectory?.(startRelative === '.' ? '' : startRelative, options.startDirectory, start.entries);
    // The start directory's own ignore files are read with its ancestors'.
    stack[0].ignore = ignoreStacksFor(boundary.root, startRelative, cut);
    return await walkFrames(stack, options, visit, cut, stats, chained);
  } finally {
    // A walk that stopped early leaves its frames' descriptors open.
    for (const frame of stack) if (frame.fd !== undefined) fs.closeSync(frame.fd);
  }
}

async function walkFrames(stack: DirectoryFrame[], options: WalkOptions, visit: WalkVisitor, cut: CutIgnoreFiles, stats: WalkStats, chained: boolean): Promise<WalkStats> {
  const { boundary, signal, shouldStop } = options;
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const wanted = options.wanted;
  const wantedName = options.wantedName;
  const separator = path.sep;
  let sliceStarted = performance.now();
  let deadline = options.deadline;
  const shard = options.shard !== undefined && options.shard.of > 1 ? options.shard : undefined;
  const fileShard = options.fileShard !== undefined && options.fileShard.of > 1 ? options.fileShard : undefined;
  const split = isSplit(options);
  let splitFound = false;
  /** Marks a frame just entered (its ignore rules known) as above or at the split, until the split is found. */
  const placeInShard = (frame: DirectoryFrame): void => {
    if (!shard || splitFound) return;
    frame.aboveSplit = true;
    let walkable = 0;
    for (const entry of frame.entries) {
      if (!entry.isDirectory() || ALWAYS_SKIPPED_DIRECTORIES.has(entry.name)) continue;
      const relativePath = joinRelative(frame.relativePath, entry.name);
      if (isIgnored(frame.ignore, relativePath, true) || boundary.denyRules.entryDenialOf(relativePath)) continue;
      if (++walkable >= 2) break;
    }
    if (walkable >= 2) {
      frame.split = true;
      splitFound = true;
    }
  };
  if (stack.length > 0) placeInShard(stack[stack.length - 1]);

  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame.index >= frame.entries.length) {
      stack.pop();
      if (frame.fd !== undefined) fs.closeSync(frame.fd);
      continue;
    }
    const entry = frame.entries[frame.index++];

    stats.entriesVisited += 1;
    if (stats.entriesVisited > maxEntries) {
      stats.stoppedBy = 'entry_limit';
      return stats;
    }
    if ((stats.entriesVisited & 63) === 0) {
      const now = performance.now();
      if (deadline !== undefined && now > deadline) {
        deadline = options.extendDeadline?.({ entriesVisited: stats.entriesVisited, fractionDone: fractionDone(stack) });
        if (deadline === undefined) {
          stats.stoppedBy = 'deadline';
          return stats;
        }
      }
      if (now - sliceStarted > TIME_SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    if (signal?.aborted || shouldStop?.()) {
      stats.stoppedBy = 'aborted';
      return stats;
    }

    const name = entry.name;
    if (wantedName && (entry.isFile() || entry.isSymbolicLink()) && !wantedName(name)) continue;
    const absolutePath = frame.absolutePath.endsWith(separator) ? frame.absolutePath + name : frame.absolutePath + separator + name;
    const relativePath = joinRelative(frame.relativePath, name);
    const type = entryType(entry, absolutePath);
    // At and above the split, files are the first shard's; the others only pass through on their way down. By the
    // entry's type as lstat tells it where the listing gives none: a subdirectory of the split taken for a file
    // here would be entered by the first shard alone, which deals what it holds and keeps only its own share.
    if (shard && frame.aboveSplit && shard.index !== 0 && type !== 'directory') continue;

    if (type === 'directory') {
      if (ALWAYS_SKIPPED_DIRECTORIES.has(name)) continue;
      if (isIgnored(frame.ignore, relativePath, true)) continue;
      if (boundary.denyRules.entryDenialOf(relativePath)) continue;
      // By a hash of the path, not its place in the listing: a directory added meanwhile moves no other. Of the path,
      // for the same names (`src`) recur under every package.
      if (shard && frame.deals && shardOfName(relativePath, shard.of) !== shard.index) continue;
      const listed = listDirectory(absolutePath, stats, chained, split ? relativePath : undefined, frame.fd === undefined ? undefined : { fd: frame.fd, name });
      const entries = listed.entries;
      // On the stack before anything else can throw, so its descriptor is closed however the walk ends.
      const entered: DirectoryFrame = { absolutePath, relativePath, entries, index: 0, ignore: frame.ignore, fd: listed.fd };
      // Dealt one level below the split, not at it: vite's root has six subdirectories and its two largest, nine
      // tenths of the tree, hashed to the same shard, which walked nearly all of it while the other idled.
      if (shard && frame.split) entered.deals = true;
      stack.push(entered);
      options.onDirectory?.(relativePath, absolutePath, entries);
      const names = ignoreFileNames(entries);
      const inherited = isRepositoryRoot(absolutePath, names) ? startRepository(frame.ignore, absolutePath, relativePath, cut) : frame.ignore;
      entered.ignore = withIgnoreFiles(inherited, absolutePath, relativePath, cut, names);
      placeInShard(entered);
      continue;
    }
    if (name === '.git') continue; // a worktree's `.git` pointer file
    if (fileShard && shardOfName(relativePath, fileShard.of) !== fileShard.index) continue;
    // Below the split, files are dealt as its subdirectories' subdirectories are: a split whose subdirectories
    // hold only files (`src/`, `test/`) still gives both shards their share.
    if (shard && frame.deals && shardOfName(relativePath, shard.of) !== shard.index) continue;
    if (type === 'other') continue;
    if (wanted && !wanted(relativePath)) continue;
    if (isIgnored(frame.ignore, relativePath, false)) continue;

    if (type === 'symlink') {
      // Never descend a symlinked directory (loops, escapes); include a
      // symlinked file only when its real path is inside and not denied.
      const resolved = await boundary.resolve(absolutePath);
      if (!resolved.ok || resolved.kind !== 'file') {
        if (!resolved.ok && resolved.kind !== 'not_found') options.onLinkLeftOut?.(relativePath);
        continue;
      }
      if (visit({ relativePath, realPath: resolved.realPath, viaLink: true }) === false) {
        stats.stoppedBy = 'visitor';
        return stats;
      }
      continue;
    }

    const denial = boundary.denyRules.entryDenialOf(relativePath);
    const inDirectory = frame.fd === undefined ? undefined : { fd: frame.fd, name };
    if (visit({ relativePath, realPath: absolutePath, denial, inDirectory }) === false) {
      stats.stoppedBy = 'visitor';
      return stats;
    }
  }
  return stats;
}

/** Which of `of` shards takes a name or a path (a directory of a split walk, a file of a split grep): FNV-1a of it. */
export function shardOfName(name: string, of: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % of;
}

/**
 * Weighs each directory by its subdirectories, not its entries: a root with
 * three files and `packages/` is not three quarters done when the walk
 * enters `packages/` (that estimate walked a whole 100,000-file tree).
 */
function fractionDone(stack: readonly DirectoryFrame[]): number {
  let done = 0;
  let weight = 1;
  for (let level = 0; level < stack.length; level++) {
    const frame = stack[level];
    let directories = 0;
    let before = 0;
    // The entry at index - 1 is the one being walked below (if this is not the deepest frame).
    const current = level < stack.length - 1 ? frame.index - 1 : frame.index;
    for (let i = 0; i < frame.entries.length; i++) {
      if (!frame.entries[i].isDirectory()) continue;
      directories += 1;
      if (i < current) before += 1;
    }
    if (directories === 0) {
      done += (weight * frame.index) / Math.max(1, frame.entries.length);
      break;
    }
    done += (weight * before) / directories;
    weight /= directories;
  }
  return Math.min(1, done);
}

/**
 * What the walk would do with one file path, decided alone: the entry it
 * would visit, or undefined when it would leave the path out (an ancestor
 * skipped, ignored or denied; the file ignored, gone, not a file, or a link
 * leading outside). The warm file index (fileIndex.ts) uses it for a file
 * that appeared, so one new file costs its ancestors' ignore files, not a walk.
 */
export async function walkVerdict(boundary: ReadBoundary, relativePath: string, cut: CutIgnoreFiles = new Set()): Promise<WalkFile | undefined> {
  const segments = relativePath.split('/');
  if (segments[segments.length - 1] === '.git') return undefined;
  const stacks = stacksInside(boundary, segments.slice(0, -1), cut);
  if (!stacks || !validSegments(segments)) return undefined;
  const absolutePath = path.join(boundary.root, ...segments);
  // Looked up in its directory proved inside: its ancestors were checked by path a moment ago, and a directory
  // swapped for a link since made an outside file look like this one.
  const entry = lstatVerifiedEntrySync(path.join(boundary.root, ...segments.slice(0, -1)), segments[segments.length - 1]);
  if (!entry.ok) return undefined;
  const stats = entry.stats;
  if (!stats.isFile() && !stats.isSymbolicLink()) return undefined;
  if (isIgnored(stacks, relativePath, false)) return undefined;
  if (stats.isSymbolicLink()) {
    const resolved = await boundary.resolve(absolutePath);
    return resolved.ok && resolved.kind === 'file' ? { relativePath, realPath: resolved.realPath } : undefined;
  }
  return { relativePath, realPath: absolutePath, denial: boundary.denyRules.entryDenialOf(relativePath) };
}

/**
 * walkVerdict for many paths of one folder: each directory's ignore layers
 * are worked out once. For checking what ripgrep listed under an include
 * glob, which (as ripgrep's `-g` does) beats ignore rules for files.
 * `scope`: the root-relative directory searched, entered as the walk from it
 * enters it, whatever the rules say of it.
 */
export function walkVerdicts(boundary: ReadBoundary, cut: CutIgnoreFiles = new Set(), ruleNamesIn?: RuleNamesIn, scope = ''): (relativePath: string) => boolean {
  const directories = new Map<string, IgnoreStacks | null>();
  // The search's own directory and those above it are entered whatever the ignore rules say of them, and whatever
  // their names, as the walk from there enters them (ignoreStacksFor); never a denied one.
  const searched = scope === '.' ? '' : scope;
  const inside = (directory: string): IgnoreStacks | null => {
    const known = directories.get(directory);
    if (known !== undefined) return known;
    let stacks: IgnoreStacks | null;
    const names = ruleNamesIn?.(directory);
    if (directory === '') {
      stacks = isRepositoryRoot(boundary.root, names) ? startRepository(NO_LAYERS, boundary.root, '', cut) : NO_LAYERS;
      stacks = withIgnoreFiles(stacks, boundary.root, '', cut, names);
    } else {
      const slash = directory.lastIndexOf('/');
      const parent = inside(slash === -1 ? '' : directory.slice(0, slash));
      const name = directory.slice(slash + 1);
      const absolute = path.join(boundary.root, directory);
      stacks = null;
      const entered = (layers: IgnoreStacks): boolean =>
        (isWithin(searched, directory) || (!ALWAYS_SKIPPED_DIRECTORIES.has(name) && !isIgnored(layers, directory, true))) && !boundary.denyRules.entryDenialOf(directory);
      if (parent && name !== '.' && name !== '..' && entered(parent)) {
        const inherited = isRepositoryRoot(absolute, names) ? startRepository(parent, absolute, directory, cut) : parent;
        stacks = withIgnoreFiles(inherited, absolute, directory, cut, names);
      }
    }
    directories.set(directory, stacks);
    return stacks;
  };
  return (relativePath) => {
    const slash = relativePath.lastIndexOf('/');
    const stacks = inside(slash === -1 ? '' : relativePath.slice(0, slash));
    return stacks !== null && !isIgnored(stacks, relativePath, false);
  };
}

/** Whether the walk would enter this root-relative directory ('' is the root). */
export function isWalkedDirectory(boundary: ReadBoundary, relativeDirectory: string): boolean {
  const segments = relativeDirectory === '' || relativeDirectory === '.' ? [] : relativeDirectory.split('/');
  return validSegments(segments) && stacksInside(boundary, segments, new Set()) !== undefined;
}

function validSegments(segments: readonly string[]): boolean {
  return segments.every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/**
 * The ignore layers in force inside the directory `segments` names, checking
 * on the way down that the walk would enter each directory; undefined if not.
 */
function stacksInside(boundary: ReadBoundary, segments: readonly string[], cut: CutIgnoreFiles): IgnoreStacks | undefined {
  if (!validSegments(segments)) return undefined;
  let stacks = NO_LAYERS;
  let directoryRelative = '';
  for (let depth = 0; depth <= segments.length; depth++) {
    const directoryAbsolute = depth === 0 ? boundary.root : path.join(boundary.root, ...segments.slice(0, depth));
    if (depth > 0) {
      directoryRelative = joinRelative(directoryRelative, segments[depth - 1]);
      if (ALWAYS_SKIPPED_DIRECTORIES.has(segments[depth - 1])) return undefined;
      if (isIgnored(stacks, directoryRelative, true)) return undefined;
      if (boundary.denyRules.entryDenialOf(directoryRelative)) return undefined;
      try {
        if (!fs.lstatSync(directoryAbsolute).isDirectory()) return undefined;
      } catch {
        return undefined;
      }
    }
    if (isRepositoryRoot(directoryAbsolute)) stacks = startRepository(stacks, directoryAbsolute, directoryRelative, cut);
    stacks = withIgnoreFiles(stacks, directoryAbsolute, directoryRelative, cut);
  }
  return stacks;
}

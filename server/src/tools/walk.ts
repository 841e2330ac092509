import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import ignore from 'ignore';
import { ReadBoundary } from './boundary';
import { ReadDenial } from './secrets';

/**
 * A bounded, sorted, depth-first walk of the files under one directory inside
 * the read boundary. It honors .gitignore files at every level, skips
 * node_modules/ and .git/, and never follows a symlink out of the root.
 *
 * File system calls are synchronous (much faster than the promise API for the
 * many small calls a walk makes) but the walk yields to the event loop every
 * few milliseconds so cancellation and other requests stay responsive.
 */

type Ignore = ReturnType<typeof ignore>;

/** Directory names never descended into by find, grep or the summary. */
const ALWAYS_SKIPPED_DIRECTORIES = new Set(['node_modules', '.git']);
/** A .gitignore bigger than this is ignored rather than parsed (it is not a real one). */
const MAX_GITIGNORE_BYTES = 1024 * 1024;
/** How long the walk may hold the event loop before yielding. */
const TIME_SLICE_MS = 8;

export interface WalkFile {
  /** Root-relative, `/`-separated path as found in the tree (a symlink's own path, not its target). */
  relativePath: string;
  /** Real path to read from: always inside the root. */
  realPath: string;
  /** Set when the file's contents may not be shown (secret or policy); names may still be listed. */
  denial?: ReadDenial;
}

export interface WalkOptions {
  boundary: ReadBoundary;
  /** Real path of the directory to walk (from `boundary.resolve`). */
  startDirectory: string;
  signal?: AbortSignal;
  /** Stop after visiting this many directory entries (files and directories). */
  maxEntries?: number;
  /** Stop once `performance.now()` passes this. */
  deadline?: number;
}

export interface WalkStats {
  entriesVisited: number;
  /** Why the walk ended before covering everything, if it did. */
  stoppedBy?: 'entry_limit' | 'deadline' | 'aborted' | 'visitor';
}

/** Return `false` to stop the walk. */
export type WalkVisitor = (file: WalkFile) => boolean | void;

interface IgnoreLayer {
  /** Root-relative directory the .gitignore sits in ('' for the root). */
  base: string;
  rules: Ignore;
}

interface DirectoryFrame {
  absolutePath: string;
  relativePath: string;
  entries: fs.Dirent[];
  index: number;
  ignoreLayers: IgnoreLayer[];
}

function joinRelative(parent: string, name: string): string {
  return parent === '' || parent === '.' ? name : `${parent}/${name}`;
}

function readIgnoreFile(filePath: string): string | undefined {
  try {
    const stats = fs.statSync(filePath);
    if (!stats.isFile() || stats.size > MAX_GITIGNORE_BYTES) return undefined;
    return fs.readFileSync(filePath, 'utf8');
  } catch {
    return undefined;
  }
}

function newIgnoreRules(): Ignore {
  // Git matches case-sensitively unless the file system is case-insensitive.
  return ignore({ ignorecase: process.platform === 'win32' || process.platform === 'darwin' });
}

/** Adds the .gitignore of `directoryAbsolute` (if any) as the deepest layer. */
function withIgnoreFile(layers: IgnoreLayer[], directoryAbsolute: string, directoryRelative: string): IgnoreLayer[] {
  const text = readIgnoreFile(path.join(directoryAbsolute, '.gitignore'));
  if (text === undefined) return layers;
  return [...layers, { base: directoryRelative, rules: newIgnoreRules().add(text) }];
}

/**
 * Git precedence: the deepest .gitignore that has an opinion wins, so a
 * nested `!keep.log` re-includes what the root ignored.
 */
function isIgnored(layers: IgnoreLayer[], relativePath: string, isDirectory: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i];
    const local = layer.base === '' ? relativePath : relativePath.slice(layer.base.length + 1);
    try {
      const result = layer.rules.test(isDirectory ? `${local}/` : local);
      if (result.ignored) return true;
      if (result.unignored) return false;
    } catch {
      // `ignore` rejects odd names such as `...`; treat them as not ignored.
    }
  }
  return false;
}

/** The ignore layers in force at `startRelative`: .git/info/exclude, then each ancestor's .gitignore. */
function ignoreLayersFor(root: string, startRelative: string): IgnoreLayer[] {
  let layers: IgnoreLayer[] = [];
  const exclude = readIgnoreFile(path.join(root, '.git', 'info', 'exclude'));
  if (exclude !== undefined) layers.push({ base: '', rules: newIgnoreRules().add(exclude) });
  layers = withIgnoreFile(layers, root, '');
  if (startRelative === '.' || startRelative === '') return layers;
  let relative = '';
  for (const segment of startRelative.split('/')) {
    relative = joinRelative(relative, segment);
    layers = withIgnoreFile(layers, path.join(root, ...relative.split('/')), relative);
  }
  return layers;
}

function readSortedEntries(directory: string): fs.Dirent[] {
  try {
    const entries = fs.readdirSync(directory, { withFileTypes: true });
    // Code-unit order: stable across locales, so results are reproducible.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return entries;
  } catch {
    return []; // unreadable directory: nothing to show
  }
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
  const { boundary, signal } = options;
  const maxEntries = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const stats: WalkStats = { entriesVisited: 0 };
  if (!boundary.isInside(options.startDirectory)) return stats;

  const startRelative = boundary.relativeOf(options.startDirectory);
  const rootLayers = ignoreLayersFor(boundary.root, startRelative);
  const stack: DirectoryFrame[] = [
    {
      absolutePath: options.startDirectory,
      relativePath: startRelative === '.' ? '' : startRelative,
      entries: readSortedEntries(options.startDirectory),
      index: 0,
      ignoreLayers: rootLayers,
    },
  ];
  let sliceStarted = performance.now();

  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame.index >= frame.entries.length) {
      stack.pop();
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
      if (options.deadline !== undefined && now > options.deadline) {
        stats.stoppedBy = 'deadline';
        return stats;
      }
      if (now - sliceStarted > TIME_SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStarted = performance.now();
      }
    }
    if (signal?.aborted) {
      stats.stoppedBy = 'aborted';
      return stats;
    }

    const name = entry.name;
    const absolutePath = path.join(frame.absolutePath, name);
    const relativePath = joinRelative(frame.relativePath, name);
    const type = entryType(entry, absolutePath);

    if (type === 'directory') {
      if (ALWAYS_SKIPPED_DIRECTORIES.has(name)) continue;
      if (isIgnored(frame.ignoreLayers, relativePath, true)) continue;
      if (boundary.denyRules.entryDenialOf(relativePath)) continue;
      stack.push({
        absolutePath,
        relativePath,
        entries: readSortedEntries(absolutePath),
        index: 0,
        ignoreLayers: withIgnoreFile(frame.ignoreLayers, absolutePath, relativePath),
      });
      continue;
    }
    if (name === '.git') continue; // a worktree's `.git` pointer file
    if (type === 'other') continue;
    if (isIgnored(frame.ignoreLayers, relativePath, false)) continue;

    if (type === 'symlink') {
      // Never descend a symlinked directory (loops, escapes); include a
      // symlinked file only when its real path is inside and not denied.
      const resolved = await boundary.resolve(absolutePath);
      if (!resolved.ok || resolved.kind !== 'file') continue;
      if (visit({ relativePath, realPath: resolved.realPath }) === false) {
        stats.stoppedBy = 'visitor';
        return stats;
      }
      continue;
    }

    const denial = boundary.denyRules.entryDenialOf(relativePath);
    if (visit({ relativePath, realPath: absolutePath, denial }) === false) {
      stats.stoppedBy = 'visitor';
      return stats;
    }
  }
  return stats;
}

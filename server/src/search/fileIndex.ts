import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReadBoundary } from '../access/boundary';
import { CutIgnoreFiles, IGNORE_FILE_NAMES, isWalkedDirectory, walkFiles, walkOrderKey, walkVerdict } from './walk';

/**
 * A warm per-folder file index, kept in the search thread that owns the
 * folder (searchPool.ts routes the folder's jobs there): every file the walk
 * would visit, in walk order, with its ignore and deny decisions already
 * taken, so find_files answers without listing the tree and grep_files reads
 * candidates without walking it. A file watcher keeps it fresh: its events
 * are only queued when they arrive and applied by the next search that uses
 * the index, in this thread. The watcher itself is subscribed on the main
 * thread (searchPool.ts), which only forwards each batch's paths here: a
 * native subscription must not live in a thread the pool may end at any
 * moment (ending one mid-call aborts the whole process).
 *
 * Decisions are the walk's own (walkFiles, walkVerdict). A changed ignore
 * file or `.git` entry re-walks the directory it governs; a policy change
 * gives the folder a new deny list, hence a new index. When watching is not
 * possible (the module does not load, subscribing fails, the watcher reports
 * an error such as too many watches) the folder has no index and searches
 * take the cold path.
 */

export const FILE_INDEX_LIMITS = Object.freeze({
  /** A folder with more entries than this is not indexed (the walk's own cap). */
  maxEntries: 1_000_000,
  /** Queued changed paths past which the next use rebuilds instead of patching. */
  maxPendingPaths: 10_000,
  /** An index unused this long is dropped and its watcher stopped. */
  idleMs: 10 * 60_000,
  /** Folders indexed at once in one thread; the least recently used goes first. */
  maxFolders: 8,
});

export interface IndexedFile {
  relativePath: string;
  realPath: string;
  denied: boolean;
  /** walkOrderKey(relativePath), kept for merging. */
  key: string;
}


type IndexState = 'building' | 'ready' | 'unavailable';


class FolderIndex {
  state: IndexState = 'building';
  files: IndexedFile[] = [];
  cutIgnoreFiles: string[] = [];
  lastUsed = Date.now();
  private pending = new Set<string>();
  private rebuildAll = false;
  private disposed = false;
  readonly built: Promise<void>;

  constructor(readonly boundary: ReadBoundary) {
    this.built = this.build();
  }

  private async build(): Promise<void> {
    // The folder is already watched (the pool subscribes first): a change made during the walk is queued, not lost.
    const files = await this.walk('');
    if (!files || this.disposed) return this.fail();
    this.files = files;
    this.state = 'ready';
  }

  fail(): void {
    this.state = 'unavailable';
    this.files = [];
    this.dispose();
  }

  /** Queues the paths of one batch of watcher events (absolute paths under the root). */
  addEvents(paths: readonly string[]): void {
    if (this.disposed) return;
    for (const eventPath of paths) {
      const relative = path.relative(this.boundary.root, eventPath).split(path.sep).join('/');
      if (relative === '') this.rebuildAll = true;
      else if (!relative.startsWith('..') && !path.isAbsolute(relative)) this.pending.add(relative);
    }
    if (this.pending.size > FILE_INDEX_LIMITS.maxPendingPaths) this.rebuildAll = true;
  }

  /** The walk's files under a root-relative directory, or undefined if the walk stopped at its cap. */
  private async walk(relativeDirectory: string): Promise<IndexedFile[] | undefined> {
    const files: IndexedFile[] = [];
    const startDirectory = relativeDirectory === '' ? this.boundary.root : path.join(this.boundary.root, relativeDirectory);
    const stats = await walkFiles({ boundary: this.boundary, startDirectory, maxEntries: FILE_INDEX_LIMITS.maxEntries, shouldStop: () => this.disposed }, (file) => {
      files.push({ relativePath: file.relativePath, realPath: file.realPath, denied: file.denial !== undefined, key: walkOrderKey(file.relativePath) });
    });
    if (stats.stoppedBy !== undefined) return undefined;
    if (relativeDirectory === '') this.cutIgnoreFiles = stats.cutIgnoreFiles;
    else for (const cut of stats.cutIgnoreFiles) if (!this.cutIgnoreFiles.includes(cut)) this.cutIgnoreFiles.push(cut);
    return files;
  }

  /** Applies the queued changes. False: the index could not be brought up to date (the caller goes cold). */
  async refresh(): Promise<boolean> {
    this.lastUsed = Date.now();
    if (this.state !== 'ready') return false;
    if (this.rebuildAll) {
      this.rebuildAll = false;
      this.pending.clear();
      const files = await this.walk('');
      if (!files) {
        this.fail();
        return false;
      }
      this.files = files;
      return this.state === 'ready';
    }
    if (this.pending.size === 0) return true;
    const changed = [...this.pending];
    this.pending.clear();
    // Directories to walk again: where an ignore file or `.git` changed, or a directory appeared.
    const rewalk = new Set<string>();
    const single: string[] = [];
    for (const relative of changed) {
      const segments = relative.split('/');
      const gitAt = segments.indexOf('.git');
      if (gitAt !== -1) {
        // `.git` itself (a nested repository appeared or went) or its info/exclude: rules changed there.
        const rest = segments.slice(gitAt + 1).join('/');
        if (rest === '' || rest === 'info' || rest === 'info/exclude') rewalk.add(segments.slice(0, gitAt).join('/'));
        continue;
      }
      if (segments.includes('node_modules')) continue;
      const name = segments[segments.length - 1];
      if ((IGNORE_FILE_NAMES as readonly string[]).includes(name)) {
        rewalk.add(segments.slice(0, -1).join('/'));
        continue;
      }
      let isDirectory = false;
      try {
        isDirectory = fs.lstatSync(path.join(this.boundary.root, relative)).isDirectory();
      } catch {
        // gone: removed below
      }
      if (isDirectory) rewalk.add(relative);
      else single.push(relative);
    }
    // A directory inside another one walked again is covered by it.
    const directories = [...rewalk].filter((directory) => ![...rewalk].some((other) => other !== directory && (other === '' || directory.startsWith(`${other}/`))));
    if (directories.includes('')) {
      this.rebuildAll = true;
      return this.refresh();
    }
    const removed = (relativePath: string): boolean =>
      directories.some((directory) => relativePath.startsWith(`${directory}/`)) || single.some((changedPath) => relativePath === changedPath || relativePath.startsWith(`${changedPath}/`));
    const kept = this.files.filter((file) => !removed(file.relativePath));
    const added: IndexedFile[] = [];
    const cut: CutIgnoreFiles = new Set();
    for (const directory of directories) {
      if (!isWalkedDirectory(this.boundary, directory)) continue;
      const files = await this.walk(directory);
      if (!files) {
        this.fail();
        return false;
      }
      added.push(...files);
    }
    for (const relativePath of single) {
      if (directories.some((directory) => relativePath.startsWith(`${directory}/`))) continue;
      const file = await walkVerdict(this.boundary, relativePath, cut);
      if (file) added.push({ relativePath, realPath: file.realPath, denied: file.denial !== undefined, key: walkOrderKey(relativePath) });
    }
    for (const filePath of cut) {
      const relative = this.boundary.relativeOf(filePath);
      if (!this.cutIgnoreFiles.includes(relative)) this.cutIgnoreFiles.push(relative);
    }
    this.files = mergeInWalkOrder(kept, added);
    return this.state === 'ready';
  }

  dispose(): void {
    this.disposed = true;
  }
}

function mergeInWalkOrder(kept: IndexedFile[], added: IndexedFile[]): IndexedFile[] {
  if (added.length === 0) return kept;
  added.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const merged: IndexedFile[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length || j < added.length) {
    if (j >= added.length || (i < kept.length && kept[i].key <= added[j].key)) {
      if (j < added.length && kept[i].key === added[j].key) i++; // the new verdict replaces the old
      else merged.push(kept[i++]);
    } else {
      merged.push(added[j++]);
    }
  }
  return merged;
}

/** The indexes of one search thread, by folder and deny list. */
export class FileIndexes {
  private readonly folders = new Map<string, FolderIndex>();
  private readonly sweep: NodeJS.Timeout;

  constructor() {
    this.sweep = setInterval(() => this.dropIdle(), 60_000);
    this.sweep.unref();
  }

  /**
   * The folder's index, up to date with every change the watcher has
   * reported, or undefined when there is none (yet): the caller searches
   * cold. The first call starts building it.
   */
  async current(key: string, boundary: ReadBoundary): Promise<FolderIndex | undefined> {
    let index = this.folders.get(key);
    if (!index) {
      index = new FolderIndex(boundary);
      this.folders.set(key, index);
      this.trim();
      return undefined;
    }
    if (index.state === 'unavailable') return undefined;
    return (await index.refresh()) ? index : undefined;
  }

  /** Builds the folder's index now and waits for it: whether it is usable. */
  async prepare(key: string, boundary: ReadBoundary): Promise<boolean> {
    let index = this.folders.get(key);
    if (!index) {
      index = new FolderIndex(boundary);
      this.folders.set(key, index);
      this.trim();
    }
    await index.built;
    return (await this.current(key, boundary)) !== undefined;
  }

  private trim(): void {
    while (this.folders.size > FILE_INDEX_LIMITS.maxFolders) {
      const oldest = [...this.folders.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      this.folders.delete(oldest[0]);
      oldest[1].dispose();
    }
  }

  private dropIdle(): void {
    const now = Date.now();
    for (const [key, index] of this.folders) {
      if (now - index.lastUsed > FILE_INDEX_LIMITS.idleMs) {
        this.folders.delete(key);
        index.dispose();
      }
    }
  }

  /** A batch of watcher events for the folder `root` (absolute paths), or `undefined`: its watcher failed. */
  onEvents(root: string, paths: readonly string[] | undefined): void {
    for (const index of this.folders.values()) {
      if (index.boundary.root !== root) continue;
      if (paths) index.addEvents(paths);
      else index.fail(); // the watcher can no longer be trusted to report every change
    }
  }

  /** Drops the folder's indexes: it is no longer watched. */
  forget(root: string): void {
    for (const [key, index] of this.folders) {
      if (index.boundary.root !== root) continue;
      this.folders.delete(key);
      index.dispose();
    }
  }
}

export type { FolderIndex };

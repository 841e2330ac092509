import * as path from 'node:path';
import { toPosix } from '../access/boundary';
import { relativeStaysInside } from '../../../shared/pathContainment';
import { IGNORE_FILE_NAMES } from '../search/ignoreRules';
import { ALWAYS_SKIPPED_DIRECTORIES } from '../search/walk';

/**
 * What a client's file watcher reports (LSP `workspace/didChangeWatchedFiles`),
 * and which folders it covers. A watched folder's symbol index is kept fresh
 * by these reports instead of walking and stating the whole folder before a
 * query (about 300 ms at 20,000 files). A report is only a hint of what to
 * look at again: every path it names is resolved through the read boundary
 * before anything is read, so a report cannot widen what is readable.
 */

export type FileChangeKind = 'created' | 'changed' | 'deleted';

export interface FileChange {
  /** Absolute path, as the client's watcher saw it. */
  path: string;
  kind: FileChangeKind;
}

export interface WatchedFolder {
  /** The folder as the client names it. */
  path: string;
  /** Its real path, which the indexes are keyed by. */
  realPath: string;
  /**
   * The watcher reports every change the walk could see in it: false when the
   * user's `files.watcherExclude` hides paths the walk visits (VS Code's
   * watcher reports nothing there), so the folder is walked as if unwatched.
   */
  complete: boolean;
}

/**
 * `files.watcherExclude` patterns that hide only what the walk never visits
 * (inside `.git/` other than `info/`, `node_modules/`, `.hg/`): VS Code's
 * defaults among them. Any other pattern set makes the folder's reports
 * incomplete.
 */
const HARMLESS_WATCHER_EXCLUDES: ReadonlySet<string> = new Set([
  '**/.git/objects/**',
  '**/.git/subtree-cache/**',
  '**/.hg/store/**',
  '**/node_modules/*/**',
  '**/node_modules/**',
  '**/node_modules',
]);

/** Whether a folder with these `files.watcherExclude` settings gets a report of every change the walk could see. */
export function watcherReportsEverything(watcherExclude: Record<string, unknown> | undefined): boolean {
  return Object.entries(watcherExclude ?? {}).every(([pattern, on]) => on !== true || HARMLESS_WATCHER_EXCLUDES.has(pattern));
}

/**
 * What a reported change means for an index of `root`:
 * - `none`: nothing the walk visits (outside the folder, in `node_modules/`, inside `.git/`);
 * - `walk`: what the walk decides may have changed (an ignore file, `.git`, `.git/info`, the folder itself);
 * - `file`: a path to look at again, known to the index or not (the symbol worker sorts it out).
 */
export type ChangeEffect = { effect: 'none' } | { effect: 'walk' } | { effect: 'file'; relativePath: string };

export function effectOfChange(root: string, changedPath: string): ChangeEffect {
  const relative = path.relative(root, path.resolve(changedPath));
  if (relative === '') return { effect: 'walk' };
  if (!relativeStaysInside(relative)) return { effect: 'none' };
  const relativePath = toPosix(relative);
  const segments = relativePath.split('/');
  const git = segments.indexOf('.git');
  if (git !== -1) {
    // The `.git` entry itself marks a nested repository, whose ignore rules start afresh; `info/exclude` holds rules.
    if (git === segments.length - 1 || segments[git + 1] === 'info') return { effect: 'walk' };
    return { effect: 'none' };
  }
  if (segments.some((segment) => ALWAYS_SKIPPED_DIRECTORIES.has(segment))) return { effect: 'none' };
  if ((IGNORE_FILE_NAMES as readonly string[]).includes(segments[segments.length - 1])) return { effect: 'walk' };
  return { effect: 'file', relativePath };
}

/** The real-path form of a reported path under one of `folders`, or the path itself. */
export function asRealPath(folders: readonly WatchedFolder[], changedPath: string): string {
  const absolute = path.resolve(changedPath);
  for (const folder of folders) {
    const relative = path.relative(folder.path, absolute);
    if (relativeStaysInside(relative)) return path.join(folder.realPath, relative);
  }
  return absolute;
}

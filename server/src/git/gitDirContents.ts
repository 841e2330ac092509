import * as fs from 'node:fs';
import * as path from 'node:path';
import { readHead } from '../access/boundary';

/**
 * Reading and walking a git directory the folder supplies, without trusting
 * what is in it. gitDirOwnership checks where `.git`, `commondir` and the
 * alternates lead; this module covers what they hold:
 *
 *  - pointer files (`.git`, `commondir`, `gitdir`, `objects/info/alternates`)
 *    are opened non-blocking and judged by the opened handle: a FIFO there
 *    held a threadpool thread in open(2) for good (four such calls stopped
 *    every file read of the server), and a link to /dev/zero was read
 *    without end;
 *  - the git directory's tree is walked for links: `objects` or `refs`
 *    linked to another repository's showed its commits and files, and
 *    `packed-refs` linked to a secret had git quote it in an error.
 */

/** A pointer file is one line; an alternates file a few. Anything longer is not what git wrote. */
export const POINTER_FILE_MAX_BYTES = 64 * 1024;

const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);

/** `missing` as git sees it (absent or unopenable: git ignores it too); `refused`: opened, but not a small regular file. */
export type SmallFile = { kind: 'text'; text: string } | { kind: 'missing' } | { kind: 'refused' };

export async function readSmallFile(file: string, maxBytes: number = POINTER_FILE_MAX_BYTES): Promise<SmallFile> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, READ_FLAGS);
  } catch {
    return { kind: 'missing' };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > maxBytes) return { kind: 'refused' };
    // One byte more than allowed: a file grown since the fstat is caught too.
    const head = await readHead(handle, maxBytes + 1);
    if (head.length > maxBytes) return { kind: 'refused' };
    return { kind: 'text', text: head.toString('utf8') };
  } catch {
    return { kind: 'refused' };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** What one directory held when it was last listed, kept while its stat identity is unchanged. */
interface Listing {
  dev: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  directories: string[];
  links: string[];
}

/**
 * Listings by real path. Adding, removing or replacing an entry changes the
 * directory's mtime and ctime (and ctime cannot be set back), so a listing
 * whose directory stats the same still names every link and subdirectory:
 * a call on an unchanged repository lstats each directory once and reads
 * none. A listing is kept only once its directory has been still for a
 * while (settledMs), so a change in the same timestamp tick as the listing
 * (coarse file-system clocks) cannot hide behind an equal stat.
 */
const listings = new Map<string, Listing>();
const LISTINGS_MAX = 20_000;
/** How long a directory must have been still before its listing is kept (tests lower it to run on the cache). */
export const LISTING_CACHE = { settledMs: 3_000 };

function sameIdentity(stats: fs.Stats, listing: Listing): boolean {
  return stats.dev === listing.dev && stats.ino === listing.ino && stats.mtimeMs === listing.mtimeMs && stats.ctimeMs === listing.ctimeMs;
}

/** What git would open but must not: a FIFO holds its read until the timeout, a device never ends. */
const isSpecial = (entry: fs.Dirent | fs.Stats) => entry.isFIFO() || entry.isCharacterDevice() || entry.isBlockDevice();

/** What stops a check: an entry that leads where git may not go, or (`cancelled`) the call's own end. */
export type Escape = { kind: 'link' | 'special' | 'unreadable' | 'tooLarge' | 'cancelled'; path: string };

type Listed = { ok: true; listing: Listing } | { ok: false; escape: Escape };

async function list(directory: string): Promise<Listed> {
  const before = Date.now();
  let stats: fs.Stats;
  try {
    stats = await fs.promises.lstat(directory);
  } catch {
    return { ok: false, escape: { kind: 'unreadable', path: directory } };
  }
  if (!stats.isDirectory()) return { ok: false, escape: { kind: 'unreadable', path: directory } };
  const known = listings.get(directory);
  if (known && sameIdentity(stats, known)) return { ok: true, listing: known };
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(directory, { withFileTypes: true });
  } catch {
    // git cannot list it either, but may still open names inside it: nothing here vouches for them.
    return { ok: false, escape: { kind: 'unreadable', path: directory } };
  }
  const listing: Listing = { dev: stats.dev, ino: stats.ino, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, directories: [], links: [] };
  for (const entry of entries) {
    if (entry.isDirectory()) listing.directories.push(entry.name);
    else if (entry.isSymbolicLink()) listing.links.push(entry.name);
    else if (isSpecial(entry)) return { ok: false, escape: { kind: 'special', path: path.join(directory, entry.name) } };
  }
  if (Math.max(stats.mtimeMs, stats.ctimeMs) < before - LISTING_CACHE.settledMs) {
    if (listings.size >= LISTINGS_MAX) listings.clear();
    listings.set(directory, listing);
  } else {
    listings.delete(directory);
  }
  return { ok: true, listing };
}

/**
 * A directory to walk; `descend`, when given, names the only subdirectories
 * (or links to them) walked into; `unread` names entries not looked at.
 */
export interface WalkRoot {
  path: string;
  descend?: ReadonlySet<string>;
  unread?: ReadonlySet<string>;
}

/**
 * Entries of a git directory git never reads for the tools' commands, so not
 * looked at: hooks are never run here (gitRunner.ts), and a `hooks` linked to
 * a shared folder, a common setup, turned the tools off.
 */
export const GIT_UNREAD = new Set(['hooks']);

/**
 * The most directories one check walks. Far above a large repository's (256
 * object fan-out directories and its refs'), it bounds a hostile one: an
 * alternates line of `../..` made the whole work tree a store, walked on
 * every call.
 */
export const GIT_WALK_LIMITS = { maxDirectories: 50_000 };

const LISTED_AT_ONCE = 64;

/**
 * The subdirectories of a git directory that git reads for the tools'
 * commands (object stores, refs and reflogs, info/, other worktrees' refs,
 * reftable). Others (hooks/, modules/, lfs/ with its own large fan-out, the
 * rebase and rerere state) are only checked as entries: walking them would
 * cost a stat per directory on every call for nothing git opens.
 */
export const GIT_READS = new Set(['objects', 'refs', 'logs', 'info', 'worktrees', 'reftable']);

/**
 * The first entry under `roots` (real paths of directories) that git could
 * follow somewhere `mayLead` refuses: a link whose real path it refuses or
 * that does not resolve, a FIFO or device, or a directory that cannot be
 * listed. Links that stay allowed are followed, and what they lead to is
 * walked as well. Directories are walked level by level, each level's
 * lstats issued together.
 */
export async function findEscape(roots: readonly WalkRoot[], mayLead: (realPath: string) => boolean, signal?: AbortSignal): Promise<Escape | undefined> {
  const visited = new Set<string>();
  const unvisited = (directory: WalkRoot) => {
    if (visited.has(directory.path)) return false;
    visited.add(directory.path);
    return true;
  };
  let level = roots.filter(unvisited);
  let walked = 0;
  while (level.length > 0) {
    walked += level.length;
    if (walked > GIT_WALK_LIMITS.maxDirectories) return { kind: 'tooLarge', path: level[0].path };
    // In batches: a level of thousands of directories at once queued as many requests on the thread pool every other file read waits on.
    const listed: Listed[] = [];
    for (let at = 0; at < level.length; at += LISTED_AT_ONCE) {
      // A cancelled call stops here: a walk of 50,000 directories went on for seconds after its turn had ended.
      if (signal?.aborted) return { kind: 'cancelled', path: level[at].path };
      listed.push(...(await Promise.all(level.slice(at, at + LISTED_AT_ONCE).map((directory) => list(directory.path)))));
    }
    const next: WalkRoot[] = [];
    const links: Array<{ path: string; walked: boolean }> = [];
    for (let i = 0; i < level.length; i++) {
      const result = listed[i];
      if (!result.ok) return result.escape;
      const descends = (name: string) => level[i].descend?.has(name) ?? true;
      const unread = (name: string) => level[i].unread?.has(name) ?? false;
      for (const name of result.listing.directories) if (descends(name) && !unread(name)) next.push({ path: path.join(level[i].path, name) });
      for (const name of result.listing.links) if (!unread(name)) links.push({ path: path.join(level[i].path, name), walked: descends(name) });
    }
    // A link is resolved on every call, never taken from a listing: a link above its target can change without touching this directory.
    const targets = await Promise.all(links.map((link) => followLink(link.path)));
    for (let i = 0; i < links.length; i++) {
      const target = targets[i];
      if (!target || !mayLead(target.real)) return { kind: 'link', path: links[i].path };
      if (isSpecial(target.stats)) return { kind: 'special', path: links[i].path };
      if (target.stats.isDirectory() && links[i].walked) next.push({ path: target.real });
    }
    level = next.filter(unvisited);
  }
  return undefined;
}

async function followLink(link: string): Promise<{ real: string; stats: fs.Stats } | undefined> {
  try {
    const real = await fs.promises.realpath(link);
    return { real, stats: await fs.promises.lstat(real) };
  } catch {
    // Dangling, a loop or unreadable: where it would lead cannot be told, so it is not let through.
    return undefined;
  }
}

import * as fs from 'node:fs';

/**
 * What the warm file index (fileIndex.ts) remembers of a directory to know,
 * at the next search, whether the directory may have changed since it was
 * listed: its identity and change times, as git's untracked cache does. A
 * stat is synchronous with the file system, so a change made before a search
 * was asked for is always seen by that search; a watcher's events arrive a
 * moment later (@parcel/watcher batches them for 50 ms), and a search made in
 * that moment was answered from before the change.
 */

export interface Stamp {
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  size: bigint;
  /** The entry is a directory (a directory's stamp), else a file or other. */
  directory: boolean;
}

/**
 * File times come from a clock that only moves once per kernel tick (1 to
 * 10 ms): a second change in the tick of the stamp leaves it as it was. A
 * stamp this close to the time it was taken is "racy" (git's word) and its
 * entry is looked at again next time, whatever the stamp says.
 */
export const RACY_WINDOW_NS = 50_000_000n;

/** The entry's stamp (links not followed), or undefined when it is gone or unreadable. */
export function stampOf(absolutePath: string): Stamp | undefined {
  let stats: fs.BigIntStats | undefined;
  try {
    stats = fs.lstatSync(absolutePath, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (!stats) return undefined;
  return { ino: stats.ino, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, size: stats.size, directory: stats.isDirectory() };
}

export function sameStamp(a: Stamp | undefined, b: Stamp | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.size === b.size && a.directory === b.directory;
}

/** The wall clock in nanoseconds: the clock file times are taken from. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** Whether a change could have followed the stamp without changing it (see RACY_WINDOW_NS). */
export function isRacy(stamp: Stamp | undefined, takenAtNs: bigint, windowNs: bigint = RACY_WINDOW_NS): boolean {
  if (stamp === undefined) return false;
  const latest = stamp.ctimeNs > stamp.mtimeNs ? stamp.ctimeNs : stamp.mtimeNs;
  return latest + windowNs > takenAtNs;
}

export type EntryKind = 'f' | 'd' | 'l' | 'o';

function kindOf(entry: fs.Dirent): EntryKind {
  if (entry.isFile()) return 'f';
  if (entry.isDirectory()) return 'd';
  if (entry.isSymbolicLink()) return 'l';
  return 'o';
}

/**
 * A directory's entries as one string (kind and name per line, in code-unit
 * order): compared whole, an unchanged directory costs one string compare.
 */
export function listingText(entries: readonly fs.Dirent[]): string {
  const lines = entries.map((entry) => `${kindOf(entry)}${entry.name}`);
  lines.sort();
  return lines.join('\n');
}

/** Names added, removed or of another kind between two listings, and the links in the new one. */
export function changedNames(before: string, after: string): { changed: string[]; links: string[] } {
  const links: string[] = [];
  const afterKinds = new Map<string, string>();
  if (after !== '') {
    for (const line of after.split('\n')) {
      afterKinds.set(line.slice(1), line[0]);
      if (line[0] === 'l') links.push(line.slice(1));
    }
  }
  if (before === after) return { changed: [], links };
  const changed: string[] = [];
  const beforeKinds = new Map<string, string>();
  if (before !== '') for (const line of before.split('\n')) beforeKinds.set(line.slice(1), line[0]);
  for (const [name, kind] of afterKinds) if (beforeKinds.get(name) !== kind) changed.push(name);
  for (const name of beforeKinds.keys()) if (!afterKinds.has(name)) changed.push(name);
  return { changed, links };
}

/** The kind an lstat gives, or undefined when the entry is gone. */
export function kindAt(absolutePath: string): EntryKind | undefined {
  let stats: fs.Stats | undefined;
  try {
    stats = fs.lstatSync(absolutePath, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (!stats) return undefined;
  return stats.isFile() ? 'f' : stats.isDirectory() ? 'd' : stats.isSymbolicLink() ? 'l' : 'o';
}

/**
 * The kind a listing gives an entry the index could not settle: no entry of
 * a real listing has it, so the next listing reports the entry changed
 * whether it is there then or gone. Taken out of the listing instead, an
 * entry that went away before the next listing was reported by neither, and
 * the index kept its file.
 */
export const LOOK_AGAIN = '?';

/**
 * The listing with one entry as it was found when it was looked at on its
 * own (undefined: gone). The entry may have changed between the listing and
 * that look: the listing kept must say what the index acted on, so that the
 * next listing differs from it if the entry is not that any more.
 */
export function withEntryKind(listing: string, name: string, kind: EntryKind | typeof LOOK_AGAIN | undefined): string {
  const lines = listing === '' ? [] : listing.split('\n').filter((line) => line.slice(1) !== name);
  if (kind !== undefined) lines.push(`${kind}${name}`);
  lines.sort();
  return lines.join('\n');
}

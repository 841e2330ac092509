import { rmSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileStore } from './fileStore';
import { processRuns } from './processRuns';
import type { DiscussionStore } from './types';

/** Names the scratch folders, followed by the pid of the process that made one. */
export const SCRATCH_PREFIX = 'repo-discuss-scratch-';
/** A scratch folder's name: the prefix, the maker's pid, mkdtemp's six characters. */
const SCRATCH_NAME = /^repo-discuss-scratch-(\d{1,10})-[A-Za-z0-9]{6}$/;

/**
 * Runs `use` with a file store of its own in a new private folder under the
 * system's temporary folder, and removes that folder afterwards, whether
 * `use` settled or threw. For a rehearsed turn (core/rehearsal.ts): a file
 * store, not one in memory, so that the saves' code runs too (a memory
 * store left about a millisecond of a fresh server's first question), and
 * never the user's storage folder, where a discussion no one asked for could
 * be listed. A process killed while `use` runs cannot remove its folder: a
 * later one removes it (removeAbandoned).
 */
export async function withScratchStore<T>(use: (store: DiscussionStore) => Promise<T>): Promise<T> {
  const temporary = os.tmpdir();
  await removeAbandoned(temporary);
  // mkdtemp makes the folder 0700 (on POSIX) under a name no other process chose.
  const folder = await fs.mkdtemp(path.join(temporary, `${SCRATCH_PREFIX}${process.pid}-`));
  // The server ends on SIGTERM and the like through process.exit, which runs no `finally`.
  const removeOnExit = (): void => rmSync(folder, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  try {
    return await use(await FileStore.open(folder));
  } finally {
    process.off('exit', removeOnExit);
    await fs.rm(folder, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * How old a scratch folder must be before another process may take it for
 * abandoned: far past a rehearsal's limit. A process in another pid
 * namespace (a container sharing the temporary folder) looks ended to this
 * one; its folder is only ever seconds old.
 */
export const ABANDONED_AFTER_MS = 10 * 60 * 1000;

/**
 * Removes the scratch folders in `temporary` whose maker is no longer
 * running and that are older than ABANDONED_AFTER_MS. Only a plain folder
 * this user owns and no one else may enter: the temporary folder is shared,
 * and removing a tree another user could change meanwhile (a folder swapped
 * for a link) could remove files elsewhere.
 */
export async function removeAbandoned(temporary: string, now = Date.now()): Promise<void> {
  const names = await fs.readdir(temporary).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const maker = SCRATCH_NAME.exec(name)?.[1];
      if (maker === undefined || processRuns(Number(maker))) return;
      const folder = path.join(temporary, name);
      const stat = await fs.lstat(folder).catch(() => undefined);
      if (!stat?.isDirectory() || (stat.mode & 0o077) !== 0 || (process.getuid && stat.uid !== process.getuid())) return;
      if (now - stat.mtimeMs < ABANDONED_AFTER_MS) return;
      await fs.rm(folder, { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}

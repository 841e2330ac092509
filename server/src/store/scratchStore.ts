import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileStore } from './fileStore';
import type { DiscussionStore } from './types';

/** Names the scratch folders, so one a killed process left behind says whose it is. */
export const SCRATCH_PREFIX = 'repo-discuss-scratch-';

/**
 * Runs `use` with a file store of its own in a new private folder under the
 * system's temporary folder, and removes that folder afterwards, whether
 * `use` settled or threw. For a rehearsed turn (core/rehearsal.ts): a file
 * store, not one in memory, so that the saves' code runs too (a memory
 * store left about a millisecond of a fresh server's first question), and
 * never the user's storage folder, where a discussion no one asked for could
 * be listed.
 */
export async function withScratchStore<T>(use: (store: DiscussionStore) => Promise<T>): Promise<T> {
  // mkdtemp makes the folder 0700 under a name no other process chose.
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), SCRATCH_PREFIX));
  try {
    return await use(await FileStore.open(folder));
  } finally {
    await fs.rm(folder, { recursive: true, force: true });
  }
}

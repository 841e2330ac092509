import * as fs from 'node:fs';
import * as path from 'node:path';

/** A temporary file this old was left by a process killed before its rename. */
const LEFTOVER_AFTER_MS = 60_000;
/**
 * Not through a link: a link planted in the directory could make us read,
 * and later trust, another file. Without waiting: a FIFO put in the file's
 * place would otherwise hold the open, and every start that asks, forever.
 */
const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);

/**
 * A small JSON file of this user's own, as parsed; undefined when it is
 * missing, larger than `maxBytes`, not a regular file, a link, someone
 * else's or garbled (on Windows links are followed and the owner is not
 * checked). Such a file is a cache: what it cannot answer is worked out again.
 */
export async function readOwnJson(file: string, maxBytes: number): Promise<unknown> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fs.promises.open(file, READ_FLAGS);
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) return undefined;
    // Read no further than the cap: the file may have grown since its size was taken.
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes) return undefined;
    return JSON.parse(buffer.toString('utf8', 0, bytesRead)) as unknown;
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * Writes `value` whole to a temporary file and renames it into place, so a
 * reader never sees half of it. Two processes writing at once: the last
 * rename wins. Never rejects: a file not written is worked out again next
 * time. Temporary files that a killed process left are removed.
 */
export async function writeOwnJson(file: string, value: unknown): Promise<void> {
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    await fs.promises.writeFile(temporary, JSON.stringify(value), { mode: 0o600, flag: 'wx' });
    await fs.promises.rename(temporary, file);
  } catch {
    await fs.promises.rm(temporary, { force: true }).catch(() => undefined);
  }
  await removeLeftovers(file);
}

async function removeLeftovers(file: string): Promise<void> {
  const directory = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  try {
    for (const name of await fs.promises.readdir(directory)) {
      if (!name.startsWith(prefix)) continue;
      const leftover = path.join(directory, name);
      const stats = await fs.promises.lstat(leftover).catch(() => undefined);
      if (stats?.isFile() && Date.now() - stats.mtimeMs > LEFTOVER_AFTER_MS) await fs.promises.rm(leftover, { force: true });
    }
  } catch {
    // tidied next time
  }
}

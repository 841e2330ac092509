import * as fs from 'node:fs';
import * as path from 'node:path';
import { readSmallFile } from './gitDirContents';

/**
 * The files git reads to find the repository, before any of our checks can
 * run: the `.git` file of a worktree or submodule, its git directory's
 * `HEAD` and `commondir`, and the common directory's `config` and
 * `config.worktree`. A FIFO or device among them held every git run of the
 * tools until its timeout (git opens them blocking), the include check's
 * first `git config` included. They are looked at here first, with stat and
 * non-blocking opens only; what they hold is checked afterwards, by git's
 * answers (gitDirOwnership, configIncludes).
 */

/** A FIFO or device git would open and wait on, or read without end; undefined when there is none. */
export async function discoveryReadFault(folder: string): Promise<string | undefined> {
  const dotGit = await nearestDotGit(folder);
  if (!dotGit) return undefined; // no repository: git says so itself, without waiting on anything
  let gitDir = dotGit;
  const entry = await statOf(dotGit);
  if (entry && isSpecial(entry)) return dotGit;
  if (entry?.isFile()) {
    const pointer = await readSmallFile(dotGit);
    if (pointer.kind === 'refused') return dotGit;
    const named = pointer.kind === 'text' ? /^gitdir:\s*(.+?)\s*$/m.exec(pointer.text) : null;
    if (!named) return undefined; // git refuses it as an invalid gitfile
    gitDir = path.resolve(path.dirname(dotGit), named[1]);
  }
  for (const name of ['HEAD', 'commondir']) {
    if (await isSpecialFile(path.join(gitDir, name))) return path.join(gitDir, name);
  }
  let commonDir = gitDir;
  const common = await readSmallFile(path.join(gitDir, 'commondir'));
  if (common.kind === 'refused') return path.join(gitDir, 'commondir');
  if (common.kind === 'text' && common.text.trim() !== '') commonDir = path.resolve(gitDir, common.text.trim());
  for (const file of [path.join(commonDir, 'config'), path.join(gitDir, 'config.worktree')]) {
    if (await isSpecialFile(file)) return file;
  }
  return undefined;
}

/** The `.git` git finds first, looking from `folder` up to the root as its discovery does. */
async function nearestDotGit(folder: string): Promise<string | undefined> {
  for (let dir = folder; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, '.git');
    try {
      await fs.promises.lstat(candidate);
      return candidate;
    } catch {
      // not here: one level up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Where a link leads, or the entry itself; undefined when there is nothing (git skips a missing file). stat never opens, so never waits. */
async function statOf(file: string): Promise<fs.Stats | undefined> {
  try {
    return await fs.promises.stat(file);
  } catch {
    return undefined;
  }
}

const isSpecial = (stats: fs.Stats) => stats.isFIFO() || stats.isCharacterDevice() || stats.isBlockDevice() || stats.isSocket();

async function isSpecialFile(file: string): Promise<boolean> {
  const stats = await statOf(file);
  return stats !== undefined && isSpecial(stats);
}

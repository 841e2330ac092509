import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSameOrInside } from '../access/boundary';

/**
 * Whether the git directory git found belongs to the work tree it serves.
 *
 * A `.git` *file* (`gitdir: /any/where`), a `.git` symlink, a `commondir`
 * file or `objects/info/alternates` planted in the folder can point git at
 * any repository on the machine; the git tools would then show that
 * repository's commit messages and diffs, content from outside the folder.
 * The work tree's own `.git` may lead outside it only in the two layouts git
 * itself creates, each verified by the back-pointer git writes on the other
 * side (a file the folder cannot plant there):
 *
 *  - a linked worktree: `gitdir: <common>/worktrees/<name>`, whose `gitdir`
 *    file names this `.git` file and whose `commondir` is `<common>`;
 *  - a submodule: `gitdir: <super>/.git/modules/<name>`, whose config's
 *    `core.worktree` is this work tree.
 *
 * The folder may be a subfolder of the work tree (the user opened part of a
 * repository): the same rules apply to the `.git` of the work tree's top.
 */

export const FOREIGN_GIT_DIR = 'the .git file here points to a git directory that does not belong to this folder; the git tools are off for it.';

export interface DiscoveredRepository {
  /** What git answered, made absolute: --show-toplevel, --absolute-git-dir, --git-common-dir. */
  toplevel: string;
  gitDir: string;
  commonDir: string;
}

/** Reads a submodule's `core.worktree`; injected so this module runs no git itself. */
export type ConfigReader = (configFile: string, key: string) => Promise<string | undefined>;

export type Ownership = { ok: true } | { ok: false; message: string };

const refuse = (message: string = FOREIGN_GIT_DIR): Ownership => ({ ok: false, message });

async function real(file: string): Promise<string | undefined> {
  try {
    return await fs.promises.realpath(file);
  } catch {
    return undefined;
  }
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** A path written in one of git's pointer files, resolved against the directory holding it. */
async function pointedAt(text: string | undefined, from: string): Promise<string | undefined> {
  const line = text?.split('\n')[0]?.trim();
  return line ? real(path.resolve(from, line)) : undefined;
}

/** Every alternate object store of `commonDir` is inside `root` (an alternate elsewhere lends another repository's objects). */
async function alternatesInside(commonDir: string, root: string): Promise<boolean> {
  const objects = path.join(commonDir, 'objects');
  const text = await readText(path.join(objects, 'info', 'alternates'));
  if (text === undefined) return true;
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    // A quoted alternate uses C escapes; refusing it is simpler than decoding it.
    if (line.startsWith('"')) return false;
    const target = path.resolve(objects, line);
    const resolved = (await real(target)) ?? target;
    if (!isSameOrInside(root, resolved)) return false;
  }
  return true;
}

export async function checkGitDirOwnership(found: DiscoveredRepository, readConfig: ConfigReader): Promise<Ownership> {
  const [top, gitDir, commonDir] = await Promise.all([real(found.toplevel), real(found.gitDir), real(found.commonDir)]);
  if (!top || !gitDir || !commonDir) return refuse('the repository\'s git directory could not be found; the git tools are off for this folder.');
  const dotGit = path.join(top, '.git');
  let entry: fs.Stats;
  try {
    entry = await fs.promises.lstat(dotGit);
  } catch {
    // No .git at the top: git found its directory some other way (core.worktree in a git directory
    // elsewhere pointing here, or at an ancestor), so nothing ties that directory to this work tree.
    return refuse("the repository's git directory is not the .git of its work tree (core.worktree points elsewhere); the git tools are off for this folder.");
  }

  if (!entry.isFile()) {
    // A directory, or a symlink: it must resolve inside the work tree and be the directory git uses.
    const target = await real(dotGit);
    if (!target || target !== gitDir || !isSameOrInside(top, gitDir)) return refuse();
    if (!isSameOrInside(top, commonDir)) return refuse(); // a planted `commondir` file
    return (await alternatesInside(commonDir, top)) ? { ok: true } : refuse();
  }

  const named = /^gitdir:\s*(.+?)\s*$/m.exec((await readText(dotGit)) ?? '');
  const target = named ? await real(path.resolve(top, named[1])) : undefined;
  if (!target || target !== gitDir) return refuse();

  if (isSameOrInside(top, gitDir)) {
    // The folder's own layout (e.g. an absorbed git directory inside it): every piece must stay inside.
    if (!isSameOrInside(top, commonDir)) return refuse();
    return (await alternatesInside(commonDir, top)) ? { ok: true } : refuse();
  }

  // A linked worktree: <common>/worktrees/<name>, pointing back at this .git file.
  const worktrees = path.dirname(gitDir);
  if (path.basename(worktrees) === 'worktrees' && path.dirname(worktrees) === commonDir) {
    const back = await pointedAt(await readText(path.join(gitDir, 'gitdir')), gitDir);
    const common = await pointedAt(await readText(path.join(gitDir, 'commondir')), gitDir);
    const realDotGit = await real(dotGit);
    if (back !== undefined && back === realDotGit && common === commonDir) return { ok: true };
    return refuse();
  }

  // A submodule: its own common directory, somewhere under a `modules` folder, configured for this work tree.
  if (commonDir === gitDir && gitDir.split(path.sep).includes('modules')) {
    const worktree = await readConfig(path.join(gitDir, 'config'), 'core.worktree');
    if (worktree !== undefined && (await real(path.resolve(gitDir, worktree))) === top) return { ok: true };
  }
  return refuse();
}

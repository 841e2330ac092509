import * as fs from 'node:fs';
import * as path from 'node:path';
import { printablePath } from '../../../shared/printablePath';
import { isSameOrInside, toPosix } from '../access/boundary';
import { findEscape, GIT_READS, GIT_UNREAD, readSmallFile } from './gitDirContents';

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
 *
 * A git directory inside the work tree is the folder's own content, so what
 * it holds is checked too (gitDirContents): nested alternates and links in
 * it (`objects` or `refs` linked to another repository's) must stay inside.
 * Linked worktrees' and submodules' git directories are git's own writing
 * outside the folder and are not walked.
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

const refuse = (message: string = FOREIGN_GIT_DIR): { ok: false; message: string } => ({ ok: false, message });

async function real(file: string): Promise<string | undefined> {
  try {
    return await fs.promises.realpath(file);
  } catch {
    return undefined;
  }
}

/** A pointer file's text; undefined when absent, or not a small regular file (see gitDirContents). */
async function readText(file: string): Promise<string | undefined> {
  const read = await readSmallFile(file);
  return read.kind === 'text' ? read.text : undefined;
}

/** A path written in one of git's pointer files, resolved against the directory holding it. */
async function pointedAt(text: string | undefined, from: string): Promise<string | undefined> {
  const line = text?.split('\n')[0]?.trim();
  return line ? real(path.resolve(from, line)) : undefined;
}

/** git's own limit (link_alt_odb_entries): alternates files nested deeper are ignored. */
const ALTERNATES_MAX_DEPTH = 5;

type Stores = { ok: true; stores: string[] } | { ok: false; message: string };

/** Whether a file or directory inside the work tree may be read; `asObjectStore`: as an alternate object store (which may sit in another clone's `.git`). */
export type Readable = (realPath: string, asObjectStore: boolean) => boolean;

/**
 * The alternate object stores of `commonDir`, followed as git follows them:
 * each store's own `info/alternates` too, to git's depth. Every one must be
 * somewhere `mayLead` allows (an alternate elsewhere, even one reached
 * through a store inside the folder, lends another repository's objects).
 */
async function alternateStores(commonDir: string, mayLead: (realPath: string) => boolean, top: string): Promise<Stores> {
  const objects = path.join(commonDir, 'objects');
  // git resolves an entry against the real path of the directory holding it, then normalizes `..` by text.
  const queue = [{ objects: (await real(objects)) ?? objects, depth: 0 }];
  const stores: string[] = [];
  for (let next = queue.shift(); next; next = queue.shift()) {
    const file = path.join(next.objects, 'info', 'alternates');
    const read = await readSmallFile(file);
    if (read.kind === 'missing') continue;
    if (read.kind === 'refused') {
      return { ok: false, message: `the repository's alternates file (${shown(top, file)}) is not a small plain file; the git tools are off for this folder. Remove it, or make it a plain list of object directories, to use them.` };
    }
    for (const line of read.text.split('\n').map((l) => l.trim())) {
      if (line === '' || line.startsWith('#')) continue;
      // A quoted alternate uses C escapes; refusing it is simpler than decoding it.
      if (line.startsWith('"')) return refuse();
      // Deeper than git reads: refused rather than relying on this limit matching every git version's.
      if (next.depth > ALTERNATES_MAX_DEPTH) {
        return { ok: false, message: `the repository's alternate object directories are nested deeper than git follows (${shown(top, file)}); the git tools are off for this folder.` };
      }
      const target = path.resolve(next.objects, line);
      const resolved = (await real(target)) ?? target;
      if (!mayLead(resolved)) {
        return { ok: false, message: `the repository's alternates (${shown(top, file)}) name an object directory outside this folder or one the tools may not read; the git tools are off for this folder. Remove that line to use them.` };
      }
      if (stores.includes(resolved)) continue;
      stores.push(resolved);
      queue.push({ objects: resolved, depth: next.depth + 1 });
    }
  }
  return { ok: true, stores };
}

/** A path in the git directory for a message: relative to the work tree, quoted when its name is hostile. */
function shown(top: string, file: string): string {
  return printablePath(toPosix(path.relative(top, file)) || '.');
}

/**
 * The git directory, the common directory and every alternate store hold
 * nothing git could follow out of the work tree, nor to a file the read
 * rules deny: their alternates (nested ones too) and every link in their
 * trees must lead inside, and no FIFO or device may wait for git there.
 */
async function contentsInside(top: string, gitDir: string, commonDir: string, readable: Readable, signal?: AbortSignal): Promise<Ownership> {
  const own = [gitDir, commonDir];
  const mayLead = (realPath: string, asObjectStore = false) =>
    isSameOrInside(top, realPath) && (own.some((dir) => isSameOrInside(dir, realPath)) || readable(realPath, asObjectStore));
  const alternates = await alternateStores(commonDir, (realPath) => mayLead(realPath, true), top);
  if (!alternates.ok) return alternates;
  const stores = alternates.stores;
  const roots = [...own.map((dir) => ({ path: dir, descend: GIT_READS, unread: GIT_UNREAD })), ...stores.map((dir) => ({ path: dir }))];
  const escape = await findEscape(roots, (realPath) => mayLead(realPath) || stores.some((dir) => isSameOrInside(dir, realPath)), signal);
  if (!escape) return { ok: true };
  if (escape.kind === 'cancelled') return refuse('Cancelled.');
  const where = shown(top, escape.path);
  if (escape.kind === 'link') {
    return refuse(`the git directory holds a link (${where}) that leads outside this folder, to a file the tools may not read, or nowhere; git would read through it, so the git tools are off for this folder. Replace the link with what it points to, or remove it, to use them.`);
  }
  if (escape.kind === 'special') {
    return refuse(`the git directory holds a FIFO or device (${where}) that git would wait on or read without end; the git tools are off for this folder. Remove it to use them.`);
  }
  if (escape.kind === 'tooLarge') {
    return refuse(`the git directory and its object stores hold more directories than can be checked on each call (${where} among them); the git tools are off for this folder.`);
  }
  return refuse(`part of the git directory (${where}) could not be listed, so it cannot be checked for links leading outside this folder; the git tools are off for this folder.`);
}

/**
 * `readable` tells whether a file inside the work tree may be read at all
 * (not a secret, not denied by policy); a link in the git directory may lead
 * only to such a file, or within the git directories themselves.
 */
export async function checkGitDirOwnership(found: DiscoveredRepository, readConfig: ConfigReader, readable: Readable = () => true, signal?: AbortSignal): Promise<Ownership> {
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
    return contentsInside(top, gitDir, commonDir, readable, signal);
  }

  const named = /^gitdir:\s*(.+?)\s*$/m.exec((await readText(dotGit)) ?? '');
  const target = named ? await real(path.resolve(top, named[1])) : undefined;
  if (!target || target !== gitDir) return refuse();

  if (isSameOrInside(top, gitDir)) {
    // The folder's own layout (e.g. an absorbed git directory inside it): every piece must stay inside.
    if (!isSameOrInside(top, commonDir)) return refuse();
    return contentsInside(top, gitDir, commonDir, readable, signal);
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

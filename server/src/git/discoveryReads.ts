import * as fs from 'node:fs';
import * as path from 'node:path';
import { readHead } from '../access/boundary';

/**
 * The files git opens to find the repository and read its config, before
 * the git directory can be checked (gitDirOwnership, gitDirContents). A FIFO
 * or device among them held every git run of the tools until its timeout
 * (git opens them blocking). They are looked at here first, with stat and
 * non-blocking opens only.
 *
 * Rather than copy git's judgement of what is a git directory (setup.c
 * is_git_directory: `access(X_OK)` on `objects` and `refs`, a HEAD link taken
 * by its name, a HEAD's content checked), which a hostile folder can make
 * ours and git's disagree on, every place git could look is looked at: at
 * each directory from the folder up to the root, its `.git` (a directory, or
 * a file naming the git directory) and the directory itself as a bare
 * repository; in each, `HEAD` and `commondir`, and in the common directory
 * they lead to the config, `config.worktree`, `shallow`, `packed-refs` and
 * the branch HEAD names (an `includeIf "onbranch:…"` has git resolve it while
 * it reads the config). Pointer files are read as git reads them: bytes up
 * to the first NUL, only the line ending stripped, joined to their directory
 * as text, so `..` after a link is left to the file system.
 */

/** git's own limit on a `.git` file (setup.c read_gitfile_gently). */
const POINTER_MAX_BYTES = 1024 * 1024;

const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);

/**
 * A FIFO or device git could open and wait on, or read without end; undefined
 * when there is none. The directories are looked at all at once, and the
 * nearest fault named: one after another, a folder six levels deep took 1.9
 * ms of every git tool call. Within each, a file is stat'ed before it is
 * opened, so a device is never opened (a `HEAD` linked to one that acts when
 * opened, a watchdog's, say).
 */
export async function discoveryReadFault(folder: string): Promise<string | undefined> {
  const directories: string[] = [];
  for (let dir = folder; ; dir = path.dirname(dir)) {
    directories.push(dir);
    if (path.dirname(dir) === dir) break;
  }
  const faults = await Promise.all(directories.map((dir) => faultAt(Buffer.from(dir))));
  return faults.find((fault) => fault !== undefined)?.toString();
}

async function faultAt(dir: Buffer): Promise<Buffer | undefined> {
  const [throughDotGit, asBare] = await Promise.all([dotGitFault(dir), candidateFault(dir)]);
  return throughDotGit ?? asBare;
}

/** What git opens through the directory's `.git`: the entry itself, and the git directory it is or names. */
async function dotGitFault(dir: Buffer): Promise<Buffer | undefined> {
  const dotGit = join(dir, '.git');
  const entry = await statOf(dotGit);
  if (entry && isSpecial(entry)) return dotGit;
  if (entry?.isFile()) {
    const pointer = await readPointer(dotGit);
    if (pointer === 'special') return dotGit;
    if (pointer?.subarray(0, 8).toString('latin1') === 'gitdir: ') return candidateFault(resolved(dir, pointer.subarray(8)));
  } else if (entry?.isDirectory()) {
    return candidateFault(dotGit);
  }
  return undefined;
}

/** What git opens in a directory it asks about as a git directory, and in the common directory that one leads to. */
async function candidateFault(gitDir: Buffer): Promise<Buffer | undefined> {
  const head = join(gitDir, 'HEAD');
  const commonFile = join(gitDir, 'commondir');
  for (const file of [head, commonFile]) if (await isSpecialFile(file)) return file;
  const common = await readPointer(commonFile);
  if (common === 'special') return commonFile;
  const commonDir = common && common.length > 0 ? resolved(gitDir, common) : gitDir;
  const files = [join(commonDir, 'config'), join(gitDir, 'config.worktree'), join(commonDir, 'shallow'), join(gitDir, 'shallow'), join(commonDir, 'packed-refs')];
  const branch = await headRef(head);
  if (branch) files.push(join(commonDir, branch), join(gitDir, branch));
  for (const file of files) if (await isSpecialFile(file)) return file;
  return undefined;
}

/** The ref HEAD names (`refs/…`), by its link's name or its `ref:` line, as git resolves it. */
async function headRef(head: Buffer): Promise<Buffer | undefined> {
  let named: Buffer | undefined;
  try {
    if ((await fs.promises.lstat(head)).isSymbolicLink()) named = await fs.promises.readlink(head, { encoding: 'buffer' });
  } catch {
    return undefined;
  }
  if (!named) {
    const text = await readPointer(head);
    if (!text || text === 'special' || text.subarray(0, 5).toString('latin1') !== 'ref: ') return undefined;
    named = text.subarray(5);
  }
  const start = named.indexOf('refs/');
  return start >= 0 ? named.subarray(start) : undefined;
}

/**
 * A pointer file as git reads it: its bytes up to the first NUL (git takes
 * them as a C string), the line ending stripped. `special` when it is not a
 * regular file once opened (a FIFO swapped in since the stat), undefined
 * when there is none or it is over git's limit.
 */
async function readPointer(file: Buffer): Promise<Buffer | 'special' | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    if (isSpecial(stats)) return 'special';
    if (!stats.isFile() || stats.size > POINTER_MAX_BYTES) return undefined;
    // Its size, as git reads it: a buffer of the limit for each of the pointer files of every directory at once was
    // tens of MB a call in a tree that planted them at every level.
    let bytes = await readHead(handle, stats.size);
    const nul = bytes.indexOf(0);
    if (nul >= 0) bytes = bytes.subarray(0, nul);
    let end = bytes.length;
    while (end > 0 && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end--;
    return bytes.subarray(0, end);
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** `named` as git takes it: absolute, or joined to `dir` as text. */
function resolved(dir: Buffer, named: Buffer): Buffer {
  return path.isAbsolute(named.toString('latin1')) ? named : join(dir, named);
}

/** Joined as text, `..` left to the file system: normalized here, `link/../x` would skip the link git follows first. */
function join(dir: Buffer, name: string | Buffer): Buffer {
  const separator = dir.length > 0 && (dir[dir.length - 1] === 0x2f || dir[dir.length - 1] === 0x5c) ? '' : path.sep;
  return Buffer.concat([dir, Buffer.from(separator), Buffer.isBuffer(name) ? name : Buffer.from(name)]);
}

/** Where a link leads, or the entry itself; undefined when there is nothing. stat never opens, so never waits. */
async function statOf(file: Buffer): Promise<fs.Stats | undefined> {
  try {
    return await fs.promises.stat(file);
  } catch {
    return undefined;
  }
}

async function isSpecialFile(file: Buffer): Promise<boolean> {
  const stats = await statOf(file);
  return stats !== undefined && isSpecial(stats);
}

const isSpecial = (stats: fs.Stats) => stats.isFIFO() || stats.isCharacterDevice() || stats.isBlockDevice() || stats.isSocket();

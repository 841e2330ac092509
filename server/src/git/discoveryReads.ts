import * as fs from 'node:fs';
import * as path from 'node:path';
import { readSmallFile } from './gitDirContents';

/**
 * The files git opens to find the repository, before any of our checks can
 * run. A FIFO or device among them held every git run of the tools until its
 * timeout (git opens them blocking), the include check's first `git config`
 * included. They are looked at here first, with stat and non-blocking opens
 * only, the way git's discovery (setup.c) goes: from the folder up, at each
 * directory its `.git` (a directory, or a file naming the git directory),
 * and failing that the directory itself as a bare repository; in each
 * candidate `HEAD` and `commondir`, and in the repository found its
 * `config`, `config.worktree` and `shallow`. What they hold is checked
 * afterwards, from git's answers (gitDirOwnership, configIncludes).
 */

/** A FIFO or device git would open and wait on, or read without end; undefined when there is none. */
export async function discoveryReadFault(folder: string): Promise<string | undefined> {
  for (let dir = folder; ; dir = path.dirname(dir)) {
    const found = await atDirectory(dir);
    if (found.kind === 'fault') return found.file;
    if (found.kind === 'repository') return repositoryFault(found.gitDir, found.commonDir);
    if (path.dirname(dir) === dir) return undefined;
  }
}

type AtDirectory = { kind: 'fault'; file: string } | { kind: 'repository'; gitDir: string; commonDir: string } | { kind: 'none' };

async function atDirectory(dir: string): Promise<AtDirectory> {
  const dotGit = join(dir, '.git');
  const entry = await statOf(dotGit);
  if (entry && isSpecial(entry)) return { kind: 'fault', file: dotGit };
  if (entry?.isFile()) {
    // A `.git` file: git uses the directory it names, or stops with an error; it never looks further up.
    // Opened non-blocking: a FIFO swapped in since the stat is refused, not waited on. One too large is not a pointer git takes.
    const pointer = await readSmallFile(dotGit);
    if (pointer.kind !== 'text' || !pointer.text.startsWith('gitdir: ')) return { kind: 'none' };
    const named = stripLineEnd(pointer.text.slice('gitdir: '.length));
    const gitDir = path.isAbsolute(named) ? named : join(dir, named);
    const candidate = await candidateAt(gitDir);
    return candidate.kind === 'fault' ? candidate : { kind: 'repository', gitDir, commonDir: candidate.commonDir };
  }
  if (entry?.isDirectory()) {
    const candidate = await candidateAt(dotGit);
    if (candidate.kind === 'fault') return candidate;
    if (candidate.valid) return { kind: 'repository', gitDir: dotGit, commonDir: candidate.commonDir };
  }
  // git asks whether the directory is a bare repository before it goes up (and refuses one it finds: safe.bareRepository).
  const bare = await candidateAt(dir);
  if (bare.kind === 'fault') return bare;
  return bare.valid ? { kind: 'repository', gitDir: dir, commonDir: bare.commonDir } : { kind: 'none' };
}

type Candidate = { kind: 'fault'; file: string } | { kind: 'candidate'; valid: boolean; commonDir: string };

/** What git opens to tell whether `gitDir` is a git directory (is_git_directory): `HEAD`, then `commondir`. */
async function candidateAt(gitDir: string): Promise<Candidate> {
  const head = join(gitDir, 'HEAD');
  const headStats = await statOf(head);
  if (headStats && isSpecial(headStats)) return { kind: 'fault', file: head };
  const commonFile = join(gitDir, 'commondir');
  const commonStats = await statOf(commonFile);
  if (commonStats && isSpecial(commonStats)) return { kind: 'fault', file: commonFile };
  let commonDir = gitDir;
  const common = commonStats?.isFile() ? await readSmallFile(commonFile) : undefined;
  if (common?.kind === 'text') {
    const named = stripLineEnd(common.text);
    if (named !== '') commonDir = path.isAbsolute(named) ? named : join(gitDir, named);
  }
  const valid = headStats !== undefined && (await isDirectory(join(commonDir, 'objects'))) && (await isDirectory(join(commonDir, 'refs')));
  return { kind: 'candidate', valid, commonDir };
}

/** The files git reads in the repository it found, before and while it reads its config. */
async function repositoryFault(gitDir: string, commonDir: string): Promise<string | undefined> {
  for (const file of [join(commonDir, 'config'), join(gitDir, 'config.worktree'), join(commonDir, 'shallow'), join(gitDir, 'shallow')]) {
    const stats = await statOf(file);
    if (stats && isSpecial(stats)) return file;
  }
  return undefined;
}

/**
 * `name` under `dir` as git builds it: joined as text, `..` left to the file
 * system. Normalized here, `link/../x` would skip the link that git follows
 * first, and a FIFO where the link leads went unseen.
 */
function join(dir: string, name: string): string {
  return dir.endsWith(path.sep) ? `${dir}${name}` : `${dir}${path.sep}${name}`;
}

/** git strips only the line ending of a pointer file (setup.c); trailing spaces are part of the path. */
function stripLineEnd(text: string): string {
  return text.replace(/[\r\n]+$/, '');
}

/** Where a link leads, or the entry itself; undefined when there is nothing. stat never opens, so never waits. */
async function statOf(file: string): Promise<fs.Stats | undefined> {
  try {
    return await fs.promises.stat(file);
  } catch {
    return undefined;
  }
}

async function isDirectory(file: string): Promise<boolean> {
  return (await statOf(file))?.isDirectory() === true;
}

const isSpecial = (stats: fs.Stats) => stats.isFIFO() || stats.isCharacterDevice() || stats.isBlockDevice() || stats.isSocket();

import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The work tree's `.gitattributes` files git would open for a diff, a show or
 * a blame, checked before it runs. git opens each blocking, in the folder of
 * every path whose contents it reads and in each folder above it up to the
 * work tree's top: a FIFO there held every git_diff, git_show and git_blame
 * until its 20 s timeout (git 2.39 has no `--attr-source` to take them from a
 * commit instead). A link is not followed by git (2.32 and later); one whose
 * target is a FIFO or device is refused as well, for an older git.
 */

/** How many `lstat`s run at once: a repository of 100,000 files has some 6,000 folders. */
const AT_ONCE = 64;

const isSpecial = (stats: fs.Stats): boolean => stats.isFIFO() || stats.isSocket() || stats.isCharacterDevice() || stats.isBlockDevice();

async function waitsOn(file: string): Promise<boolean> {
  let stats: fs.Stats;
  try {
    stats = await fs.promises.lstat(file);
  } catch {
    return false; // absent: nothing is opened
  }
  if (isSpecial(stats)) return true;
  if (!stats.isSymbolicLink()) return false;
  try {
    return isSpecial(await fs.promises.stat(file));
  } catch {
    return false;
  }
}

/**
 * The folders whose `.gitattributes` git reads for `paths` (relative to
 * `cwd`, `/`-separated, inside it): `cwd`, each folder of each path below it,
 * and each folder from `cwd` up to the work tree's `top`.
 */
export function attributeFolders(top: string, cwd: string, paths: Iterable<string>): string[] {
  const folders = new Set<string>();
  for (let folder = cwd; ; folder = path.dirname(folder)) {
    folders.add(folder);
    if (folder === top || path.dirname(folder) === folder) break;
  }
  for (const relativePath of paths) {
    for (let slash = relativePath.lastIndexOf('/'); slash > 0; slash = relativePath.lastIndexOf('/', slash - 1)) {
      const folder = path.join(cwd, relativePath.slice(0, slash));
      if (folders.has(folder)) break; // its folders above were added with it
      folders.add(folder);
    }
  }
  return [...folders];
}

/** The first `.gitattributes` among `folders` git would wait on, as an absolute path; undefined when none. */
export async function attributeFileFault(folders: readonly string[], signal?: AbortSignal): Promise<string | undefined> {
  for (let at = 0; at < folders.length; at += AT_ONCE) {
    if (signal?.aborted) return undefined;
    const files = folders.slice(at, at + AT_ONCE).map((folder) => path.join(folder, '.gitattributes'));
    const faults = await Promise.all(files.map(waitsOn));
    const first = faults.indexOf(true);
    if (first !== -1) return files[first];
  }
  return undefined;
}

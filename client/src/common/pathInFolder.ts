import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSameOrInside, relativeStaysInside } from '../../../shared/pathContainment';

/** Where a path a reply names leads: to a file or folder inside the discussion's folder, or why not. */
export type PathInFolder = { ok: true; realPath: string } | { ok: false; why: 'outside' | 'missing' };

/**
 * Resolves `requested`, relative to `folder`, following links: only a path
 * whose real path is inside the folder's is `ok`. A check of the name alone
 * let a link in the folder (`docs/ref -> ~/.ssh`) open what it points at,
 * under a name that looked inside.
 */
export async function pathInFolder(folder: string, requested: string): Promise<PathInFolder> {
  const lexical = path.resolve(folder, requested);
  if (!isSameOrInside(folder, lexical)) return { ok: false, why: 'outside' };
  let realFolder: string;
  let realPath: string;
  try {
    realFolder = await fs.promises.realpath(folder);
    realPath = await fs.promises.realpath(lexical);
  } catch {
    return { ok: false, why: 'missing' };
  }
  return isSameOrInside(realFolder, realPath) ? { ok: true, realPath } : { ok: false, why: 'outside' };
}

/**
 * An editor file's path relative to `folder`, with `/` separators, when it is
 * a file inside it (by name: the chip's path is read through the server's
 * boundary, which follows links); undefined for the folder itself or
 * anything outside. A check of `startsWith('..')` left out a file named
 * `..notes` inside the folder.
 */
export function folderRelativePath(folder: string, file: string): string | undefined {
  const relative = path.relative(folder, file);
  if (relative === '' || !relativeStaysInside(relative)) return undefined;
  return relative.split(path.sep).join('/');
}

import * as path from 'node:path';

/**
 * Whether a `path.relative()` result stays in its base: `''` (the base
 * itself) or a name inside it. Separator-aware: `..notes` is a name inside,
 * `..` and `../notes` are not, nor another drive on Windows (an absolute
 * result).
 */
export function relativeStaysInside(relative: string): boolean {
  if (path.isAbsolute(relative)) return false;
  return relative !== '..' && !relative.startsWith(`..${path.sep}`);
}

/** Whether `candidate` is `parent` or inside it. Separator-aware: `/repo-other` is not inside `/repo`, and `..notes` is a name inside. */
export function isSameOrInside(parent: string, candidate: string): boolean {
  return relativeStaysInside(path.relative(parent, candidate));
}

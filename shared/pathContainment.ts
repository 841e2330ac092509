import * as path from 'node:path';

/** Whether `candidate` is `parent` or inside it. Separator-aware: `/repo-other` is not inside `/repo`, and `..notes` is a name inside. */
export function isSameOrInside(parent: string, candidate: string): boolean {
  const relative = path.relative(parent, candidate);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false; // other drive on Windows
  return relative !== '..' && !relative.startsWith(`..${path.sep}`);
}

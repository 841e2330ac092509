import * as path from 'node:path';
import type { ReadBoundary } from '../access/boundary';
import { type RuleNamesIn, walkVerdicts } from './walk';

/** A file to read for a search, at its path in the folder and where it really is. */
export interface Candidate {
  relativePath: string;
  realPath: string;
}

/**
 * Resolutions at a time: half the thread pool libuv starts with (4), so the
 * other threads' file calls, the main thread's saves among them, still find
 * room. One after another, each link's `lstat` per component waited its turn
 * (0.85 ms a link on vite); all at once, a folder of thousands of links
 * filled the pool.
 */
export const LINKS_RESOLVED_AT_ONCE = 2;

/**
 * The files the symlinks ripgrep passed over lead to, resolved through the
 * boundary as the walk resolves them: those inside the folder and allowed,
 * in the order of `symlinks`. `listed` is the check ripgrep's own names get;
 * `judgeIgnores`: the links came from the crawl, which knows no ignore
 * rules, so they are judged against them as the walk would.
 */
export async function linkedFiles(boundary: ReadBoundary, listed: (relativePath: string) => boolean, symlinks: readonly string[], judgeIgnores: boolean, ruleNames?: RuleNamesIn): Promise<Candidate[]> {
  const notIgnored = judgeIgnores && symlinks.length > 0 ? walkVerdicts(boundary, new Set(), ruleNames) : undefined;
  const wanted = symlinks.filter((relativePath) => listed(relativePath) && (!notIgnored || notIgnored(relativePath)));
  const found: (Candidate | undefined)[] = new Array(wanted.length);
  let next = 0;
  const resolveSome = async (): Promise<void> => {
    while (next < wanted.length) {
      const i = next++;
      const resolution = await boundary.resolve(path.join(boundary.root, wanted[i]));
      if (resolution.ok && resolution.kind === 'file') found[i] = { relativePath: wanted[i], realPath: resolution.realPath };
    }
  };
  await Promise.all(Array.from({ length: Math.min(LINKS_RESOLVED_AT_ONCE, wanted.length) }, resolveSome));
  return found.filter((candidate): candidate is Candidate => candidate !== undefined);
}

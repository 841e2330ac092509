import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ReadBoundary } from '../access/boundary';
import { type RuleNamesIn } from './ignoreRules';
import { walkVerdicts } from './walk';

/** A file to read for a search, at its path in the folder and where it really is. */
export interface Candidate {
  relativePath: string;
  realPath: string;
}

/**
 * How each link is resolved: `blocking` in a search thread, where awaited
 * calls each went through the thread pool and back (0.7 ms a link on vite,
 * while ripgrep had both CPUs); `awaited` on the main thread, which a slow
 * file system must never hold.
 */
export type LinkResolution = 'blocking' | 'awaited';

/**
 * How long the links are resolved with blocking calls before the thread
 * reads ripgrep's output for a moment: a folder of thousands of links takes
 * tens of milliseconds.
 */
const TIME_SLICE_MS = 4;

/**
 * The files the symlinks ripgrep passed over lead to, resolved through the
 * boundary as the walk resolves them: those inside the folder and allowed,
 * in the order of `symlinks`. `listed` is the check ripgrep's own names get;
 * `judgeIgnores`: the links came from the crawl, which knows no ignore
 * rules, so they are judged against them as the walk would.
 */
export async function linkedFiles(
  boundary: ReadBoundary,
  how: LinkResolution,
  listed: (relativePath: string) => boolean,
  symlinks: readonly string[],
  judgeIgnores: boolean,
  ruleNames?: RuleNamesIn,
  /** The root-relative directory searched (walkVerdicts). */
  scope = '',
): Promise<Candidate[]> {
  const notIgnored = judgeIgnores && symlinks.length > 0 ? walkVerdicts(boundary, new Set(), ruleNames, scope) : undefined;
  const wanted = symlinks.filter((relativePath) => listed(relativePath) && (!notIgnored || notIgnored(relativePath)));
  const found: Candidate[] = [];
  let sliceStarted = performance.now();
  for (const relativePath of wanted) {
    const linkPath = path.join(boundary.root, relativePath);
    const resolution = how === 'blocking' ? boundary.resolveSync(linkPath) : await boundary.resolve(linkPath);
    if (resolution.ok && resolution.kind === 'file') found.push({ relativePath, realPath: resolution.realPath });
    if (how === 'blocking' && performance.now() - sliceStarted > TIME_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
  return found;
}

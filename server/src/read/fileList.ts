import type { ReadBoundary } from '../access/boundary';
import type { SearchEngine } from '../search/searchEngine';

/**
 * The files the panel's `@` completion offers: find_files' walk (same
 * exclusions, same boundary, same policy) narrowed by a glob built from the
 * query, then ranked by a fuzzy match in Node. A denied or secret file is
 * left out entirely: offering its name as an attachment would only lead to a
 * refusal, and the list must not be a way to probe what is hidden.
 */

export const FILE_LIST_LIMITS = Object.freeze({
  /** Names in one answer. */
  maxResults: 50,
  /** Characters of the query that count (keeps the glob far below its own limit). */
  maxQuery: 40,
});

/**
 * The globs that narrow the walk to candidates: the query's last segment as a
 * case-free subsequence of a base name, or of a directory name (then every
 * file under it). The ranking matches the whole path, so a glob on the base
 * name alone hid every file of a directory typed by name: `@billing` found
 * nothing in src/billing/.
 */
export function narrowingGlobs(query: string): string[] {
  const lastSegment = query.split('/').pop() ?? '';
  const units: string[] = [];
  for (const char of lastSegment) {
    if (/[a-z]/i.test(char)) units.push(`[${char.toLowerCase()}${char.toUpperCase()}]`);
    else if (/[0-9._-]/.test(char)) units.push(char);
    // Anything else could be glob syntax: left to the ranking instead.
  }
  if (units.length === 0) return ['**'];
  const subsequence = `*${units.join('*')}*`;
  return [`**/${subsequence}`, `**/${subsequence}/**`];
}

/**
 * How well `path` matches `query` as a case-free subsequence, or -1 when it
 * does not: runs of consecutive characters, a match in the base name and a
 * short path rank higher.
 */
export function fuzzyScore(path: string, query: string): number {
  if (query === '') return 1000 - path.length;
  const haystack = path.toLowerCase();
  const needle = query.toLowerCase();
  const baseStart = haystack.lastIndexOf('/') + 1;
  let score = 0;
  let from = 0;
  let previous = -2;
  for (const char of needle) {
    const at = haystack.indexOf(char, from);
    if (at < 0) return -1;
    score += at === previous + 1 ? 8 : 1;
    if (at >= baseStart) score += 2;
    if (at === baseStart || haystack[at - 1] === '/' || haystack[at - 1] === '.' || haystack[at - 1] === '-' || haystack[at - 1] === '_') score += 4;
    previous = at;
    from = at + 1;
  }
  if (haystack.slice(baseStart).startsWith(needle)) score += 20;
  return score * 100 - path.length;
}

export async function listFiles(boundary: ReadBoundary, rawQuery: string, engine: SearchEngine, signal?: AbortSignal): Promise<string[]> {
  const query = rawQuery.trim().replace(/\\/g, '/').slice(0, FILE_LIST_LIMITS.maxQuery);
  const found = new Set<string>();
  for (const pattern of narrowingGlobs(query)) {
    const outcome = await engine.run(
      { kind: 'find', root: boundary.root, denyRead: boundary.denyRules.policyGlobs, scope: { relativePath: '.', realPath: boundary.root, kind: 'directory' }, pattern },
      signal,
    );
    if (!outcome.ok || outcome.result.kind !== 'find') continue;
    for (const file of outcome.result.results) if (!file.denied) found.add(file.relativePath);
  }
  return [...found]
    .map((file) => ({ path: file, score: fuzzyScore(file, query) }))
    .filter((file) => file.score >= 0)
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path))
    .slice(0, FILE_LIST_LIMITS.maxResults)
    .map((file) => file.path);
}

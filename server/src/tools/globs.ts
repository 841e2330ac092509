import { Minimatch } from 'minimatch';

/** Globs the model passes to find_files and grep_files, and which deny globs ripgrep can be given. */

export function normalizeGlob(pattern: string): string {
  let normalized = pattern.trim().replace(/\\/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  while (normalized.startsWith('/')) normalized = normalized.slice(1);
  return normalized;
}

/**
 * A pattern without `/` matches file names at any depth (`*.ts`), like
 * .gitignore and ripgrep's --glob; with `/` it matches the whole relative path.
 */
export function compileGlob(pattern: string): Minimatch {
  const normalized = normalizeGlob(pattern);
  return new Minimatch(normalized, { dot: true, matchBase: !normalized.includes('/') });
}

export type PathTest = (relativePath: string) => boolean;

/**
 * `compileGlob(pattern).match` as one regular expression test per path:
 * minimatch's `match` splits and walks every path, which was most of the time
 * find_files spent on a large listing. Paths here are root-relative with no
 * `.` or `..` segments, where the two agree.
 */
export function compileGlobTest(pattern: string): PathTest {
  const matcher = compileGlob(pattern);
  const regex = matcher.negate || matcher.comment || matcher.empty ? false : matcher.makeRe();
  if (regex === false) return (relativePath) => matcher.match(relativePath);
  const onBasename = matcher.options.matchBase === true && matcher.set.every((parts) => parts.length === 1);
  if (!onBasename) return (relativePath) => regex.test(relativePath);
  return (relativePath) => regex.test(relativePath.slice(relativePath.lastIndexOf('/') + 1));
}

/**
 * A deny glob ripgrep can apply as an exclusion with the meaning minimatch
 * gives it here (a name at any depth without `/`, a root-relative path with
 * one). Others are left to the check every listed path goes through anyway.
 */
export function isPortableDenyGlob(glob: string): boolean {
  return /^[A-Za-z0-9_.\-/*?]+$/.test(glob) && !glob.includes('..') && !glob.startsWith('/');
}

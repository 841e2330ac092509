import * as fs from 'node:fs';
import * as path from 'node:path';
import ignore from 'ignore';
import { openVerifiedSync, readHeadSync } from '../access/boundary';
import { joinRelative } from './relativePaths';

/**
 * Ignore files read the way ripgrep reads them, so that the ripgrep search
 * path and the walk leave out the same files: `.rgignore` rules beat
 * `.ignore` rules, which beat `.gitignore` rules and then
 * `.git/info/exclude`; within one kind the deepest file with an opinion
 * wins. A directory holding its own `.git` (a nested repository or
 * submodule) starts afresh for the git kinds: the .gitignore rules from
 * above it do not apply inside it. Each file is read bounded and never
 * through a link.
 */

type Ignore = ReturnType<typeof ignore>;

/**
 * What one ignore file may cost. Every path is tested against every rule, so
 * a 100,000-line .gitignore held every search (both engines) until its time
 * limit. Real ones have tens to hundreds of rules; past either bound only the
 * first rules count, and the answer says which file was cut.
 */
export const IGNORE_FILE_LIMITS = Object.freeze({ maxBytes: 256 * 1024, maxRules: 1000 });

/** Ignore file names, highest precedence first (ripgrep's order). */
export const IGNORE_FILE_NAMES = ['.rgignore', '.ignore', '.gitignore'] as const;
type IgnoreKind = 0 | 1 | 2;

interface IgnoreLayer {
  /** Root-relative directory the ignore file sits in ('' for the root). */
  base: string;
  rules: Ignore;
  /** The names its rules give whole, with no wildcard or inner slash (`target/`, `/dist`): see `ignoresDirectory`. */
  literalNames: ReadonlySet<string>;
}

/** One stack of layers per ignore kind, shallowest first. */
export type IgnoreStacks = readonly [IgnoreLayer[], IgnoreLayer[], IgnoreLayer[]];

/** Ignore files whose rules were cut at IGNORE_FILE_LIMITS, by real path; the answer names them. */
export type CutIgnoreFiles = Set<string>;

/** The first `maxRules` rules of an ignore file's text (blank lines and comments are free), and whether any were dropped. */
export function boundIgnoreRules(text: string): { text: string; cut: boolean } {
  let rules = 0;
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\n', at);
    const lineEnd = end === -1 ? text.length : end;
    const line = text.slice(at, lineEnd).trim();
    if (line !== '' && !line.startsWith('#')) {
      if (rules === IGNORE_FILE_LIMITS.maxRules) return { text: text.slice(0, at), cut: true };
      rules += 1;
    }
    at = lineEnd + 1;
  }
  return { text, cut: false };
}

/**
 * Reads an ignore file, unless it is not a regular file: a committed
 * `.gitignore -> /elsewhere` would let bytes from outside the folder decide
 * what the model sees (Git stopped following symlinked .gitignore files in
 * 2.32 for the same reason), and a FIFO would never answer. Opened through
 * the boundary's verified open, so a swap after the check is refused too.
 * Bounded in bytes and rules; a cut file is added to `cut`.
 */
function readIgnoreFile(filePath: string, cut?: CutIgnoreFiles): string | undefined {
  const opened = openVerifiedSync(filePath, 'file');
  if (!opened.ok) return undefined;
  try {
    const head = readHeadSync(opened.fd, IGNORE_FILE_LIMITS.maxBytes + 1);
    let text = head.subarray(0, IGNORE_FILE_LIMITS.maxBytes).toString('utf8');
    let wasCut = head.length > IGNORE_FILE_LIMITS.maxBytes;
    // A cut in the middle of a line leaves half a rule: drop it.
    if (wasCut) text = text.slice(0, text.lastIndexOf('\n') + 1);
    const bounded = boundIgnoreRules(text);
    wasCut ||= bounded.cut;
    if (wasCut) cut?.add(filePath);
    return bounded.text;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(opened.fd);
  }
}

/**
 * Whether an ignore file can be handed to a tool that reads it whole
 * (ripgrep): a regular file, openable, and within IGNORE_FILE_LIMITS. A FIFO
 * there held every ripgrep search until its time limit, and a huge one made
 * matching crawl.
 */
export function ignoreFileFault(filePath: string): 'unreadable' | 'too_large' | undefined {
  const cut: CutIgnoreFiles = new Set();
  if (readIgnoreFile(filePath, cut) === undefined) return 'unreadable';
  return cut.size > 0 ? 'too_large' : undefined;
}

/** Whether the walk's rules match names case-free: git matches case-sensitively unless the file system is case-insensitive. */
export const CASE_FREE_NAMES = process.platform === 'win32' || process.platform === 'darwin';

function newIgnoreRules(): Ignore {
  return ignore({ ignorecase: CASE_FREE_NAMES });
}

function pushLayer(stacks: IgnoreStacks, kind: IgnoreKind, base: string, text: string): IgnoreStacks {
  const next = [stacks[0], stacks[1], stacks[2]] as [IgnoreLayer[], IgnoreLayer[], IgnoreLayer[]];
  next[kind] = [...stacks[kind], { base, rules: newIgnoreRules().add(text), literalNames: literalNamesOf(text) }];
  return next;
}

/**
 * Adds the ignore files of one directory. `names` (the directory's entries,
 * when already read) saves a failing stat per kind per directory.
 */
export function withIgnoreFiles(stacks: IgnoreStacks, directoryAbsolute: string, directoryRelative: string, cut: CutIgnoreFiles, names?: ReadonlySet<string>): IgnoreStacks {
  let result = stacks;
  for (let kind = 0; kind < IGNORE_FILE_NAMES.length; kind++) {
    const name = IGNORE_FILE_NAMES[kind];
    if (names && !names.has(name)) continue;
    const text = readIgnoreFile(path.join(directoryAbsolute, name), cut);
    if (text !== undefined) result = pushLayer(result, kind as IgnoreKind, directoryRelative, text);
  }
  return result;
}

/**
 * The `.git/info/exclude` of the repository rooted at `directory`, read only
 * when `.git` and `info` are real directories and `exclude` a regular file,
 * so that it is inside the folder. A `.git` file (a linked worktree or a
 * submodule) points at a git directory elsewhere: its exclude is not read.
 */
function readExcludeFile(directory: string, cut?: CutIgnoreFiles): string | undefined {
  const dotGit = path.join(directory, '.git');
  try {
    if (!fs.lstatSync(dotGit).isDirectory() || !fs.lstatSync(path.join(dotGit, 'info')).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  return readIgnoreFile(path.join(dotGit, 'info', 'exclude'), cut);
}

/**
 * The rules one ignore file of `directoryAbsolute` gives, read as the walk
 * reads them (bounded, never through a link): undefined when none are read.
 * `exclude` is the directory's `.git/info/exclude`. The warm index compares
 * them to tell a rewritten file from a changed one.
 */
export function ignoreRulesOf(directoryAbsolute: string, name: (typeof IGNORE_FILE_NAMES)[number] | 'exclude'): string | undefined {
  return name === 'exclude' ? readExcludeFile(directoryAbsolute) : readIgnoreFile(path.join(directoryAbsolute, name));
}

/**
 * Whether a tool that follows links (ripgrep) would read rules from outside
 * the folder through this entry: an ignore file that is a symlink, or a
 * `.git` whose exclude file is reached through a symlink or lives in another
 * git directory (a linked worktree's `.git` file names one with a
 * `commondir`). Only file types are looked at, never the linked contents.
 */
export function ignoreEntryLeadsOutside(entryPath: string): boolean {
  try {
    const name = path.basename(entryPath);
    const stats = fs.lstatSync(entryPath);
    if (name !== '.git') return stats.isSymbolicLink();
    if (stats.isSymbolicLink()) return true;
    if (stats.isFile()) {
      // Opened verified and read bounded: a `.git` swapped for a FIFO must not hold the thread.
      const opened = openVerifiedSync(entryPath, 'file');
      if (!opened.ok) return true;
      let head: Buffer;
      try {
        head = readHeadSync(opened.fd, 4096);
      } finally {
        fs.closeSync(opened.fd);
      }
      const line = head.toString('utf8').split('\n')[0];
      if (!line.startsWith('gitdir: ')) return false;
      const gitDirectory = path.resolve(path.dirname(entryPath), line.slice('gitdir: '.length).trim());
      return fs.existsSync(path.join(gitDirectory, 'commondir'));
    }
    const info = path.join(entryPath, 'info');
    if (fs.lstatSync(info).isSymbolicLink()) return true;
    return fs.lstatSync(path.join(info, 'exclude')).isSymbolicLink();
  } catch {
    return false; // missing: nothing is read through it
  }
}

/** Whether `directory` holds a `.git` (directory or file): the root of a repository. */
export function isRepositoryRoot(directory: string, names?: ReadonlySet<string>): boolean {
  if (names) return names.has('.git');
  try {
    fs.statSync(path.join(directory, '.git'));
    return true;
  } catch {
    return false;
  }
}

/** At a repository root the git kinds start afresh: only its own exclude file, then its .gitignore. */
export function startRepository(stacks: IgnoreStacks, directoryAbsolute: string, directoryRelative: string, cut: CutIgnoreFiles): IgnoreStacks {
  const exclude = readExcludeFile(directoryAbsolute, cut);
  const reset: IgnoreStacks = [stacks[0], stacks[1], []];
  return exclude === undefined ? reset : pushLayer(reset, 2, directoryRelative, exclude);
}

interface RuleVerdict {
  ignored: boolean;
  unignored: boolean;
}

/**
 * One ignore file's verdict on a path itself, not on the directories above
 * it: whoever asks has entered those already, with every layer's say, as git
 * and ripgrep go down a tree. `Ignore.test` asks the directories first and
 * hands their exclusion down, so a `target/` that the root's rule leaves out
 * and a deeper `!target/` lets back in was entered, and then every file in it
 * left out again by the root's rule, where git and ripgrep show them.
 *
 * The library's per-path match is not public, and its arguments differ
 * between versions (`(path, mode)`, `(path, checkUnignored, mode)`): the
 * call that gives known answers is picked when this module loads. Should
 * none, `test` (the old verdicts) stands in and VERDICTS_ON_PATH_ITSELF says
 * so, which a unit test checks.
 */
const [verdictOnPathItself, onPathItself] = ((): [(rules: Ignore, testedPath: string) => RuleVerdict, boolean] => {
  type Matcher = { _rules: { test: (testedPath: string, ...rest: unknown[]) => RuleVerdict } };
  const calls: Array<(rules: Ignore, testedPath: string) => RuleVerdict> = [
    (rules, testedPath) => (rules as unknown as Matcher)._rules.test(testedPath, 'regex'),
    (rules, testedPath) => (rules as unknown as Matcher)._rules.test(testedPath, true, 'regex'),
  ];
  for (const call of calls) {
    try {
      const probe = ignore().add('target/\n!keep/\n');
      const [directory, fileInside, letBackIn] = [call(probe, 'a/target/'), call(probe, 'a/target/x'), call(probe, 'keep/')];
      if (directory.ignored && !fileInside.ignored && !fileInside.unignored && letBackIn.unignored && !letBackIn.ignored) return [call, true];
    } catch {
      // Not this version's arguments.
    }
  }
  return [(rules, testedPath) => rules.test(testedPath), false];
})();

/** Whether each ignore file judges a path itself (verdictOnPathItself), as git and ripgrep do; false only if the `ignore` package changed. */
export const VERDICTS_ON_PATH_ITSELF: boolean = onPathItself;

/** Whether one stack has an opinion: the deepest layer that matches decides. */
function stackVerdict(layers: IgnoreLayer[], relativePath: string, isDirectory: boolean): boolean | undefined {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i];
    const local = layer.base === '' ? relativePath : relativePath.slice(layer.base.length + 1);
    try {
      const result = verdictOnPathItself(layer.rules, isDirectory ? `${local}/` : local);
      if (result.ignored) return true;
      if (result.unignored) return false;
    } catch {
      // The public `test` (the stand-in) rejects some names as not relative; treat them as not ignored.
    }
  }
  return undefined;
}

/**
 * ripgrep precedence: an opinion from a higher kind settles it, whatever lower kinds say. Of a path whose
 * directories the caller has judged entered (verdictOnPathItself).
 */
export function isIgnored(stacks: IgnoreStacks, relativePath: string, isDirectory: boolean): boolean {
  for (const layers of stacks) {
    if (layers.length === 0) continue;
    const verdict = stackVerdict(layers, relativePath, isDirectory);
    if (verdict !== undefined) return verdict;
  }
  return false;
}

export const NO_LAYERS: IgnoreStacks = [[], [], []];

/**
 * The ignore layers in force at `startRelative`: each ancestor's (and the
 * start's own) exclude and ignore files. The start and the directories above
 * it are not judged: a search asked to look inside a directory the rules
 * leave out looks there, with the rules below it, as ripgrep given that path
 * does (and as a file given as the path is searched even if ignored).
 */
export function ignoreStacksFor(root: string, startRelative: string, cut: CutIgnoreFiles): IgnoreStacks {
  const segments = startRelative === '.' || startRelative === '' ? [] : startRelative.split('/');
  let stacks = NO_LAYERS;
  let relative = '';
  for (let depth = 0; depth <= segments.length; depth++) {
    const directory = depth === 0 ? root : path.join(root, ...segments.slice(0, depth));
    if (isRepositoryRoot(directory)) stacks = startRepository(stacks, directory, relative, cut);
    stacks = withIgnoreFiles(stacks, directory, relative, cut);
    if (depth < segments.length) relative = joinRelative(relative, segments[depth]);
  }
  return stacks;
}

/**
 * The ignore rules in force at `startRelative` (its ancestors' and its own),
 * read as the walk reads them, for a pass that goes down from there and
 * leaves out what the rules leave out (linkCrawl.ts).
 */
export function ignoreRulesAt(root: string, startRelative: string): IgnoreStacks {
  return ignoreStacksFor(root, startRelative, new Set());
}

/**
 * The rules in force inside a directory entered from one with `parent` in
 * force, given the names of its ignore files and `.git` (`ruleNames`): a
 * repository root starts git's afresh, then its own ignore files are added.
 */
export function ignoreRulesInside(parent: IgnoreStacks, directoryAbsolute: string, directoryRelative: string, ruleNames: ReadonlySet<string>): IgnoreStacks {
  const cut: CutIgnoreFiles = new Set();
  const inherited = isRepositoryRoot(directoryAbsolute, ruleNames) ? startRepository(parent, directoryAbsolute, directoryRelative, cut) : parent;
  return ruleNames.size === 0 ? inherited : withIgnoreFiles(inherited, directoryAbsolute, directoryRelative, cut, ruleNames);
}

/**
 * The names an ignore file's rules give whole: a rule that is one name, with
 * a leading `/` or `**\/` and a trailing `/` at most and no wildcard, escape
 * or negation. Any other rule still counts in `isIgnored`.
 */
function literalNamesOf(text: string): ReadonlySet<string> {
  const names = new Set<string>();
  for (const raw of text.split('\n')) {
    let rule = raw.trim();
    if (rule === '' || rule.startsWith('#') || rule.startsWith('!')) continue;
    if (rule.startsWith('**/')) rule = rule.slice(3);
    else if (rule.startsWith('/')) rule = rule.slice(1);
    if (rule.endsWith('/')) rule = rule.slice(0, -1);
    if (rule === '' || /[*?[\]\\/]/.test(rule)) continue;
    names.add(CASE_FREE_NAMES ? rule.toLowerCase() : rule);
  }
  return names;
}

/**
 * Whether the rules leave out the directory at `relativePath` (root-relative),
 * asked only of a directory some rule names whole (`target/`, `dist`): asking
 * the rules of every directory was 2 µs each, 2 ms of a crawl of vite's 887.
 * A directory left out by a wildcard rule (`*.egg-info/`) is answered no.
 * For a pass whose leaving out is a saving only (linkCrawl.ts), never for
 * what is shown.
 */
export function ignoresDirectory(rules: IgnoreStacks, relativePath: string): boolean {
  const base = relativePath.slice(relativePath.lastIndexOf('/') + 1);
  const name = CASE_FREE_NAMES ? base.toLowerCase() : base;
  if (!rules.some((layers) => layers.some((layer) => layer.literalNames.has(name)))) return false;
  return isIgnored(rules, relativePath, true);
}

/** Rewrites one ignore-file line from directory `base` so it means the same relative to the root. */
function rebaseIgnoreLine(line: string, base: string): string | undefined {
  const trimmed = line.replace(/\r$/, '');
  if (trimmed.trim() === '' || trimmed.startsWith('#')) return undefined;
  if (base === '') return trimmed;
  const negated = trimmed.startsWith('!');
  const body = negated ? trimmed.slice(1) : trimmed;
  // gitignore: a slash anywhere but at the end anchors the pattern to its directory.
  const withoutTrailingSlash = body.endsWith('/') ? body.slice(0, -1) : body;
  const rebased = withoutTrailingSlash.includes('/') ? `${base}/${body.replace(/^\//, '')}` : `${base}/**/${body}`;
  return negated ? `!${rebased}` : rebased;
}

/** The rules from above a search's start, as ancestorIgnoreText gives them. */
export interface AncestorRules {
  /** One root-relative ignore file, later lines winning. */
  text: string;
  /** The ignore file names among them (`.rgignore`, `.ignore`, `.gitignore`, git's exclude counted as `.gitignore`). */
  kinds: ReadonlySet<(typeof IGNORE_FILE_NAMES)[number]>;
}

/**
 * The rules from the root down to (not including) `startRelative`, as one
 * root-relative ignore file for a tool that starts below the root (ripgrep's
 * `--ignore-file`, whose later lines win). Undefined when there are none.
 */
export function ancestorIgnoreText(root: string, startRelative: string, cut?: CutIgnoreFiles): AncestorRules | undefined {
  if (startRelative === '.' || startRelative === '') return undefined;
  const lines: string[][] = [[], [], []];
  const add = (kind: number, text: string, base: string): void => {
    for (const line of text.split('\n')) {
      const rebased = rebaseIgnoreLine(line, base);
      if (rebased !== undefined) lines[kind].push(rebased);
    }
  };
  const segments = startRelative.split('/');
  let relative = '';
  for (let depth = 0; depth < segments.length; depth++) {
    const directory = path.join(root, ...segments.slice(0, depth));
    if (isRepositoryRoot(directory)) {
      // Git rules from above a repository root do not reach into it.
      lines[2] = [];
      const exclude = readExcludeFile(directory, cut);
      if (exclude !== undefined) add(2, exclude, relative);
    }
    for (let kind = 0; kind < IGNORE_FILE_NAMES.length; kind++) {
      const text = readIgnoreFile(path.join(directory, IGNORE_FILE_NAMES[kind]), cut);
      if (text !== undefined) add(kind, text, relative);
    }
    relative = joinRelative(relative, segments[depth]);
  }
  // A start that is itself a repository root keeps none of the git rules from above.
  if (isRepositoryRoot(path.join(root, ...segments))) lines[2] = [];
  // Lowest precedence first: gitignore rules, then .ignore, then .rgignore.
  const all = [...lines[2], ...lines[1], ...lines[0]];
  if (all.length === 0) return undefined;
  const kinds = new Set(IGNORE_FILE_NAMES.filter((_, kind) => lines[kind].length > 0));
  return { text: `${all.join('\n')}\n`, kinds };
}

/**
 * The ignore files and `.git` a root-relative directory holds, by name, as a
 * crawl of it found them (linkCrawl.ts); undefined for a directory it did not
 * crawl, which is then looked at on disk. Saves the three failed opens and
 * the stat of every directory that holds none: on vite's 571 `.ts` files
 * they were most of what checking ripgrep's listing cost.
 */
export type RuleNamesIn = (relativeDirectory: string) => ReadonlySet<string> | undefined;

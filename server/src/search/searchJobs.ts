import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ReadBoundary } from '../access/boundary';
import { compilePattern, Grep, GrepResult } from './grepCore';
import { compileGlobTest, isPortableDenyGlob, normalizeGlob, PathTest } from '../access/globs';
import { Ripgrep, RipgrepExclusion, RipgrepListing, runRipgrep } from './ripgrep';
import { toRipgrepPattern } from './rgPattern';
import { SECRET_NAME_GLOBS } from '../access/secrets';
import { ALWAYS_SKIPPED_DIRECTORIES, ancestorIgnoreText, CutIgnoreFiles, ignoreEntryLeadsOutside, ignoreFileFault, isRepositoryRoot, sortInWalkOrder, walkFiles } from './walk';

/**
 * The bodies of find_files, grep_files and the summary's file census, run in
 * a worker thread (see searchPool.ts) so neither a large tree nor a slow
 * regular expression holds the server's event loop. Each has two ways to find
 * files, with the same result: ask ripgrep for candidate names, or walk the
 * tree ourselves.
 */

export const SEARCH_LIMITS = Object.freeze({
  findMaxResults: 500,
  /** A walk stops here even without enough results, so one call cannot run for minutes. */
  walkMaxEntries: 1_000_000,
});

/**
 * ripgrep lists files in parallel, in no particular order, so its whole
 * listing must be in before the first results in walk order are known. Once
 * a pattern has matched more files than this, the cap is sure to be reached,
 * and the ordered walk, which stops at the cap, gets there sooner: ripgrep is
 * stopped and the walk answers. For find_files the walk costs about what
 * ripgrep's listing costs per file once the names have crossed the pipe, so
 * more matches than the cap is evidence enough; grep_files waits for more,
 * since the walk reads and matches every file itself.
 */
const SWITCH_TO_WALK = Object.freeze({ grepCandidates: 1000, findMatches: SEARCH_LIMITS.findMaxResults });

export interface SearchScope {
  realPath: string;
  /** Root-relative, `.` for the root. */
  relativePath: string;
  kind: 'file' | 'directory';
}

interface JobBase {
  /** The folder's real path. */
  root: string;
  denyRead: readonly string[];
  scope: SearchScope;
  /** Undefined: walk the tree in Node. */
  ripgrep?: Ripgrep;
}

export interface GrepJob extends JobBase {
  kind: 'grep';
  pattern: string;
  glob?: string;
}

export interface FindJob extends JobBase {
  kind: 'find';
  pattern: string;
}

/** The bounded file census behind the repository summary. */
export interface CensusJob extends JobBase {
  kind: 'census';
  /** Stop after this many files (ripgrep) or directory entries (walk). */
  maxEntries: number;
  /** And after this long. */
  timeMs: number;
  /** How many extensions to report, most common first. */
  extensions: number;
}

export type SearchJob = GrepJob | FindJob | CensusJob;

export type SearchEngineName = 'ripgrep' | 'node';

interface ResultBase {
  /** Which path produced the result. */
  engine: SearchEngineName;
  /** ripgrep was not usable for this search (the walk ran instead), and why. */
  fallbackReason?: string;
  /** ripgrep found so many files that the ordered walk was the faster way to the cap. */
  switchedToWalk?: boolean;
  /** The listing stopped at the entry limit before covering the scope. */
  listingStopped: boolean;
  /**
   * Files and directories left out because they were replaced or moved
   * between being listed and being opened (a swap for a link, say).
   */
  changedEntries?: number;
  /** Root-relative paths of ignore files of which only the first rules counted (walk.ts IGNORE_FILE_LIMITS). */
  cutIgnoreFiles?: string[];
}

export interface GrepJobResult extends ResultBase, GrepResult {
  kind: 'grep';
  /** The scope is one file and it looks binary. */
  namedFileBinary: boolean;
}

export interface FindJobResult extends ResultBase {
  kind: 'find';
  /** Matching paths in walk order, at most the cap; denied ones carry `denied`. */
  results: Array<{ relativePath: string; denied: boolean }>;
  more: boolean;
}

export interface CensusJobResult extends ResultBase {
  kind: 'census';
  fileCount: number;
  byExtension: Array<[string, number]>;
  /** The census stopped at its cap or deadline: the tree is larger. */
  partial: boolean;
}

export type SearchJobResult = GrepJobResult | FindJobResult | CensusJobResult;

export interface JobControl {
  shouldStop(): boolean;
  onSpawn(pid: number): void;
}

const boundaries = new Map<string, Promise<ReadBoundary>>();

/** One boundary per folder and deny list, reused across jobs in this thread. */
function boundaryFor(job: SearchJob): Promise<ReadBoundary> {
  const key = [job.root, ...job.denyRead].join('\0');
  let boundary = boundaries.get(key);
  if (!boundary) {
    boundary = ReadBoundary.create(job.root, [...job.denyRead]);
    boundary.catch(() => boundaries.delete(key));
    if (boundaries.size > 32) boundaries.delete(boundaries.keys().next().value as string);
    boundaries.set(key, boundary);
  }
  return boundary;
}

export async function runSearchJob(job: SearchJob, control: JobControl): Promise<SearchJobResult> {
  const boundary = await boundaryFor(job);
  switch (job.kind) {
    case 'grep':
      return grep(job, boundary, control);
    case 'find':
      return find(job, boundary, control);
    case 'census':
      return census(job, boundary, control);
  }
}

// ------------------------------------------------------------ ripgrep listing

const insideRepository = new Map<string, boolean>();

/** Whether the folder is in a git repository (a `.git` in it or above it); remembered per folder. */
function isInsideRepository(root: string): boolean {
  let known = insideRepository.get(root);
  if (known === undefined) {
    known = false;
    for (let directory = root; ; directory = path.dirname(directory)) {
      if (isRepositoryRoot(directory)) {
        known = true;
        break;
      }
      if (path.dirname(directory) === directory) break;
    }
    insideRepository.set(root, known);
  }
  return known;
}

/** A file ripgrep named, still to be checked and read. */
interface Candidate {
  relativePath: string;
  realPath: string;
}

type ListedState = 'ok' | 'denied' | 'excluded';

/**
 * Checks each path ripgrep printed against every rule our walk applies, as
 * the walk would: a directory that is skipped or denied hides everything
 * under it; a denied file is named but never read. Directory verdicts are
 * remembered, so a listing costs one check per directory plus one per file.
 */
export class ListedPathCheck {
  private readonly directories = new Map<string, boolean>([['', true]]);

  constructor(private readonly boundary: ReadBoundary) {}

  state(relativePath: string): ListedState {
    if (relativePath === '' || path.isAbsolute(relativePath)) return 'excluded';
    const slash = relativePath.lastIndexOf('/');
    const name = relativePath.slice(slash + 1);
    if (name === '' || name === '.' || name === '..' || name === '.git') return 'excluded';
    if (!this.directoryAllowed(slash === -1 ? '' : relativePath.slice(0, slash))) return 'excluded';
    return this.boundary.denyRules.entryDenialOf(relativePath) ? 'denied' : 'ok';
  }

  private directoryAllowed(directory: string): boolean {
    const known = this.directories.get(directory);
    if (known !== undefined) return known;
    const slash = directory.lastIndexOf('/');
    const name = directory.slice(slash + 1);
    const allowed =
      this.directoryAllowed(slash === -1 ? '' : directory.slice(0, slash)) &&
      name !== '' &&
      name !== '.' &&
      name !== '..' &&
      !ALWAYS_SKIPPED_DIRECTORIES.has(name) &&
      !this.boundary.denyRules.entryDenialOf(directory);
    this.directories.set(directory, allowed);
    return allowed;
  }
}

/**
 * Why ripgrep must not read the ignore files under the scope, if it must
 * not: one is not a regular file (a FIFO never answers, and held every
 * ripgrep search until its time limit) or is over IGNORE_FILE_LIMITS
 * (ripgrep would use every rule). The walk then answers; it skips the one
 * and uses the first rules of the other. Found by a listing that reads no
 * ignore file; symlinked ones are left to `readRulesThroughLink`.
 */
async function ruleFileFault(job: SearchJob, control: JobControl): Promise<string | undefined> {
  const listing = await runRipgrep({
    ripgrep: job.ripgrep as Ripgrep,
    root: job.root,
    query: { mode: 'rules', scope: job.scope.relativePath, exclusions: [], outsideRepository: false },
    maxPaths: SEARCH_LIMITS.walkMaxEntries,
    shouldStop: () => control.shouldStop(),
    onSpawn: (pid) => control.onSpawn(pid),
  });
  if (listing.error !== undefined) return listing.error;
  for (const relativePath of listing.symlinks) {
    try {
      if (!fs.lstatSync(path.join(job.root, relativePath)).isSymbolicLink()) return NON_REGULAR_RULES;
    } catch {
      return NON_REGULAR_RULES; // gone since: changing under the search
    }
  }
  for (const relativePath of listing.paths) {
    const fault = ignoreFileFault(path.join(job.root, relativePath));
    if (fault === 'too_large') return OVERSIZED_RULES;
    if (fault !== undefined) return NON_REGULAR_RULES;
  }
  return undefined;
}

const NON_REGULAR_RULES = 'an ignore file in the folder is not a regular file (ripgrep would wait on it)';
const OVERSIZED_RULES = 'an ignore file in the folder has more rules than are used (ripgrep would use them all)';

/** Runs one ripgrep listing with the ancestor ignore rules of the scope in a temporary file. */
async function listWithRipgrep(
  job: SearchJob,
  control: JobControl,
  query: Omit<Parameters<typeof runRipgrep>[0]['query'], 'scope' | 'ignoreFile' | 'outsideRepository'>,
  cut: CutIgnoreFiles,
  onPath?: (relativePath: string) => boolean,
): Promise<RipgrepListing> {
  const ripgrep = job.ripgrep as Ripgrep;
  const fault = await ruleFileFault(job, control);
  if (fault !== undefined) return { paths: [], symlinks: [], truncated: false, abandoned: false, ruleEntries: [], error: fault };
  // Below the root, the rules of the directories in between apply too: handed over as a file.
  const rules = ancestorIgnoreText(job.root, job.scope.relativePath, cut);
  let ignoreFile: string | undefined;
  let ignoreDirectory: string | undefined;
  if (rules !== undefined) {
    // A fresh private directory: a predictable name in a shared temp folder could be a planted symlink.
    ignoreDirectory = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'repo-discuss-rg-'));
    ignoreFile = path.join(ignoreDirectory, 'ancestors.ignore');
    await fs.promises.writeFile(ignoreFile, rules, { mode: 0o600 });
  }
  try {
    return await runRipgrep({
      ripgrep,
      root: job.root,
      query: {
        ...query,
        scope: job.scope.relativePath,
        ignoreFile,
        outsideRepository: !isInsideRepository(job.root),
      },
      maxPaths: SEARCH_LIMITS.walkMaxEntries,
      onPath,
      shouldStop: () => control.shouldStop(),
      onSpawn: (pid) => control.onSpawn(pid),
    });
  } finally {
    if (ignoreDirectory) await fs.promises.rm(ignoreDirectory, { recursive: true, force: true }).catch(() => undefined);
  }
}

function relativeCuts(boundary: ReadBoundary, cut: CutIgnoreFiles): string[] {
  return [...cut].map((filePath) => boundary.relativeOf(filePath));
}

/**
 * Whether a name ripgrep printed is, now, a regular file at that very path:
 * its real path is the path itself (no component is a link, so no directory
 * was swapped for one), which is inside the root.
 */
function isPlainFileInside(root: string, relativePath: string): boolean {
  const absolute = path.join(root, relativePath);
  try {
    return fs.lstatSync(absolute).isFile() && fs.realpathSync.native(absolute) === absolute;
  } catch {
    return false;
  }
}

const LINKED_RULES = 'an ignore file or .git/info/exclude in the folder is a symbolic link, which ripgrep would follow out of the folder';

/**
 * Whether ripgrep may have taken rules from outside the folder: it follows a
 * symlinked ignore file, which the walk does not read. Its listing is then not
 * used (the walk answers), so outside bytes never decide what is shown.
 */
function readRulesThroughLink(job: SearchJob, listing: RipgrepListing): boolean {
  return listing.ruleEntries.some((relativePath) => ignoreEntryLeadsOutside(path.join(job.root, relativePath)));
}

/** The symlinked files ripgrep passed over, resolved through the boundary as the walk resolves them. */
async function symlinkedFiles(job: SearchJob, boundary: ReadBoundary, check: ListedPathCheck, listing: RipgrepListing): Promise<Candidate[]> {
  const found: Candidate[] = [];
  for (const relativePath of listing.symlinks) {
    if (check.state(relativePath) !== 'ok') continue;
    const resolved = await boundary.resolve(path.join(job.root, relativePath));
    if (resolved.ok && resolved.kind === 'file') found.push({ relativePath, realPath: resolved.realPath });
  }
  return found;
}

function exclusionsFor(boundary: ReadBoundary, kind: 'grep' | 'find'): RipgrepExclusion[] {
  if (kind === 'find') {
    // find_files names denied files (marked), so only denied directories are skipped.
    return SECRET_NAME_GLOBS.map((glob) => ({ glob: `!${glob}/`, caseInsensitive: true }));
  }
  const policy = boundary.denyRules.policyGlobs.filter(isPortableDenyGlob);
  return [...SECRET_NAME_GLOBS, ...policy].map((glob) => ({ glob: `!${glob}`, caseInsensitive: true }));
}

// ---------------------------------------------------------------- grep_files

function emptyGrep(engine: SearchJobResult['engine']): GrepJobResult {
  return { kind: 'grep', engine, lines: [], matchCount: 0, more: false, oversized: [], changedFiles: 0, listingStopped: false, namedFileBinary: false };
}

async function grep(job: GrepJob, boundary: ReadBoundary, control: JobControl): Promise<GrepJobResult> {
  const pattern = compilePattern(job.pattern);
  if (typeof pattern === 'string') throw new Error(pattern); // validated before the job was sent
  const globTest = job.glob !== undefined && normalizeGlob(job.glob) !== '' ? compileGlobTest(job.glob) : undefined;
  const searcher = new Grep(pattern);

  if (job.scope.kind === 'file') {
    // Named explicitly, so searched even if ignored; the boundary already refused secrets.
    const result = emptyGrep('node');
    if (globTest && !globTest(job.scope.relativePath)) return result;
    const outcome = searcher.searchFile(job.scope.realPath, job.scope.relativePath);
    return { ...result, ...searcher.result, namedFileBinary: outcome === 'binary' };
  }

  let fallbackReason: string | undefined;
  let switchedToWalk = false;
  const cut: CutIgnoreFiles = new Set();
  if (job.ripgrep) {
    const translated = toRipgrepPattern(pattern.source, pattern.unicode);
    if (!translated) {
      fallbackReason = 'the pattern uses JavaScript regular expression features ripgrep cannot pre-filter';
    } else {
      let candidateCount = 0;
      const listing = await listWithRipgrep(
        job,
        control,
        {
          mode: 'matches',
          pattern: translated,
          exclusions: exclusionsFor(boundary, 'grep'),
        },
        cut,
        (relativePath) => (globTest && !globTest(relativePath)) || ++candidateCount <= SWITCH_TO_WALK.grepCandidates,
      );
      if (listing.abandoned) {
        switchedToWalk = true;
      } else if (listing.error === undefined && readRulesThroughLink(job, listing)) {
        fallbackReason = LINKED_RULES;
      } else if (listing.error === undefined) {
        const check = new ListedPathCheck(boundary);
        const candidates: Candidate[] = [];
        for (const relativePath of listing.paths) {
          // Defence in depth: ripgrep was told the same rules, but what it prints is checked again.
          if (globTest && !globTest(relativePath)) continue;
          if (check.state(relativePath) !== 'ok') continue;
          candidates.push({ relativePath, realPath: path.join(job.root, relativePath) });
        }
        candidates.push(...(await symlinkedFiles(job, boundary, check, listing)));
        const byPath = new Map(candidates.map((candidate) => [candidate.relativePath, candidate]));
        for (const relativePath of sortInWalkOrder([...byPath.keys()])) {
          if (control.shouldStop()) break;
          if (globTest && !globTest(relativePath)) continue;
          const candidate = byPath.get(relativePath) as Candidate;
          if (searcher.searchFile(candidate.realPath, relativePath) === 'capped') break;
        }
        // Every line shown was read by `searcher` through the verified open, from the file ripgrep named:
        // a file reached through a directory swapped since is refused there and counted.
        return {
          ...emptyGrep('ripgrep'),
          ...searcher.result,
          listingStopped: listing.truncated,
          changedEntries: searcher.result.changedFiles,
          cutIgnoreFiles: relativeCuts(boundary, cut),
        };
      } else {
        fallbackReason = listing.error;
      }
    }
  }

  const stats = await walkFiles(
    { boundary, startDirectory: job.scope.realPath, shouldStop: () => control.shouldStop(), maxEntries: SEARCH_LIMITS.walkMaxEntries },
    (file) => {
      // Secret and policy-denied files are skipped silently: their contents never reach the model.
      if (file.denial) return;
      if (globTest && !globTest(file.relativePath)) return;
      return searcher.searchFile(file.realPath, file.relativePath) !== 'capped';
    },
  );
  return {
    ...emptyGrep('node'),
    ...searcher.result,
    listingStopped: stats.stoppedBy === 'entry_limit',
    fallbackReason,
    switchedToWalk,
    changedEntries: searcher.result.changedFiles + stats.changedDirectories,
    cutIgnoreFiles: stats.cutIgnoreFiles,
  };
}

// ---------------------------------------------------------------- find_files

/** find_files on the ordered walk, which stops at the cap. */
async function findWithWalk(job: FindJob, boundary: ReadBoundary, matches: PathTest, stop: () => boolean): Promise<FindJobResult> {
  const max = SEARCH_LIMITS.findMaxResults;
  const results: FindJobResult['results'] = [];
  let more = false;
  const stats = await walkFiles(
    { boundary, startDirectory: job.scope.realPath, shouldStop: stop, maxEntries: SEARCH_LIMITS.walkMaxEntries },
    (file) => {
      if (!matches(file.relativePath)) return;
      if (results.length >= max) {
        more = true;
        return false;
      }
      results.push({ relativePath: file.relativePath, denied: file.denial !== undefined });
    },
  );
  return {
    kind: 'find',
    engine: 'node',
    results,
    more,
    listingStopped: stats.stoppedBy === 'entry_limit',
    changedEntries: stats.changedDirectories,
    cutIgnoreFiles: stats.cutIgnoreFiles,
  };
}

async function find(job: FindJob, boundary: ReadBoundary, control: JobControl): Promise<FindJobResult> {
  const test = compileGlobTest(job.pattern);
  const scopePrefix = job.scope.relativePath === '.' ? '' : `${job.scope.relativePath}/`;
  // Also match relative to `path`, so {"path": "src", "pattern": "lib/*.ts"} finds src/lib/a.ts.
  const matches = (relativePath: string): boolean =>
    test(relativePath) || (scopePrefix !== '' && relativePath.startsWith(scopePrefix) && test(relativePath.slice(scopePrefix.length)));
  const max = SEARCH_LIMITS.findMaxResults;
  const walk = (): Promise<FindJobResult> => findWithWalk(job, boundary, matches, () => control.shouldStop());
  if (!job.ripgrep) return walk();

  let matchCount = 0;
  const cut: CutIgnoreFiles = new Set();
  const listing = await listWithRipgrep(
    job,
    control,
    { mode: 'files', exclusions: exclusionsFor(boundary, 'find') },
    cut,
    (relativePath) => !matches(relativePath) || ++matchCount <= SWITCH_TO_WALK.findMatches,
  );
  if (listing.abandoned) return { ...(await walk()), switchedToWalk: true };
  if (listing.error !== undefined) return { ...(await walk()), fallbackReason: listing.error };
  if (readRulesThroughLink(job, listing)) return { ...(await walk()), fallbackReason: LINKED_RULES };

  const check = new ListedPathCheck(boundary);
  const denied = new Set<string>();
  const found: string[] = [];
  for (const relativePath of listing.paths) {
    if (!matches(relativePath)) continue;
    const state = check.state(relativePath);
    if (state === 'excluded') continue;
    if (state === 'denied') denied.add(relativePath);
    found.push(relativePath);
  }
  const links = new Set<string>();
  for (const link of await symlinkedFiles(job, boundary, check, listing)) {
    if (matches(link.relativePath)) links.add(link.relativePath);
  }
  // ripgrep walked directories we do not control: a name is shown only if it is still a file
  // inside, reached through no link (a directory swapped for one leaked outside names).
  // Only what is shown is checked, so this costs at most the result cap.
  const shown: string[] = [];
  let changedEntries = 0;
  let more = false;
  for (const relativePath of sortInWalkOrder([...new Set([...found, ...links])])) {
    if (!links.has(relativePath) && !isPlainFileInside(job.root, relativePath)) {
      changedEntries += 1;
      continue;
    }
    if (shown.length === max) {
      more = true;
      break;
    }
    shown.push(relativePath);
  }
  return {
    kind: 'find',
    engine: 'ripgrep',
    results: shown.map((relativePath) => ({ relativePath, denied: denied.has(relativePath) })),
    more,
    listingStopped: listing.truncated,
    changedEntries,
    cutIgnoreFiles: relativeCuts(boundary, cut),
  };
}

// -------------------------------------------------------------------- census

function countExtensions(relativePaths: readonly string[], extensions: number): Pick<CensusJobResult, 'fileCount' | 'byExtension'> {
  const counts = new Map<string, number>();
  for (const relativePath of relativePaths) {
    const extension = path.posix.extname(relativePath).toLowerCase() || '(none)';
    counts.set(extension, (counts.get(extension) ?? 0) + 1);
  }
  const byExtension = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, extensions);
  return { fileCount: relativePaths.length, byExtension };
}

/**
 * The census from ripgrep's listing, or undefined when ripgrep failed. Safe
 * to run on the event loop: ripgrep does the walking in its own process and
 * at most `maxEntries` names come back, so the server's first discussion of a
 * folder need not wait for a search thread to start.
 */
export async function censusWithRipgrep(job: CensusJob, boundary: ReadBoundary, control: JobControl): Promise<CensusJobResult | undefined> {
  if (!job.ripgrep) return undefined;
  const started = Date.now();
  const expired = (): boolean => control.shouldStop() || Date.now() - started > job.timeMs;
  const listing = await runRipgrep({
    ripgrep: job.ripgrep,
    root: job.root,
    query: {
      mode: 'files',
      scope: '.',
      exclusions: exclusionsFor(boundary, 'find'),
      // In path order, so a census stopped at its cap counts the same files every time.
      sorted: true,
      outsideRepository: !isInsideRepository(job.root),
    },
    maxPaths: job.maxEntries,
    shouldStop: expired,
    onSpawn: (pid) => control.onSpawn(pid),
  });
  if (listing.error !== undefined || readRulesThroughLink(job, listing)) return undefined;
  const check = new ListedPathCheck(boundary);
  const files = listing.paths.filter((relativePath) => check.state(relativePath) !== 'excluded');
  for (const link of await symlinkedFiles(job, boundary, check, listing)) files.push(link.relativePath);
  return { kind: 'census', engine: 'ripgrep', ...countExtensions(files, job.extensions), partial: listing.truncated || expired(), listingStopped: false };
}

async function census(job: CensusJob, boundary: ReadBoundary, control: JobControl): Promise<CensusJobResult> {
  const listed = await censusWithRipgrep(job, boundary, control);
  if (listed) return listed;
  const files: string[] = [];
  const stats = await walkFiles(
    { boundary, startDirectory: boundary.root, maxEntries: job.maxEntries, deadline: performance.now() + job.timeMs, shouldStop: () => control.shouldStop() },
    (file) => {
      files.push(file.relativePath);
    },
  );
  const partial = stats.stoppedBy === 'entry_limit' || stats.stoppedBy === 'deadline' || stats.stoppedBy === 'aborted';
  const fallbackReason = job.ripgrep ? 'ripgrep could not list the folder' : undefined;
  return { kind: 'census', engine: 'node', ...countExtensions(files, job.extensions), partial, listingStopped: false, fallbackReason };
}

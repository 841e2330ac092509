import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ReadBoundary } from '../access/boundary';
import { type CompiledPattern, compilePattern, Grep, GREP_LIMITS, GrepResult } from './grepCore';
import { compileGlobTest, isPortableDenyGlob, normalizeGlob, PathTest } from '../access/globs';
import { Ripgrep, RipgrepExclusion, RipgrepListing, runRipgrep } from './ripgrep';
import { CONTENT_CACHE_LIMITS } from './contentCache';
import { minimatch } from 'minimatch';
import { toRipgrepPattern } from './rgPattern';
import { SECRET_NAME_GLOBS } from '../access/secrets';
import { ALWAYS_SKIPPED_DIRECTORIES, type AncestorRules, ancestorIgnoreText, CutIgnoreFiles, IGNORE_FILE_NAMES, ignoreEntryLeadsOutside, ignoreFileFault, isRepositoryRoot, isWithin, type RuleNamesIn, sortInWalkOrder, walkFiles, WalkOptions, type WalkShard, walkVerdicts } from './walk';
import { crawlLinksAndRules, CrawlResult, ruleNamesIn, rulesAreRipgrepsAt } from './linkCrawl';
import { type Candidate, linkedFiles } from './linkedFiles';
import { FileIndexes, FolderIndex, IndexUnavailable } from './fileIndex';

/**
 * The bodies of find_files, grep_files and the summary's file census, run in
 * a worker thread (see searchPool.ts) so neither a large tree nor a slow
 * regular expression holds the server's event loop. grep_files and the census
 * have two ways to find files, with the same result: ask ripgrep for
 * candidate names, or walk the tree ourselves; find_files always walks names
 * (or reads the warm index).
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
 * stopped and the walk answers.
 */
const SWITCH_TO_WALK = Object.freeze({ grepCandidates: 1000 });

/**
 * Before ripgrep starts, the ordered search (the warm index, or the walk)
 * gets this long: a capped grep (a common word) is done in a
 * few milliseconds that way, where ripgrep must list everything before the
 * first results in path order are known. A full scan loses at most this;
 * a cold one that matched nothing by its first look (FIRST_LOOK_MS), that
 * long.
 */
const ORDERED_HEAD_START_MS = 10;

/** The cold head start's deadlines (walkOnUntil), on the clock of the walk it extends. */
function keepWalking(headStartMs: number, capShare: () => number): WalkOptions['extendDeadline'] {
  const started = performance.now();
  return ({ fractionDone }) => {
    const until = walkOnUntil(performance.now() - started, fractionDone, capShare(), headStartMs);
    return until === undefined ? undefined : started + until;
  };
}

/**
 * A cold head start is first looked at this soon: with no match by then,
 * ripgrep starts at once. A rare word spent the whole head start walking,
 * which ripgrep then walked again: on vite 10 ms of the 47 its grep took,
 * where ripgrep alone took 29. The walk's estimate of its share done is no
 * guide this early (vite's small first directories put it at 0.38 after
 * 2.6 ms of a 46 ms walk), so it is not asked whether the walk would finish.
 */
const FIRST_LOOK_MS = 2;

/**
 * When the cold head start's deadline passes, how long from its start the
 * walk should go on (undefined: hand over to ripgrep). At the cap's rate
 * (`worthWalkingOn`), another head start; else, at the first look, to the
 * end of the head start if anything matched: a capped search's matches may
 * start slowly, and ripgrep would list the whole tree before its first ones.
 */
export function walkOnUntil(elapsedMs: number, fractionDone: number, capShare: number, headStartMs: number): number | undefined {
  if (worthWalkingOn(elapsedMs, fractionDone, capShare)) return elapsedMs + headStartMs;
  return elapsedMs < headStartMs && capShare > 0 ? headStartMs : undefined;
}

/**
 * Whether the ordered walk, past a deadline, should go on from where it is
 * instead of handing over to ripgrep (which, for a capped search,
 * lists the whole tree before the first results in path order are known,
 * and for a common word is then stopped past SWITCH_TO_WALK for the walk to
 * start over): only when, at the rate it has found results, it reaches the
 * cap within MAX_KEEP_WALKING_MS of its start, and within the tree by the
 * estimate of the share walked (walk.ts WalkProgress, from the walk's
 * position in its first directory levels). A full scan never qualifies: the
 * walk is two to three times slower per entry than ripgrep on two cores
 * (measured on vite and on generated 20k and 100k trees), so keeping it going
 * on a guess of the tree's size lost more than it won. The rule was "within
 * double the time walked so far": on a day the machine ran at half speed the
 * first 10 ms found too few matches for that, and a capped grep of a common
 * word on 100,000 files took 12x as long as ripgrep piped to head. A wrong
 * estimate only costs time: either way the answer is the same.
 */
export function worthWalkingOn(elapsedMs: number, fractionDone: number, capShare: number): boolean {
  // A bound on what a wrong estimate can cost.
  if (fractionDone <= 0 || capShare <= 0 || elapsedMs > MAX_KEEP_WALKING_MS) return false;
  return fractionDone / capShare < 1 && elapsedMs / capShare <= MAX_KEEP_WALKING_MS;
}

/**
 * Whether a warm grep's head start should go on reading: for its first two
 * milliseconds; then while the rate so far says the last candidate will be
 * read within the head start, or the cap reached within MAX_KEEP_WALKING_MS
 * (as for the cold walk above: at half the machine's speed a common word's
 * 200 matches took longer than the head start, and the search went to
 * ripgrep, was stopped past SWITCH_TO_WALK and read again: 5x ripgrep piped
 * to head). A rare word in a few thousand files spent the whole head start
 * reading, where ripgrep would have been nearly done (vite: 36 ms against
 * ripgrep's 25).
 */
export function worthReadingOn(elapsedMs: number, headStartMs: number, shareRead: number, capShare: number): boolean {
  if (headStartMs <= 0) return false;
  if (elapsedMs < Math.min(2, headStartMs)) return true;
  if (capShare > 0 && elapsedMs <= MAX_KEEP_WALKING_MS && elapsedMs / capShare <= MAX_KEEP_WALKING_MS) return true;
  return elapsedMs <= headStartMs && shareRead > 0 && elapsedMs / shareRead <= headStartMs;
}

/** The ordered search is never kept going past its head start for longer than this from its start. */
const MAX_KEEP_WALKING_MS = 100;

/** Longer patterns go to the walk: one argument has a limit (E2BIG past 128 KiB on Linux; 32 KiB for a whole command line on Windows). */
const MAX_RIPGREP_PATTERN_BYTES = process.platform === 'win32' ? 30_000 : 120 * 1024;

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
  /** The engine keeps warm indexes (SearchOptions.fileIndex). */
  indexable?: boolean;
  /** Set by the pool when this thread owns the folder's warm file index (fileIndex.ts). */
  useIndex?: boolean;
  /** Overrides ORDERED_HEAD_START_MS. */
  headStartMs?: number;
}

export interface GrepJob extends JobBase {
  kind: 'grep';
  pattern: string;
  glob?: string;
  /** One shard of a grep split across the search threads (grepShards.ts): walks its part, starts no ripgrep; never with the index. */
  shard?: WalkShard;
  /**
   * Before a split (grepShards.ts): walk for the head start only, kept going
   * as a capped search is (`worthWalkingOn`), and answer `unfinished` if it
   * runs out first.
   */
  headStartOnly?: true;
}

export interface FindJob extends JobBase {
  kind: 'find';
  pattern: string;
  /** One shard of a find split across the search threads (findShards.ts); never with the index. */
  shard?: WalkShard;
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

/** Builds the folder's warm index and waits for it (the server, after binding a folder; tests; the benchmark). */
export interface PrepareIndexJob extends JobBase {
  kind: 'prepareIndex';
  /** And wait until the folder's small files are kept in memory too (contentCache.ts): the benchmark's settled thread. */
  waitForContents?: boolean;
}

export type SearchJob = GrepJob | FindJob | CensusJob | PrepareIndexJob;

export type SearchEngineName = 'ripgrep' | 'node' | 'index';

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
  /** A shard's: where its lines are from, for merging (grepShards.ts). */
  shardWalk?: ShardWalk;
  /** A head start only (`GrepJob.headStartOnly`) that ran out: the search is still to be done. */
  unfinished?: true;
}

/** Where one shard's lines are from, for merging them in walk order. */
export interface ShardWalk {
  /** The file of each of its lines. */
  linePaths: string[];
  /** The file of its first match past the cap, when it reached the cap in its part. */
  capPath?: string;
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

export interface PrepareIndexResult extends ResultBase {
  kind: 'prepareIndex';
  /** Whether the folder now has a warm index (false: watching is not possible here). */
  indexed: boolean;
}

export type SearchJobResult = GrepJobResult | FindJobResult | CensusJobResult | PrepareIndexResult;

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

function indexKey(job: SearchJob): string {
  return [job.root, ...job.denyRead].join('\0');
}

/** Runs a search on the index, or cold when there is none or it gave out on the way (IndexUnavailable). */
async function withIndexOrCold<T>(index: FolderIndex | undefined, search: (index: FolderIndex | undefined) => Promise<T>): Promise<T> {
  if (!index) return search(undefined);
  try {
    return await search(index);
  } catch (error) {
    if (error instanceof IndexUnavailable) return search(undefined);
    throw error;
  }
}

export async function runSearchJob(job: SearchJob, control: JobControl, indexes?: FileIndexes): Promise<SearchJobResult> {
  const boundary = await boundaryFor(job);
  const index = (): Promise<FolderIndex | undefined> =>
    job.useIndex && indexes && job.scope.kind === 'directory' ? indexes.current(indexKey(job), boundary) : Promise.resolve(undefined);
  switch (job.kind) {
    // A shard is a part of one walk: the index would answer the whole.
    case 'grep':
      return withIndexOrCold(job.shard ? undefined : await index(), (warm) => grep(job, boundary, control, warm));
    case 'find':
      return withIndexOrCold(job.shard ? undefined : await index(), (warm) => find(job, boundary, control, warm));
    case 'census':
      return census(job, boundary, control);
    case 'prepareIndex': {
      const indexed = job.useIndex === true && indexes !== undefined && (await indexes.prepare(indexKey(job), boundary, job.waitForContents === true));
      return { kind: 'prepareIndex', engine: 'index', indexed, listingStopped: false };
    }
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

type ListedState = 'ok' | 'denied' | 'excluded';

/**
 * Checks each path ripgrep printed against every rule our walk applies, as
 * the walk would: a directory that is skipped or denied hides everything
 * under it; a denied file is named but never read. Directory verdicts are
 * remembered, so a listing costs one check per directory plus one per file.
 */
export class ListedPathCheck {
  private readonly directories = new Map<string, boolean>([['', true]]);

  /**
   * `scope`: the root-relative directory searched. It and the directories
   * above it pass a skipped name (`node_modules`), as the walk from there
   * passes it: a grep of `path: "lib/node_modules/x"` was answered by the
   * walk and by nothing of ripgrep's listing.
   */
  constructor(
    private readonly boundary: ReadBoundary,
    private readonly scope = '',
  ) {}

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
      (isWithin(this.scope, directory) || !ALWAYS_SKIPPED_DIRECTORIES.has(name)) &&
      !this.boundary.denyRules.entryDenialOf(directory);
    this.directories.set(directory, allowed);
    return allowed;
  }
}

const NON_REGULAR_RULES = 'an ignore file in the folder is not a regular file (ripgrep would wait on it)';
const OVERSIZED_RULES = 'an ignore file in the folder has more rules than are used (ripgrep would use them all)';

/**
 * Why ripgrep's listing must not be used, judged from the crawl that ran
 * beside it: an ignore file that is not a regular file (a FIFO never answers:
 * ripgrep is stopped and the walk answers), is over IGNORE_FILE_LIMITS, or is
 * reached through a link out of the folder (then outside bytes would decide
 * what is shown).
 */
function crawlFault(job: SearchJob, crawl: CrawlResult): string | undefined {
  if (crawl.stopped) return 'the folder has more entries than a search lists';
  for (const relativePath of crawl.ruleEntries) {
    const absolute = path.join(job.root, relativePath);
    if (ignoreEntryLeadsOutside(absolute)) return LINKED_RULES;
    let rulesFile = absolute;
    if (path.basename(relativePath) === '.git') {
      // ripgrep reads a repository's .git/info/exclude too: a FIFO there held it to its time limit.
      rulesFile = path.join(absolute, 'info', 'exclude');
      if (!isPresent(rulesFile)) continue;
    }
    const fault = ignoreFileFault(rulesFile);
    if (fault === 'too_large') return OVERSIZED_RULES;
    if (fault !== undefined) return NON_REGULAR_RULES;
  }
  return undefined;
}

const OUTRANKED_RULES = 'ripgrep would rank the ignore rules above the searched directory below those inside it';

/**
 * Why ripgrep, handed the rules from above a search's directory as one
 * `--ignore-file`, which it ranks below every ignore file it finds itself,
 * would leave out other files than the walk, which ranks them as if it had
 * come down from the root: an ignore file inside of a weaker kind than an
 * `.rgignore` or `.ignore` above (the stronger kind wins in the walk, the
 * file inside in ripgrep), or a nested repository inside while git's rules
 * from above are among them (they stop at it in the walk, not in ripgrep).
 * ripgrep's listing is then not used: the walk answers.
 */
function rankingFault(above: AncestorRules | undefined, crawl: CrawlResult, scope: string): string | undefined {
  if (above === undefined) return undefined;
  const strongest = above.kinds.has('.rgignore') ? 0 : above.kinds.has('.ignore') ? 1 : undefined;
  const searched = scope === '.' ? '' : scope;
  for (const entry of crawl.ruleEntries) {
    const name = path.basename(entry);
    if (name === '.git') {
      // A `.git` in the searched directory itself made it a repository root: the git rules from above were left out.
      if (above.kinds.has('.gitignore') && path.dirname(entry) !== (searched || '.')) return OUTRANKED_RULES;
      continue;
    }
    const kind = IGNORE_FILE_NAMES.indexOf(name as (typeof IGNORE_FILE_NAMES)[number]);
    if (strongest !== undefined && kind > strongest) return OUTRANKED_RULES;
  }
  return undefined;
}

/**
 * Which directory names ripgrep's include globs (`--iglob`, each a name
 * pattern: ripgrepNameFilter) take it into, whatever the ignore rules say.
 */
function enteredByIncludeGlobs(includeGlobs: readonly string[]): ((name: string) => boolean) | undefined {
  if (includeGlobs.length === 0) return undefined;
  return (name) => includeGlobs.some((glob) => minimatch(name, glob, { nocase: true, dot: true }));
}

/** Whether anything is at `filePath` (lstat: a link or a FIFO counts). */
function isPresent(filePath: string): boolean {
  try {
    fs.lstatSync(filePath);
    return true;
  } catch {
    return false;
  }
}

interface CheckedListing {
  listing: RipgrepListing;
  /** The files the symlinks the crawl found lead to, inside and allowed (ripgrep lists none of them). */
  linkedFiles: Candidate[];
  /** The ignore files and `.git` of the directories the crawl read, so judging the listing against the rules need not look for them again. */
  ruleNames?: RuleNamesIn;
}

/**
 * Runs one ripgrep listing (no debug log) with the ancestor ignore rules of
 * the scope in a temporary file, and beside it the crawl that finds the
 * symlinks and rule files ripgrep does not report (linkCrawl.ts).
 */
async function listWithRipgrep(
  job: SearchJob,
  boundary: ReadBoundary,
  check: ListedPathCheck,
  control: JobControl,
  query: Omit<Parameters<typeof runRipgrep>[0]['query'], 'scope' | 'ignoreFile' | 'outsideRepository'>,
  cut: CutIgnoreFiles,
  onPath?: (relativePath: string) => boolean,
  /** What the crawl would find, from a warm index (FolderIndex.crawlOf), instead of crawling. */
  crawlOf?: () => Promise<CrawlResult>,
): Promise<CheckedListing> {
  const ripgrep = job.ripgrep as Ripgrep;
  // Below the root, the rules of the directories in between apply too: handed over as a file.
  const rules = ancestorIgnoreText(job.root, job.scope.relativePath, cut);
  let ignoreFile: string | undefined;
  let ignoreDirectory: string | undefined;
  if (rules !== undefined) {
    // A fresh private directory: a predictable name in a shared temp folder could be a planted symlink.
    ignoreDirectory = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'repo-discuss-rg-'));
    ignoreFile = path.join(ignoreDirectory, 'ancestors.ignore');
    await fs.promises.writeFile(ignoreFile, rules.text, { mode: 0o600 });
  }
  let fault: string | undefined;
  try {
    const listed = runRipgrep({
      ripgrep,
      root: job.root,
      query: { ...query, withoutLog: true, scope: job.scope.relativePath, ignoreFile, outsideRepository: !isInsideRepository(job.root) },
      maxPaths: SEARCH_LIMITS.walkMaxEntries,
      onPath,
      // A fault found by the crawl stops ripgrep at once: it may be waiting on a FIFO.
      shouldStop: () => control.shouldStop() || fault !== undefined,
      onSpawn: (pid) => control.onSpawn(pid),
    });
    let crawl: CrawlResult;
    try {
      crawl = crawlOf
        ? await crawlOf()
        : await crawlLinksAndRules(job.root, job.scope.relativePath, SEARCH_LIMITS.walkMaxEntries, () => control.shouldStop(), {
            enteredAnyway: enteredByIncludeGlobs(query.includeGlobs ?? []),
          });
    } catch (error) {
      fault = 'the warm index gave out';
      await listed.catch(() => undefined);
      throw error;
    }
    fault = crawlFault(job, crawl) ?? rankingFault(rules, crawl, job.scope.relativePath);
    const ruleNames = ruleNamesIn(crawl);
    // Resolved while ripgrep lists: after it, each link's walk of its path was on the way to the answer (4 ms for
    // vite's five links, of a grep ripgrep does in 29).
    const linked = fault === undefined ? linkedFiles(boundary, 'blocking', (relativePath) => check.state(relativePath) === 'ok', crawl.symlinks, crawl.linksJudged !== true, ruleNames, job.scope.relativePath) : Promise.resolve([]);
    linked.catch(() => undefined); // its failure is thrown below, once the listing is in
    const listing = await listed;
    if (fault !== undefined) return { listing: { ...listing, error: fault }, linkedFiles: [] };
    return { listing, linkedFiles: await linked, ruleNames };
  } finally {
    if (ignoreDirectory) await fs.promises.rm(ignoreDirectory, { recursive: true, force: true }).catch(() => undefined);
  }
}

function relativeCuts(boundary: ReadBoundary, cut: CutIgnoreFiles): string[] {
  return [...cut].map((filePath) => boundary.relativeOf(filePath));
}

/**
 * Whether a name the walk of names listed is, now, a regular file at that
 * very path: its real path is the path itself (no component is a link),
 * which is inside the root. A file that is not a link has that real path
 * when its directory has its own, so each directory's real path is asked
 * once: a realpath per name was a fifth of a capped find.
 */
function plainFileInsideCheck(root: string): (relativePath: string) => boolean {
  const directoryIsReal = new Map<string, boolean>();
  return (relativePath) => {
    const absolute = path.join(root, relativePath);
    try {
      if (!fs.lstatSync(absolute).isFile()) return false;
      const directory = path.dirname(absolute);
      let real = directoryIsReal.get(directory);
      if (real === undefined) directoryIsReal.set(directory, (real = fs.realpathSync.native(directory) === directory));
      return real;
    } catch {
      return false;
    }
  };
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


/**
 * The secret and policy globs ripgrep skips by itself, as a pre-filter only:
 * every path it prints goes through ListedPathCheck and every file through
 * the boundary's verified open, both case-free, so a `.ENV` ripgrep lets
 * through is refused there. Case-sensitive, because ripgrep matches a
 * case-free glob as a regular expression against every path it walks
 * (a plain name or extension is a hash lookup): the 40 case-free globs cost
 * 13% of a full grep of 100,000 files and 40% of listing them
 * (docs/performance-history.md).
 */
function exclusionsFor(boundary: ReadBoundary, kind: 'grep' | 'find'): RipgrepExclusion[] {
  if (kind === 'find') {
    // Listing names only (the census), where a denied file is still a file: only denied directories are skipped.
    return SECRET_NAME_GLOBS.map((glob) => ({ glob: `!${glob}/`, caseInsensitive: false }));
  }
  const policy = boundary.denyRules.policyGlobs.filter(isPortableDenyGlob);
  return [...SECRET_NAME_GLOBS, ...policy].map((glob) => ({ glob: `!${glob}`, caseInsensitive: false }));
}

/**
 * A pre-filter ripgrep can apply itself (`--iglob`), naming a superset of the
 * files the glob matches: the glob's last segment, when it is a plain name
 * pattern, matched case-free against base names. Anything subtler is left to
 * the exact test every listed path goes through.
 */
export function ripgrepNameFilter(glob: string | undefined): string[] {
  if (glob === undefined) return [];
  const normalized = normalizeGlob(glob);
  if (normalized === '' || normalized.startsWith('!')) return [];
  const last = normalized.slice(normalized.lastIndexOf('/') + 1);
  // A glob's `.` and `..` segments are dropped when it is matched (`**/.` is `**`): they name no file.
  if (!/^[A-Za-z0-9._*?-]+$/.test(last) || /^\**$/.test(last) || last === '.' || last === '..') return [];
  return [last];
}

/** A file as the ordered search hands it out, from the warm index or the walk. */
interface IndexedFileLike {
  relativePath: string;
  realPath: string;
  denied: boolean;
  /** A symlinked file, resolved through the boundary (the walk's; the index does not say). */
  viaLink?: boolean;
  /** The walk's: where to open the file inside its directory (walk.ts `WalkFile.inDirectory`), during the visit only. */
  inDirectory?: { fd: number; name: string };
}

type OrderedOutcome = 'finished' | 'capped' | 'out_of_time' | 'entry_limit';

/**
 * The ordered search: files in walk order from the warm index, or from the
 * walk, fed to `visit` until it says stop, the deadline passes or all are seen.
 */
async function orderedFiles(
  job: SearchJob,
  boundary: ReadBoundary,
  control: JobControl,
  index: FolderIndex | undefined,
  deadline: number | undefined,
  visit: (file: IndexedFileLike) => boolean | void,
  extendDeadline?: WalkOptions['extendDeadline'],
  walkAs?: Pick<WalkOptions, 'wanted' | 'wantedName' | 'listInsideParents' | 'shard' | 'fileShard'>,
): Promise<{ outcome: OrderedOutcome; changedDirectories: number; cutIgnoreFiles: string[] }> {
  if (index) {
    let seen = 0;
    for await (const chunk of index.freshFiles(job.scope.relativePath)) {
      for (const file of chunk) {
        if ((++seen & 63) === 0 && ((deadline !== undefined && performance.now() > deadline) || control.shouldStop())) {
          return { outcome: 'out_of_time', changedDirectories: 0, cutIgnoreFiles: index.cutIgnoreFiles };
        }
        if (visit(file) === false) return { outcome: 'capped', changedDirectories: 0, cutIgnoreFiles: index.cutIgnoreFiles };
      }
    }
    return { outcome: 'finished', changedDirectories: 0, cutIgnoreFiles: index.cutIgnoreFiles };
  }
  const stats = await walkFiles(
    { boundary, startDirectory: job.scope.realPath, shouldStop: () => control.shouldStop(), maxEntries: SEARCH_LIMITS.walkMaxEntries, deadline, extendDeadline, ...walkAs },
    (file) => visit({ relativePath: file.relativePath, realPath: file.realPath, denied: file.denial !== undefined, viaLink: file.viaLink === true, inDirectory: file.inDirectory }),
  );
  const outcome: OrderedOutcome =
    stats.stoppedBy === undefined ? 'finished' : stats.stoppedBy === 'visitor' ? 'capped' : stats.stoppedBy === 'entry_limit' ? 'entry_limit' : 'out_of_time';
  return { outcome, changedDirectories: stats.changedDirectories, cutIgnoreFiles: stats.cutIgnoreFiles };
}

// ---------------------------------------------------------------- grep_files

function emptyGrep(engine: SearchJobResult['engine']): GrepJobResult {
  return { kind: 'grep', engine, lines: [], matchCount: 0, more: false, oversized: [], changedFiles: 0, filesFromMemory: 0, listingStopped: false, namedFileBinary: false };
}

/**
 * grep_files over the ordered files: the index's or the walk's. Undefined when the deadline passed first.
 * `shard`: only the files the walk deals to this shard, with where each line is from (grepShards.ts).
 */
async function grepOrdered(
  job: GrepJob,
  boundary: ReadBoundary,
  control: JobControl,
  index: FolderIndex | undefined,
  globTest: PathTest | undefined,
  asHeadStart: boolean,
  shard?: WalkShard,
): Promise<GrepJobResult | undefined> {
  const placed: ShardWalk | undefined = shard ? { linePaths: [] } : undefined;
  const searcher = new Grep(compiledPattern(job), index?.contents, placed);
  const headStart = job.headStartMs ?? ORDERED_HEAD_START_MS;
  const extend = asHeadStart ? keepWalking(headStart, () => searcher.result.matchCount / GREP_LIMITS.maxMatches) : undefined;
  // The index's files are handed out without a look at the rate (orderedFiles): it gets the head start whole.
  const deadline = asHeadStart ? performance.now() + (index ? headStart : Math.min(FIRST_LOOK_MS, headStart)) : undefined;
  const ordered = await orderedFiles(
    job,
    boundary,
    control,
    index,
    deadline,
    (file) => {
      // Secret and policy-denied files are skipped silently: their contents never reach the model.
      if (file.denied) return;
      if (globTest && !globTest(file.relativePath)) return;
      return searcher.searchFile(file.realPath, file.relativePath, file.inDirectory) !== 'capped';
    },
    extend,
    // Each file opened inside its directory's descriptor: the verified open's realpath, stat and readlink of
    // every file were most of a walk's grep.
    index ? undefined : { listInsideParents: true, fileShard: shard },
  );
  if (ordered.outcome === 'out_of_time' && !control.shouldStop()) return undefined;
  return {
    ...emptyGrep(index ? 'index' : 'node'),
    ...searcher.result,
    listingStopped: ordered.outcome === 'entry_limit',
    changedEntries: searcher.result.changedFiles + ordered.changedDirectories,
    cutIgnoreFiles: ordered.cutIgnoreFiles,
    shardWalk: placed,
  };
}

/** The pattern as ripgrep is given it, or why ripgrep cannot narrow the files for it (the walk searches instead). */
function ripgrepPatternFor(pattern: CompiledPattern): { translated: RipgrepPattern; refusal?: undefined } | { translated?: undefined; refusal: string } {
  const translated = toRipgrepPattern(pattern.source, pattern.unicode);
  if (!translated) return { refusal: 'the pattern uses JavaScript regular expression features ripgrep cannot pre-filter' };
  if (Buffer.byteLength(translated.pattern) > MAX_RIPGREP_PATTERN_BYTES) return { refusal: 'the pattern is too long for a ripgrep command line' };
  return { translated };
}

/** Whether a grep of `pattern` (valid, from the model) can go through ripgrep, where there is one. */
export function ripgrepCanSearch(pattern: string): boolean {
  const compiled = compilePattern(pattern);
  return typeof compiled !== 'string' && ripgrepPatternFor(compiled).translated !== undefined;
}

type RipgrepPattern = NonNullable<ReturnType<typeof toRipgrepPattern>>;

function compiledPattern(job: GrepJob): CompiledPattern {
  const pattern = compilePattern(job.pattern);
  if (typeof pattern === 'string') throw new Error(pattern); // validated before the job was sent
  return pattern;
}

async function grep(job: GrepJob, boundary: ReadBoundary, control: JobControl, index: FolderIndex | undefined): Promise<GrepJobResult> {
  const pattern = compiledPattern(job);
  const globTest = job.glob !== undefined && normalizeGlob(job.glob) !== '' ? compileGlobTest(job.glob) : undefined;

  if (job.scope.kind === 'file') {
    // Named explicitly, so searched even if ignored; the boundary already refused secrets.
    const searcher = new Grep(pattern);
    const result = emptyGrep('node');
    if (globTest && !globTest(job.scope.relativePath)) return result;
    const outcome = searcher.searchFile(job.scope.realPath, job.scope.relativePath);
    return { ...result, ...searcher.result, namedFileBinary: outcome === 'binary' };
  }

  let switchedToWalk = false;
  const { translated, refusal } = job.ripgrep ? ripgrepPatternFor(pattern) : { translated: undefined, refusal: undefined };
  let fallbackReason = refusal;
  // A shard walks its part to the end or its own cap.
  if (job.shard) return { ...((await grepOrdered(job, boundary, control, undefined, globTest, false, job.shard)) as GrepJobResult), fallbackReason };
  if (job.headStartOnly) {
    const headStart = job.headStartMs ?? ORDERED_HEAD_START_MS;
    const quick = headStart > 0 ? await grepOrdered(job, boundary, control, index, globTest, true) : undefined;
    return quick ? { ...quick, fallbackReason } : { ...emptyGrep('node'), unfinished: true };
  }
  if (job.ripgrep && translated) {
    // A head start for the ordered search: a capped search ends here.
    const headStart = job.headStartMs ?? ORDERED_HEAD_START_MS;
    const quick = index
      ? await grepIndexedHeadStart(job, control, index, globTest)
      : headStart > 0
        ? await grepOrdered(job, boundary, control, index, globTest, true)
        : undefined;
    if (quick) return quick;
    // Without the kept contents: ripgrep names files the index may not hold (one made and gone in a moment), whose
    // copies nothing would ever drop.
    const searcher = new Grep(pattern);
    let candidateCount = 0;
    const cut: CutIgnoreFiles = new Set();
    const includeGlobs = ripgrepNameFilter(job.glob);
    const check = new ListedPathCheck(boundary, job.scope.relativePath === '.' ? '' : job.scope.relativePath);
    const { listing, linkedFiles, ruleNames } = await listWithRipgrep(
      job,
      boundary,
      check,
      control,
      { mode: 'matches', pattern: translated, exclusions: exclusionsFor(boundary, 'grep'), includeGlobs },
      cut,
      (relativePath) => (globTest && !globTest(relativePath)) || ++candidateCount <= SWITCH_TO_WALK.grepCandidates,
      // The index lists only what the walk enters: where ripgrep may enter more (an include glob, a scope, names
      // matched case-free), a FIFO ignore file there would hold it, so the crawl reads what ripgrep may enter.
      index && includeGlobs.length === 0 && rulesAreRipgrepsAt(job.scope.relativePath) ? () => index.crawlOf(job.scope.relativePath) : undefined,
    );
    if (listing.abandoned) {
      switchedToWalk = true;
    } else if (listing.error === undefined) {
      // ripgrep's include glob beats ignore rules for files: those rules are applied here again.
      const notIgnored = includeGlobs.length > 0 ? walkVerdicts(boundary, new Set(), ruleNames, job.scope.relativePath) : undefined;
      const candidates: Candidate[] = [];
      for (const relativePath of listing.paths) {
        // Defence in depth: ripgrep was told the same rules, but what it prints is checked again.
        if (globTest && !globTest(relativePath)) continue;
        if (check.state(relativePath) !== 'ok') continue;
        if (notIgnored && !notIgnored(relativePath)) continue;
        candidates.push({ relativePath, realPath: path.join(job.root, relativePath) });
      }
      candidates.push(...linkedFiles);
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
        ...emptyGrep(index ? 'index' : 'ripgrep'),
        ...searcher.result,
        listingStopped: listing.truncated,
        changedEntries: searcher.result.changedFiles,
        cutIgnoreFiles: relativeCuts(boundary, cut),
      };
    } else {
      fallbackReason = listing.error;
    }
  }
  const result = (await grepOrdered(job, boundary, control, index, globTest, false)) as GrepJobResult;
  return { ...result, fallbackReason, switchedToWalk };
}

/**
 * The head start of a grep_files on a warm folder: the index's candidates
 * read in walk order in this thread, as the index hands them out checked
 * against the disk. A capped search ends here, as does one whose candidates
 * are all read within the head start; undefined otherwise: ripgrep then
 * searches the rest with the index in place of the crawl (listWithRipgrep).
 * Handing ripgrep the candidates by name instead measured no faster
 * (docs/performance-history.md) and needed a query and batching of its own.
 */
async function grepIndexedHeadStart(job: GrepJob, control: JobControl, index: FolderIndex, globTest: PathTest | undefined): Promise<GrepJobResult | undefined> {
  const searcher = new Grep(compiledPattern(job), index.contents);
  // With every small file in memory, reading on to the end beats starting ripgrep, which reads them all from
  // the disk; until the files that must be read from the disk add up to more than ripgrep would take to narrow.
  let readToTheEnd = index.contents.filled;
  const result = (): GrepJobResult => ({
    ...emptyGrep('index'),
    ...searcher.result,
    changedEntries: searcher.result.changedFiles,
    cutIgnoreFiles: index.cutIgnoreFiles,
  });
  const started = performance.now();
  const headStartMs = job.headStartMs ?? ORDERED_HEAD_START_MS;
  const inScope = index.fileCountIn(job.scope.relativePath);
  let read = 0;
  let handedOut = 0;
  for await (const chunk of index.freshFiles(job.scope.relativePath)) {
    for (const file of chunk) {
      handedOut += 1;
      // Secret and policy-denied files are skipped silently: their contents never reach the model.
      if (file.denied || (globTest && !globTest(file.relativePath))) continue;
      // Asked at once when the reads from the disk pass the limit: each file may be megabytes.
      const crossed = readToTheEnd && searcher.bytesFromDisk > CONTENT_CACHE_LIMITS.maxDiskBytesReadToTheEnd;
      if (crossed) readToTheEnd = false;
      // Else every 16 files: 64 small files took 3 ms, past the 2 ms after which a full scan gives way to ripgrep.
      if ((crossed || (++read & 15) === 0) && (control.shouldStop() || (!readToTheEnd && !worthReadingOn(performance.now() - started, headStartMs, handedOut / inScope, searcher.result.matchCount / GREP_LIMITS.maxMatches)))) {
        return control.shouldStop() ? result() : undefined;
      }
      if (searcher.searchFile(file.realPath, file.relativePath) === 'capped') return result();
    }
  }
  return result();
}

// ---------------------------------------------------------------- find_files

/** find_files on the ordered files (the index's or the walk's), which stop at the cap. */
async function findOrdered(job: FindJob, boundary: ReadBoundary, control: JobControl, index: FolderIndex | undefined, matches: PathTest, wantedName?: (name: string) => boolean): Promise<FindJobResult> {
  const max = SEARCH_LIMITS.findMaxResults;
  const results: Array<FindJobResult['results'][number] & { linked: boolean }> = [];
  let more = false;
  const ordered = await orderedFiles(
    job,
    boundary,
    control,
    index,
    undefined,
    (file) => {
      // The walk asked `matches` already (`wanted`); the index hands out every file.
      if (index && !matches(file.relativePath)) return;
      if (results.length >= max) {
        more = true;
        return false;
      }
      results.push({ relativePath: file.relativePath, denied: file.denied, linked: file.viaLink === true });
    },
    undefined,
    // Names only: nothing is read, and each name shown is checked below.
    index ? undefined : { wanted: matches, wantedName, listInsideParents: true, shard: job.shard },
  );
  let changedEntries = ordered.changedDirectories;
  let shown: FindJobResult['results'] = [];
  if (index) {
    // The index was checked against the disk when the search began: what is shown is checked again now.
    for (const result of results) {
      if (await stillListed(job, boundary, result.relativePath)) shown.push({ relativePath: result.relativePath, denied: result.denied });
      else changedEntries += 1;
    }
  } else {
    // Each directory was proven as it was opened (walk.ts listInsideParents); a file swapped for a link since is
    // not shown: a name is shown only if it is still a regular file reached through no link. Links were
    // resolved through the boundary as they were found.
    const isPlainFileInside = plainFileInsideCheck(job.root);
    for (const result of results) {
      if (result.linked || isPlainFileInside(result.relativePath)) shown.push({ relativePath: result.relativePath, denied: result.denied });
      else changedEntries += 1;
    }
  }
  return {
    kind: 'find',
    engine: index ? 'index' : 'node',
    results: shown,
    more,
    listingStopped: ordered.outcome === 'entry_limit',
    changedEntries,
    cutIgnoreFiles: ordered.cutIgnoreFiles,
  };
}

/**
 * Whether an indexed path is still a file, or a link to one inside. One
 * lstat: every name shown came from the index's own walk inside the folder,
 * so a directory swapped for a link since cannot bring in a name from
 * outside (the next search's check walks it again); this only drops what is
 * gone.
 */
async function stillListed(job: SearchJob, boundary: ReadBoundary, relativePath: string): Promise<boolean> {
  const absolute = path.join(job.root, relativePath);
  try {
    const stats = fs.lstatSync(absolute);
    if (stats.isFile()) return true;
    if (!stats.isSymbolicLink()) return false;
  } catch {
    return false;
  }
  const resolved = await boundary.resolve(absolute);
  return resolved.ok && resolved.kind === 'file';
}

async function find(job: FindJob, boundary: ReadBoundary, control: JobControl, index: FolderIndex | undefined): Promise<FindJobResult> {
  const test = compileGlobTest(job.pattern);
  const scopePrefix = job.scope.relativePath === '.' ? '' : `${job.scope.relativePath}/`;
  // Also match relative to `path`, so {"path": "src", "pattern": "lib/*.ts"} finds src/lib/a.ts.
  const exactly = (relativePath: string): boolean =>
    test(relativePath) || (scopePrefix !== '' && relativePath.startsWith(scopePrefix) && test(relativePath.slice(scopePrefix.length)));
  // The exact test costs about a microsecond a path: a base-name pre-filter first keeps a find on 100,000 files fast.
  const nameFilter = ripgrepNameFilter(job.pattern)[0];
  const prefilter = nameFilter === undefined ? undefined : new RegExp(`(?:^|/)${nameFilter.replace(/[.+^${}()|[\]\\-]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`, 'i');
  const matches = prefilter ? (relativePath: string): boolean => prefilter.test(relativePath) && exactly(relativePath) : exactly;
  // Not through ripgrep: beside it, the crawl that finds the links it passes over and checks
  // the ignore files it reads must list every directory, which is what a walk of names costs.
  return findOrdered(job, boundary, control, index, matches, prefilter && ((name) => prefilter.test(name)));
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
  // Awaited: the census runs on the main thread.
  for (const link of await linkedFiles(boundary, 'awaited', (relativePath) => check.state(relativePath) === 'ok', listing.symlinks, false)) files.push(link.relativePath);
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

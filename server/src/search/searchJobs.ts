import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ReadBoundary } from '../access/boundary';
import { type CompiledPattern, compilePattern, Grep, GREP_LIMITS, GrepResult } from './grepCore';
import { compileGlobTest, normalizeGlob, PathTest } from '../access/globs';
import { Ripgrep, runRipgrep } from './ripgrep';
import { CONTENT_CACHE_LIMITS } from './contentCache';
import { toRipgrepPattern } from './rgPattern';
import { CutIgnoreFiles } from './ignoreRules';
import { sortInWalkOrder } from './relativePaths';
import { walkFiles, WalkOptions, type WalkShard, walkVerdicts } from './walk';
import { rulesAreRipgrepsAt } from './linkCrawl';
import { type Candidate, linkedFiles } from './linkedFiles';
import { FileIndexes, FolderIndex, IndexUnavailable } from './fileIndex';
import { FIRST_LOOK_MS, keepWalking, ORDERED_HEAD_START_MS, worthReadingOn } from './headStart';
import { entriesNamed, exclusionsFor, isInsideRepository, keepsRulesAboveNestedRepository, ListedPathCheck, listWithRipgrep, passesOverNestedRepositories, readRulesThroughLink, ripgrepNameFilter } from './ripgrepListing';

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
  /** A shard's: the directories that changed, not in `changedEntries`, merged across the shards as a union (walk.ts WalkStats). */
  changedSharedDirectories?: string[];
  /** Root-relative paths of ignore files of which only the first rules counted (ignoreRules.ts IGNORE_FILE_LIMITS). */
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
): Promise<{ outcome: OrderedOutcome; changedDirectories: number; changedSharedDirectories: string[]; cutIgnoreFiles: string[] }> {
  if (index) {
    let seen = 0;
    for await (const chunk of index.freshFiles(job.scope.relativePath)) {
      for (const file of chunk) {
        if ((++seen & 63) === 0 && ((deadline !== undefined && performance.now() > deadline) || control.shouldStop())) {
          return { outcome: 'out_of_time', changedDirectories: 0, changedSharedDirectories: [], cutIgnoreFiles: index.cutIgnoreFiles };
        }
        if (visit(file) === false) return { outcome: 'capped', changedDirectories: 0, changedSharedDirectories: [], cutIgnoreFiles: index.cutIgnoreFiles };
      }
    }
    return { outcome: 'finished', changedDirectories: 0, changedSharedDirectories: [], cutIgnoreFiles: index.cutIgnoreFiles };
  }
  const stats = await walkFiles(
    { boundary, startDirectory: job.scope.realPath, shouldStop: () => control.shouldStop(), maxEntries: SEARCH_LIMITS.walkMaxEntries, deadline, extendDeadline, ...walkAs },
    (file) => visit({ relativePath: file.relativePath, realPath: file.realPath, denied: file.denial !== undefined, viaLink: file.viaLink === true, inDirectory: file.inDirectory }),
  );
  const outcome: OrderedOutcome =
    stats.stoppedBy === undefined ? 'finished' : stats.stoppedBy === 'visitor' ? 'capped' : stats.stoppedBy === 'entry_limit' ? 'entry_limit' : 'out_of_time';
  return { outcome, changedDirectories: stats.changedDirectories, changedSharedDirectories: stats.changedSharedDirectories, cutIgnoreFiles: stats.cutIgnoreFiles };
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
    ...(shard ? { changedSharedDirectories: ordered.changedSharedDirectories } : {}),
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

function relativeCuts(boundary: ReadBoundary, cut: CutIgnoreFiles): string[] {
  return [...cut].map((filePath) => boundary.relativeOf(filePath));
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
      SEARCH_LIMITS.walkMaxEntries,
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
    ...(job.shard ? { changedSharedDirectories: ordered.changedSharedDirectories } : {}),
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
 * The census from ripgrep's listing, or undefined when ripgrep failed or its
 * listing may not be used (rules read through a link, or kept inside a
 * nested repository: keepsRulesAboveNestedRepository). Safe
 * to run on the event loop: ripgrep does the walking in its own process and
 * at most `maxEntries` names come back, so the server's first discussion of a
 * folder need not wait for a search thread to start.
 */
export async function censusWithRipgrep(job: CensusJob, boundary: ReadBoundary, control: JobControl): Promise<CensusJobResult | undefined> {
  if (!job.ripgrep) return undefined;
  const started = Date.now();
  const expired = (): boolean => control.shouldStop() || Date.now() - started > job.timeMs;
  const outsideRepository = !isInsideRepository(job.root);
  const listing = await runRipgrep({
    ripgrep: job.ripgrep,
    root: job.root,
    query: {
      mode: 'files',
      scope: '.',
      exclusions: exclusionsFor(boundary, 'find'),
      // In path order, so a census stopped at its cap counts the same files every time.
      sorted: true,
      outsideRepository,
    },
    maxPaths: job.maxEntries,
    shouldStop: expired,
    onSpawn: (pid) => control.onSpawn(pid),
  });
  if (listing.error !== undefined || readRulesThroughLink(job, listing)) return undefined;
  // Only for a ripgrep it concerns: the listing is gone through on the main thread, a pass over 20,000 names each.
  if (passesOverNestedRepositories(job.ripgrep, outsideRepository)) {
    // The `.git` entries ripgrep passed over are in its log; the `.gitignore` files in its listing (hidden files),
    // or in its log where rules leave them out (a `.gitignore` naming itself).
    const gitignoreFiles = [...entriesNamed(listing.paths, '.gitignore'), ...entriesNamed(listing.ruleEntries, '.gitignore')];
    if (keepsRulesAboveNestedRepository(entriesNamed(listing.ruleEntries, '.git'), gitignoreFiles)) return undefined;
  }
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

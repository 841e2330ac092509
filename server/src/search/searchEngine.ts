import { findRipgrep } from './locateRipgrep';
import type { Ripgrep, RipgrepOption } from './ripgrep';
import { PoolOutcome, SearchPool, sharedSearchPool } from './searchPool';
import type { FindJob, FindJobResult, GrepJob, GrepJobResult, SearchEngineName, SearchJob, SearchJobResult } from './searchJobs';
import { ripgrepCanSearch } from './searchJobs';
import { FIND_SHARDS, findShardJobs, mergeFindShards, namesManyFiles } from './findShards';
import { GREP_SHARDS, grepShardJobs, mergeGrepShards } from './grepShards';

/**
 * How one toolbox searches: with ripgrep when one is configured or on PATH,
 * otherwise with the pure-Node walk, always in a worker thread and under a
 * time limit.
 */

export interface SearchOptions {
  /** A ripgrep binary to use; `null` turns ripgrep off; undefined looks for `rg` on PATH (once per process). */
  ripgrepPath?: RipgrepOption;
  /** A search that runs longer is stopped and answered with a failure. Default 15 s. */
  timeoutMs?: number;
  /** Default: the pool shared by the whole process. */
  pool?: SearchPool;
  /** Keep a warm file index per folder searched (fileIndex.ts); the server turns it on (repoAccess.ts). Default: off, every search cold. */
  fileIndex?: boolean;
  /** How long the ordered search runs before ripgrep starts (headStart.ts ORDERED_HEAD_START_MS); 0 for none. */
  orderedHeadStartMs?: number;
  /** Told once, when ripgrep has been looked for, which way searches run. */
  log?: (message: string) => void;
}

export const DEFAULT_SEARCH_TIMEOUT_MS = 15_000;

/** A job as a tool describes it; the engine adds its ripgrep. */
type JobWithoutRipgrep = SearchJob extends infer Job ? (Job extends SearchJob ? Omit<Job, 'ripgrep' | 'indexable' | 'useIndex' | 'headStartMs'> : never) : never;

/** Counts of what actually ran, for tests and the benchmark. */
export interface SearchCounts {
  ripgrep: number;
  node: number;
  /** Answered from the warm file index (fileIndex.ts). */
  index: number;
  /** Searches where ripgrep found so many files that the ordered walk finished the job. */
  switchedToWalk: number;
  /** Why ripgrep was passed over when it was available. */
  fallbackReasons: string[];
}

export class SearchEngine {
  readonly timeoutMs: number;
  readonly counts: SearchCounts = { ripgrep: 0, node: 0, index: 0, switchedToWalk: 0, fallbackReasons: [] };
  private readonly pool: SearchPool;
  private located?: Promise<Ripgrep | undefined>;
  /** Folders whose first search from the warm index was logged (once each: the log shows when a folder went warm). */
  private readonly announcedIndexes = new Set<string>();
  private readonly announcedContents = new Set<string>();
  /** Folders whose index warm() has seen built (logged once each). */
  private readonly indexedFolders = new Set<string>();
  /** Index preparations under way, by folder and deny list. */
  private readonly preparing = new Map<string, Promise<boolean>>();
  /** Folders whose last index preparation answered that they can have none (past the walk's cap). */
  private readonly foldersWithoutIndex = new Set<string>();

  constructor(private readonly options: SearchOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS;
    this.pool = options.pool ?? sharedSearchPool();
  }

  /**
   * The ripgrep this engine uses, if any. Looked up once: on first use, or
   * earlier when the server prepares after its initialization.
   */
  ripgrep(): Promise<Ripgrep | undefined> {
    if (!this.located) {
      const option = this.options.ripgrepPath;
      this.located = findRipgrep(option);
      void this.located.then((ripgrep) => {
        const why = option === null ? 'ripgrep is turned off' : option ? `no usable ripgrep at ${option}` : 'no usable rg on PATH';
        this.options.log?.(ripgrep ? `Searching with ${ripgrep.version} (${ripgrep.path}).` : `Searching with the built-in walk: ${why}.`);
      });
    }
    return this.located;
  }

  /**
   * Prepares the first search: finds ripgrep and starts a search thread; given
   * a folder, also builds its warm index in that thread, so the model's first
   * search of it is already warm. Settles once the index is ready (or could
   * not be built); never rejects.
   */
  async warm(folder?: { root: string; denyRead: readonly string[] }): Promise<void> {
    const located = this.ripgrep();
    try {
      this.pool.warm();
    } catch {
      // No thread could be started (the system is out of them): the first search tries again.
    }
    // Asked on every question: an index dropped while idle, or lost with its thread, is built again.
    if (folder && this.options.fileIndex === true) {
      const ready = await this.prepareIndex(folder.root, folder.denyRead).catch(() => false);
      if (ready && !this.indexedFolders.has(folder.root)) {
        this.indexedFolders.add(folder.root);
        this.options.log?.(`The warm file index of ${folder.root} is ready.`);
      }
    }
    await located.catch(() => undefined);
  }

  async run(job: JobWithoutRipgrep, signal?: AbortSignal): Promise<PoolOutcome> {
    const ripgrep = await this.ripgrep();
    const full = { ...job, ripgrep, indexable: this.options.fileIndex === true, headStartMs: this.options.orderedHeadStartMs } as SearchJob;
    const outcome = this.splitsFind(full)
      ? await this.runFindShards(full, signal)
      : this.splitsGrep(full)
        ? await this.runGrepShards(full, signal)
        : await this.pool.run(full, this.timeoutMs, { signal });
    if (outcome.ok && outcome.result.kind !== 'prepareIndex') {
      this.count(outcome.result.engine);
      if (outcome.result.engine === 'index' && !this.announcedIndexes.has(job.root)) {
        this.announcedIndexes.add(job.root);
        this.options.log?.(`Searching ${job.root} from its warm file index.`);
      }
      if (outcome.result.kind === 'grep' && outcome.result.filesFromMemory > 0 && !this.announcedContents.has(job.root)) {
        this.announcedContents.add(job.root);
        this.options.log?.(`Grepping ${job.root} from the file contents kept in memory.`);
      }
      if (outcome.result.switchedToWalk) this.counts.switchedToWalk += 1;
      if (ripgrep && outcome.result.fallbackReason) this.counts.fallbackReasons.push(outcome.result.fallbackReason);
    }
    return outcome;
  }

  /**
   * Whether a find runs as shards on the search threads (findShards.ts):
   * when it can have no warm index (this engine keeps none, or the folder is
   * past the walk's cap), its glob is not one that names many files, and
   * there is more than one thread to run them.
   */
  private splitsFind(job: SearchJob): job is FindJob {
    if (job.kind !== 'find' || job.scope.kind !== 'directory' || this.pool.parallelism < FIND_SHARDS || namesManyFiles(job.pattern)) return false;
    return this.options.fileIndex !== true || this.foldersWithoutIndex.has(job.root);
  }

  private runFindShards(job: FindJob, signal?: AbortSignal): Promise<PoolOutcome> {
    return this.runShards<FindJobResult>(findShardJobs(job), mergeFindShards, signal);
  }

  /** The shards at once on the pool's threads: the first that failed, else their results merged. */
  private async runShards<Result extends SearchJobResult>(shards: SearchJob[], merge: (results: Result[]) => Result, signal?: AbortSignal): Promise<PoolOutcome> {
    const outcomes = await Promise.all(shards.map((shard) => this.pool.run(shard, this.timeoutMs, { signal })));
    const failed = outcomes.find((outcome) => !outcome.ok);
    if (failed) return failed;
    return { ok: true, result: merge(outcomes.map((outcome) => (outcome as Extract<PoolOutcome, { ok: true }>).result as Result)) };
  }

  /**
   * Whether a grep runs as shards on the search threads (grepShards.ts):
   * over a directory, when it can have no warm index (as for a find), ripgrep
   * will not search it (there is none, or it cannot narrow by the pattern),
   * and there is more than one thread to run them.
   */
  private splitsGrep(job: SearchJob): job is GrepJob {
    if (job.kind !== 'grep' || job.scope.kind !== 'directory' || this.pool.parallelism < GREP_SHARDS) return false;
    if (this.options.fileIndex === true && !this.foldersWithoutIndex.has(job.root)) return false;
    return !job.ripgrep || !ripgrepCanSearch(job.pattern);
  }

  /**
   * One walk's head start first, as ripgrep's search has: a capped search of a common word or a small tree is done
   * there, where the shards, each walking twice as far to its own cap, took up to twice as long. Then the shards.
   */
  private async runGrepShards(job: GrepJob, signal?: AbortSignal): Promise<PoolOutcome> {
    const first = await this.pool.run({ ...job, headStartOnly: true }, this.timeoutMs, { signal });
    if (!first.ok || first.result.kind !== 'grep' || first.result.unfinished !== true) return first;
    return this.runShards<GrepJobResult>(grepShardJobs(job), mergeGrepShards, signal);
  }

  /**
   * Builds the folder's warm file index now and waits for it; whether the
   * folder has one (false when it is turned off or the folder is past the walk's cap: searches stay cold).
   * `waitForContents`: and until its small files are kept in memory (contentCache.ts).
   */
  prepareIndex(root: string, denyRead: readonly string[], options: { waitForContents?: boolean } = {}): Promise<boolean> {
    if (this.options.fileIndex !== true) return Promise.resolve(false);
    const waitForContents = options.waitForContents === true;
    // Every question asks (warm()), eight discussions at once: they share the one preparation under way.
    const key = [root, ...denyRead, waitForContents ? 'contents' : ''].join('\0');
    const shared = this.preparing.get(key);
    if (shared) return shared;
    const preparing = this.run({ kind: 'prepareIndex', root, denyRead, scope: { relativePath: '.', realPath: root, kind: 'directory' }, waitForContents }).then((outcome) => {
      const indexed = outcome.ok && outcome.result.kind === 'prepareIndex' && outcome.result.indexed;
      // Past the walk's cap the folder stays cold: its finds are split (splitsFind). A failed preparation says nothing.
      if (outcome.ok && !indexed) this.foldersWithoutIndex.add(root);
      else if (indexed) this.foldersWithoutIndex.delete(root);
      return indexed;
    });
    this.preparing.set(key, preparing);
    const forget = (): void => void this.preparing.delete(key);
    preparing.then(forget, forget);
    return preparing;
  }

  private count(engine: SearchEngineName): void {
    this.counts[engine] += 1;
  }
}

let defaultEngine: SearchEngine | undefined;

/** The engine toolboxes get when none is given: ripgrep from PATH if present. */
export function defaultSearchEngine(): SearchEngine {
  defaultEngine ??= new SearchEngine();
  return defaultEngine;
}

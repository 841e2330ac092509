import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isSameOrInside, ReadBoundary } from '../access/boundary';
import { movedBuffers, packInSlices, PackedRecords } from '../search/packedRecords';
import type { SearchJob } from '../search/searchJobs';
import { PoolOutcome, SearchPool, type SearchPoolOptions } from '../search/searchPool';
import { WORKER_YOUNG_GENERATION_MB } from '../heapTuning';
import { AS_UPKEEP, nextSlice, type SliceKind, type SliceKindNow, WaitingCalls } from '../nextSlice';
import { asRealPath, effectOfChange, FileChange, FileChangeKind, WatchedFolder } from './fileChanges';
import type { FileIndex, IndexedSymbol, IndexedUses, IndexJobResult, MapJob, MapJobResult, RecheckJob, RecheckJobResult, ReferenceJob, ReferenceJobResult, SymbolJob, SymbolJobResult } from './indexer';
import { INDEX_LIMITS } from './limits';
import { mergeInWalkOrder, sortInWalkOrder, walkOrderPosition } from '../search/relativePaths';

/**
 * The main-thread side of the symbol index: one index per folder (and deny
 * list), kept in the server process, refreshed on each use by the symbol
 * worker, which re-parses only the files whose size or mtime changed. The
 * main thread never parses; it only merges the worker's answers and queries
 * the result.
 */

export const SYMBOL_INDEX_LIMITS = Object.freeze({
  /** How long one refresh may work; what is done is kept and the next call continues. */
  refreshTimeMs: 10_000,
  /** A worker past this is terminated (a grammar stuck in a loop): refreshTimeMs plus slack for loading grammars. */
  jobTimeoutMs: 40_000,
  /** Indexes of this many folders are kept; the least recently used one goes. */
  maxFolders: 8,
  /**
   * A complete index whose last refresh found nothing changed and finished
   * less than this long ago is used without walking again: at 20,000 files
   * the walk cost every query about 170 ms. An edit shows up once this has passed.
   */
  freshForMs: 2_000,
  /**
   * A watched folder (fileChanges.ts) is still walked this often, in the
   * background of a query rather than before it: a watcher can drop
   * events (an overflowing kernel queue, a watch limit reached).
   */
  watchedRewalkMs: 60_000,
  /** Reported paths past which a walk is cheaper than looking at each. */
  maxReportedPaths: 2_000,
});

let clock: () => number = () => performance.now();
let freshForMs: number = SYMBOL_INDEX_LIMITS.freshForMs;

/**
 * Replaces the freshness interval (SYMBOL_INDEX_LIMITS.freshForMs); without an argument, the default again. A workbench test
 * makes it long, so that only the editor's file watcher can show a change: at 2 s the interval alone would show it as well.
 */
export function setSymbolFreshness(ms?: number): void {
  freshForMs = ms ?? SYMBOL_INDEX_LIMITS.freshForMs;
}

/** Replaces the clock the freshness interval is measured with (tests); without an argument, the real one again. */
export function setSymbolIndexClock(now?: () => number): void {
  clock = now ?? (() => performance.now());
}

export interface IndexStatus {
  /** Every source file found was indexed. */
  complete: boolean;
  indexedFiles: number;
  sourceFiles: number;
  /** The walk did not cover the whole folder (time limit, entry limit): there may be more files. */
  walkStopped: boolean;
  fileCapReached: boolean;
  /** Secret, policy-denied or linked-out files, never read. */
  leftOut: number;
  tooLarge: number;
}

export interface SymbolRef {
  file: FileIndex;
  symbol: IndexedSymbol;
}

/**
 * Whether a file's identifier list (FileIndex.references) may lack a name
 * the reference search would find there, so the file must always be searched:
 * no list (unreadable, or the parse gave up), or a list cut at the cap.
 */
function identifiersMayBeMissing(file: FileIndex): boolean {
  if (file.references === undefined) return true;
  let lines = 1;
  for (let at = file.references.indexOf('\n'); at !== -1; at = file.references.indexOf('\n', at + 1)) lines += 1;
  return lines >= INDEX_LIMITS.maxReferenceNamesPerFile;
}

/** Each name of the file's identifier list, with the uses it counts (0 where the count cannot be read). */
function forEachListed(file: FileIndex, visit: (name: string, uses: number) => void): void {
  const text = file.references;
  if (!text) return;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const tab = text.lastIndexOf('\t', end - 1);
    if (tab < start) visit(text.slice(start, end), 0);
    else visit(text.slice(start, tab), digitsAt(text, tab + 1) ?? 0);
    start = end + 1;
  }
}

/** The whole number written from `at` to the end of its line; undefined when none is. Read in place: a slice and a Number() per file were a third of a common name's look-ups. */
function digitsAt(text: string, at: number): number | undefined {
  let count = 0;
  let digits = 0;
  for (let i = at; i < text.length; i++, digits++) {
    const code = text.charCodeAt(i);
    if (code === 10) break;
    if (code < 48 || code > 57) return undefined;
    count = count * 10 + (code - 48);
  }
  return digits > 0 ? count : undefined;
}

/** What a file's identifier list holds for one name: its line's start, and the same after a line break. Made once per search, not per file. */
interface ListEntry {
  start: string;
  afterBreak: string;
}

function listEntry(name: string): ListEntry {
  return { start: `${name}\t`, afterBreak: `\n${name}\t` };
}

/** How many identifiers the file's list counts for `entry`'s name; undefined when it does not list the name. */
function usesIn(file: FileIndex, entry: ListEntry): number | undefined {
  const text = file.references;
  if (!text) return undefined;
  let at = text.startsWith(entry.start) ? 0 : text.indexOf(entry.afterBreak);
  if (at === -1) return undefined;
  if (at > 0) at += 1;
  return digitsAt(text, at + entry.start.length);
}

/** Changes past which the walk-ordered paths are merged with the change's in one pass rather than placed one by one. */
const WALK_ORDER_PLACED_ONE_BY_ONE = 256;
/** Candidates past a sixteenth of the files are picked from the ordered paths: a set look-up each beats sorting that many. */
const PICKED_RATHER_THAN_SORTED = 16;
/** The longest the identifier lists of a newly applied index are added for in one turn of the event loop (listsAdded). */
const LIST_SLICE_MS = 4;
/** The longest a walk's answer is applied for in one turn of the event loop (applyInSlices). */
const APPLY_SLICE_MS = 4;

export class FolderIndex {
  readonly files = new Map<string, FileIndex>();
  /** Definitions by exact name, kept in step with `files`, so a query looks at each distinct name once. */
  readonly byName = new Map<string, SymbolRef[]>();
  /** Identifier -> the files that use it, kept in step with `files` once the lists pending are added (listsAdded; every reader adds them first): a reference search reads only these. */
  private readonly usedBy = new Map<string, Set<string>>();
  /** Identifier -> the uses the lists of `usedBy`'s files count of it, in all: a search past its first files adds them up without a look-up per file. */
  private readonly listedUses = new Map<string, number>();
  /** Indexed files whose identifier lists are not in `usedBy` and `listedUses` yet (listsAdded). */
  private readonly listsToAdd = new Set<string>();
  /** How many files' lists are still to be added (tests). */
  get listsPending(): number {
    return this.listsToAdd.size;
  }
  private addingLists: Promise<void> | undefined;
  /** The calls waiting for the lists (find_references): the slices left are theirs. */
  private readonly listsWaitedFor = new WaitingCalls();
  /** Files whose identifier list may be incomplete (identifiersMayBeMissing): searched for every name. */
  private readonly unlisted = new Set<string>();
  /** Files read just after they changed (FileIndex.racy): their counts are not gone by. */
  private readonly racy = new Set<string>();
  /** The paths of `files` in walk order, kept in step with it: sorting 17,830 candidates took about 15 ms a query. */
  private walkOrdered: string[] = [];
  status: IndexStatus = { complete: false, indexedFiles: 0, sourceFiles: 0, walkStopped: true, fileCapReached: false, leftOut: 0, tooLarge: 0 };
  /** The distinct definition names with their lower case, for find_symbol's scan; rebuilt after a change. */
  private lowerNames: Array<[name: string, lower: string]> | undefined;
  /** When the last refresh was applied (the freshness clock), and whether it changed anything. */
  refreshedAt: number | undefined;
  lastRefreshChanged = true;
  /** When the last walk of the folder started (the freshness clock). */
  walkStartedAt: number | undefined;
  /** Which watch (watchFolders) was in force when the last walk started: reports count only for a walk made under the current one. */
  walkedUnderWatch: number | undefined;
  /** Walks of the folder so far (tests and the benchmark see whether a query walked). */
  walks = 0;
  /** Paths a watcher reported changed since the last look (fileChanges.ts). */
  private readonly reported = new Set<string>();
  /** A reported change only a walk settles (an ignore file, a deleted directory, too many paths). */
  walkNeeded = false;
  /** A walk is running: what it already listed is not in `files` yet. */
  walking = false;
  /** Entries read through a link whose target's changes no watcher reports (under node_modules/ or .git/): looked at by every recheck. */
  private readonly unwatchedTargets = new Set<string>();
  /** Link target (root-relative real path) -> the indexed paths read through it: a change is reported under the target's path. */
  private readonly linkTargets = new Map<string, Set<string>>();
  /** The directories holding indexed files, for telling a deleted directory from a deleted unindexed file; rebuilt after a change. */
  private indexedDirectories: Set<string> | undefined;
  /** The directories of link targets, for isUnderLinkTarget; rebuilt after a change. */
  private linkTargetDirectories: Set<string> | undefined;

  constructor(
    readonly root: string,
    readonly denyRead: readonly string[],
  ) {}

  /** Applies a walk's answer in one piece (applyInSlices spreads it over turns of the event loop). */
  apply(result: IndexJobResult): void {
    const hadBefore = this.beginWalkApply();
    this.applyChangesWithin(result, 0, Infinity);
    this.endWalkApply(result, hadBefore);
  }

  /**
   * Applies a walk's answer a slice at a time between turns of the event
   * loop. In one piece, the 4,700 files a cold walk of a 20,000-file tree
   * parses within its time limit held the main thread for about 100 ms, and
   * a whole 18,000-file tree for 300 to 500 ms, every discussion's stream
   * with it. Each file is replaced whole, so a reader meanwhile sees every
   * file as it was or as it is now; queries wait for the walk, which ends
   * once this resolves.
   */
  async applyInSlices(result: IndexJobResult, sliceMs = APPLY_SLICE_MS, kind: SliceKindNow = AS_UPKEEP): Promise<void> {
    const hadBefore = this.beginWalkApply();
    await this.applyChangesInSlices(result, sliceMs, kind);
    this.endWalkApply(result, hadBefore);
  }

  private async applyChangesInSlices(result: { removed: readonly string[]; updated: readonly FileIndex[] }, sliceMs: number, kind: SliceKindNow): Promise<void> {
    const changes = result.removed.length + result.updated.length;
    // The first slice not in the turn of the event loop that received the answer, which copied in its last files: a
    // callback set now (setImmediate) would run before that turn ends. The later slices each wait for the next turn.
    if (changes > 0) await new Promise<void>((resolve) => setTimeout(resolve, 0));
    for (let next = this.applyChangesWithin(result, 0, sliceMs); next < changes; next = this.applyChangesWithin(result, next, sliceMs)) {
      await nextSlice(kind);
    }
  }

  /** Before a walk's answer: the paths the index held while it was still being built. */
  private beginWalkApply(): Set<string> | undefined {
    return this.status.complete ? undefined : new Set(this.files.keys());
  }

  private endWalkApply(result: IndexJobResult, hadBefore: Set<string> | undefined): void {
    this.noteApplied(result);
    if (hadBefore) {
      // A walk that finished building the index added every file, which says nothing of edits going on: only a change to a file
      // it already had, or one gone, does. Counted as a change, it made the first query after the build walk the folder again.
      this.lastRefreshChanged = result.removed.length > 0 || result.updated.some((file) => hadBefore.has(file.relativePath));
    }
    this.status = {
      complete: result.walkComplete && result.indexedFiles === result.sourceFiles && !result.fileCapReached,
      indexedFiles: result.indexedFiles,
      sourceFiles: result.sourceFiles,
      walkStopped: !result.walkComplete && !result.fileCapReached,
      fileCapReached: result.fileCapReached,
      leftOut: result.leftOut,
      tooLarge: result.tooLarge,
    };
  }

  /** A recheck's answer: the status counts change only by the files gone (any other change in count made it ask for a walk). */
  applyRecheck(result: RecheckJobResult): void {
    const gone = result.removed.filter((relativePath) => this.files.has(relativePath)).length;
    this.applyChangesWithin(result, 0, Infinity);
    this.endRecheckApply(result, gone);
  }

  /**
   * applyRecheck a slice at a time, as applyInSlices: a recheck brings up to
   * maxReportedPaths files (a branch switched), about 50 ms in one piece. It
   * replaces or removes indexed files only, so what a watcher reports
   * meanwhile is looked at by the next query as usual.
   */
  async applyRecheckInSlices(result: RecheckJobResult, sliceMs = APPLY_SLICE_MS, kind: SliceKindNow = AS_UPKEEP): Promise<void> {
    const gone = result.removed.filter((relativePath) => this.files.has(relativePath)).length;
    await this.applyChangesInSlices(result, sliceMs, kind);
    this.endRecheckApply(result, gone);
  }

  private endRecheckApply(result: RecheckJobResult, gone: number): void {
    this.noteApplied(result);
    this.status = { ...this.status, indexedFiles: this.status.indexedFiles - gone, sourceFiles: this.status.sourceFiles - gone };
  }

  /**
   * Applies the changes of `result` from the `from`th on (its removals, then
   * its files), for `budgetMs` or until none is left, and keeps the walk
   * order in step; returns where the next slice starts.
   */
  private applyChangesWithin(result: { removed: readonly string[]; updated: readonly FileIndex[] }, from: number, budgetMs: number): number {
    const until = performance.now() + budgetMs;
    const total = result.removed.length + result.updated.length;
    const gone: string[] = [];
    const added: string[] = [];
    let next = from;
    // A clock read every few files: a file's definitions take about 25 microseconds to add.
    for (; next < total && ((next - from) % 16 !== 15 || performance.now() <= until); next++) {
      if (next < result.removed.length) {
        const relativePath = result.removed[next];
        if (this.files.has(relativePath)) gone.push(relativePath);
        this.forget(relativePath);
      } else this.add(result.updated[next - result.removed.length], added);
    }
    // A building walk brings thousands of paths: merged in passes rather than placed one by one.
    if (gone.length + added.length > WALK_ORDER_PLACED_ONE_BY_ONE) {
      const goneSet = new Set(gone);
      const kept = gone.length === 0 ? this.walkOrdered : this.walkOrdered.filter((relativePath) => !goneSet.has(relativePath));
      this.walkOrdered = mergeInWalkOrder(kept, added);
    } else {
      for (const relativePath of gone) this.placeInWalkOrder(relativePath, false);
      for (const relativePath of added) this.placeInWalkOrder(relativePath, true);
    }
    // A reader between slices (a watcher's report) rebuilds these from what is applied so far: dropped again at the end.
    if (next > from) this.dropDerived();
    return next;
  }

  /** Puts `file` in the index in place of what it held at that path; a path new to the index goes on `added`. */
  private add(file: FileIndex, added: string[]): void {
    if (!this.files.has(file.relativePath)) added.push(file.relativePath);
    this.forget(file.relativePath);
    this.files.set(file.relativePath, file);
    const target = this.linkTargetOf(file);
    if (target !== undefined) {
      this.linkTargets.set(target, (this.linkTargets.get(target) ?? new Set()).add(file.relativePath));
      if (effectOfChange(this.root, file.realPath).effect === 'none') this.unwatchedTargets.add(file.relativePath);
    }
    for (const symbol of file.symbols) {
      const refs = this.byName.get(symbol.name);
      if (refs) refs.push({ file, symbol });
      else this.byName.set(symbol.name, [{ file, symbol }]);
    }
    if (identifiersMayBeMissing(file)) this.unlisted.add(file.relativePath);
    if (file.racy) this.racy.add(file.relativePath);
    this.listsToAdd.add(file.relativePath);
  }

  /** After an answer is applied: whether it changed anything, and the structures built from `files` dropped if it did. */
  private noteApplied(result: { removed: readonly string[]; updated: readonly FileIndex[] }): void {
    this.lastRefreshChanged = result.removed.length > 0 || result.updated.length > 0;
    if (this.lastRefreshChanged) this.dropDerived();
  }

  private dropDerived(): void {
    this.lowerNames = undefined;
    this.indexedDirectories = undefined;
    this.linkTargetDirectories = undefined;
  }

  /** The root-relative real path of a file read through a link (a link itself or under a linked directory); undefined for the rest. */
  private linkTargetOf(file: FileIndex): string | undefined {
    const own = path.join(this.root, file.relativePath);
    return file.realPath === own ? undefined : path.relative(this.root, file.realPath).split(path.sep).join('/');
  }

  private forget(relativePath: string): void {
    const old = this.files.get(relativePath);
    if (!old) return;
    this.files.delete(relativePath);
    const target = this.linkTargetOf(old);
    this.unwatchedTargets.delete(relativePath);
    if (target !== undefined) {
      const links = this.linkTargets.get(target);
      links?.delete(relativePath);
      if (links?.size === 0) this.linkTargets.delete(target);
    }
    for (const name of new Set(old.symbols.map((symbol) => symbol.name))) {
      const kept = (this.byName.get(name) ?? []).filter((ref) => ref.file !== old);
      if (kept.length > 0) this.byName.set(name, kept);
      else this.byName.delete(name);
    }
    this.unlisted.delete(relativePath);
    this.racy.delete(relativePath);
    // Never added: nothing to take back, and no parse of the list to find that out.
    if (this.listsToAdd.delete(relativePath)) return;
    forEachListed(old, (name, uses) => {
      const users = this.usedBy.get(name);
      if (!users?.delete(relativePath)) return;
      if (users.size === 0) {
        this.usedBy.delete(name);
        this.listedUses.delete(name);
      } else this.listedUses.set(name, (this.listedUses.get(name) ?? 0) - uses);
    });
  }

  /** Adds the identifier lists of `listsToAdd` to `usedBy` and `listedUses`, within `budgetMs` when given; true when none is left. */
  private addLists(budgetMs = Infinity): boolean {
    const until = performance.now() + budgetMs;
    let added = 0;
    for (const relativePath of this.listsToAdd) {
      // A clock read every few files: the lists of one file take about 50 microseconds.
      if (++added % 16 === 0 && performance.now() > until) return false;
      this.listsToAdd.delete(relativePath);
      const file = this.files.get(relativePath);
      if (!file) continue;
      forEachListed(file, (name, uses) => {
        const users = this.usedBy.get(name);
        if (users) users.add(relativePath);
        else this.usedBy.set(name, new Set([relativePath]));
        this.listedUses.set(name, (this.listedUses.get(name) ?? 0) + uses);
      });
    }
    return true;
  }

  /**
   * Resolves once every indexed file's identifier list is in `usedBy`,
   * adding them a slice at a time between turns of the event loop. Added in
   * one piece as an index of 18,000 files was applied, they held the main
   * thread for about a second, and every discussion's stream with it. A
   * caller of `kind` foreground makes the rest foreground until it is done,
   * even if the call is cancelled meanwhile: the lists are wanted anyway.
   */
  listsAdded(kind: SliceKind, sliceMs = LIST_SLICE_MS): Promise<void> {
    if (this.listsToAdd.size === 0) return Promise.resolve();
    const stopWaiting = this.listsWaitedFor.start(kind);
    this.addingLists ??= (async () => {
      // Each slice in a turn of its own, the first too: started as a walk's answer is applied, it ran in that answer's last slice.
      do {
        await nextSlice(this.listsWaitedFor.kind);
      } while (!this.addLists(sliceMs));
    })().finally(() => (this.addingLists = undefined));
    // The shared promise to upkeep, which does not wait for it (a promise of its own would reject unhandled on a throw).
    return kind === 'foreground' ? this.addingLists.finally(stopWaiting) : this.addingLists;
  }

  namesWithLowerCase(): ReadonlyArray<[name: string, lower: string]> {
    this.lowerNames ??= [...this.byName.keys()].map((name) => [name, name.toLowerCase()]);
    return this.lowerNames;
  }

  /** Every indexed path, in walk order. */
  filesInWalkOrder(): readonly string[] {
    return this.walkOrdered;
  }

  private placeInWalkOrder(relativePath: string, present: boolean): void {
    const ordered = this.walkOrdered;
    const low = walkOrderPosition(ordered, relativePath);
    if (present) ordered.splice(low, 0, relativePath);
    else if (ordered[low] === relativePath) ordered.splice(low, 1);
  }

  /**
   * The indexed files a reference search for `name` must read, in walk
   * order: those whose identifier list names it, plus those whose list may
   * be incomplete. Every file when the name is longer than the indexer
   * records. A name most files use is picked out of the ordered paths
   * rather than sorted.
   */
  referenceCandidates(name: string): string[] {
    if (name.length > INDEX_LIMITS.maxReferenceNameChars) return [...this.filesInWalkOrder()];
    this.addLists();
    const users = this.usedBy.get(name);
    const count = (users?.size ?? 0) + this.unlisted.size;
    if (count * PICKED_RATHER_THAN_SORTED > this.files.size) return this.filesInWalkOrder().filter((relativePath) => users?.has(relativePath) || this.unlisted.has(relativePath));
    return sortInWalkOrder([...new Set([...(users ?? []), ...this.unlisted])]);
  }

  /** For a reference search: what the index counted of `name` in each of `files` that lists it, with the stamp it counted at (undefined for the others), in the order of `files`. */
  usesOf(name: string, files: readonly string[]): Array<IndexedUses | undefined> {
    this.addLists();
    const users = this.usedBy.get(name);
    const entry = listEntry(name);
    return files.map((relativePath) => {
      const file = this.countedIn(users, relativePath);
      // A listed name's count is whole (indexer.ts countIdentifier): 0 only if the list could not be read, and then it matches no file.
      return file && { stamp: file.stamp, uses: usesIn(file, entry) ?? 0 };
    });
  }

  /**
   * Of every candidate of a reference search for `name` (referenceCandidates):
   * how many files hold a count usesOf would give, with their uses in all,
   * and the paths of those that do not (their lists may lack the name, or they
   * were read just after a change), without a look-up per file. Undefined for
   * a name longer than the lists hold, which no file's count covers.
   */
  countsOfEveryCandidate(name: string): { files: number; uses: number; uncounted: Set<string> } | undefined {
    if (name.length > INDEX_LIMITS.maxReferenceNameChars) return undefined;
    this.addLists();
    const users = this.usedBy.get(name);
    const entry = listEntry(name);
    let files = users?.size ?? 0;
    let uses = this.listedUses.get(name) ?? 0;
    const uncounted = new Set<string>();
    for (const relativePath of this.unlisted) if (!users?.has(relativePath)) uncounted.add(relativePath);
    for (const relativePath of this.racy) {
      const file = this.files.get(relativePath);
      if (!file || !users?.has(relativePath)) continue;
      uncounted.add(relativePath);
      files -= 1;
      uses -= usesIn(file, entry) ?? 0;
    }
    return { files, uses, uncounted };
  }

  /** The file, when its identifier list counts the name `users` is of and it was not read within the racy window. */
  private countedIn(users: ReadonlySet<string> | undefined, relativePath: string): FileIndex | undefined {
    if (!users?.has(relativePath)) return undefined; // a name longer than the lists hold is never listed
    const file = this.files.get(relativePath);
    return file && !file.racy ? file : undefined;
  }

  /** Takes note of a change a watcher reported at `realPath` (see fileChanges.ts). */
  noteChange(realPath: string, kind: FileChangeKind): void {
    const change = effectOfChange(this.root, realPath);
    if (change.effect === 'none' || this.walkNeeded) return;
    if (change.effect === 'walk') {
      this.walkNeeded = true;
      return;
    }
    const { relativePath } = change;
    const links = this.linkTargets.get(relativePath);
    for (const link of links ?? []) this.reported.add(link);
    if (this.files.has(relativePath)) this.reported.add(relativePath);
    else if (links) {
      // A link's target the walk reaches only through the link: looked at as the link's entry.
    } else if (kind === 'deleted') {
      // A directory that held indexed files (or link targets): its files each go, and a walk says so at once. An unindexed file
      // going changes nothing, unless a running walk listed it before it went and is about to add it.
      if (this.walking || this.directoriesWithFiles().has(relativePath)) this.walkNeeded = true;
    } else if (this.isUnderLinkTarget(relativePath)) {
      // Beside a link's target, which the walk may reach only through the link (the target's own directory ignored).
      this.walkNeeded = true;
    } else this.reported.add(relativePath);
    if (this.reported.size > SYMBOL_INDEX_LIMITS.maxReportedPaths) this.walkNeeded = true;
    if (this.walkNeeded) this.reported.clear();
  }

  /** Whether reported changes wait to be looked at. */
  hasReported(): boolean {
    return this.reported.size > 0 || this.unwatchedTargets.size > 0;
  }

  /** The reported paths as a recheck job takes them, forgotten here (a report arriving during the job waits for the next). */
  takeReported(): Pick<RecheckJob, 'files' | 'others'> {
    const files: RecheckJob['files'] = [];
    const others: string[] = [];
    for (const relativePath of this.unwatchedTargets) this.reported.add(relativePath);
    for (const relativePath of this.reported) {
      const file = this.files.get(relativePath);
      if (file) files.push({ relativePath, realPath: file.realPath, stamp: file.stamp, ...(file.racy ? { racy: true as const } : {}) });
      else others.push(relativePath);
    }
    this.reported.clear();
    return { files, others };
  }

  /** Forgets what was reported: a walk starting now sees the disk as it is. */
  clearReported(): void {
    this.reported.clear();
    this.walkNeeded = false;
  }

  private directoriesWithFiles(): Set<string> {
    if (!this.indexedDirectories) {
      const directories = new Set<string>();
      // A link's target directory too: deleting it is reported as the directory alone.
      for (const relativePath of [...this.files.keys(), ...this.linkTargets.keys()]) {
        for (let slash = relativePath.lastIndexOf('/'); slash > 0; slash = relativePath.lastIndexOf('/', slash - 1)) {
          const directory = relativePath.slice(0, slash);
          if (directories.has(directory)) break;
          directories.add(directory);
        }
      }
      this.indexedDirectories = directories;
    }
    return this.indexedDirectories;
  }

  private isUnderLinkTarget(relativePath: string): boolean {
    if (this.linkTargets.size === 0) return false;
    if (!this.linkTargetDirectories) {
      // The root itself is always walked: a file beside a root-level target is probed like any other.
      this.linkTargetDirectories = new Set([...this.linkTargets.keys()].flatMap((target) => (target.includes('/') ? [target.slice(0, target.lastIndexOf('/'))] : [])));
    }
    for (let slash = relativePath.lastIndexOf('/'); slash > 0; slash = relativePath.lastIndexOf('/', slash - 1)) {
      if (this.linkTargetDirectories.has(relativePath.slice(0, slash))) return true;
    }
    return false;
  }

  /**
   * The index's stamps as a walk compares them. A racy entry's is one no
   * file has, so the walk parses it again: a second change in the tick it
   * was read in could have left its stamp as it was, and it would otherwise
   * stay as read until the file changed again. Packed a slice at a time, from
   * the files as they are when asked.
   */
  known(kind: SliceKindNow = AS_UPKEEP, sliceMs = APPLY_SLICE_MS): Promise<PackedRecords> {
    return packInSlices([...this.files.values()], 2, (file) => [file.relativePath, file.racy ? `${file.stamp}:racy` : file.stamp], sliceMs, kind);
  }
}

let pool: SearchPool | undefined;

/** One symbol thread for the whole process: grammars are loaded once, and indexing never takes every core. */
export const SYMBOL_POOL_OPTIONS: SearchPoolOptions = {
  maxWorkers: 1,
  idleMs: 10 * 60_000,
  script: path.join(__dirname, 'symbolWorker.js'),
  youngGenerationMb: WORKER_YOUNG_GENERATION_MB.background,
};

function symbolPool(): SearchPool {
  pool ??= new SearchPool(SYMBOL_POOL_OPTIONS);
  return pool;
}

/** Stops the symbol thread (tests, shutdown). */
export async function closeSymbolPool(): Promise<void> {
  const running = pool;
  pool = undefined;
  await running?.close();
}

export type JobOutcome<T> = { ok: true; result: T } | { ok: false; message: string };

const CANCELLED: { ok: false; message: string } = Object.freeze({ ok: false, message: 'Cancelled.' });

function failure(outcome: Exclude<PoolOutcome, { ok: true }>): { ok: false; message: string } {
  if (outcome.reason === 'cancelled') return CANCELLED;
  if (outcome.reason === 'timeout') return { ok: false, message: `The symbol index took longer than ${SYMBOL_INDEX_LIMITS.jobTimeoutMs / 1000} s and was stopped. Use grep_files instead.` };
  return { ok: false, message: 'The symbol index failed. Use grep_files instead.' };
}

async function runJob<T extends SymbolJobResult>(job: SymbolJob, signal?: AbortSignal): Promise<JobOutcome<T>> {
  // Parsed files come ahead of the answer, a part to a message (indexer.ts FILES_PER_PART).
  const parts: FileIndex[][] = [];
  // The pool is typed for search jobs; it passes any job through to its worker unchanged.
  const packed = job.kind === 'index' ? job.known : job.kind === 'map' ? job.files : undefined;
  const outcome = await symbolPool().run(job as unknown as SearchJob, SYMBOL_INDEX_LIMITS.jobTimeoutMs, {
    signal,
    onPart: (part) => parts.push(part as FileIndex[]),
    transfer: packed && movedBuffers(packed),
  });
  if (!outcome.ok) return failure(outcome);
  const result = outcome.result as unknown as SymbolJobResult;
  if (parts.length > 0 && (result.kind === 'index' || result.kind === 'recheck')) result.updated = [...parts.flat(), ...result.updated];
  return { ok: true, result: result as T };
}

const folders = new Map<string, FolderIndex>();
/**
 * A folder's refresh, shared by the calls that arrive while it runs. It is
 * stopped only once every caller that could cancel has: stopped with the
 * first caller's signal, it answered "Cancelled." to the others too, and a
 * map build (which never cancels) lost the walk it was waiting for. A caller
 * cancelled is answered at once, not when the walk's answer has been applied.
 */
export class SharedRefresh {
  private readonly stop = new AbortController();
  /** Callers not yet cancelled; a caller with no signal is never cancelled. */
  private waiting = 0;
  /** The calls among them, whose kind its slices take (nextSlice.ts). */
  private readonly callsWaiting = new WaitingCalls();
  readonly outcome: Promise<JobOutcome<FolderIndex>>;

  constructor(run: (signal: AbortSignal, kind: SliceKindNow) => Promise<JobOutcome<FolderIndex>>) {
    this.outcome = run(this.stop.signal, this.callsWaiting.kind);
  }

  /** Every caller was cancelled and the refresh is stopping: a caller arriving now would be answered "Cancelled." with them. */
  get stopping(): boolean {
    return this.stop.signal.aborted;
  }

  /** The refresh's outcome for one caller, whose `kind` its slices take while it waits. */
  join(kind: SliceKind, signal?: AbortSignal): Promise<JobOutcome<FolderIndex>> {
    this.waiting += 1;
    const stopWaiting = this.waitFor(kind);
    return unlessCancelled(this.outcome, signal, () => {
      stopWaiting();
      this.waiting -= 1;
      if (this.waiting === 0) this.stop.abort();
    });
  }

  /** A caller of `kind` waits for the refresh's end, stopping or not, until it settles or the function returned is called. */
  waitFor(kind: SliceKind): () => void {
    const stopWaiting = this.callsWaiting.start(kind);
    this.outcome.then(stopWaiting, stopWaiting);
    return stopWaiting;
  }
}

/** `work`'s outcome, or "Cancelled." as soon as `signal` is aborted (then `onCancel` runs). */
function unlessCancelled<T>(work: Promise<JobOutcome<T>>, signal: AbortSignal | undefined, onCancel?: () => void): Promise<JobOutcome<T>> {
  if (!signal) return work;
  return new Promise((resolve, reject) => {
    const cancel = (): void => {
      resolve(CANCELLED);
      onCancel?.();
    };
    if (signal.aborted) return cancel();
    signal.addEventListener('abort', cancel, { once: true });
    // The listener goes in the same turn the work settles: a cancel after that counts for nothing.
    work.then(
      (outcome) => {
        signal.removeEventListener('abort', cancel);
        resolve(outcome);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', cancel);
        reject(error);
      },
    );
  });
}

/** One refresh at a time per folder: calls that arrive meanwhile share it. */
const refreshing = new Map<string, SharedRefresh>();

function keyOf(boundary: ReadBoundary): string {
  return [boundary.root, ...boundary.denyRules.policyGlobs].join('\0');
}

/**
 * A refresh would almost surely find nothing: the index is complete, the last refresh, a moment ago, changed nothing, and no
 * watcher has reported a change since (without that last check, a deleted directory reported within the interval went unseen).
 */
function isFresh(index: FolderIndex): boolean {
  return (
    index.status.complete &&
    !index.lastRefreshChanged &&
    !index.walkNeeded &&
    !index.hasReported() &&
    index.refreshedAt !== undefined &&
    clock() - index.refreshedAt < freshForMs
  );
}

/** The folders a client's watcher covers, and which watch this is (each watchFolders call starts a new one); undefined without one. */
let watching: { folders: WatchedFolder[]; id: number } | undefined;
let watches = 0;

/**
 * From now on, changes in `folders` are reported through noteFileChanges, and
 * an index of a folder among them (or inside one) that was walked since is
 * kept fresh by those reports alone. Called again, the reports count afresh:
 * each index walks once more before trusting them.
 */
export function watchFolders(folders: readonly WatchedFolder[]): void {
  // Told the same again (a settings change elsewhere in `files.*`): the reports still count.
  if (watching && JSON.stringify(watching.folders) === JSON.stringify(folders)) return;
  watches += 1;
  watching = folders.length > 0 ? { folders: [...folders], id: watches } : undefined;
}

/** Changes a client's watcher reported, for the indexes of the folders it watches. */
export function noteFileChanges(changes: readonly FileChange[]): void {
  if (!watching) return;
  for (const change of changes) {
    const realPath = asRealPath(watching.folders, change.path);
    for (const index of folders.values()) index.noteChange(realPath, change.kind);
  }
}

/** Whether `index` is kept fresh by a watcher's reports: its folder is watched completely, and it was walked whole since watching began. */
function isWatched(index: FolderIndex): boolean {
  if (!watching || index.walkedUnderWatch !== watching.id || !index.status.complete) return false;
  // Nested workspace folders: the watcher of each one holding the index's root must see everything.
  const covering = watching.folders.filter((folder) => isSameOrInside(folder.realPath, index.root));
  return covering.length > 0 && covering.every((folder) => folder.complete);
}

/**
 * The folder's index, brought up to date (as far as the time limit allows); `refresh` walks the folder even when the index
 * is fresh. `kind`: who asks, a call (foreground, the default) or upkeep such as a map build (background).
 */
export function currentIndex(boundary: ReadBoundary, signal?: AbortSignal, options: { refresh?: boolean; kind?: SliceKind } = {}): Promise<JobOutcome<FolderIndex>> {
  const kind = options.kind ?? 'foreground';
  const key = keyOf(boundary);
  const running = refreshing.get(key);
  if (running?.stopping) {
    // Cancelled meanwhile: no refresh of its own, which would start only to be stopped and keep later callers waiting a round more.
    const again = (): Promise<JobOutcome<FolderIndex>> => (signal?.aborted ? Promise.resolve(CANCELLED) : currentIndex(boundary, signal, options));
    // What is left of its slices (a packing, an apply) does not stop at the abort: this caller waits for them.
    const stopWaiting = running.waitFor(kind);
    return unlessCancelled(running.outcome.then(again, again), signal, stopWaiting);
  }
  if (running) return running.join(kind, signal);
  let index = folders.get(key);
  if (index) folders.delete(key); // re-inserted below: most recently used last
  index ??= new FolderIndex(boundary.root, boundary.denyRules.policyGlobs);
  folders.set(key, index);
  while (folders.size > SYMBOL_INDEX_LIMITS.maxFolders) folders.delete(folders.keys().next().value as string);
  const folder = index;

  if (!options.refresh && isWatched(folder) && !folder.walkNeeded) {
    const rewalkDue = clock() - (folder.walkStartedAt as number) > SYMBOL_INDEX_LIMITS.watchedRewalkMs;
    if (!folder.hasReported() && !rewalkDue) return Promise.resolve({ ok: true, result: folder });
    const recheck = share(key, folder, (stop, sliceKind) =>
      (folder.hasReported() ? recheckReported(folder, stop, sliceKind) : Promise.resolve<JobOutcome<FolderIndex>>({ ok: true, result: folder })).then((outcome) =>
        outcome.ok && folder.walkNeeded ? walk(folder, stop, sliceKind) : outcome,
      ),
    );
    // The safety walk runs once this query's look is done; queries meanwhile wait for it, as for any refresh.
    if (rewalkDue) {
      const safetyWalk = (): void => {
        if (!refreshing.has(key)) void share(key, folder, (stop, sliceKind) => walk(folder, stop, sliceKind)).join('background');
      };
      recheck.outcome.then(safetyWalk, safetyWalk);
    }
    return recheck.join(kind, signal);
  }
  if (!options.refresh && isFresh(folder)) return Promise.resolve({ ok: true, result: folder });
  return share(key, folder, (stop, sliceKind) => walk(folder, stop, sliceKind)).join(kind, signal);
}

/** Starts a folder's refresh and registers it, so that calls arriving meanwhile share it. */
function share(key: string, folder: FolderIndex, run: (signal: AbortSignal, kind: SliceKindNow) => Promise<JobOutcome<FolderIndex>>): SharedRefresh {
  const shared = new SharedRefresh(run);
  refreshing.set(key, shared);
  const done = (): void => {
    if (refreshing.get(key) === shared) refreshing.delete(key);
  };
  // Not finally(): its promise would reject unhandled when a refresh throws, where the callers already get the error.
  shared.outcome.then(done, () => {
    // A walk or a recheck that throws has cleared or taken what was reported: without this, a watched folder's index would be trusted as it is.
    folder.walkNeeded = true;
    done();
  });
  return shared;
}

/** Walks the whole folder, re-parsing what changed. */
async function walk(folder: FolderIndex, signal: AbortSignal, kind: SliceKindNow): Promise<JobOutcome<FolderIndex>> {
  const startedAt = clock();
  const underWatch = watching?.id;
  // The walk sees the disk as it is now; what is reported from here on is looked at after it.
  folder.clearReported();
  folder.walks += 1;
  folder.walking = true;
  try {
    const outcome = await runJob<IndexJobResult>({ kind: 'index', root: folder.root, denyRead: folder.denyRead, known: await folder.known(kind), timeMs: SYMBOL_INDEX_LIMITS.refreshTimeMs }, signal);
    if (!outcome.ok) {
      // Cancelled or stopped: what was reported before it was cleared for this walk, so the next query walks.
      folder.walkNeeded = true;
      return outcome;
    }
    // Still walking meanwhile: a file the answer holds that is deleted before it is applied must make the next query walk.
    await folder.applyInSlices(outcome.result, APPLY_SLICE_MS, kind);
  } finally {
    folder.walking = false;
  }
  // Ready ahead of the first reference search, without holding the main thread.
  void folder.listsAdded('background');
  folder.refreshedAt = clock();
  folder.walkStartedAt = startedAt;
  folder.walkedUnderWatch = underWatch;
  return { ok: true, result: folder };
}

/** Looks again at only what a watcher reported; the caller walks when the answer says only a walk can settle it. */
function recheckReported(folder: FolderIndex, signal: AbortSignal, kind: SliceKindNow): Promise<JobOutcome<FolderIndex>> {
  const job: RecheckJob = { kind: 'recheck', root: folder.root, denyRead: folder.denyRead, ...folder.takeReported(), timeMs: SYMBOL_INDEX_LIMITS.refreshTimeMs };
  return runJob<RecheckJobResult>(job, signal).then(async (outcome): Promise<JobOutcome<FolderIndex>> => {
    if (!outcome.ok) {
      folder.walkNeeded = true; // what was taken must not be lost: the next query walks
      return outcome;
    }
    await folder.applyRecheckInSlices(outcome.result, APPLY_SLICE_MS, kind);
    if (outcome.result.walkNeeded) folder.walkNeeded = true;
    return { ok: true, result: folder };
  });
}

/**
 * Files whose counts are looked up between two turns of the event loop. Each file's list of identifiers is searched: 17,830
 * files of the generated tree in one go held the main thread for about 23 ms, and every other discussion's stream with it.
 */
const USES_PER_SLICE = 4_000;

/** index.usesOf for `files`, a slice at a time when they are many, letting the event loop run before each slice. */
export async function usesInSlices(index: FolderIndex, symbol: string, files: readonly string[], sliceSize = USES_PER_SLICE): Promise<Array<IndexedUses | undefined>> {
  // A walk applied meanwhile leaves lists to add: usesOf would add them all in one piece.
  await index.listsAdded('foreground');
  const indexed: Array<IndexedUses | undefined> = [];
  for (let start = 0; start < files.length; start += sliceSize) {
    // Before the first slice too: the caller gathered the candidates in this same turn of the loop.
    if (files.length > sliceSize) await nextSlice('foreground');
    indexed.push(...index.usesOf(symbol, files.slice(start, start + sliceSize)));
  }
  return indexed;
}

/**
 * The search's first files get their counts with the job: as many as the
 * index expects to hold this many times the references the search collects
 * (a line holds one or more uses; the lines of a string or a comment none).
 */
const HEAD_USES_PER_REFERENCE = 2;
/** Files whose counts are looked up at a time while the first files are measured out. */
const HEAD_STEP = 64;

/** Runs a reference job: in the symbol thread, or as a test says. */
export type ReferenceJobRunner = (job: ReferenceJob, signal?: AbortSignal) => Promise<JobOutcome<ReferenceJobResult>>;

export interface ReferenceSearchOptions {
  signal?: AbortSignal;
  /** `files` are every candidate of the name (referenceCandidates), in any order: the files past the first are counted in one sum. */
  everyCandidate?: boolean;
  runReferenceJob?: ReferenceJobRunner;
}

/**
 * Searches `files` for identifiers named `symbol`, answering from `index`'s
 * counts where they still hold (see ReferenceJob.indexed), as one job handed
 * every file and every count would. The thread is handed the first files,
 * with their counts, and, when `files` are every candidate, the later ones
 * the index holds no count for, to be read for the total; the counts of the
 * others are the index's sums. Only if the first files did not hold enough
 * references is the thread handed the rest. Posting the paths of a name used
 * in 17,830 files took the thread 7 to 9 ms to receive, as long as its
 * reading of the first files; looking up each one's count here, 8 to 11 ms.
 */
export async function findReferences(
  boundary: ReadBoundary,
  index: FolderIndex,
  symbol: string,
  files: string[],
  maxReferences: number,
  options: ReferenceSearchOptions = {},
): Promise<JobOutcome<ReferenceJobResult>> {
  const { signal, runReferenceJob = runJob } = options;
  const deadline = performance.now() + SYMBOL_INDEX_LIMITS.refreshTimeMs;
  const indexed: Array<IndexedUses | undefined> = [];
  let expected = 0;
  while (indexed.length < files.length && expected < maxReferences * HEAD_USES_PER_REFERENCE) {
    for (const uses of index.usesOf(symbol, files.slice(indexed.length, indexed.length + HEAD_STEP))) {
      indexed.push(uses);
      expected += uses?.uses ?? 0;
    }
  }
  const head = files.slice(0, indexed.length);
  const later = files.slice(indexed.length);
  const job = (jobFiles: string[], max: number, counts: Pick<ReferenceJob, 'indexed' | 'collectBefore'>): ReferenceJob => ({
    kind: 'references',
    root: boundary.root,
    denyRead: boundary.denyRules.policyGlobs,
    symbol,
    files: jobFiles,
    timeMs: Math.max(0, deadline - performance.now()),
    maxReferences: max,
    ...counts,
  });
  const everyCount = options.everyCandidate && later.length > 0 ? index.countsOfEveryCandidate(symbol) : undefined;
  const uncountedLater = everyCount && everyCount.uncounted.size > 0 ? later.filter((relativePath) => everyCount.uncounted.has(relativePath)) : [];
  const running = runReferenceJob(job([...head, ...uncountedLater], maxReferences, { indexed, collectBefore: head.length }), signal);
  // Undefined where the index holds no count (see countedIn): a file to read. Looked up while the thread reads.
  const laterUses = later.length > 0 && !everyCount ? await usesInSlices(index, symbol, later) : undefined;
  const first = await running;
  if (!first.ok) return first;
  const { beforeLater, ...result } = first.result;
  // Stopped by the time limit (or with nothing past the first files): what it found is the answer, as the one job's would be.
  if (!result.complete || later.length === 0) return { ok: true, result };

  if (result.references.length < maxReferences) {
    // Not enough: the rest in order with their counts, as the one job would have gone on, joined to what the first files gave.
    const firstFiles: ReferenceJobResult = { ...result, ...beforeLater };
    const rest = await runReferenceJob(job(later, maxReferences - result.references.length, { indexed: laterUses ?? (await usesInSlices(index, symbol, later)) }), signal);
    if (!rest.ok) return rest;
    const counted = rest.result.counted && { ...rest.result.counted, from: rest.result.counted.from + head.length };
    return { ok: true, result: joinResults(firstFiles, rest.result, counted) };
  }

  // Enough already: a later file with a count is counted here, unopened; the others are read for the total.
  let counted = result.counted;
  const toRead: string[] = [];
  const laterCounted = { files: 0, uses: 0 };
  if (everyCount) {
    // Every counted file less those among the first files.
    laterCounted.files = everyCount.files;
    laterCounted.uses = everyCount.uses;
    for (const uses of indexed) {
      if (!uses) continue;
      laterCounted.files -= 1;
      laterCounted.uses -= uses.uses;
    }
    // Every candidate is counted or not: the first later one with a count is the first not among the uncounted.
    if (!counted && laterCounted.files > 0) counted = { from: head.length + later.findIndex((relativePath) => !everyCount.uncounted.has(relativePath)), files: 0, uses: 0 };
  } else {
    for (const [position, uses] of (laterUses ?? []).entries()) {
      if (!uses) {
        toRead.push(later[position]);
        continue;
      }
      counted ??= { from: head.length + position, files: 0, uses: 0 };
      laterCounted.files += 1;
      laterCounted.uses += uses.uses;
    }
  }
  if (counted) {
    counted.files += laterCounted.files;
    counted.uses += laterCounted.uses;
    result.total += laterCounted.uses;
  }
  if (toRead.length === 0) return { ok: true, result: { ...result, ...(counted ? { counted } : {}) } };
  const read = await runReferenceJob(job(toRead, 0, {}), signal);
  if (!read.ok) return read;
  return { ok: true, result: joinResults(result, read.result, counted) };
}

/** What the first job found followed by what a second found past it, as one job's answer. */
function joinResults(first: ReferenceJobResult, second: ReferenceJobResult, counted: ReferenceJobResult['counted']): ReferenceJobResult {
  return {
    kind: 'references',
    references: [...first.references, ...second.references],
    total: first.total + second.total,
    filesSearched: first.filesSearched + second.filesSearched,
    leftOut: first.leftOut + second.leftOut,
    filesParsed: first.filesParsed + second.filesParsed,
    complete: second.complete,
    ...(counted ? { counted } : {}),
  };
}

/** Ranks `files` for the repository map in the symbol thread, within `timeMs`. */
export function rankForMap(files: PackedRecords, timeMs: number, maxResults: number, signal?: AbortSignal): Promise<JobOutcome<MapJobResult>> {
  const job: MapJob = { kind: 'map', files, timeMs, maxResults };
  return runJob<MapJobResult>(job, signal);
}

/** Forgets every folder's index and stops the symbol thread: the next query starts cold (the benchmark's cold figures). */
export async function resetSymbolIndexes(): Promise<void> {
  folders.clear();
  await closeSymbolPool();
}

/** The model-facing note on how complete the index is; empty when it is. */
export function statusNotes(status: IndexStatus, extraLeftOut = 0): string[] {
  const notes: string[] = [];
  if (!status.complete) {
    const of = status.walkStopped ? `at least ${status.sourceFiles}` : `${status.sourceFiles}`;
    const why = status.fileCapReached ? 'the file limit was reached' : 'the time limit was reached; ask again to continue indexing';
    notes.push(`[index incomplete: ${status.indexedFiles} of ${of} files indexed (${why}). Results may be missing; grep_files searches everything.]`);
  }
  const leftOut = status.leftOut + extraLeftOut;
  if (leftOut > 0) notes.push(`[${leftOut} files left out: outside the folder or not readable (secret, policy-denied or linked out of the folder; never parsed).]`);
  if (status.tooLarge > 0) notes.push(`[${status.tooLarge} source file(s) larger than 1 MiB are not indexed.]`);
  return notes;
}

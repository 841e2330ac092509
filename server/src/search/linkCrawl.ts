import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CASE_FREE_NAMES, IGNORE_FILE_NAMES, ignoreRulesAt, ignoreRulesInside, ignoresDirectory, type IgnoreStacks, type RuleNamesIn } from './ignoreRules';
import { ALWAYS_SKIPPED_DIRECTORIES } from './walk';

/**
 * The entries a ripgrep listing cannot be trusted to report, found by one
 * pass of directory reads (no stat, no file read) that runs while ripgrep
 * lists: symlinks (ripgrep passes over them; the walk includes symlinked
 * files) and the entries ripgrep takes rules from (ignore files and `.git`),
 * which must be regular and inside before its listing is used.
 *
 * This replaces ripgrep's `--debug` log: with a `-g` filter that log names
 * every file the filter skips, one unbuffered write each, which made a
 * selective search on 100,000 files cost two seconds instead of 0.2.
 */

export interface CrawlResult {
  /** Root-relative paths of every symlink under the scope (outside node_modules/, .git/ and the directories the ignore rules leave out). */
  symlinks: string[];
  /** Root-relative paths of every ignore file and `.git` entry under the scope (as for `symlinks`), whatever their type. */
  ruleEntries: string[];
  /** The root-relative directories whose entries were read ('' for the root): `ruleEntries` is complete for these. */
  directories: string[];
  /** Stopped by `shouldStop` or the entry cap: the lists are incomplete. */
  stopped: boolean;
  /**
   * `symlinks` holds only the links the walk takes as files, already judged
   * against the ignore rules: a warm index's (FolderIndex.crawlOf), which
   * judged them as it judges every file. A crawl knows no rules, so its
   * links are judged by the caller.
   */
  linksJudged?: true;
}

const RULE_NAMES: ReadonlySet<string> = new Set([...IGNORE_FILE_NAMES, '.git']);

/**
 * Whether ripgrep leaves out what the walk's rules leave out, for a listing
 * of `scope` with no include glob: only for the whole folder (below it,
 * ripgrep takes the rules above as an `--ignore-file`, weaker than any
 * inside) and where the walk's rules match names as ripgrep's do.
 */
export function rulesAreRipgrepsAt(scope: string): boolean {
  // Where the walk's rules match names case-free and ripgrep's do not, a `build/` rule would leave out a `Build/`
  // ripgrep walks: nothing is left out there.
  return (scope === '.' || scope === '') && !CASE_FREE_NAMES;
}

export interface CrawlOptions {
  /**
   * Whether ripgrep enters a directory of this name whatever the rules say:
   * an include glob that matches a directory's name (`--iglob *.ts` and a
   * directory `evil.ts/`) beats them.
   */
  enteredAnyway?: (name: string) => boolean;
}

/** A directory to crawl, with the rules in force where it sits; `fresh: false` when they include its own (the start). */
interface CrawlFrame {
  relative: string;
  /** Undefined when nothing is left out (see crawlLinksAndRules). */
  rules: IgnoreStacks | undefined;
  fresh?: false;
}
const TIME_SLICE_MS = 8;

function join(parent: string, name: string): string {
  return parent === '' ? name : `${parent}/${name}`;
}

/**
 * Crawls `scope` (root-relative, `.` for the root) of `root`, leaving out
 * the directories the ignore rules leave out, as ripgrep and the walk do,
 * when ripgrep's rules are sure to be the walk's there: a search of the
 * whole folder (below it, ripgrep takes the rules above as an
 * `--ignore-file`, weaker than any inside), but for a directory an include
 * glob takes ripgrep into (`enteredAnyway`). A directory ripgrep walks and the crawl did
 * not could hold a FIFO ignore file that ripgrep would wait on. Left out: a
 * built project's ignored output (`target/`, `dist/`) was crawled whole, and
 * on a folder of 5,200 files beside an ignored `target/` of 100,000 a cold
 * grep took 63 to 66 ms where ripgrep took 20. The rules are read as the walk
 * reads them (bounded, never through a link). Yields every few milliseconds
 * so ripgrep's pipe keeps draining.
 */
export async function crawlLinksAndRules(
  root: string,
  scope: string,
  maxEntries: number,
  shouldStop: () => boolean,
  options: CrawlOptions = {},
): Promise<CrawlResult> {
  const leaveOut = rulesAreRipgrepsAt(scope);
  const enteredAnyway = options.enteredAnyway ?? (() => false);
  const result: CrawlResult = { symlinks: [], ruleEntries: [], directories: [], stopped: false };
  const start = scope === '.' || scope === '' ? '' : scope;
  const stack: CrawlFrame[] = [{ relative: start, rules: leaveOut ? ignoreRulesAt(root, start) : undefined, fresh: false }];
  let entries = 0;
  let sliceStarted = performance.now();
  while (stack.length > 0) {
    const { relative, rules: inherited, fresh } = stack.pop() as CrawlFrame;
    const absolute = relative === '' ? root : `${root}/${relative}`;
    let listing: fs.Dirent[];
    try {
      listing = fs.readdirSync(absolute, { withFileTypes: true });
    } catch {
      continue; // unreadable: ripgrep cannot list it either
    }
    result.directories.push(relative);
    const ruleNames = new Set<string>();
    const subdirectories: string[] = [];
    for (const entry of listing) {
      const name = entry.name;
      const entryPath = join(relative, name);
      if (RULE_NAMES.has(name)) {
        result.ruleEntries.push(entryPath);
        ruleNames.add(name);
      }
      let isDirectory = entry.isDirectory();
      let isLink = entry.isSymbolicLink();
      if (!isDirectory && !isLink && !entry.isFile()) {
        // Some file systems report no type in readdir: ask lstat, as the walk does.
        try {
          const stats = fs.lstatSync(`${root}/${entryPath}`);
          isDirectory = stats.isDirectory();
          isLink = stats.isSymbolicLink();
        } catch {
          continue;
        }
      }
      if (isDirectory) {
        if (!ALWAYS_SKIPPED_DIRECTORIES.has(name)) subdirectories.push(entryPath);
      } else if (isLink) {
        result.symlinks.push(entryPath);
      }
    }
    // The start directory's own rules came with its ancestors'.
    const rules = inherited === undefined || fresh === false ? inherited : ignoreRulesInside(inherited, absolute, relative, ruleNames);
    for (const subdirectory of subdirectories) {
      if (rules === undefined || !ignoresDirectory(rules, subdirectory) || enteredAnyway(subdirectory.slice(subdirectory.lastIndexOf('/') + 1))) {
        stack.push({ relative: subdirectory, rules });
      }
    }
    entries += listing.length;
    if (entries > maxEntries || shouldStop()) {
      result.stopped = true;
      return result;
    }
    if (performance.now() - sliceStarted > TIME_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
  return result;
}

const NO_RULE_FILES: ReadonlySet<string> = new Set();

/** Which ignore files and `.git` each directory the crawl read holds (walk.ts walkVerdicts). */
export function ruleNamesIn(crawl: Pick<CrawlResult, 'ruleEntries' | 'directories'>): RuleNamesIn {
  const byDirectory = new Map<string, Set<string> | typeof NO_RULE_FILES>(crawl.directories.map((directory) => [directory, NO_RULE_FILES]));
  for (const entry of crawl.ruleEntries) {
    const slash = entry.lastIndexOf('/');
    const directory = slash === -1 ? '' : entry.slice(0, slash);
    let names = byDirectory.get(directory);
    if (names === undefined) continue;
    if (names === NO_RULE_FILES) byDirectory.set(directory, (names = new Set()));
    (names as Set<string>).add(entry.slice(slash + 1));
  }
  return (directory) => byDirectory.get(directory);
}

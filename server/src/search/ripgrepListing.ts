import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { minimatch } from 'minimatch';
import { ReadBoundary } from '../access/boundary';
import { isPortableDenyGlob, normalizeGlob } from '../access/globs';
import { SECRET_NAME_GLOBS } from '../access/secrets';
import { Ripgrep, RipgrepExclusion, RipgrepListing, runRipgrep } from './ripgrep';
import { type AncestorRules, ancestorIgnoreText, CutIgnoreFiles, IGNORE_FILE_NAMES, ignoreEntryLeadsOutside, ignoreFileFault, isRepositoryRoot, type RuleNamesIn } from './ignoreRules';
import { isWithin } from './relativePaths';
import { ALWAYS_SKIPPED_DIRECTORIES } from './walk';
import { crawlLinksAndRules, CrawlResult, ruleNamesIn } from './linkCrawl';
import { type Candidate, linkedFiles } from './linkedFiles';
import type { JobControl, SearchJob } from './searchJobs';

/**
 * When ripgrep's listing may stand in for the walk's, and what is checked of
 * it. ripgrep is handed the rules from above the searched directory as a
 * file and the secret and policy globs as a pre-filter. The crawl beside it
 * finds the links it passes over and any fault in the ignore files it reads
 * (then the walk answers), and every path it prints is checked again against
 * the walk's skipped and denied names (ListedPathCheck).
 */

const insideRepository = new Map<string, boolean>();

/** Whether the folder is in a git repository (a `.git` in it or above it); remembered per folder. */
export function isInsideRepository(root: string): boolean {
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

const KEPT_RULES = "ripgrep after 13 keeps the .gitignore rules from above a nested repository inside it, in a folder that is in no repository";

/**
 * Whether this ripgrep, in this folder, passes over nested repositories: one
 * after 13 in a folder that is in no repository (run with
 * `--no-require-git`). Asked first: the lists keepsRulesAboveNestedRepository
 * takes are gathered only then.
 */
export function passesOverNestedRepositories(ripgrep: Ripgrep, outsideRepository: boolean): boolean {
  return outsideRepository && keepsRulesInNestedRepositories(ripgrep.version);
}

/**
 * Whether a ripgrep that passes over nested repositories
 * (passesOverNestedRepositories) would leave out other files than the walk:
 * the rules from above a nested repository (a `.gitignore`, or an outer
 * nested repository's `.git/info/exclude`) go on applying inside it, where
 * the walk (as git, and ripgrep 13) starts afresh. `gitEntries` are the
 * root-relative `.git` entries found, `gitignoreFiles` the `.gitignore`
 * files. Rules from above a search's directory, handed over as a file, cross
 * a nested repository in every ripgrep: rankingFault sees to those.
 */
export function keepsRulesAboveNestedRepository(gitEntries: readonly string[], gitignoreFiles: readonly string[]): boolean {
  const ruleDirectories = [...gitignoreFiles, ...gitEntries].map(parentOf);
  return gitEntries.some((entry) => {
    const repository = parentOf(entry);
    return ruleDirectories.some((directory) => directory !== repository && isWithin(repository, directory));
  });
}

function parentOf(relativePath: string): string {
  const slash = relativePath.lastIndexOf('/');
  return slash === -1 ? '' : relativePath.slice(0, slash);
}

/** The entries of `entries` (root-relative paths) called `name`. */
export function entriesNamed(entries: readonly string[], name: string): string[] {
  return entries.filter((entry) => path.posix.basename(entry) === name);
}

/** keepsRulesAboveNestedRepository, from what the crawl beside ripgrep found (every `.gitignore`, whatever its rules say). */
function nestedRepositoryFault(ripgrep: Ripgrep, outsideRepository: boolean, crawl: CrawlResult): string | undefined {
  if (!passesOverNestedRepositories(ripgrep, outsideRepository)) return undefined;
  return keepsRulesAboveNestedRepository(entriesNamed(crawl.ruleEntries, '.git'), entriesNamed(crawl.ruleEntries, '.gitignore')) ? KEPT_RULES : undefined;
}

/** Whether this ripgrep (the first line of its `--version`) is one after 13, whose `--no-require-git` has it pass over nested repositories. */
export function keepsRulesInNestedRepositories(version: string): boolean {
  const major = /^ripgrep (\d+)\./.exec(version)?.[1];
  return major !== undefined && Number(major) > 13;
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

export interface CheckedListing {
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
export async function listWithRipgrep(
  job: SearchJob,
  boundary: ReadBoundary,
  check: ListedPathCheck,
  control: JobControl,
  query: Omit<Parameters<typeof runRipgrep>[0]['query'], 'scope' | 'ignoreFile' | 'outsideRepository'>,
  cut: CutIgnoreFiles,
  /** The most paths ripgrep lists, and entries the crawl reads, before the listing is cut short. */
  maxEntries: number,
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
  const outsideRepository = !isInsideRepository(job.root);
  let fault: string | undefined;
  try {
    const listed = runRipgrep({
      ripgrep,
      root: job.root,
      query: { ...query, withoutLog: true, scope: job.scope.relativePath, ignoreFile, outsideRepository },
      maxPaths: maxEntries,
      onPath,
      // A fault found by the crawl stops ripgrep at once: it may be waiting on a FIFO.
      shouldStop: () => control.shouldStop() || fault !== undefined,
      onSpawn: (pid) => control.onSpawn(pid),
    });
    let crawl: CrawlResult;
    try {
      crawl = crawlOf
        ? await crawlOf()
        : await crawlLinksAndRules(job.root, job.scope.relativePath, maxEntries, () => control.shouldStop(), {
            enteredAnyway: enteredByIncludeGlobs(query.includeGlobs ?? []),
          });
    } catch (error) {
      fault = 'the warm index gave out';
      await listed.catch(() => undefined);
      throw error;
    }
    fault = crawlFault(job, crawl) ?? rankingFault(rules, crawl, job.scope.relativePath) ?? nestedRepositoryFault(ripgrep, outsideRepository, crawl);
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

const LINKED_RULES = 'an ignore file or .git/info/exclude in the folder is a symbolic link, which ripgrep would follow out of the folder';

/**
 * Whether ripgrep may have taken rules from outside the folder: it follows a
 * symlinked ignore file, which the walk does not read. Its listing is then not
 * used (the walk answers), so outside bytes never decide what is shown.
 */
export function readRulesThroughLink(job: SearchJob, listing: RipgrepListing): boolean {
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
export function exclusionsFor(boundary: ReadBoundary, kind: 'grep' | 'find'): RipgrepExclusion[] {
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

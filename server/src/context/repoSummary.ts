import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ReadPolicy } from '../read/types';
import { ReadBoundary } from '../access/boundary';
import { defaultSearchEngine, SearchEngine } from '../search/searchEngine';
import { censusWithRipgrep } from '../search/searchJobs';
import type { Census, SavedCensuses } from './savedCensuses';
import { printableListItem, printablePath } from '../../../shared/printablePath';
import { settledWithin } from '../settledWithin';

/**
 * The small summary of the folder given to the model at the start of a
 * discussion (the instruction files are in instructions.ts). It is bounded so
 * a huge tree cannot delay or flood the first turn.
 *
 * The file census behind the summary is the only part that grows with the
 * tree. The tree is never walked on the event loop: ripgrep lists it in its
 * own process, or a walk runs in a search thread; both are capped (ripgrep
 * stops after a fixed number of files, the walk after a fixed number of
 * entries, both after a deadline). It is cached per folder: a
 * later discussion/start gets the cached census at once and a fresh one is
 * taken in the background for the next. It is also kept on disk
 * (savedCensuses.ts), so a fresh server's first start of a folder it has
 * seen waits for no census: it is taken again once the discussion has opened.
 */

export const SUMMARY_LIMITS = Object.freeze({
  maxChars: 4000,
  walkMaxEntries: 5000,
  walkTimeMs: 1500,
  /**
   * The longest a first summary of a folder waits for its census. A start
   * that would wait longer (a cold search thread on a slow machine) gets a
   * summary without file counts; the census goes on and the next start has it.
   */
  firstCensusWaitMs: 100,
  topLevelNames: 80,
  extensions: 20,
});

/** A cached census older than this is served once more while a fresh one is taken. */
const CENSUS_REFRESH_AFTER_MS = 5000;
/** Folders remembered per process (a census is a few hundred bytes). */
const CENSUS_CACHE_SIZE = 32;


const MANIFEST_NAMES = new Set([
  'package.json', 'tsconfig.json', 'deno.json', 'Cargo.toml', 'go.mod', 'pyproject.toml', 'setup.py',
  'requirements.txt', 'Pipfile', 'pom.xml', 'build.gradle', 'build.gradle.kts', 'settings.gradle',
  'Gemfile', 'composer.json', 'mix.exs', 'pubspec.yaml', 'Package.swift', 'CMakeLists.txt', 'Makefile',
  'meson.build', 'BUILD', 'BUILD.bazel', 'WORKSPACE', 'flake.nix', 'Dockerfile', 'docker-compose.yml',
]);

function isManifest(name: string): boolean {
  return MANIFEST_NAMES.has(name) || name.endsWith('.csproj') || name.endsWith('.sln') || name.endsWith('.fsproj');
}

function sortedNames(entries: fs.Dirent[]): fs.Dirent[] {
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function clampToChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = '\n[summary cut]';
  const cut = text.slice(0, maxChars - marker.length);
  const lastNewline = cut.lastIndexOf('\n');
  return `${lastNewline > 0 ? cut.slice(0, lastNewline) : cut}${marker}`;
}

/**
 * ripgrep's listing (in path order) when there is a ripgrep: it walks in its
 * own process, so this runs here without waiting for a search thread to
 * start. Otherwise, or if it fails, a capped walk in a search thread.
 */
async function takeCensus(boundary: ReadBoundary, search: SearchEngine): Promise<Census> {
  const job = {
    kind: 'census' as const,
    root: boundary.root,
    denyRead: boundary.denyRules.policyGlobs,
    scope: { realPath: boundary.root, relativePath: '.', kind: 'directory' as const },
    maxEntries: SUMMARY_LIMITS.walkMaxEntries,
    timeMs: SUMMARY_LIMITS.walkTimeMs,
    extensions: SUMMARY_LIMITS.extensions,
  };
  const ripgrep = await search.ripgrep();
  const listed = ripgrep ? await censusWithRipgrep({ ...job, ripgrep }, boundary, { shouldStop: () => false, onSpawn: () => undefined }) : undefined;
  if (listed) return { fileCount: listed.fileCount, byExtension: listed.byExtension, partial: listed.partial };
  const outcome = await search.run(job);
  if (!outcome.ok || outcome.result.kind !== 'census') return { fileCount: 0, byExtension: [], partial: true, missing: true };
  const { fileCount, byExtension, partial } = outcome.result;
  return { fileCount, byExtension, partial };
}

/** The summary text around a census: the top level is read fresh each time (one directory). */
async function describe(boundary: ReadBoundary, census: Census): Promise<string> {
  let topLevel: fs.Dirent[] = [];
  try {
    topLevel = sortedNames(await fs.promises.readdir(boundary.root, { withFileTypes: true }));
  } catch {
    // unreadable root: the rest of the summary says little, which is accurate
  }

  const isGitRepository = topLevel.some((entry) => entry.name === '.git');
  // Names are repository input: a newline or bidi override in one must not rewrite the system prompt around it.
  const manifests = topLevel.filter((entry) => entry.isFile() && isManifest(entry.name)).map((entry) => printableListItem(entry.name));
  const shownTopLevel = topLevel.slice(0, SUMMARY_LIMITS.topLevelNames).map((entry) => {
    const name = printableListItem(entry.name);
    return entry.isDirectory() ? `${name}/` : entry.isSymbolicLink() ? `${name}@` : name;
  });
  const hiddenTopLevel = topLevel.length - shownTopLevel.length;
  const byExtension = census.byExtension.map(([extension, count]) => `${printableListItem(extension)} ${count}`);
  const quotedNames = [...shownTopLevel, ...byExtension].some((name) => name.startsWith('"'));

  const lines = [
    `Folder: ${printablePath(path.basename(boundary.root) || boundary.root)}${isGitRepository ? ' (a git repository)' : ' (not a git repository)'}`,
    `Top level (${topLevel.length} entries${quotedNames ? '; names in double quotes are JSON-escaped' : ''}): ${shownTopLevel.join(', ')}${hiddenTopLevel > 0 ? `, … and ${hiddenTopLevel} more` : ''}`,
  ];
  if (manifests.length > 0) lines.push(`Manifests: ${manifests.join(', ')}`);
  if (census.missing || census.pending) {
    lines.push(`Files by extension: ${census.pending ? 'still being counted' : 'not counted (the file census did not finish)'}; use find_files to look around.`);
  } else {
    lines.push(
      `Files by extension (${census.partial ? `first ${census.fileCount} files seen; the tree is larger` : `${census.fileCount} files`}; gitignored, node_modules/ and .git/ left out): ${byExtension.join(', ') || 'none'}`,
    );
  }
  return clampToChars(lines.join('\n'), SUMMARY_LIMITS.maxChars);
}

export interface SummaryOptions {
  /** Where the file census comes from; default: ripgrep from PATH if present, else a bounded walk. */
  search?: SearchEngine;
}

/** A few lines describing the folder: top level, manifests, file counts by extension, whether it is a git repo. */
export async function summarizeRepo(root: string, policy: ReadPolicy, options: SummaryOptions = {}): Promise<string> {
  const boundary = await ReadBoundary.create(root, policy.denyRead);
  return describe(boundary, await takeCensus(boundary, options.search ?? defaultSearchEngine()));
}

interface CachedCensus {
  census: Census;
  takenAt: number;
  refreshing: boolean;
}

/**
 * Repository summaries with the census cached per folder and deny list. The
 * first summary of a folder waits for its census (a bounded time) unless an
 * earlier process saved one; later ones are answered from the cache, which is
 * refreshed in the background when stale.
 */
export class RepoSummaries {
  private readonly cache = new Map<string, CachedCensus>();
  private readonly pending = new Map<string, Promise<Census>>();
  /** Folders answered from a saved census, to be taken afresh by `refreshSaved`. */
  private readonly fromSaved = new Map<string, ReadBoundary>();
  private readonly refreshAfterMs: number;
  private readonly firstWaitMs: number;
  private readonly saved: SavedCensuses | undefined;

  constructor(
    private readonly search: SearchEngine = defaultSearchEngine(),
    options: { refreshAfterMs?: number; firstWaitMs?: number; saved?: SavedCensuses } = {},
  ) {
    this.refreshAfterMs = options.refreshAfterMs ?? CENSUS_REFRESH_AFTER_MS;
    this.firstWaitMs = options.firstWaitMs ?? SUMMARY_LIMITS.firstCensusWaitMs;
    this.saved = options.saved;
  }

  /** Resolves when no census is being taken (a background refresh included) and every one taken is saved. */
  async settled(): Promise<void> {
    for (;;) {
      while (this.pending.size > 0) await Promise.allSettled([...this.pending.values()]);
      const writing = this.saved?.written();
      await writing;
      // A census taken while that write ran is saved by another.
      if (this.pending.size === 0 && this.saved?.written() === writing) return;
    }
  }

  async summarize(root: string, policy: ReadPolicy): Promise<string> {
    const boundary = await ReadBoundary.create(root, policy.denyRead);
    const key = [boundary.root, ...boundary.denyRules.policyGlobs].join('\0');
    const cached = this.cache.get(key) ?? (await this.cachedFromDisk(key, boundary));
    if (cached) {
      if (!cached.refreshing && performance.now() - cached.takenAt >= this.refreshAfterMs) {
        cached.refreshing = true;
        // Not awaited: this start is answered from the cache; the next one sees the fresh census.
        this.take(key, boundary).catch(() => (cached.refreshing = false));
      }
      return describe(boundary, cached.census);
    }
    const taking = this.take(key, boundary);
    const waited = await settledWithin(taking, this.firstWaitMs);
    return describe(boundary, waited ?? { fileCount: 0, byExtension: [], partial: true, pending: true });
  }

  /**
   * Takes afresh the censuses that summaries were answered with from disk.
   * Called once the discussion has opened (its replay sent), not during the
   * start: starting ripgrep holds the thread that starts it.
   */
  async refreshSaved(): Promise<void> {
    const due = [...this.fromSaved];
    this.fromSaved.clear();
    await Promise.allSettled(due.map(([key, boundary]) => this.take(key, boundary)));
  }

  /** A census an earlier process saved for this folder, cached as if just taken. */
  private async cachedFromDisk(key: string, boundary: ReadBoundary): Promise<CachedCensus | undefined> {
    if (!this.saved || this.pending.has(key)) return undefined;
    const found = await this.saved.lookup(key);
    // A census taken meanwhile (another start of the folder) is newer than the saved one.
    if (!found || this.cache.has(key) || this.pending.has(key)) return this.cache.get(key);
    const entry: CachedCensus = { census: found.census, takenAt: performance.now(), refreshing: false };
    this.cacheCensus(key, entry);
    this.fromSaved.set(key, boundary);
    return entry;
  }

  private cacheCensus(key: string, entry: CachedCensus): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    if (this.cache.size > CENSUS_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
  }

  private take(key: string, boundary: ReadBoundary): Promise<Census> {
    let pending = this.pending.get(key);
    if (!pending) {
      this.fromSaved.delete(key);
      pending = takeCensus(boundary, this.search).then(
        (census) => {
          this.pending.delete(key);
          this.cacheCensus(key, { census, takenAt: performance.now(), refreshing: false });
          void this.saved?.remember(key, census);
          return census;
        },
        (error: unknown) => {
          this.pending.delete(key);
          throw error;
        },
      );
      this.pending.set(key, pending);
    }
    return pending;
  }
}

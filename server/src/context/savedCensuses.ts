import * as path from 'node:path';
import { readOwnJson, writeOwnJson } from '../store/ownJsonFile';

/** How many files of each extension a bounded look at the tree saw (repoSummary.ts takes it). */
export interface Census {
  fileCount: number;
  byExtension: Array<[string, number]>;
  /** The look stopped at its cap or deadline: the tree is larger. */
  partial: boolean;
  /** The census could not be taken (the search thread failed or timed out). */
  missing?: boolean;
  /** Still being taken when the summary was due. */
  pending?: boolean;
}

/** Named for its format: censuses of another shape are in a file of their own, never read as these. */
export const CENSUS_FILE = 'censuses-v1.json';
/** Folders remembered across processes, newest first. */
const MAX_SAVED = 32;
/** 32 censuses of 20 extensions take about 30 KB with long paths; a larger file is not ours to parse. */
const MAX_FILE_BYTES = 256 * 1024;
/** Longer than any extension the census counts or any folder key a path gives. */
const MAX_STRING = 8192;

interface SavedCensus {
  /** The folder and its deny rules (RepoSummaries' cache key). */
  key: string;
  fileCount: number;
  byExtension: Array<[string, number]>;
  partial: boolean;
  /** When it was taken (ms since the epoch). */
  takenAt: number;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isSavedCensus(value: unknown): value is SavedCensus {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.key === 'string' &&
    v.key.length <= MAX_STRING &&
    isCount(v.fileCount) &&
    typeof v.partial === 'boolean' &&
    typeof v.takenAt === 'number' &&
    Array.isArray(v.byExtension) &&
    v.byExtension.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && pair[0].length <= MAX_STRING && isCount(pair[1]))
  );
}

/**
 * The censuses of earlier server processes, kept in the storage folder, so
 * that a fresh server's first start or resume of a folder it has seen is
 * answered without starting ripgrep: on two slow CPUs that start held the
 * main thread 12 to 14 ms of a resume's 110. The census is then taken again
 * once the discussion has opened (RepoSummaries). Only counts and extensions
 * are kept; they are shown as the repository's names are, escaped.
 */
export class SavedCensuses {
  private readonly file: string;
  private loaded: Promise<SavedCensus[]> | undefined;
  /** Writes one after another, each of the newest list. */
  private writing: Promise<void> = Promise.resolve();

  constructor(directory: string) {
    this.file = path.join(directory, CENSUS_FILE);
  }

  /** The census saved for `key`, and when it was taken; a missing or garbled file is none. */
  async lookup(key: string): Promise<{ census: Census; takenAt: number } | undefined> {
    const found = (await this.all()).find((saved) => saved.key === key);
    if (!found) return undefined;
    return { census: { fileCount: found.fileCount, byExtension: found.byExtension, partial: found.partial }, takenAt: found.takenAt };
  }

  /** Keeps `census` for `key` in place of an older one. A census that could not be taken is not kept. */
  remember(key: string, census: Census, takenAt: number = Date.now()): Promise<void> {
    if (census.missing || census.pending) return this.writing;
    this.writing = this.writing.then(async () => {
      // Read again: another window's server may have kept censuses of its own folders since.
      this.loaded = undefined;
      const kept = await this.all();
      const same = kept[0]?.key === key ? kept[0] : undefined;
      // The newest census, as it was kept, is not written again: a refresh can come every few seconds.
      if (same && same.fileCount === census.fileCount && same.partial === census.partial && JSON.stringify(same.byExtension) === JSON.stringify(census.byExtension)) return;
      const others = kept.filter((saved) => saved.key !== key);
      const list = [{ key, fileCount: census.fileCount, byExtension: census.byExtension, partial: census.partial, takenAt }, ...others].slice(0, MAX_SAVED);
      this.loaded = Promise.resolve(list);
      await writeOwnJson(this.file, list);
    });
    return this.writing;
  }

  /** Resolves once every census kept so far is written. */
  written(): Promise<void> {
    return this.writing;
  }

  private all(): Promise<SavedCensus[]> {
    this.loaded ??= readOwnJson(this.file, MAX_FILE_BYTES).then((parsed) => (Array.isArray(parsed) ? parsed.filter(isSavedCensus) : []));
    return this.loaded;
  }
}

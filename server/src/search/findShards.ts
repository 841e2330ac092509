import type { FindJob, FindJobResult } from './searchJobs';
import { SEARCH_LIMITS } from './searchJobs';
import { normalizeGlob } from '../access/globs';
import { walkOrderKey } from './relativePaths';
import { mergeShardNotes } from './shardNotes';

/**
 * A find_files without a warm index split across two search threads. A cold
 * walk of names spends most of its time in the kernel's directory reads, one
 * directory after another on one thread, where ripgrep reads them on two: on
 * 100,000 files it took 1.6 times as long as `rg --files -g`. Each shard walks
 * part of the tree (walk.ts WalkOptions.shard) and this merges their answers.
 */
export const FIND_SHARDS = 2;

/**
 * A glob whose last segment is only wildcards and an extension (`*.ts` at
 * any depth, or all of `src`) names many files, and a find of it stops at
 * the cap within the first directories: split, each shard walked that far
 * and the find took longer than on one thread (on 100,000 files 1.61x of
 * `rg --files | head` against 0.59x). Split only the others, which a find
 * walks to the end.
 */
export function namesManyFiles(glob: string): boolean {
  const normalized = normalizeGlob(glob);
  const last = normalized.slice(normalized.lastIndexOf('/') + 1);
  return /^\*+(?:\.[^*?/[\]{}]+)*$/.test(last) || last === '';
}

/** The shards' jobs for one find. */
export function findShardJobs<Job extends FindJob>(job: Job): Job[] {
  return Array.from({ length: FIND_SHARDS }, (_, index) => ({ ...job, shard: { index, of: FIND_SHARDS } }));
}

/**
 * One answer from the shards': the first results in walk order, at most the
 * cap. Each shard stops at the cap in its own part, so the first results of
 * the whole are among theirs.
 */
export function mergeFindShards(shards: readonly FindJobResult[]): FindJobResult {
  const max = SEARCH_LIMITS.findMaxResults;
  const byPath = new Map<string, FindJobResult['results'][number]>();
  for (const shard of shards) for (const result of shard.results) if (!byPath.has(result.relativePath)) byPath.set(result.relativePath, result);
  const keyed = [...byPath.values()].map((result) => ({ key: walkOrderKey(result.relativePath), result }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    kind: 'find',
    engine: shards[0]?.engine ?? 'node',
    results: keyed.slice(0, max).map((entry) => entry.result),
    more: keyed.length > max || shards.some((shard) => shard.more),
    listingStopped: shards.some((shard) => shard.listingStopped),
    ...mergeShardNotes(shards),
  };
}

import type { GrepJob, GrepJobResult } from './searchJobs';
import { GREP_LIMITS } from './grepCore';
import { walkOrderKey } from './relativePaths';
import { mergeShardNotes } from './shardNotes';

/**
 * A grep_files without a warm index, which ripgrep will not search (there is
 * none, or the pattern is one it cannot narrow by), split across two search
 * threads. The walk's grep spends most of its time in the kernel, an open, a
 * stat, a read and a close a file, one after another on one thread: each
 * shard lists every directory and reads the files dealt to it by path
 * (walk.ts WalkOptions.fileShard), and this merges their answers. One
 * walk's head start comes first (searchEngine.ts `runGrepShards`): a capped
 * search of a common word took up to twice as long split, each shard walking
 * twice as far to its own cap. On a generated 20,000-file tree a rare word
 * took 0.68x as long as on one thread; on vite's 2,800 files, about as long.
 *
 * Where ripgrep searches, nothing is split: two shards' head start, then
 * ripgrep, measured slower than one walk's head start, then ripgrep.
 */
export const GREP_SHARDS = 2;

/** The shards' jobs for one grep. */
export function grepShardJobs<Job extends GrepJob>(job: Job): Job[] {
  return Array.from({ length: GREP_SHARDS }, (_, index) => ({ ...job, shard: { index, of: GREP_SHARDS } }));
}

interface KeyedLine {
  key: string;
  order: number;
  line: string;
}

/**
 * One answer from the shards', the same as one walk would give.
 *
 * Each shard's lines are in walk order and complete up to where it stopped:
 * its end, or its first match past the cap (`capPath`). One walk would stop
 * at the file of the first match past the cap of the whole: the earliest of
 * the merged match past the cap and each capped shard's own; every other
 * shard searched at least that far, having gone on to its own cap or end.
 */
export function mergeGrepShards(shards: readonly GrepJobResult[]): GrepJobResult {
  const lines: KeyedLine[] = [];
  const stops: string[] = [];
  for (const shard of shards) {
    const paths = shard.shardWalk?.linePaths ?? [];
    shard.lines.forEach((line, order) => lines.push({ key: walkOrderKey(paths[order]), order, line }));
    if (shard.shardWalk?.capPath !== undefined) stops.push(walkOrderKey(shard.shardWalk.capPath));
  }
  // Within one file the lines keep their shard's order (line numbers); each file is in one shard.
  lines.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.order - b.order));
  const max = GREP_LIMITS.maxMatches;
  if (lines.length > max) stops.push(lines[max].key);
  const stopKey = stops.length > 0 ? stops.reduce((a, b) => (b < a ? b : a)) : undefined;
  const answer = lines.slice(0, max);
  // Oversized matches are named as the walk meets them, so only those before where it would stop.
  const oversized = shards
    .flatMap((shard) => shard.oversized)
    .map((relativePath) => ({ relativePath, key: walkOrderKey(relativePath) }))
    .filter((entry) => stopKey === undefined || entry.key < stopKey)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((entry) => entry.relativePath);
  return {
    kind: 'grep',
    engine: 'node',
    lines: answer.map((entry) => entry.line),
    matchCount: answer.length,
    more: stopKey !== undefined,
    oversized,
    changedFiles: shards.reduce((sum, shard) => sum + shard.changedFiles, 0),
    filesFromMemory: 0,
    listingStopped: shards.some((shard) => shard.listingStopped),
    ...mergeShardNotes(shards),
    namedFileBinary: false,
    fallbackReason: shards[0]?.fallbackReason,
  };
}

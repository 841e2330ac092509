/**
 * What the shards of a split search report beside their results, merged
 * alike by find_files and grep_files: changed entries summed, except the
 * directories several shards list, which count once (walk.ts WalkStats
 * `changedSharedDirectories`), and the ignore files cut to their first rules,
 * each named once.
 */
export interface ShardNotes {
  changedEntries?: number;
  changedSharedDirectories?: string[];
  cutIgnoreFiles?: string[];
}

export function mergeShardNotes(shards: readonly ShardNotes[]): { changedEntries: number; cutIgnoreFiles: string[] } {
  const sharedDirectories = new Set(shards.flatMap((shard) => shard.changedSharedDirectories ?? []));
  return {
    changedEntries: shards.reduce((sum, shard) => sum + (shard.changedEntries ?? 0), 0) + sharedDirectories.size,
    cutIgnoreFiles: [...new Set(shards.flatMap((shard) => shard.cutIgnoreFiles ?? []))],
  };
}

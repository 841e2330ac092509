import { shardOfName } from '../../server/src/search/walk';

/**
 * Four package names, two dealt to each of two shards (walk.ts `shardOfName`),
 * so that a split has work for both. `dealtAs` is what the shards hash for a
 * package: a split walk deals directories one level below the split, by path.
 */
export function namesOfEachShard(dealtAs: (name: string) => string = (name) => name): string[] {
  const names: string[] = [];
  for (const wanted of [0, 0, 1, 1]) {
    for (let i = names.length; ; i++) {
      const name = `pkg-${i}`;
      if (shardOfName(dealtAs(name), 2) === wanted && !names.includes(name)) {
        names.push(name);
        break;
      }
    }
  }
  return names;
}

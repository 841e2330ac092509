import { shardOfName } from '../../server/src/search/walk';

/** Four package names, two dealt to each of two shards (walk.ts `shardOfName`), so that a split has work for both. */
export function namesOfEachShard(): string[] {
  const names: string[] = [];
  for (const wanted of [0, 0, 1, 1]) {
    for (let i = names.length; ; i++) {
      const name = `pkg-${i}`;
      if (shardOfName(name, 2) === wanted && !names.includes(name)) {
        names.push(name);
        break;
      }
    }
  }
  return names;
}

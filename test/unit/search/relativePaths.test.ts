import * as assert from 'node:assert/strict';
import { compareWalkOrder, mergeInWalkOrder, sortInWalkOrder, walkOrderKey, walkOrderPosition } from '../../../server/src/search/relativePaths';
import { prng } from '../../support/prng';

/**
 * The walk's order without building sort keys (server/src/search/relativePaths.ts):
 * compareWalkOrder, and the merge and placement built on it, order paths
 * exactly as their walkOrderKey does, a directory's contents right after
 * its name.
 */

/** Random root-relative paths over a few names, so that prefixes, separators and neighbours of '/' meet often. */
function randomPaths(random: () => number, count: number): string[] {
  const names = ['a', 'a.txt', 'a-b', 'a/b', 'ab', 'b', 'é', '\uFF5A', '😀', 'A', 'a0', 'x'];
  return Array.from({ length: count }, () => {
    const depth = 1 + Math.floor(random() * 3);
    return Array.from({ length: depth }, () => names[Math.floor(random() * names.length)]).join('/');
  });
}

const byKey = (a: string, b: string): number => {
  const [x, y] = [walkOrderKey(a), walkOrderKey(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

describe('the walk order without sort keys', () => {
  it('compares any two paths as their walkOrderKey does', () => {
    const random = prng(11);
    // The root ('') too, which comes first.
    const paths = ['', ...randomPaths(random, 400)];
    for (const a of paths) for (const b of paths.slice(0, 60)) assert.equal(Math.sign(compareWalkOrder(a, b)), byKey(a, b), `${JSON.stringify(a)} against ${JSON.stringify(b)}`);
    // A directory's contents come right after its name, before a sibling whose name continues it.
    assert.ok(compareWalkOrder('a/x', 'a.txt') < 0);
    assert.ok(compareWalkOrder('a', 'a/x') < 0);
  });

  it('merges and places paths where a sort of them all puts them, few or many, sorted or not', () => {
    const random = prng(12);
    for (let round = 0; round < 200; round++) {
      const ordered = [...new Set(sortInWalkOrder(randomPaths(random, Math.floor(random() * 300))))];
      const added = randomPaths(random, Math.floor(random() * (round % 2 === 0 ? 4 : 200))).filter((path) => !ordered.includes(path));
      const unique = [...new Set(added)];
      assert.deepEqual(mergeInWalkOrder(ordered, [...unique]), sortInWalkOrder([...ordered, ...unique]), `round ${round}`);
      for (const path of unique) assert.equal(walkOrderPosition(ordered, path), ordered.filter((other) => byKey(other, path) < 0).length);
      // A path present is found where it is, as a removal needs.
      ordered.forEach((path, at) => assert.equal(walkOrderPosition(ordered, path), at));
    }
  });
});

import { strict as assert } from 'node:assert';
import { BestOf, forEachMatchingName, NAME_PASS } from '../../../server/src/symbols/nameSearch';
import { matchScore } from '../../../server/src/symbols/matching';
import { prng } from '../../support/prng';

/**
 * The pass over the index's names behind find_symbol and `@` completion
 * (server/src/symbols/nameSearch.ts): it finds what matchScore matches, keeps
 * only the best few in order, and never holds the server's thread for the
 * whole pass.
 */

const withLower = (names: string[]): Array<[string, string]> => names.map((name) => [name, name.toLowerCase()]);

describe('the pass over indexed names', () => {
  it('keeps the best few in the order a stable sort of everything offered gives, and counts every offer', () => {
    const random = prng(7);
    for (let round = 0; round < 200; round++) {
      const limit = Math.floor(random() * 12);
      const offered = Array.from({ length: Math.floor(random() * 60) }, (_, id) => ({ id, score: Math.floor(random() * 5) }));
      const compare = (a: { score: number }, b: { score: number }) => b.score - a.score;
      const best = new BestOf(limit, compare);
      for (const item of offered) best.offer(item);
      assert.deepEqual(best.best(), [...offered].sort(compare).slice(0, limit), `round ${round}`);
      assert.equal(best.count, offered.length);
    }
  });

  it('finds every name matchScore matches, with its score', async () => {
    const names = ['parseConfig', 'ParseConfigError', 'configParser', 'parse_config', 'unrelated', 'pC'];
    const found: Array<[string, number]> = [];
    assert.equal(await forEachMatchingName(withLower(names), 'parseCon', (name, score) => found.push([name, score])), true);
    const expected = names.flatMap((name) => {
      const score = matchScore('parseCon', name);
      return score === undefined ? [] : [[name, score] as [string, number]];
    });
    assert.deepEqual(found, expected);
    assert.ok(found.length >= 2);
  });

  it('lets other work run while it goes through many names, and stops when cancelled', async () => {
    const names = withLower(Array.from({ length: 2_000 }, (_, i) => `${'aA'.repeat(60)}b${i.toString(36)}z`));
    const saved = NAME_PASS.sliceMs;
    // Every slice is spent by the time it is checked: the pass gives the thread back at each check, however fast the machine.
    NAME_PASS.sliceMs = -1;
    try {
      const order: string[] = [];
      setImmediate(() => order.push('other work'));
      let matched = 0;
      await forEachMatchingName(names, `${'a'.repeat(40)}z`, () => (matched += 1));
      order.push('pass done');
      assert.equal(matched, names.length);
      assert.deepEqual(order, ['other work', 'pass done']);

      const controller = new AbortController();
      let seen = 0;
      const finished = await forEachMatchingName(names, `${'a'.repeat(40)}z`, () => {
        seen += 1;
        controller.abort();
      }, controller.signal);
      assert.equal(finished, false);
      assert.ok(seen < names.length, 'stopped at the first break after the cancel');
    } finally {
      NAME_PASS.sliceMs = saved;
    }
  });
});

import * as assert from 'node:assert/strict';
import { nextSlice } from '../../../server/src/nextSlice';
import { packInSlices } from '../../../server/src/search/packedRecords';
import { countTurns } from '../../support/eventLoopTurns';

/**
 * Slices of main-thread work that wait for their turn through nextSlice run
 * one a turn of the event loop, taking turns in the order they asked, so two
 * jobs split into slices never add their slices up into one long stall.
 */

describe('slices of main-thread work', () => {
  it('run one a turn of the event loop, whichever job they belong to', async () => {
    const counter = countTurns();
    const ranIn: Array<{ job: string; turn: number }> = [];
    const job = async (name: string): Promise<void> => {
      for (let slice = 0; slice < 5; slice++) {
        await nextSlice();
        ranIn.push({ job: name, turn: counter.turn() });
      }
    };
    await Promise.all([job('a'), job('b'), job('c')]);
    counter.stop();
    const turns = ranIn.map((slice) => slice.turn);
    assert.equal(new Set(turns).size, turns.length, `two slices ran in one turn: ${JSON.stringify(ranIn)}`);
    // Taking turns in the order they asked: a, b, c, a, b, c…
    assert.deepEqual(ranIn.map((slice) => slice.job).join(''), 'abcabcabcabcabc');
  });

  it('keep two packings of records from running their slices in the same turn', async () => {
    const counter = countTurns();
    const turnsOf = { a: new Set<number>(), b: new Set<number>() };
    const items = Array.from({ length: 400 }, (_, i) => `f${i}`);
    const pack = (name: 'a' | 'b') =>
      packInSlices(items, 1, (item) => {
        turnsOf[name].add(counter.turn());
        return [item];
      }, 0);
    await Promise.all([pack('a'), pack('b')]);
    counter.stop();
    const shared = [...turnsOf.a].filter((turn) => turnsOf.b.has(turn));
    // Both start in the turn that asked; after that, never together.
    assert.deepEqual(shared, [0]);
    assert.ok(turnsOf.a.size > 5 && turnsOf.b.size > 5);
  });
});

import * as assert from 'node:assert/strict';
import { AS_UPKEEP, FOREGROUND_RUN, nextSlice, type SliceKind, WaitingCalls } from '../../../server/src/nextSlice';
import { packInSlices } from '../../../server/src/search/packedRecords';
import { forEachMatchingName, NAME_PASS } from '../../../server/src/symbols/nameSearch';
import { FolderIndex, usesInSlices } from '../../../server/src/symbols/symbolIndex';
import { countTurns } from '../../support/eventLoopTurns';

/**
 * Slices of main-thread work that wait for their turn through nextSlice run
 * one a turn of the event loop, so two jobs split into slices never add their
 * slices up into one long stall. A call's own slices go ahead of upkeep,
 * which still gets a turn in every FOREGROUND_RUN + 1.
 */

/** The order in which `jobs` (a letter and a kind each, with so many slices) ran their slices, one letter a slice. */
async function orderOfSlices(jobs: Array<{ letter: string; kind: SliceKind; slices: number }>): Promise<{ order: string; turns: number[] }> {
  const counter = countTurns();
  const ran: Array<{ letter: string; turn: number }> = [];
  await Promise.all(
    jobs.map(async ({ letter, kind, slices }) => {
      for (let slice = 0; slice < slices; slice++) {
        await nextSlice(kind);
        ran.push({ letter, turn: counter.turn() });
      }
    }),
  );
  counter.stop();
  return { order: ran.map((slice) => slice.letter).join(''), turns: ran.map((slice) => slice.turn) };
}

describe('slices of main-thread work', () => {
  it('run one a turn of the event loop, whichever job they belong to, in the order they asked among their kind', async () => {
    for (const kind of ['background', 'foreground'] as const) {
      const { order, turns } = await orderOfSlices(['a', 'b', 'c'].map((letter) => ({ letter, kind, slices: 5 })));
      assert.equal(new Set(turns).size, turns.length, `two ${kind} slices ran in one turn: ${order} in turns ${turns}`);
      assert.equal(order, 'abcabcabcabcabc');
    }
  });

  it('let a call\'s own slices go ahead of upkeep, which still runs once in every FOREGROUND_RUN + 1 turns', async () => {
    const run = 'f'.repeat(FOREGROUND_RUN);
    // The upkeep asked first; the call's slices still run first, FOREGROUND_RUN at a time.
    const { order, turns } = await orderOfSlices([
      { letter: 'b', kind: 'background', slices: 8 },
      { letter: 'f', kind: 'foreground', slices: 3 * FOREGROUND_RUN },
    ]);
    assert.equal(new Set(turns).size, turns.length, `two slices ran in one turn: ${order} in turns ${turns}`);
    assert.equal(order, `${run}b${run}b${run}b${'b'.repeat(5)}`);
  });

  it('count only the foreground turns run while upkeep waits, so upkeep that asks late is not let in at once', async () => {
    let order = '';
    const upkeep = async (): Promise<void> => {
      for (let slice = 0; slice < 2; slice++) {
        await nextSlice('background');
        order += 'b';
      }
    };
    let upkept: Promise<void> | undefined;
    for (let slice = 0; slice < 5 + 2 * FOREGROUND_RUN; slice++) {
      await nextSlice('foreground');
      order += 'f';
      // Asks once five foreground slices have run with nothing else waiting.
      if (slice === 4) upkept = upkeep();
    }
    await upkept;
    const run = 'f'.repeat(FOREGROUND_RUN);
    assert.equal(order, `fffff${run}b${run}b`);
  });

  it('let find_symbol\'s name pass finish before a map\'s inputs, packed from the same turn, with as many slices', async () => {
    const saved = NAME_PASS.sliceMs;
    // Every slice is spent by the time it is checked: both give the thread back at each check, however fast the machine.
    NAME_PASS.sliceMs = -1;
    try {
      const ended: string[] = [];
      const names = Array.from({ length: 256 * 12 }, (_, i): [string, string] => [`name${i}`, `name${i}`]);
      const records = Array.from({ length: 32 * 12 }, (_, i) => `f${i}`);
      await Promise.all([
        packInSlices(records, 1, (item) => [item], -1, AS_UPKEEP).then(() => ended.push('packing')),
        forEachMatchingName(names, 'zz', () => undefined).then(() => ended.push('name pass')),
      ]);
      assert.deepEqual(ended, ['name pass', 'packing']);
    } finally {
      NAME_PASS.sliceMs = saved;
    }
  });

  it('let find_references count its uses ahead of a map\'s inputs, packed from the same turn, with as many slices', async () => {
    const ended: string[] = [];
    const files = Array.from({ length: 12 }, (_, i) => `src/f${i}.ts`);
    const records = Array.from({ length: 32 * 12 }, (_, i) => `f${i}`);
    await Promise.all([
      packInSlices(records, 1, (item) => [item], -1, AS_UPKEEP).then(() => ended.push('packing')),
      // One file a slice: twelve slices, as the packing's.
      usesInSlices(new FolderIndex('/nowhere', []), 'loadConfig', files, 1).then(() => ended.push('uses')),
    ]);
    assert.deepEqual(ended, ['uses', 'packing']);
  });

  it('read a slice\'s kind when it may run, not when it asked: a call that starts waiting meanwhile puts it ahead', async () => {
    let callWaits = false;
    const order: string[] = [];
    const upkeep = nextSlice('background').then(() => order.push('upkeep'));
    const waitedFor = nextSlice(() => (callWaits ? 'foreground' : 'background')).then(() => order.push('waited for'));
    callWaits = true;
    await Promise.all([upkeep, waitedFor]);
    assert.deepEqual(order, ['waited for', 'upkeep']);
  });

  it('give a packing the kind of those waiting for it as each slice may run, its first too', async () => {
    // One slice each after the first: both ask once.
    const records = Array.from({ length: 40 }, (_, i) => `f${i}`);
    let callWaits = false;
    const ended: string[] = [];
    const upkeep = packInSlices(records, 1, (item) => [item], -1, AS_UPKEEP).then(() => ended.push('upkeep'));
    // A refresh's packing starts before the call that started it has joined.
    const waitedFor = packInSlices(records, 1, (item) => [item], -1, () => (callWaits ? 'foreground' : 'background')).then(() => ended.push('waited for'));
    callWaits = true;
    await Promise.all([upkeep, waitedFor]);
    assert.deepEqual(ended, ['waited for', 'upkeep']);
  });

  it('run upkeep as foreground while a call waits for it, and as background once none does', () => {
    const calls = new WaitingCalls();
    assert.equal(calls.kind(), 'background');
    const mapBuildStops = calls.start('background');
    assert.equal(calls.kind(), 'background', 'upkeep waiting for upkeep');
    const firstStops = calls.start('foreground');
    const secondStops = calls.start('foreground');
    assert.equal(calls.kind(), 'foreground');
    firstStops();
    firstStops(); // counted once however often it says so
    assert.equal(calls.kind(), 'foreground', 'the second call still waits');
    secondStops();
    assert.equal(calls.kind(), 'background');
    mapBuildStops();
    assert.equal(calls.kind(), 'background');
  });

  it('keep two packings of records from running their slices in the same turn', async () => {
    const counter = countTurns();
    const turnsOf = { a: new Set<number>(), b: new Set<number>() };
    const items = Array.from({ length: 400 }, (_, i) => `f${i}`);
    const pack = (name: 'a' | 'b') =>
      packInSlices(items, 1, (item) => {
        turnsOf[name].add(counter.turn());
        return [item];
      }, 0, AS_UPKEEP);
    await Promise.all([pack('a'), pack('b')]);
    counter.stop();
    const shared = [...turnsOf.a].filter((turn) => turnsOf.b.has(turn));
    // Both start in the turn that asked; after that, never together.
    assert.deepEqual(shared, [0]);
    assert.ok(turnsOf.a.size > 5 && turnsOf.b.size > 5);
  });
});

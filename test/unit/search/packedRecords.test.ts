import * as assert from 'node:assert/strict';
import { movedBuffers, noRecords, packInSlices, PackedRecords, unpackRecords } from '../../../server/src/search/packedRecords';
import { turnsWhile } from '../../support/eventLoopTurns';
import { AS_UPKEEP } from '../../../server/src/nextSlice';

/**
 * Records handed to a worker as buffers that move rather than being copied
 * come back out as they went in, whatever the slices they were packed in; a
 * field that would shift the others is kept out, and a chunk out of step is
 * refused rather than read askew.
 */

/** Names that open with U+FEFF, which a decoder drops by default at the start of a chunk; empty fields, and records of nothing but. */
const records = (count: number): string[][] =>
  Array.from({ length: count }, (_, i) => (i % 11 === 5 ? ['', '', ''] : [`${i % 2 === 1 ? '\uFEFF' : ''}src/dir ${i % 5}/fïle${i}.ts`, i % 3 === 0 ? '' : `name${i}\nother${i}`, i % 7 === 0 ? '' : `used${i}\t${i}\nline\twith tab`]));

const unpacked = (packed: PackedRecords): string[][] => [...unpackRecords(packed)];

describe('records packed for a worker', () => {
  it('come back in order, with empty fields, newlines, tabs, a leading U+FEFF and non-ASCII intact', async () => {
    const items = records(300);
    assert.deepEqual(unpacked(await packInSlices(items, 3, (item) => item, Infinity, AS_UPKEEP)), items);
  });

  it('are packed a slice at a time, letting the event loop run, into chunks of whole records', async () => {
    const items = records(2_000);
    // No time at all for a slice: the fewest records a slice packs, every slice.
    const { value: packed, turns } = await turnsWhile(packInSlices(items, 3, (item) => item, 0, AS_UPKEEP));
    assert.ok(turns > 20, `the event loop ran ${turns} time(s) while the records were packed`);
    assert.ok(packed.chunks.length > 20, `${packed.chunks.length} chunk(s)`);
    for (const chunk of packed.chunks) assert.equal(new TextDecoder().decode(chunk).split('\0').length % 3, 0);
    // Every chunk opens with a record whose name starts with U+FEFF or with an empty one: each must come back whole.
    assert.deepEqual(unpacked(packed), items);
  });

  it('are split into chunks of at most a megabyte and one record even within one slice, so no one encoding holds the thread long', async () => {
    const large = 'x'.repeat(64 * 1024);
    const items = Array.from({ length: 64 }, (_, i) => [`f${i}`, large]);
    const packed = await packInSlices(items, 2, (item) => item, Infinity, AS_UPKEEP);
    assert.ok(packed.chunks.length >= 4, `${packed.chunks.length} chunk(s) for 4 MB`);
    for (const chunk of packed.chunks) assert.ok(chunk.byteLength <= (1 << 20) + 64 * 1024 + 64, `a chunk of ${chunk.byteLength} bytes`);
    assert.deepEqual(unpacked(packed), items);
  });

  it('leave out, and count, a record with a NUL in a field, and the records after it keep their fields', async () => {
    const items = [['a.ts', 'one'], ['b\0.ts', 'two'], ['c.ts', 'thr\0ee'], ['d.ts', 'four']];
    const packed = await packInSlices(items, 2, (item) => item, Infinity, AS_UPKEEP);
    assert.equal(packed.dropped, 2);
    assert.deepEqual(unpacked(packed), [['a.ts', 'one'], ['d.ts', 'four']]);
  });

  it('are refused when a chunk does not hold whole records', () => {
    const askew: PackedRecords = { fields: 2, chunks: [new TextEncoder().encode('a.ts\0one\0b.ts')], dropped: 0 };
    assert.throws(() => unpacked(askew), /packed records out of step: 3 values for 2 fields each/);
  });

  it('list every chunk\'s buffer to be moved, and none when there are no records', async () => {
    const packed = await packInSlices(records(100), 3, (item) => item, 0, AS_UPKEEP);
    const buffers = movedBuffers(packed);
    assert.deepEqual(buffers, packed.chunks.map((chunk) => chunk.buffer));
    assert.equal(new Set(buffers).size, buffers.length, 'no buffer listed twice, which postMessage refuses');
    assert.ok(packed.chunks.every((chunk) => chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength), 'each chunk owns its whole buffer: none moves bytes it does not hold');
    assert.deepEqual(movedBuffers(noRecords(3)), []);
    assert.deepEqual(unpacked(noRecords(3)), []);
  });
});

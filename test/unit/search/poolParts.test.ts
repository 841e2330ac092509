import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SearchPool } from '../../../server/src/search/searchPool';
import type { SearchJob } from '../../../server/src/search/searchJobs';

/**
 * Parts of an answer a worker posts ahead of it (the symbol thread's parsed
 * files) reach the job's caller in order, before the answer; once the job is
 * answered, as a cancelled one is at once, its later parts reach no one.
 */

/** A worker speaking the pool's protocol: part 1, then (asked to) waits to be stopped, then part 2 and the answer (the size of a buffer it was sent, if any). */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const stop = new Int32Array(workerData.stopBuffer);
parentPort.on('message', ({ id, job }) => {
  parentPort.postMessage({ type: 'part', id, part: job.name + ':1' });
  while (job.waitForStop && Atomics.load(stop, 0) !== id) Atomics.wait(stop, 0, Atomics.load(stop, 0), 5);
  parentPort.postMessage({ type: 'part', id, part: job.name + ':2' });
  parentPort.postMessage({ type: 'done', id, result: job.bytes ? 'received ' + job.bytes.byteLength + ' bytes' : job.name + ' answered' });
});
`;

describe('the worker pool passing on parts of an answer', () => {
  let base: string;
  let pool: SearchPool;

  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-parts-'));
    fs.writeFileSync(path.join(base, 'worker.js'), WORKER);
    pool = new SearchPool({ maxWorkers: 1, script: path.join(base, 'worker.js') });
  });
  afterEach(async () => {
    await pool.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  const job = (name: string, waitForStop = false): SearchJob => ({ root: base, name, waitForStop }) as unknown as SearchJob;

  it('hands each part to the caller in order, before the answer', async () => {
    const received: unknown[] = [];
    const outcome = await pool.run(job('a'), 10_000, { onPart: (part) => received.push(part) });
    assert.deepEqual(outcome, { ok: true, result: 'a answered' });
    assert.deepEqual(received, ['a:1', 'a:2']);
  });

  it('drops the parts a cancelled job posts after its cancel', async () => {
    const cancel = new AbortController();
    const received: unknown[] = [];
    const outcome = await pool.run(job('a', true), 10_000, {
      signal: cancel.signal,
      onPart: (part) => {
        received.push(part);
        cancel.abort();
      },
    });
    assert.deepEqual(outcome, { ok: false, reason: 'cancelled' });
    // The next job runs on the same thread once the cancelled one has posted all it had.
    const next: unknown[] = [];
    await pool.run(job('b'), 10_000, { onPart: (part) => next.push(part) });
    assert.deepEqual(received, ['a:1']);
    assert.deepEqual(next, ['b:1', 'b:2']);
  });

  it('moves the buffers a job lists to transfer to its worker, copying none', async () => {
    const bytes = new Uint8Array(1 << 20).fill(7);
    const outcome = await pool.run({ ...job('a'), bytes } as unknown as SearchJob, 10_000, { transfer: [bytes.buffer] });
    assert.deepEqual(outcome, { ok: true, result: `received ${1 << 20} bytes` });
    assert.equal(bytes.byteLength, 0, 'the buffer is detached on this side: moved, not copied');
  });

  it('fails a job whose buffer was already moved, alone, and runs the next on the same thread', async () => {
    const bytes = new Uint8Array(16);
    await pool.run({ ...job('a'), bytes } as unknown as SearchJob, 10_000, { transfer: [bytes.buffer] });
    const again = await pool.run({ ...job('b'), bytes } as unknown as SearchJob, 10_000, { transfer: [bytes.buffer] });
    assert.equal(again.ok, false);
    assert.equal(!again.ok && again.reason, 'failed');
    assert.match((!again.ok && again.message) || '', /moved already/);
    assert.deepEqual(await pool.run(job('c'), 10_000), { ok: true, result: 'c answered' });
    assert.equal(pool.workerCount, 1);
  });
});

import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SERVER_NODE_FLAGS } from '../../../shared/serverNodeFlags';
import { WORKER_YOUNG_GENERATION_MB } from '../../../server/src/heapTuning';
import { ModelThread } from '../../../server/src/model/threaded/threadedModel';
import { SearchPool } from '../../../server/src/search/searchPool';
import type { SearchJob } from '../../../server/src/search/searchJobs';
import { SYMBOL_POOL_OPTIONS } from '../../../server/src/symbols/symbolIndex';

/**
 * Allocates short-lived objects, some surviving a while, until the young
 * generation reaches the largest size any thread here may have (4 MB) or a
 * bound, and gives the largest size it reached, in KB. V8 grows it in steps
 * as objects survive, and shrinks it when allocation slows: one fixed burst
 * once left a thread with a 2 MB limit at 1 MB, failing the test.
 */
const GROWN_NEW_SPACE_KB = `function grownNewSpaceKb() {
  const newSpaceKb = () => require('node:v8').getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 1024;
  const ring = new Array(20000);
  let largest = newSpaceKb();
  for (let round = 0; round < 10 && largest < 4096; round++) {
    for (let i = 0; i < 3e6; i++) ring[i % 20000] = { i, text: 'x' + i };
    largest = Math.max(largest, newSpaceKb());
  }
  return largest;
}`;

describe('the worker threads\' young generation', function () {
  this.timeout(30_000);
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-heaps-'));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("is each worker's own once the server has tuned its heap, while the main thread keeps the command line's", () => {
    // In a process of its own, started as the server is: the flag under test is process-wide.
    const script = `
      const { Worker } = require('node:worker_threads');
      require(${JSON.stringify(require.resolve('../../../server/src/heapTuning'))}).tuneHeap();
      ${GROWN_NEW_SPACE_KB}
      const main = grownNewSpaceKb();
      const worker = (mb) => new Promise((resolve, reject) => {
        const thread = new Worker(grownNewSpaceKb.toString() + '; require("node:worker_threads").parentPort.postMessage(grownNewSpaceKb())', { eval: true, resourceLimits: { maxYoungGenerationSizeMb: mb } });
        thread.once('message', (kb) => thread.terminate().then(() => resolve(kb)));
        thread.once('error', reject);
      });
      Promise.all([worker(${WORKER_YOUNG_GENERATION_MB.background}), worker(${WORKER_YOUNG_GENERATION_MB.search})]).then(([background, search]) =>
        process.stdout.write(JSON.stringify({ main, background, search })));`;
    const child = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const kb = JSON.parse(child.stdout) as { main: number; background: number; search: number };
    // Two semi-spaces: 2 MB each for the main thread and the search threads, 1 MB for the background threads.
    assert.deepEqual(kb, { main: 4096, background: 2048, search: 4096 });
  });

  it("starts the model thread with the model's limit", async () => {
    const script = path.join(dir, 'modelLimits.js');
    fs.writeFileSync(script, `const { parentPort, resourceLimits } = require('node:worker_threads');
parentPort.on('message', ({ id }) => parentPort.postMessage({ kind: 'counted', id, counts: [resourceLimits.maxYoungGenerationSizeMb] }));`);
    const thread = new ModelThread({ script });
    try {
      assert.deepEqual(await thread.count(['any text']), [WORKER_YOUNG_GENERATION_MB.model]);
    } finally {
      await thread.close();
    }
  });

  it("starts the search threads with the search limit and the symbol thread with the background one", async () => {
    const script = path.join(dir, 'poolLimits.js');
    fs.writeFileSync(script, `const { parentPort, resourceLimits } = require('node:worker_threads');
parentPort.on('message', ({ id }) => parentPort.postMessage({ type: 'done', id, result: resourceLimits.maxYoungGenerationSizeMb }));`);
    const limitOf = async (pool: SearchPool): Promise<unknown> => {
      try {
        const outcome = await pool.run({ kind: 'find' } as unknown as SearchJob, 10_000);
        assert.ok(outcome.ok, JSON.stringify(outcome));
        return outcome.result;
      } finally {
        await pool.close();
      }
    };
    assert.equal(await limitOf(new SearchPool({ script, maxWorkers: 1 })), WORKER_YOUNG_GENERATION_MB.search);
    // The symbol thread's own options, with only the script swapped for one that reports the limit.
    assert.equal(await limitOf(new SearchPool({ ...SYMBOL_POOL_OPTIONS, script })), WORKER_YOUNG_GENERATION_MB.background);
  });
});

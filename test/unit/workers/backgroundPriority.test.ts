import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BACKGROUND_NICE } from '../../../server/src/backgroundPriority';
import { ModelThread } from '../../../server/src/model/threaded/threadedModel';
import { createToolbox } from '../../../server/src/read/toolbox';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { SearchPool } from '../../../server/src/search/searchPool';
import { closeSymbolPool } from '../../../server/src/symbols/symbolIndex';
import { expectOk, NO_POLICY, ripgrepOnPath, writeTree } from '../../support/toolFixture';

/** Each thread of this process by its id, with its nice value (Linux keeps one per thread). */
function threadNices(): Map<string, number> {
  const nices = new Map<string, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command name, which may hold spaces: state is the 3rd field, nice the 19th.
      nices.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // ended meanwhile
    }
  }
  return nices;
}

/** The nice values of the threads that started while `start` ran. */
async function nicesOfThreadsStartedBy(start: () => Promise<unknown>): Promise<number[]> {
  const before = threadNices();
  await start();
  return [...threadNices()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
}

(process.platform === 'linux' ? describe : describe.skip)('the worker threads, on Linux', function () {
  this.timeout(30_000);
  let base: string;
  const mainNice = os.getPriority();

  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-nice-')));
    writeTree(base, { 'src/server.ts': 'export class Server {\n  listen(): void {}\n}\n', 'README.md': '# Demo\n' });
  });

  after(() => fs.rmSync(base, { recursive: true, force: true }));

  it('make model requests and count tokens at the main thread\'s own priority, since every reply waits on that thread', async () => {
    const thread = new ModelThread();
    try {
      const nices = await nicesOfThreadsStartedBy(() => thread.count(['a few words']));
      assert.ok(nices.length > 0, 'the count started a thread');
      assert.deepEqual(nices.filter((nice) => nice !== mainNice), [], `new threads at ${nices.join(', ')}`);
    } finally {
      await thread.close();
    }
  });

  it('search at the main thread\'s own priority, since the user waits for their answers', async () => {
    const pool = new SearchPool();
    try {
      const toolbox = await createToolbox(base, NO_POLICY, { search: new SearchEngine({ pool, ripgrepPath: ripgrepOnPath() ?? null }) });
      const nices = await nicesOfThreadsStartedBy(() => expectOk(toolbox, 'find_files', { pattern: '**/*.ts' }));
      assert.ok(nices.length > 0, 'the search started a thread');
      assert.deepEqual(nices.filter((nice) => nice !== mainNice), [], `new threads at ${nices.join(', ')}`);
    } finally {
      await pool.close();
    }
  });

  it('keep below a main thread that runs at a lower priority itself', () => {
    // In a process of its own: a thread's priority, once lowered, cannot be raised back without privilege.
    const script = `
      const os = require('node:os');
      const { createToolbox } = require(${JSON.stringify(require.resolve('../../../server/src/read/toolbox'))});
      const { closeSymbolPool } = require(${JSON.stringify(require.resolve('../../../server/src/symbols/symbolIndex'))});
      os.setPriority(os.getPriority() + 3);
      createToolbox(${JSON.stringify(base)}, { denyTools: [], denyRead: [] }).then((toolbox) => toolbox.run('find_symbol', JSON.stringify({ query: 'Server' }))).then(async () => {
        const nices = require('node:fs').readdirSync('/proc/self/task').map((tid) => {
          const stat = require('node:fs').readFileSync('/proc/self/task/' + tid + '/stat', 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        });
        process.stdout.write(JSON.stringify({ main: os.getPriority(), nices }));
        await closeSymbolPool();
      });`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const { main, nices } = JSON.parse(child.stdout) as { main: number; nices: number[] };
    assert.ok(nices.includes(Math.min(19, main + BACKGROUND_NICE)), `main at ${main}, threads at ${nices.join(', ')}`);
  });

  it('index symbols below the main thread', async () => {
    await closeSymbolPool();
    const toolbox = await createToolbox(base, NO_POLICY);
    const nices = await nicesOfThreadsStartedBy(() => expectOk(toolbox, 'find_symbol', { query: 'Server' }));
    assert.ok(nices.includes(mainNice + BACKGROUND_NICE), `new threads at ${nices.join(', ')}`);
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { walkOnUntil, worthReadingOn, worthWalkingOn } from '../../../server/src/search/headStart';
import { SearchPool } from '../../../server/src/search/searchPool';
import { expectOk, NO_POLICY, ripgrepOnPath, writeTree } from '../../support/toolFixture';

/**
 * The rules that keep the ordered search of a capped grep_files going past
 * its head start rather than starting ripgrep, which lists the whole tree
 * first and, for a common word, is stopped past its candidate limit for the
 * walk to start over. They are asked with the search's own clock; here the
 * clock is given, so that a slow machine can be stood in for.
 */
describe('the ordered search past its head start (headStart.ts)', () => {
  describe('the cold walk (worthWalkingOn)', () => {
    it('goes on when, at its rate, the cap is reached within its bound: a common word on a machine at half speed, a tenth of the cap found in the first 10 ms', () => {
      assert.equal(worthWalkingOn(10, 0.001, 0.1), true);
      assert.equal(worthWalkingOn(50, 0.005, 0.6), true);
    });

    it('hands over when the cap is out of reach in time or in the tree: a rare word\'s few matches, or a rate that runs past the tree\'s end', () => {
      assert.equal(worthWalkingOn(10, 0.01, 0.005), false);
      assert.equal(worthWalkingOn(10, 0.6, 0.5), false);
      assert.equal(worthWalkingOn(10, 0.01, 0), false);
    });

    it('never goes on past its bound, whatever its rate', () => {
      assert.equal(worthWalkingOn(101, 0.01, 0.99), false);
    });
  });

  describe("the cold walk's deadlines (walkOnUntil)", () => {
    it('hands over at the first look when nothing has matched, even where the estimate says the walk is nearly done', () => {
      assert.equal(walkOnUntil(2, 0.38, 0, 10), undefined);
      assert.equal(walkOnUntil(2, 0.95, 0, 10), undefined);
    });

    it('goes on to the end of the head start when something matched by the first look, short of the cap\'s rate', () => {
      assert.equal(walkOnUntil(2, 0.5, 0.005, 10), 10);
    });

    it('gives another head start at the cap\'s rate, and hands over past the head start below it', () => {
      assert.equal(walkOnUntil(2, 0.001, 0.1, 10), 12);
      assert.equal(walkOnUntil(10.5, 0.5, 0.005, 10), undefined);
    });
  });

  describe("the warm index's head start (worthReadingOn)", () => {
    it('reads on past the head start while the cap is in reach within the bound', () => {
      assert.equal(worthReadingOn(12, 10, 0.05, 0.2), true);
    });

    it('reads on within the head start while the last candidate is in reach, and gives way to ripgrep for a rare word after two milliseconds', () => {
      assert.equal(worthReadingOn(1, 10, 0, 0), true);
      assert.equal(worthReadingOn(5, 10, 0.6, 0), true);
      assert.equal(worthReadingOn(3, 10, 0.05, 0.005), false);
      assert.equal(worthReadingOn(12, 10, 0.9, 0), false);
    });

    it('reads nothing on with no head start, and never past the bound', () => {
      assert.equal(worthReadingOn(0, 0, 0.5, 0.5), false);
      assert.equal(worthReadingOn(101, 10, 0.5, 0.99), false);
    });
  });

  describe('a cold grep with a head start longer than its walk', () => {
    let root: string;
    const pools: SearchPool[] = [];
    before(() => {
      root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-head-start-')));
      // Enough files that the walk is still going at its first look, on a machine many times this one's speed.
      const tree: Record<string, string> = { 'a-first.ts': 'early match\n' };
      for (let i = 0; i < 3_000; i++) tree[`src/d${Math.floor(i / 100)}/f${i}.ts`] = `export const value${i} = ${i};\n`;
      writeTree(root, tree);
    });
    after(async () => {
      await Promise.all(pools.splice(0).map((pool) => pool.close()));
      fs.rmSync(root, { recursive: true, force: true });
    });

    async function engineAndToolbox(ripgrepPath: string | null): Promise<{ engine: SearchEngine; pool: SearchPool; toolbox: Awaited<ReturnType<typeof createToolbox>> }> {
      const pool = new SearchPool({ maxWorkers: 2 });
      pools.push(pool);
      const engine = new SearchEngine({ ripgrepPath, pool, orderedHeadStartMs: 60_000 });
      return { engine, pool, toolbox: await createToolbox(root, NO_POLICY, { search: engine }) };
    }

    it('leaves a word that matched nothing by the first look to ripgrep, not to the rest of the head start', async function () {
      const rg = ripgrepOnPath();
      if (!rg) this.skip();
      const { engine, toolbox } = await engineAndToolbox(rg);
      assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'absentWord' }), /No matches/);
      assert.deepEqual([engine.counts.ripgrep, engine.counts.node], [1, 0]);
    });

    it('without ripgrep, leaves it to the split across both threads', async () => {
      const { engine, pool, toolbox } = await engineAndToolbox(null);
      assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'absentWord' }), /No matches/);
      assert.deepEqual([engine.counts.node, pool.workerCount], [1, 2]);
    });

    it('walks on to the end, within the head start, a word that matched by the first look', async function () {
      const rg = ripgrepOnPath();
      if (!rg) this.skip();
      const { engine, toolbox } = await engineAndToolbox(rg);
      assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'early match|value2999 ' }), /a-first\.ts[\s\S]*f2999\.ts/);
      assert.deepEqual([engine.counts.ripgrep, engine.counts.node], [0, 1]);
    });
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import { GREP_LIMITS } from '../../../server/src/search/grepCore';
import { grepShardJobs, mergeGrepShards } from '../../../server/src/search/grepShards';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import type { GrepJob, GrepJobResult } from '../../../server/src/search/searchJobs';
import { SearchPool } from '../../../server/src/search/searchPool';
import { expectOk, NO_POLICY, ripgrepOnPath, writeTree } from '../../support/toolFixture';
import { namesOfEachShard } from '../../support/shardNames';

describe('a grep split across two search threads', () => {
  let root: string;
  const pools: SearchPool[] = [];
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-grep-shards-')));
    const tree: Record<string, string> = { '.gitignore': 'dist/\n', 'README.md': 'needle in the readme\n', 'dist/out.js': 'needle\n', 'packages/top.ts': 'needle at the top\n' };
    // 4 packages of 80 files with two matching lines each: 640 matches, far past the cap.
    for (const name of namesOfEachShard()) {
      for (let i = 0; i < 80; i++) tree[`packages/${name}/src/m${String(i).padStart(3, '0')}.ts`] = `const a = 1; // needle\nrare${i}\nneedle again\n`;
    }
    writeTree(root, tree);
    // Over the size limit and matching: named, where one walk would meet it.
    fs.writeFileSync(path.join(root, 'packages', 'huge.log'), `needle\n${'x'.repeat(GREP_LIMITS.maxFileBytes)}\n`);
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
    fs.rmSync(root, { recursive: true, force: true });
  });

  async function toolboxes(options: { ripgrepPath?: string | null; orderedHeadStartMs?: number }): Promise<{ split: Awaited<ReturnType<typeof createToolbox>>; single: Awaited<ReturnType<typeof createToolbox>>; splitEngine: SearchEngine; splitPool: SearchPool }> {
    const splitPool = new SearchPool({ maxWorkers: 2 });
    const singlePool = new SearchPool({ maxWorkers: 1 });
    pools.push(splitPool, singlePool);
    const splitEngine = new SearchEngine({ ripgrepPath: options.ripgrepPath ?? null, pool: splitPool, orderedHeadStartMs: options.orderedHeadStartMs });
    const split = await createToolbox(root, NO_POLICY, { search: splitEngine });
    const single = await createToolbox(root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: null, pool: singlePool }) });
    return { split, single, splitEngine, splitPool };
  }

  const CASES = [{ pattern: 'needle' }, { pattern: 'rare7\\d' }, { pattern: 'needle', glob: '**/pkg-*/**' }, { pattern: 'absent-word' }, { pattern: '^needle$' }];

  it('answers, without ripgrep, as one walk on one thread does: capped or not, with a glob, and naming an oversized match in its place', async () => {
    // No head start: every search goes to the shards.
    const { split, single, splitEngine, splitPool } = await toolboxes({ orderedHeadStartMs: 0 });
    for (const args of CASES) assert.equal(await expectOk(split, 'grep_files', args), await expectOk(single, 'grep_files', args), JSON.stringify(args));
    assert.equal(splitPool.workerCount, 2, 'the split grep ran on two threads');
    assert.equal(splitEngine.counts.node, CASES.length);
  });

  it('answers, with ripgrep at hand and a pattern it cannot narrow by, as one walk does', async function () {
    const rg = ripgrepOnPath();
    if (!rg) this.skip();
    const { split, single, splitEngine, splitPool } = await toolboxes({ ripgrepPath: rg, orderedHeadStartMs: 0 });
    // `\e` is only valid without the u flag, where it means "e": no ripgrep pattern is known to match its lines.
    const args = { pattern: 'n\\eedle' };
    assert.equal(await expectOk(split, 'grep_files', args), await expectOk(single, 'grep_files', args));
    assert.equal(splitPool.workerCount, 2, 'the split grep ran on two threads');
    assert.equal(splitEngine.counts.node, 1);
  });

  it('answers from one walk\'s head start, unsplit, a search done within it', async () => {
    // Each matches in its first files: one that has matched nothing at the head start's first look is split
    // (headStart.test.ts).
    const matchingEarly = CASES.filter((args) => args.pattern === 'needle');
    const { split, single, splitEngine, splitPool } = await toolboxes({ orderedHeadStartMs: 60_000 });
    for (const args of matchingEarly) assert.equal(await expectOk(split, 'grep_files', args), await expectOk(single, 'grep_files', args), JSON.stringify(args));
    assert.deepEqual([splitEngine.counts.node, splitPool.workerCount], [matchingEarly.length, 1]);
  });

  it('leaves to ripgrep, unsplit, a grep it can search', async function () {
    const rg = ripgrepOnPath();
    if (!rg) this.skip();
    const { split, single, splitEngine, splitPool } = await toolboxes({ ripgrepPath: rg, orderedHeadStartMs: 0 });
    const args = { pattern: 'rare7\\d' };
    assert.equal(await expectOk(split, 'grep_files', args), await expectOk(single, 'grep_files', args));
    assert.deepEqual([splitEngine.counts.ripgrep, splitPool.workerCount], [1, 1]);
  });

  it('makes one job per shard, each naming its part', () => {
    const job: GrepJob = { kind: 'grep', pattern: 'x', root: '/r', denyRead: [], scope: { realPath: '/r', relativePath: '.', kind: 'directory' } };
    assert.deepEqual(grepShardJobs(job).map((part) => part.shard), [{ index: 0, of: 2 }, { index: 1, of: 2 }]);
  });
});

describe('the merge of grep shards', () => {
  const max = GREP_LIMITS.maxMatches;
  /** A shard's result holding one line per path given, as `path:1: hit`; `capPath` when it reached the cap in its part. */
  const shard = (paths: string[], capPath?: string, extra: Partial<GrepJobResult> = {}): GrepJobResult => ({
    kind: 'grep',
    engine: 'node',
    lines: paths.map((relativePath) => `${relativePath}:1: hit`),
    matchCount: paths.length,
    more: capPath !== undefined,
    oversized: [],
    changedFiles: 0,
    filesFromMemory: 0,
    listingStopped: false,
    namedFileBinary: false,
    shardWalk: { linePaths: paths, capPath },
    ...extra,
  });
  const numbered = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}/${String(i).padStart(4, '0')}.ts`);

  it('gives every line in walk order (a directory\'s files right after its name) when neither shard reached the cap', () => {
    const merged = mergeGrepShards([shard(['b.ts', 'a.ts']), shard(['a/x.ts'])]);
    assert.deepEqual(merged.lines, ['a/x.ts:1: hit', 'a.ts:1: hit', 'b.ts:1: hit']);
    assert.equal(merged.more, false);
  });

  it('keeps the lines of one file in their order', () => {
    const twoLines = shard(['a.ts', 'a.ts'], undefined, { lines: ['a.ts:3: second', 'a.ts:9: third'] });
    assert.deepEqual(mergeGrepShards([shard(['0.ts']), twoLines]).lines, ['0.ts:1: hit', 'a.ts:3: second', 'a.ts:9: third']);
  });

  it('gives the first matches of the whole up to the cap, and says there are more, when a shard reached the cap in its part', () => {
    const merged = mergeGrepShards([shard(numbered('b', max), 'b/9999.ts'), shard(['a.ts', 'c.ts'])]);
    assert.equal(merged.lines.length, max);
    assert.equal(merged.lines[0], 'a.ts:1: hit');
    assert.equal(merged.lines.at(-1), `b/${String(max - 2).padStart(4, '0')}.ts:1: hit`);
    assert.equal(merged.matchCount, max);
    assert.equal(merged.more, true);
  });

  it('says there are more when the two shards together pass the cap, though neither did alone', () => {
    const merged = mergeGrepShards([shard(numbered('a', max / 2 + 1)), shard(numbered('b', max / 2))]);
    assert.equal(merged.lines.length, max);
    assert.equal(merged.more, true);
  });

  it('names the oversized matches before where one walk would stop, in walk order, and adds up what each shard left out', () => {
    const merged = mergeGrepShards([
      shard(numbered('b', max), 'b/9999.ts', { oversized: ['z.log', 'a.log'], changedFiles: 1, changedEntries: 1, cutIgnoreFiles: ['.gitignore'] }),
      shard([], undefined, { oversized: ['b/0003.log'], changedFiles: 2, changedEntries: 3, cutIgnoreFiles: ['.gitignore'], listingStopped: true }),
    ]);
    assert.deepEqual(merged.oversized, ['a.log', 'b/0003.log']);
    assert.equal(merged.changedFiles, 3);
    assert.equal(merged.changedEntries, 4);
    assert.deepEqual(merged.cutIgnoreFiles, ['.gitignore']);
    assert.equal(merged.listingStopped, true);
    assert.deepEqual(mergeGrepShards([shard(['a.ts'], undefined, { oversized: ['z.log'] }), shard([])]).oversized, ['z.log']);
  });
});

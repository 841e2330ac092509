import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import { CAN_OPEN_INSIDE_OPEN_DIRECTORY, ReadBoundary } from '../../../server/src/access/boundary';
import { findShardJobs, mergeFindShards, namesManyFiles } from '../../../server/src/search/findShards';
import { grepShardJobs, mergeGrepShards } from '../../../server/src/search/grepShards';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import type { FindJob, FindJobResult, GrepJob, GrepJobResult } from '../../../server/src/search/searchJobs';
import { runSearchJob, SEARCH_LIMITS } from '../../../server/src/search/searchJobs';
import { SearchPool } from '../../../server/src/search/searchPool';
import { shardOfName, walkFiles, WalkShard } from '../../../server/src/search/walk';
import { expectOk, NO_POLICY, writeTree } from '../../support/toolFixture';
import { namesOfEachShard } from '../../support/shardNames';

async function walked(root: string, shard?: WalkShard): Promise<string[]> {
  const boundary = await ReadBoundary.create(root, []);
  const files: string[] = [];
  await walkFiles({ boundary, startDirectory: root, listInsideParents: true, shard }, (file) => void files.push(file.relativePath));
  return files;
}

/** Walks `root` whole and as two shards; asserts the shards together visit each file of the whole walk once. */
async function walkedBothWays(root: string): Promise<{ whole: string[]; first: string[]; second: string[] }> {
  const whole = await walked(root);
  const first = await walked(root, { index: 0, of: 2 });
  const second = await walked(root, { index: 1, of: 2 });
  assert.deepEqual([...first, ...second].sort(), [...whole].sort());
  return { whole, first, second };
}

describe('a walk of names split into shards (find_files on two search threads)', () => {
  let root: string;
  // Dealt one level below the split (packages/): by the path of each package's src/.
  const packages = namesOfEachShard((name) => `packages/${name}/src`);
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-shards-')));
    const tree: Record<string, string> = {
      '.gitignore': 'dist/\n',
      'README.md': '',
      'dist/out.js': '',
      'node_modules/dep/index.js': '',
      'packages/top.ts': '',
    };
    for (const name of packages) {
      tree[`packages/${name}/index.ts`] = '';
      tree[`packages/${name}/src/deep/a.ts`] = '';
    }
    writeTree(root, tree);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('visits, across its shards, exactly the files one walk visits, each once and in walk order within each', async () => {
    const whole = await walked(root);
    const first = await walked(root, { index: 0, of: 2 });
    const second = await walked(root, { index: 1, of: 2 });
    assert.deepEqual([...first, ...second].sort(), [...whole].sort());
    assert.equal(new Set([...first, ...second]).size, whole.length);
    assert.deepEqual(first, whole.filter((file) => first.includes(file)));
    assert.ok(second.length > 0 && first.length > second.length, 'both shards walked a part');
  });

  it('counts each directory that changed once across the shards of a split find or grep, whichever shards listed it and whenever it changed', async function () {
    // Stands in for a directory swapped for a link between its parent's listing and its own (boundary.ts openListedChildSync).
    if (!CAN_OPEN_INSIDE_OPEN_DIRECTORY) this.skip();
    const boundaryModule = require('../../../server/src/access/boundary') as { openListedChildSync: (fd: number, name: string) => unknown };
    const original = boundaryModule.openListedChildSync;
    /** How many times each name is listed before it is seen changed, if it is. */
    let changedAfter = new Map<string, number>();
    const listings = new Map<string, number>();
    boundaryModule.openListedChildSync = (fd, name) => {
      const seen = listings.get(name) ?? 0;
      listings.set(name, seen + 1);
      const after = changedAfter.get(name);
      return after !== undefined && seen >= after ? { ok: false, refusal: 'changed' } : original(fd, name);
    };
    const control = { shouldStop: () => false, onSpawn: () => undefined };
    const scope = { realPath: root, relativePath: '.', kind: 'directory' as const };
    const changedAcross = async (): Promise<{ find: number; grep: number }> => {
      listings.clear();
      const finds: FindJobResult[] = [];
      for (const part of findShardJobs<FindJob>({ kind: 'find', pattern: '**/*.ts', root, denyRead: [], scope })) finds.push((await runSearchJob(part, control)) as FindJobResult);
      listings.clear();
      const greps: GrepJobResult[] = [];
      for (const part of grepShardJobs<GrepJob>({ kind: 'grep', pattern: 'x', root, denyRead: [], scope })) greps.push((await runSearchJob(part, control)) as GrepJobResult);
      return { find: mergeFindShards(finds).changedEntries ?? 0, grep: mergeGrepShards(greps).changedEntries ?? 0 };
    };
    try {
      // A package's directory, below the split (packages/): every shard of either search lists it.
      changedAfter = new Map([[packages[0], 0]]);
      assert.deepEqual(await changedAcross(), { find: 1, grep: 1 }, 'a directory every shard saw changed');
      changedAfter = new Map([[packages[0], 1]]);
      assert.deepEqual(await changedAcross(), { find: 1, grep: 1 }, 'a directory that changed after the first shard listed it');
      // Each package's src/deep/: dealt to one shard of a find, listed by both of a grep.
      changedAfter = new Map([['deep', 0]]);
      assert.deepEqual(await changedAcross(), { find: packages.length, grep: packages.length }, "each package's src/deep/");
    } finally {
      boundaryModule.openListedChildSync = original;
    }
  });

  it('splits at the first directory with two subdirectories to walk, not counting ignored or always-skipped ones, deals what its subdirectories hold by path, and leaves the files in and above it to the first shard', async () => {
    const whole = await walked(root);
    const second = await walked(root, { index: 1, of: 2 });
    // The root holds dist/ (ignored), node_modules/ (never walked) and packages/: the split is packages/. Dealt:
    // each package's index.ts, and its src/ with all below it.
    const dealtAs = (file: string): string | undefined => {
      const parts = file.split('/');
      if (parts[0] !== 'packages' || parts.length < 3) return undefined;
      return parts.length === 3 ? file : parts.slice(0, 3).join('/');
    };
    assert.ok(!second.includes('README.md') && !second.includes('packages/top.ts'), second.join(', '));
    assert.deepEqual(second.sort(), whole.filter((file) => dealtAs(file) !== undefined && shardOfName(dealtAs(file) as string, 2) === 1).sort());
  });

  it('splits a tree whose split holds only directories of files: their files are dealt', async () => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root);
    const tree: Record<string, string> = {};
    for (let i = 0; i < 20; i++) {
      tree[`src/m${i}.ts`] = '';
      tree[`test/m${i}.test.ts`] = '';
    }
    writeTree(root, tree);
    const { first, second } = await walkedBothWays(root);
    assert.ok(first.length >= 10 && second.length >= 10, `the shards walked ${first.length} and ${second.length} files`);
  });

  it('splits a tree whose large subdirectories of the split would hash to one shard: their own subdirectories are dealt', async () => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root);
    // Two top-level directories on the first shard by name, as vite's packages/ and playground/ are.
    const big = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].filter((name) => shardOfName(name, 2) === 0).slice(0, 2);
    const tree: Record<string, string> = { 'tiny/x.ts': '' };
    for (const top of big) for (let i = 0; i < 16; i++) tree[`${top}/part${i}/file.ts`] = '';
    writeTree(root, tree);
    const { first, second } = await walkedBothWays(root);
    assert.ok(second.length >= 8 && first.length >= 8, `the shards walked ${first.length} and ${second.length} files`);
  });

  it('deals a subdirectory of the split whose listing gives it no type, as lstat tells it, with no file lost', async () => {
    // Some file systems report no entry type in a listing: the walk asks lstat. Here one package is listed so.
    const untyped = packages[packages.length - 1];
    const nodeFs = require('node:fs') as { readdirSync: typeof fs.readdirSync };
    const readdirSync = nodeFs.readdirSync;
    const patched = ((target: fs.PathLike, options?: unknown) => {
      const entries = (readdirSync as (target: fs.PathLike, options?: unknown) => unknown[])(target, options);
      return entries.map((entry) =>
        entry instanceof fs.Dirent && entry.name === untyped && entry.isDirectory() ? new (fs.Dirent as unknown as new (name: string, type: number, path: string) => fs.Dirent)(entry.name, 0, String(target)) : entry,
      );
    }) as typeof fs.readdirSync;
    nodeFs.readdirSync = patched;
    try {
      const { whole } = await walkedBothWays(root);
      assert.ok(whole.some((file) => file.startsWith(`packages/${untyped}/src/`)), 'the untyped package is walked');
    } finally {
      nodeFs.readdirSync = readdirSync;
    }
  });

  it('leaves everything to the first shard in a tree with no directory to split at', async () => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root);
    writeTree(root, { 'a.ts': '', 'one/b.ts': '', 'one/two/c.ts': '' });
    assert.deepEqual(await walked(root, { index: 0, of: 2 }), await walked(root));
    assert.deepEqual(await walked(root, { index: 1, of: 2 }), []);
  });

  it('answers a find split across two threads as a find on one thread does, capped or not', async () => {
    const many: Record<string, string> = {};
    for (const name of packages) for (let i = 0; i < 200; i++) many[`packages/${name}/m${String(i).padStart(3, '0')}.ts`] = '';
    writeTree(root, many);
    const split = new SearchPool({ maxWorkers: 2 });
    const single = new SearchPool({ maxWorkers: 1 });
    try {
      const splitBox = await createToolbox(root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: null, pool: split }) });
      const singleBox = await createToolbox(root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: null, pool: single }) });
      for (const pattern of ['**/m*.ts', '**/m1*.ts', '**/*.ts', 'README.md']) {
        assert.equal(await expectOk(splitBox, 'find_files', { pattern }), await expectOk(singleBox, 'find_files', { pattern }), pattern);
      }
      assert.equal(split.workerCount, 2, 'the split find ran on two threads');
    } finally {
      await split.close();
      await single.close();
    }
  });
});

describe('the merge of find shards', () => {
  const shard = (paths: string[], more = false, extra: Partial<FindJobResult> = {}): FindJobResult => ({
    kind: 'find',
    engine: 'node',
    results: paths.map((relativePath) => ({ relativePath, denied: false })),
    more,
    listingStopped: false,
    ...extra,
  });

  it('gives the first results in walk order (a directory\'s files right after its name), at most the cap, and says there are more', () => {
    const max = SEARCH_LIMITS.findMaxResults;
    const a = Array.from({ length: max }, (_, i) => `a/${String(i).padStart(4, '0')}.ts`);
    const merged = mergeFindShards([shard(['b.ts', 'a.ts', 'a/x/y.ts']), shard(a, true)]);
    assert.equal(merged.results.length, max);
    assert.deepEqual(merged.results.slice(0, 2).map((result) => result.relativePath), ['a/0000.ts', 'a/0001.ts']);
    assert.equal(merged.more, true);
    const small = mergeFindShards([shard(['b.ts', 'a.ts']), shard(['a/x.ts'])]);
    assert.deepEqual(small.results.map((result) => result.relativePath), ['a/x.ts', 'a.ts', 'b.ts']);
    assert.equal(small.more, false);
  });

  it('shows a path two shards both found once, and adds up what each left out', () => {
    const merged = mergeFindShards([shard(['x.ts'], false, { changedEntries: 1, cutIgnoreFiles: ['.gitignore'] }), shard(['x.ts'], false, { changedEntries: 2, cutIgnoreFiles: ['.gitignore'], listingStopped: true })]);
    assert.deepEqual(merged.results.map((result) => result.relativePath), ['x.ts']);
    assert.equal(merged.changedEntries, 3);
    assert.deepEqual(merged.cutIgnoreFiles, ['.gitignore']);
    assert.equal(merged.listingStopped, true);
  });

  it('makes one job per shard, each naming its part', () => {
    const job: FindJob = { kind: 'find', pattern: '**/*.ts', root: '/r', denyRead: [], scope: { realPath: '/r', relativePath: '.', kind: 'directory' } };
    assert.deepEqual(findShardJobs(job).map((part) => part.shard), [{ index: 0, of: 2 }, { index: 1, of: 2 }]);
  });
});

describe('which finds are split', () => {
  it('keeps on one thread a find whose glob names many files (wildcards and an extension), which stops at the cap early, and splits one with a name in it', () => {
    for (const glob of ['**/*.ts', '*', 'src/**', '**/*.test.ts', 'src/**/*']) assert.equal(namesManyFiles(glob), true, glob);
    for (const glob of ['**/value1234*.ts', '**/vite.config.ts', 'README.md', '**/*config*']) assert.equal(namesManyFiles(glob), false, glob);
  });
});

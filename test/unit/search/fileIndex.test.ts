import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { SearchPool } from '../../../server/src/search/searchPool';
import { expectOk, NO_POLICY, ripgrepOnPath, writeTree } from '../../support/toolFixture';

/**
 * The warm file index (server/src/search/fileIndex.ts): changes on disk show
 * up in the next find_files and grep_files, through the watcher; and where
 * watching is not possible, searches still answer, cold.
 */

const FAILING_WATCHER = path.join(os.tmpdir(), `repo-discuss-failing-watcher-${process.pid}.js`);

describe('the warm file index', function () {
  let base: string;
  let root: string;
  let pool: SearchPool;
  let engine: SearchEngine;
  let toolbox: Toolbox;

  before(() => {
    fs.writeFileSync(FAILING_WATCHER, "exports.subscribe = async () => { throw new Error('ENOSPC: inotify watch limit reached'); };\n");
  });
  after(() => fs.rmSync(FAILING_WATCHER, { force: true }));

  async function start(watcherModule?: string): Promise<void> {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-index-')));
    root = path.join(base, 'repo');
    writeTree(root, {
      '.gitignore': 'dist/\n',
      'src/a.ts': 'export const alpha = 1;\n',
      'src/b.ts': 'export const beta = 2;\n',
      'dist/out.ts': 'export const alpha = 3;\n',
    });
    pool = new SearchPool({ watcherModule });
    engine = new SearchEngine({ pool, fileIndex: true, ripgrepPath: ripgrepOnPath() ?? null });
    toolbox = await createToolbox(root, NO_POLICY, { search: engine });
  }

  afterEach(async () => {
    await pool.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  /** Makes a change and waits until the watcher has reported every path it names. */
  async function change(paths: string[], body: () => void): Promise<void> {
    const waiting = new Set(paths.map((relative) => path.join(root, relative)));
    const reported = (async () => {
      while (waiting.size > 0) {
        const [, batch] = (await once(pool.indexEvents, 'indexEvents')) as [string, string[]];
        for (const eventPath of batch) waiting.delete(eventPath);
      }
    })();
    body();
    await reported;
  }

  const find = async (pattern: string): Promise<string> => expectOk(toolbox, 'find_files', { pattern });
  const grep = async (pattern: string): Promise<string> => expectOk(toolbox, 'grep_files', { pattern });

  it('shows edits, new, deleted and renamed files and a changed .gitignore in the next find_files and grep_files', async () => {
    await start();
    assert.equal(await engine.prepareIndex(root, []), true, 'the folder is watched and indexed');
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/b.ts');
    assert.equal(engine.counts.index, 1, 'answered from the index');

    await change(['src/a.ts'], () => fs.writeFileSync(path.join(root, 'src/a.ts'), 'export const gamma = 1;\n'));
    assert.match(await grep('gamma'), /^src\/a\.ts:1: export const gamma = 1;$/);

    await change(['src/c.ts'], () => fs.writeFileSync(path.join(root, 'src/c.ts'), 'export const gamma = 3;\n'));
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/b.ts\nsrc/c.ts');

    await change(['src/b.ts'], () => fs.rmSync(path.join(root, 'src/b.ts')));
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/c.ts');

    await change(['src/c.ts', 'src/renamed.ts'], () => fs.renameSync(path.join(root, 'src/c.ts'), path.join(root, 'src/renamed.ts')));
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/renamed.ts');
    assert.match(await grep('gamma'), /^src\/a\.ts:1: .*\nsrc\/renamed\.ts:1: /);

    await change(['.gitignore'], () => fs.writeFileSync(path.join(root, '.gitignore'), 'renamed.ts\n'));
    assert.equal(await find('**/*.ts'), 'dist/out.ts\nsrc/a.ts');

    await change(['newdir'], () => {
      fs.mkdirSync(path.join(root, 'newdir'));
      fs.writeFileSync(path.join(root, 'newdir', 'd.ts'), 'export const delta = 4;\n');
    });
    // A directory and its file may come as one event: the directory is walked.
    assert.equal(await find('newdir/*.ts'), 'newdir/d.ts');
    assert.ok(engine.counts.index >= 8, `every search after the first used the index (${engine.counts.index})`);
    assert.equal(engine.counts.node + engine.counts.ripgrep, 0);
  });

  for (const [why, module] of [
    ['the watcher module does not load', path.join(os.tmpdir(), 'no-such-watcher-module.js')],
    ['subscribing fails (too many watches)', FAILING_WATCHER],
  ] as const) {
    it(`searches cold, and still sees every change, when ${why}`, async () => {
      await start(module);
      assert.equal(await engine.prepareIndex(root, []), false, 'no index without a watcher');
      assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/b.ts');
      fs.writeFileSync(path.join(root, 'src/c.ts'), 'export const gamma = 3;\n');
      fs.rmSync(path.join(root, 'src/b.ts'));
      fs.writeFileSync(path.join(root, '.gitignore'), '');
      assert.equal(await find('**/*.ts'), 'dist/out.ts\nsrc/a.ts\nsrc/c.ts');
      assert.match(await grep('gamma'), /^src\/c\.ts:1: /);
      assert.equal(engine.counts.index, 0, 'never answered from an index');
    });
  }
});

describe('a warm grep_files past its head start', function () {
  it('hands the index\'s candidates to ripgrep by name and answers as the cold search does, secrets, ignored files and outside links left out', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-named-')));
    const root = path.join(base, 'repo');
    const pool = new SearchPool();
    const coldPool = new SearchPool({ watcherModule: 'none' });
    try {
      writeTree(base, { 'outside.txt': 'needle outside\n' });
      const files: Record<string, string> = {
        '.gitignore': 'ignored/\n',
        '.env': 'needle=secret\n',
        'ignored/x.ts': 'needle ignored\n',
        'src/-dash.ts': 'needle in a name starting with a dash\n',
        'src/target.ts': 'needle target\n',
      };
      for (let i = 0; i < 300; i++) files[`many/f${String(i).padStart(3, '0')}.ts`] = i % 7 === 0 ? `needle ${i}\n` : `nothing ${i}\n`;
      writeTree(root, files);
      fs.symlinkSync('target.ts', path.join(root, 'src', 'link.ts'));
      fs.symlinkSync(path.join(base, 'outside.txt'), path.join(root, 'src', 'out.ts'));
      const ripgrepPath = ripgrepOnPath() ?? null;
      // No head start: every candidate goes the named-files way.
      const warm = new SearchEngine({ pool, fileIndex: true, ripgrepPath, orderedHeadStartMs: 0 });
      const cold = new SearchEngine({ pool: coldPool, ripgrepPath, orderedHeadStartMs: 0 });
      const warmBox = await createToolbox(root, NO_POLICY, { search: warm });
      const coldBox = await createToolbox(root, NO_POLICY, { search: cold });
      assert.equal(await warm.prepareIndex(root, []), true);
      for (const args of [{ pattern: 'needle' }, { pattern: 'needle', glob: '**/f0*.ts' }, { pattern: 'needle \\d+' }, { pattern: 'absent' }]) {
        const expected = await expectOk(coldBox, 'grep_files', args);
        assert.equal(await expectOk(warmBox, 'grep_files', args), expected, JSON.stringify(args));
      }
      const answer = await expectOk(warmBox, 'grep_files', { pattern: 'needle' });
      assert.match(answer, /^src\/-dash\.ts:1: /m);
      assert.match(answer, /^src\/link\.ts:1: needle target$/m, 'a link to a file inside is searched');
      assert.doesNotMatch(answer, /outside|secret|ignored/);
      assert.equal(warm.counts.index, 5, 'every warm search answered from the index, none walked or crawled');
      assert.equal(warm.counts.ripgrep + warm.counts.node, 0);
    } finally {
      await pool.close();
      await coldPool.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('a process that searched', function () {
  it('ends on its own once its work is done: an idle search thread does not hold it open', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-exit-')));
    try {
      writeTree(base, { 'a.ts': 'export const a = 1;\n' });
      const engineModule = require.resolve('../../../server/src/search/searchEngine');
      const job = { kind: 'find', root: base, denyRead: [], scope: { relativePath: '.', realPath: base, kind: 'directory' }, pattern: '**/*.ts' };
      const script = `const { SearchEngine } = require(${JSON.stringify(engineModule)});
        new SearchEngine({ ripgrepPath: null }).run(${JSON.stringify(job)}).then((outcome) => process.stdout.write(String(outcome.ok && outcome.result.results.length)));`;
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // The pool is never closed: the process must still exit (the test's own timeout is the failure).
      const [code] = (await once(child, 'exit')) as [number];
      assert.equal(output, '1', 'the search ran');
      assert.equal(code, 0);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('a grep pattern too long for a command line', function () {
  it('is answered by the walk instead of failing (ripgrep would fail with E2BIG)', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-long-')));
    try {
      const needle = `needle${'(?:)'.repeat(35_000)}`;
      writeTree(base, { 'a.txt': 'a needle here\n', 'b.txt': 'nothing\n' });
      const engine = new SearchEngine({ ripgrepPath: ripgrepOnPath() ?? null, orderedHeadStartMs: 0 });
      const toolbox = await createToolbox(base, NO_POLICY, { search: engine });
      const answer = await expectOk(toolbox, 'grep_files', { pattern: needle });
      assert.ok(answer.startsWith('a.txt:1: '), answer.slice(0, 80));
      assert.equal(engine.counts.ripgrep, 0);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

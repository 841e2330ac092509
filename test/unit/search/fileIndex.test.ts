import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { SearchPool } from '../../../server/src/search/searchPool';
import type { SearchJob } from '../../../server/src/search/searchJobs';
import { FileIndexes, type FolderIndex } from '../../../server/src/search/fileIndex';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { expectOk, NO_POLICY, ripgrepOnPath, writeTree } from '../../support/toolFixture';

/**
 * The warm file index (server/src/search/fileIndex.ts): a change on disk is
 * in the very next find_files and grep_files, with no wait, however soon
 * after the change the search comes.
 */

describe('the warm file index', function () {
  let base: string;
  let root: string;
  let pool: SearchPool;
  let engine: SearchEngine;
  let toolbox: Toolbox;

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-index-')));
    root = path.join(base, 'repo');
    writeTree(root, {
      '.gitignore': 'dist/\n',
      'src/a.ts': 'export const alpha = 1;\n',
      'src/b.ts': 'export const beta = 2;\n',
      'dist/out.ts': 'export const alpha = 3;\n',
    });
    pool = new SearchPool();
    engine = new SearchEngine({ pool, fileIndex: true, ripgrepPath: ripgrepOnPath() ?? null });
    toolbox = await createToolbox(root, NO_POLICY, { search: engine });
    assert.equal(await engine.prepareIndex(root, []), true, 'the folder is indexed');
  });

  afterEach(async () => {
    await pool.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  const find = async (pattern: string, scope?: string): Promise<string> => expectOk(toolbox, 'find_files', { pattern, ...(scope ? { path: scope } : {}) });
  const grep = async (pattern: string): Promise<string> => expectOk(toolbox, 'grep_files', { pattern });
  const write = (relative: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  };

  it('shows edits, new, deleted and renamed files, a new directory and a changed .gitignore in the very next find_files and grep_files', async () => {
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/b.ts');
    assert.equal(engine.counts.index, 1, 'answered from the index');

    write('src/a.ts', 'export const gamma = 1;\n');
    assert.match(await grep('gamma'), /^src\/a\.ts:1: export const gamma = 1;$/);

    write('src/c.ts', 'export const gamma = 3;\n');
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/b.ts\nsrc/c.ts');

    fs.rmSync(path.join(root, 'src/b.ts'));
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/c.ts');

    fs.renameSync(path.join(root, 'src/c.ts'), path.join(root, 'src/renamed.ts'));
    assert.equal(await find('**/*.ts'), 'src/a.ts\nsrc/renamed.ts');
    assert.match(await grep('gamma'), /^src\/a\.ts:1: .*\nsrc\/renamed\.ts:1: /);

    // Written in place: the directory's listing does not change, the file's stamp does.
    fs.writeFileSync(path.join(root, '.gitignore'), 'renamed.ts\n');
    assert.equal(await find('**/*.ts'), 'dist/out.ts\nsrc/a.ts');

    write('newdir/deeper/d.ts', 'export const delta = 4;\n');
    assert.equal(await find('newdir/**/*.ts'), 'newdir/deeper/d.ts');
    assert.equal(engine.counts.index, 8, 'every search answered from the index');
    assert.equal(engine.counts.node + engine.counts.ripgrep, 0);
  });

  it('sees a second change made right after a search that saw the first, in the same directory', async () => {
    for (let round = 0; round < 20; round++) {
      write(`src/tick${round}-a.ts`, 'a\n');
      assert.match(await find('**/*.ts'), new RegExp(`src/tick${round}-a\\.ts`), `round ${round}: the first change`);
      write(`src/tick${round}-b.ts`, 'b\n');
      assert.match(await find('**/*.ts'), new RegExp(`src/tick${round}-b\\.ts`), `round ${round}: the second change, likely in the same tick`);
    }
  });

  it('sees a directory removed and made again under the same name with other files, and a directory swapped for a file', async () => {
    write('swap/one/first.ts', '1\n');
    assert.equal(await find('**/*.ts', 'swap'), 'swap/one/first.ts');
    fs.rmSync(path.join(root, 'swap/one'), { recursive: true });
    write('swap/one/second.ts', '2\n');
    assert.equal(await find('**/*.ts', 'swap'), 'swap/one/second.ts');
    fs.rmSync(path.join(root, 'swap/one'), { recursive: true });
    write('swap/one', 'now a file\n');
    assert.equal(await find('**/*', 'swap'), 'swap/one');
  });

  it('sees a link replaced by one to another target under the same name', async () => {
    write('docs/one.md', 'one needle\n');
    write('docs/two.md', 'two\n');
    fs.symlinkSync('one.md', path.join(root, 'docs/pointer.md'));
    assert.match(await grep('needle'), /^docs\/pointer\.md:1: one needle$/m);
    fs.symlinkSync('two.md', path.join(root, 'docs/pointer.tmp'));
    fs.renameSync(path.join(root, 'docs/pointer.tmp'), path.join(root, 'docs/pointer.md'));
    assert.doesNotMatch(await grep('needle'), /pointer/, 'the link now leads to a file without the word');
  });
});

describe('a search engine with the index turned off', function () {
  it('never answers from an index and still sees every change', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-cold-')));
    const pool = new SearchPool();
    try {
      writeTree(base, { '.gitignore': 'dist/\n', 'src/a.ts': 'a\n', 'src/b.ts': 'b\n', 'dist/out.ts': 'out\n' });
      const engine = new SearchEngine({ pool, ripgrepPath: ripgrepOnPath() ?? null });
      const toolbox = await createToolbox(base, NO_POLICY, { search: engine });
      assert.equal(await engine.prepareIndex(base, []), false, 'no index');
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: '**/*.ts' }), 'src/a.ts\nsrc/b.ts');
      fs.writeFileSync(path.join(base, 'src/c.ts'), 'gamma\n');
      fs.rmSync(path.join(base, 'src/b.ts'));
      fs.writeFileSync(path.join(base, '.gitignore'), '');
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: '**/*.ts' }), 'dist/out.ts\nsrc/a.ts\nsrc/c.ts');
      assert.equal(engine.counts.index, 0, 'never answered from an index');
    } finally {
      await pool.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('a folder every discussion warms at once', function () {
  let base: string;
  let pool: SearchPool;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-warm-')));
    writeTree(base, { 'src/a.ts': 'a\n', 'src/b.ts': 'b\n' });
    pool = new SearchPool({ maxWorkers: 2 });
  });

  afterEach(async () => {
    await pool.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  const preparation = (): SearchJob => ({ kind: 'prepareIndex', root: base, denyRead: [], scope: { relativePath: '.', realPath: base, kind: 'directory' }, indexable: true });

  it('builds its index once, in one thread, however many discussions ask at the same moment', async () => {
    const engine = new SearchEngine({ pool, fileIndex: true, ripgrepPath: null });
    const kinds: string[] = [];
    const run = pool.run.bind(pool);
    pool.run = (job, timeoutMs, signal) => {
      kinds.push(job.kind);
      return run(job, timeoutMs, signal);
    };
    const asked = await Promise.all(Array.from({ length: 8 }, () => engine.prepareIndex(base, [])));
    assert.deepEqual(asked, Array(8).fill(true), 'every discussion learns the folder is indexed');
    assert.deepEqual(kinds, ['prepareIndex'], 'one preparation ran');
    assert.equal(pool.workerCount, 1, 'and one thread');
    // Once it is over, the next question asks again: an index dropped meanwhile is built again.
    assert.equal(await engine.prepareIndex(base, []), true);
    assert.deepEqual(kinds, ['prepareIndex', 'prepareIndex']);
  });

  it('settles its warm-up once the index is ready, so the next search is answered from it', async () => {
    const engine = new SearchEngine({ pool, fileIndex: true, ripgrepPath: null });
    await engine.warm({ root: base, denyRead: [] });
    const toolbox = await createToolbox(base, NO_POLICY, { search: engine });
    assert.equal(await expectOk(toolbox, 'find_files', { pattern: '**/*.ts' }), 'src/a.ts\nsrc/b.ts');
    assert.equal(engine.counts.index, 1, 'answered from the index');
  });

  it('leaves a preparation waiting for the thread that owns the folder rather than starting another, where it could do nothing', async () => {
    const first = await pool.run(preparation(), 10_000);
    assert.ok(first.ok && first.result.kind === 'prepareIndex' && first.result.indexed, 'the first thread owns the index');
    const outcomes = await Promise.all([pool.run(preparation(), 10_000), pool.run(preparation(), 10_000)]);
    assert.ok(outcomes.every((outcome) => outcome.ok && outcome.result.kind === 'prepareIndex' && outcome.result.indexed), 'both ran on the owner, which holds the index');
    assert.equal(pool.workerCount, 1);
  });

  it('starts a search queued behind a waiting preparation on another thread at once', async () => {
    await pool.run(preparation(), 10_000);
    const find: SearchJob = { kind: 'find', pattern: '**/*.ts', root: base, denyRead: [], scope: { relativePath: '.', realPath: base, kind: 'directory' } };
    const running = [pool.run(preparation(), 10_000), pool.run(preparation(), 10_000), pool.run(find, 10_000)];
    assert.equal(pool.workerCount, 2, 'the search did not wait behind the preparation for the owner');
    const [, , found] = await Promise.all(running);
    assert.ok(found.ok && found.result.kind === 'find' && found.result.results.length === 2);
  });

  it("gives a second folder a thread of its own while there is room, so both folders' searches at once are warm", async () => {
    const other = path.join(base, 'other');
    writeTree(other, { 'lib/c.ts': 'c\n' });
    const engine = new SearchEngine({ pool, fileIndex: true, ripgrepPath: null });
    assert.equal(await engine.prepareIndex(base, []), true);
    assert.equal(await engine.prepareIndex(other, []), true);
    assert.equal(pool.workerCount, 2, 'one thread per folder');
    const [here, there] = await Promise.all([createToolbox(base, NO_POLICY, { search: engine }), createToolbox(other, NO_POLICY, { search: engine })]);
    await Promise.all([expectOk(here, 'find_files', { pattern: '**/a.ts' }), expectOk(there, 'find_files', { pattern: '**/*.ts' })]);
    assert.equal(engine.counts.index, 2, 'both answered from their index');
  });

  it('answers a job cancelled while it waits in the queue at once, and never runs it', async () => {
    // A stand-in worker that notes the folder of every job it runs.
    const ran = path.join(base, 'ran.txt');
    const script = path.join(base, 'recordingWorker.js');
    fs.writeFileSync(
      script,
      `const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, job }) => {
  require('node:fs').appendFileSync(${JSON.stringify(ran)}, job.root + '\\n');
  parentPort.postMessage({ type: 'done', id, result: { kind: 'prepareIndex', engine: 'index', indexed: true, listingStopped: false } });
});
`,
    );
    const single = new SearchPool({ maxWorkers: 1, script });
    const job = (root: string): SearchJob => ({ ...preparation(), root });
    try {
      const first = single.run(job('first'), 10_000);
      const cancel = new AbortController();
      const queued = single.run(job('cancelled'), 10_000, { signal: cancel.signal });
      cancel.abort();
      assert.deepEqual(await queued, { ok: false, reason: 'cancelled' });
      assert.ok((await first).ok);
      // One thread, in order: had the cancelled job stayed queued, it would run before this one.
      assert.ok((await single.run(job('after'), 10_000)).ok);
      assert.deepEqual(fs.readFileSync(ran, 'utf8').split('\n').filter(Boolean), ['first', 'after']);
    } finally {
      await single.close();
    }
  });

  it('answers a job still running when the pool closes at once, rather than after its time limit', async () => {
    // A stand-in worker that never answers, as a search stuck in a hostile folder would.
    const script = path.join(base, 'silentWorker.js');
    fs.writeFileSync(script, `require('node:worker_threads').parentPort.on('message', () => undefined);\n`);
    const single = new SearchPool({ maxWorkers: 1, script });
    const running = single.run(preparation(), 60_000);
    await single.close();
    // Had close() left it unanswered, the race would go to the second, settled, promise.
    assert.deepEqual(await Promise.race([running, Promise.resolve('unanswered')]), { ok: false, reason: 'failed', message: 'the search threads were stopped' });
  });

  it('answers a job whose thread dies as failed, and runs the next job on a new thread', async () => {
    // A stand-in worker that ends its thread on a job for the folder "crash" and answers any other.
    const script = path.join(base, 'crashingWorker.js');
    fs.writeFileSync(
      script,
      `const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, job }) => {
  if (job.root === 'crash') process.exit(1);
  parentPort.postMessage({ type: 'done', id, result: { kind: 'prepareIndex', engine: 'index', indexed: true, listingStopped: false } });
});
`,
    );
    const single = new SearchPool({ maxWorkers: 1, script });
    try {
      assert.deepEqual(await single.run({ ...preparation(), root: 'crash' }, 60_000), { ok: false, reason: 'failed', message: 'the search worker stopped' });
      assert.ok((await single.run(preparation(), 60_000)).ok);
      assert.equal(single.workerCount, 1);
    } finally {
      await single.close();
    }
  });
});

describe('a warm grep_files past its head start', function () {
  it('lets ripgrep search the rest with the index in place of the crawl, and answers as the cold search does, secrets, ignored files, ignored links and outside links left out', async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-named-')));
    const root = path.join(base, 'repo');
    const pool = new SearchPool();
    const coldPool = new SearchPool();
    try {
      writeTree(base, { 'outside.txt': 'needle outside\n' });
      const files: Record<string, string> = {
        '.gitignore': 'ignored/\nsrc/hidden-link.ts\n',
        '.env': 'needle=secret\n',
        'ignored/x.ts': 'needle ignored\n',
        'src/-dash.ts': 'needle in a name starting with a dash\n',
        'src/target.ts': 'needle target\n',
      };
      for (let i = 0; i < 1200; i++) files[`many/f${String(i).padStart(4, '0')}.ts`] = i % 7 === 0 ? `needle ${i}\n` : `nothing ${i}\n`;
      writeTree(root, files);
      fs.symlinkSync('target.ts', path.join(root, 'src', 'link.ts'));
      fs.symlinkSync(path.join(base, 'outside.txt'), path.join(root, 'src', 'out.ts'));
      // The index judged these as it judges files; the cold search judges them against the rules itself.
      fs.symlinkSync('target.ts', path.join(root, 'src', 'hidden-link.ts'));
      fs.symlinkSync('../ignored', path.join(root, 'src', 'ignored-dir'));
      const ripgrepPath = ripgrepOnPath() ?? null;
      // No head start: every search goes to ripgrep.
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
      assert.doesNotMatch(answer, /outside|secret|ignored|hidden-link/);
      assert.equal(warm.counts.index, 5, 'every warm search answered with the index, none walked or crawled');
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

describe('a warm index read by a search that stops early', function () {
  let base: string;
  let indexes: FileIndexes;
  let index: FolderIndex;
  const DIRECTORIES = 300;

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-lazy-')));
    const files: Record<string, string> = {};
    for (let i = 0; i < DIRECTORIES; i++) files[`d${String(i).padStart(3, '0')}/f.ts`] = `${i}\n`;
    writeTree(base, files);
    indexes = new FileIndexes();
    const boundary = await ReadBoundary.create(base, []);
    assert.equal(await indexes.prepare('lazy', boundary), true);
    index = (await indexes.current('lazy', boundary)) as FolderIndex;
    assert.ok(index);
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  /** The first `count` files handed out, and how many directories were checked to hand them out. */
  async function firstFiles(count: number): Promise<{ files: string[]; checked: number }> {
    const before = index.directoriesChecked;
    const files: string[] = [];
    outer: for await (const chunk of index.freshFiles('.')) {
      for (const file of chunk) {
        files.push(file.relativePath);
        if (files.length === count) break outer;
      }
    }
    return { files, checked: index.directoriesChecked - before };
  }

  it('checks only the directories before where it stopped, and still sees a change among them', async () => {
    fs.writeFileSync(path.join(base, 'd000', 'a-new.ts'), 'new\n');
    fs.rmSync(path.join(base, 'd001', 'f.ts'));
    const { files, checked } = await firstFiles(3);
    assert.deepEqual(files, ['d000/a-new.ts', 'd000/f.ts', 'd002/f.ts']);
    assert.ok(checked < DIRECTORIES / 4, `checked ${checked} of ${DIRECTORIES + 1} directories for three files`);
  });

  it('leaves a change past where it stopped for the next search that goes that far', async () => {
    await firstFiles(1);
    fs.writeFileSync(path.join(base, 'd299', 'late.ts'), 'late\n');
    assert.deepEqual((await firstFiles(1)).files, ['d000/f.ts']);
    const { files } = await firstFiles(DIRECTORIES + 1);
    assert.deepEqual(files.slice(-2), ['d299/f.ts', 'd299/late.ts']);
  });
});

describe('a warm index whose stamps are trusted at once', function () {
  // A file time moves once per clock tick, so a stamp under 50 ms old is not
  // trusted (directoryStamps.ts) and its directory is listed again anyway: on
  // a kernel with fine-grained times a window of 0 shows what the stamps alone
  // catch, without waiting for the window to pass.
  let base: string;
  let indexes: FileIndexes;
  let index: FolderIndex;

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-stamped-')));
    writeTree(base, { 'docs/readme.md': 'readme\n' });
    fs.symlinkSync('../generated/api.md', path.join(base, 'docs/api.md'));
    indexes = new FileIndexes({ racyWindowNs: 0n });
    const boundary = await ReadBoundary.create(base, []);
    assert.equal(await indexes.prepare('stamped', boundary), true);
    index = (await indexes.current('stamped', boundary)) as FolderIndex;
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  const listed = async (scope = '.'): Promise<string[]> => {
    const files: string[] = [];
    for await (const chunk of index.freshFiles(scope)) files.push(...chunk.map((file) => file.relativePath));
    return files;
  };

  it('brings a change outside a scoped search in at the next search that covers it', async () => {
    writeTree(base, { 'lib/early.ts': 'early\n' });
    assert.deepEqual(await listed(), ['docs/readme.md', 'lib/early.ts']);
    writeTree(base, { 'lib/late.ts': 'late\n' });
    assert.deepEqual(await listed('docs'), ['docs/readme.md'], 'a scoped search looks only at its scope');
    assert.deepEqual(await listed(), ['docs/readme.md', 'lib/early.ts', 'lib/late.ts']);
  });

  it("finds a link whose target is made after it, though the link's own directory did not change", async () => {
    assert.deepEqual(await listed(), ['docs/readme.md'], 'a link to nothing is left out');
    writeTree(base, { 'generated/api.md': 'api\n' });
    assert.deepEqual(await listed(), ['docs/api.md', 'docs/readme.md', 'generated/api.md']);
  });
});

describe('a warm index judging a new file while the directory above it is swapped for a link and back', function () {
  // Only the search thread's own timing makes this race; here it is made at
  // the one moment that matters, by wrapping the fs function the code calls.
  const nodeFs = createRequire(__filename)('node:fs') as Record<string, unknown>;
  const realLstat = fs.lstatSync;
  let base: string;
  let repo: string;
  afterEach(() => {
    nodeFs.lstatSync = realLstat;
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('finds the file at the next search, though its listing and its own stamp show no change since', async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-swapped-above-')));
    repo = path.join(base, 'repo');
    writeTree(repo, { 'swap/d/old.txt': 'old\n' });
    writeTree(base, { 'outside/other.txt': 'outside\n' });
    const indexes = new FileIndexes();
    const boundary = await ReadBoundary.create(repo, []);
    assert.equal(await indexes.prepare('swapped', boundary), true);
    const index = (await indexes.current('swapped', boundary)) as FolderIndex;
    const listed = async (): Promise<string[]> => {
      const files: string[] = [];
      for await (const chunk of index.freshFiles('.')) files.push(...chunk.map((file) => file.relativePath));
      return files;
    };
    writeTree(repo, { 'swap/d/new.txt': 'new\n' });
    const directory = path.join(repo, 'swap/d');
    const parked = path.join(base, 'parked');
    let state: 'armed' | 'swapped' | 'back' = 'armed';
    nodeFs.lstatSync = function (...args: Parameters<typeof fs.lstatSync>) {
      // Back as soon as anything stamps a path (an lstat with options), after the verdict's one-argument check of the directory.
      if (state === 'swapped' && args.length > 1) {
        fs.unlinkSync(directory);
        fs.renameSync(parked, directory);
        state = 'back';
      }
      const stats = (realLstat as (...a: unknown[]) => unknown).apply(fs, args);
      if (state === 'armed' && args.length === 1 && args[0] === directory) {
        fs.renameSync(directory, parked);
        fs.symlinkSync(path.join(base, 'outside'), directory);
        state = 'swapped';
      }
      return stats;
    };
    const during = await listed();
    assert.equal(state, 'back', 'the directory was swapped while the new file was judged, and back');
    assert.ok(!during.includes('swap/d/other.txt'), 'no outside name');
    nodeFs.lstatSync = realLstat;
    assert.deepEqual(await listed(), ['swap/d/new.txt', 'swap/d/old.txt']);
  });
});

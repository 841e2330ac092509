import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { CONTENT_CACHE_LIMITS, ContentBudget, FileContents, type FillableFile } from '../../../server/src/search/contentCache';
import { nowNs } from '../../../server/src/search/directoryStamps';
import { FileIndexes, type FolderIndex } from '../../../server/src/search/fileIndex';
import { compilePattern, Grep, READ_CHUNK_BYTES, type CompiledPattern } from '../../../server/src/search/grepCore';
import { runSearchJob, type GrepJob, type GrepJobResult } from '../../../server/src/search/searchJobs';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { SearchPool } from '../../../server/src/search/searchPool';
import { untilPastRacyWindow } from '../../support/racyWindow';
import { ripgrepOnPath, writeTree } from '../../support/toolFixture';

/**
 * The kept contents of a warm folder's small files
 * (server/src/search/contentCache.ts): a grep answered from memory says
 * what the disk says at that moment, never reads through a swapped-in link,
 * and never holds more than its allowance.
 */

const IDLE = { idle: async (): Promise<void> => undefined };

function pattern(source: string): CompiledPattern {
  const compiled = compilePattern(source);
  if (typeof compiled === 'string') throw new Error(compiled);
  return compiled;
}

describe('the kept contents of a warm folder', function () {
  let base: string;
  let root: string;
  let outside: string;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-contents-')));
    root = path.join(base, 'repo');
    outside = path.join(base, 'outside');
    writeTree(root, {
      'src/a.ts': 'export const alpha = 1;\n',
      'src/b.ts': 'export const beta = 2;\n',
      'empty.txt': '',
    });
    fs.writeFileSync(path.join(root, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, ...Buffer.from('export')]));
    writeTree(outside, { 'a.ts': 'export const stolen = 1;\n' });
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  const files = (...relativePaths: string[]): FillableFile[] => relativePaths.map((relativePath) => ({ realPath: path.join(root, relativePath), denied: false }));
  const at = (relativePath: string): string => path.join(root, relativePath);

  describe('one folder (FileContents)', () => {
    beforeEach(() => untilPastRacyWindow(['src/a.ts', 'src/b.ts', 'empty.txt', 'logo.png'].map(at)));

    it('serves a kept file from memory, the same bytes each time, while an lstat says it is the file that was read', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill(files('src/a.ts', 'empty.txt'), IDLE, () => false);
      assert.equal(contents.state, 'filled');
      const kept = contents.lookup(at('src/a.ts'));
      assert.ok(Buffer.isBuffer(kept));
      assert.equal(kept.toString(), 'export const alpha = 1;\n');
      assert.equal(contents.lookup(at('src/a.ts')), kept, 'not read again');
      assert.deepEqual(contents.lookup(at('empty.txt')), Buffer.alloc(0), 'an empty file is kept as empty');
    });

    it('does not keep a file changed so recently that a second write in the same clock tick would leave its times as they were', async () => {
      // A window of a minute stands in for "just changed", however slow the machine is to reach the fill.
      const contents = new FileContents(new ContentBudget(), { racyWindowNs: 60_000_000_000n });
      fs.writeFileSync(at('src/a.ts'), 'export const alpha = 2;\n');
      await contents.fill(files('src/a.ts', 'src/b.ts'), IDLE, () => false);
      assert.equal(contents.lookup(at('src/a.ts')), undefined);
      assert.equal(contents.size, 0);
    });

    it('keeps a file that fits one read and not one a byte larger, even after a search grew its buffer for a long line', async () => {
      fs.writeFileSync(at('fits.txt'), 'x'.repeat(READ_CHUNK_BYTES - 1));
      fs.writeFileSync(at('larger.txt'), 'x'.repeat(READ_CHUNK_BYTES));
      fs.writeFileSync(at('long-line.txt'), 'y'.repeat(600 * 1024));
      fs.writeFileSync(at('after.txt'), 'z\n'.repeat(150 * 1024));
      await untilPastRacyWindow(['fits.txt', 'larger.txt', 'long-line.txt', 'after.txt'].map(at));
      const contents = new FileContents(new ContentBudget());
      await contents.fill(files('fits.txt', 'larger.txt'), IDLE, () => false);
      assert.ok(Buffer.isBuffer(contents.lookup(at('fits.txt'))));
      assert.equal(contents.lookup(at('larger.txt')), undefined);
      const grep = new Grep(pattern('nothing'), contents);
      grep.searchFile(at('long-line.txt'), 'long-line.txt');
      grep.searchFile(at('after.txt'), 'after.txt');
      assert.equal(contents.lookup(at('after.txt')), undefined, 'a 300 KB file read whole into the grown buffer is not kept');
    });

    it('serves nothing of a file moved out with its directory and written to there', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill(files('src/a.ts'), IDLE, () => false);
      fs.renameSync(path.join(root, 'src'), path.join(outside, 'src'));
      fs.symlinkSync(path.join(outside, 'src'), path.join(root, 'src'));
      fs.writeFileSync(path.join(outside, 'src/a.ts'), 'export const alpha = 9;\n');
      assert.equal(contents.lookup(at('src/a.ts')), undefined);
    });

    it('gives back what searches kept while the sizes were summed, when the folder turns out not to fit', async () => {
      const budget = new ContentBudget(CONTENT_CACHE_LIMITS.entryOverheadBytes + 30);
      const contents = new FileContents(budget);
      let resume: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (resume = resolve));
      const filling = contents.fill(files('src/a.ts', 'src/b.ts'), { idle: () => held }, () => false);
      // A search between the filler's slices keeps what it read.
      const grep = new Grep(pattern('alpha'), contents);
      grep.searchFile(at('src/a.ts'), 'src/a.ts');
      assert.equal(contents.size, 1);
      resume();
      await filling;
      assert.equal(contents.state, 'tooLarge');
      assert.equal(contents.size, 0);
      assert.equal(budget.usedBytes, 0);
    });

    it('drops a file edited in place to the same size, and one replaced by another file', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill(files('src/a.ts', 'src/b.ts'), IDLE, () => false);
      assert.equal(contents.size, 2, 'both kept once settled');
      fs.writeFileSync(at('src/a.ts'), 'export const gamma = 1;\n');
      fs.writeFileSync(path.join(root, 'src/b.next'), 'export const delta = 2;\n');
      fs.renameSync(path.join(root, 'src/b.next'), at('src/b.ts'));
      assert.equal(contents.lookup(at('src/a.ts')), undefined);
      assert.equal(contents.lookup(at('src/b.ts')), undefined);
      assert.equal(contents.size, 0, 'dropped, not kept stale');
    });

    it('serves nothing for a file swapped for a link out of the folder, or below a directory swapped for one', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill(files('src/a.ts', 'src/b.ts'), IDLE, () => false);
      fs.rmSync(at('src/a.ts'));
      fs.symlinkSync(path.join(outside, 'a.ts'), at('src/a.ts'));
      assert.equal(contents.lookup(at('src/a.ts')), undefined, 'a file swapped for a link');
      fs.renameSync(path.join(root, 'src'), path.join(root, 'src.old'));
      fs.symlinkSync(outside, path.join(root, 'src'));
      fs.writeFileSync(path.join(outside, 'b.ts'), 'export const beta = 2;\n');
      assert.equal(contents.lookup(at('src/b.ts')), undefined, 'a directory above swapped for a link');

      const grep = new Grep(pattern('export'), contents);
      assert.equal(grep.searchFile(at('src/b.ts'), 'src/b.ts'), 'unreadable', 'and the verified open refuses it');
      assert.deepEqual(grep.result.lines, []);
      assert.equal(grep.result.changedFiles, 1);
    });

    it('keeps a binary file as a marker, without its bytes, and a grep skips it', async () => {
      const budget = new ContentBudget();
      const contents = new FileContents(budget);
      await contents.fill(files('logo.png'), IDLE, () => false);
      assert.equal(contents.lookup(at('logo.png')), 'binary');
      assert.equal(budget.usedBytes, CONTENT_CACHE_LIMITS.entryOverheadBytes, 'charged for the entry only');
      assert.equal(new Grep(pattern('export'), contents).searchFile(at('logo.png'), 'logo.png'), 'binary');
    });

    it('keeps nothing of a folder whose small files do not all fit its allowance, and says it is not filled', async () => {
      const budget = new ContentBudget(CONTENT_CACHE_LIMITS.entryOverheadBytes * 2 + 30);
      const contents = new FileContents(budget);
      await contents.fill(files('src/a.ts', 'src/b.ts', 'empty.txt'), IDLE, () => false);
      assert.equal(contents.state, 'tooLarge');
      assert.equal(contents.filled, false);
      assert.equal(contents.size, 0);
      assert.equal(budget.usedBytes, 0, 'nothing held');
      assert.equal(contents.roomToFillAgain, false, 'no room given back makes it fit');
    });

    it('turns a folder away while other folders hold the room it needs, and fills it once that much is given back', async () => {
      const cells = new Int32Array(new SharedArrayBuffer(8));
      const limit = CONTENT_CACHE_LIMITS.entryOverheadBytes * 3 + 100;
      const others = new ContentBudget(limit, { cells, own: 1 });
      const contents = new FileContents(new ContentBudget(limit, { cells, own: 0 }));
      assert.equal(others.take(limit - 60), true);
      await contents.fill(files('src/a.ts', 'src/b.ts'), IDLE, () => false);
      assert.equal(contents.state, 'noRoom');
      assert.equal(contents.size, 0);
      assert.equal(contents.roomToFillAgain, false, 'the room is still held');
      others.give(limit - 60);
      assert.equal(contents.roomToFillAgain, true);
      await contents.fill(files('src/a.ts', 'src/b.ts'), IDLE, () => false);
      assert.equal(contents.state, 'filled');
      assert.equal(contents.size, 2);
    });

    it('counts a file a search kept while the sizes were summed once, not twice, against the room', async () => {
      const aAndB = fs.statSync(at('src/a.ts')).size + fs.statSync(at('src/b.ts')).size;
      const budget = new ContentBudget(CONTENT_CACHE_LIMITS.entryOverheadBytes * 2 + aAndB);
      const contents = new FileContents(budget);
      let resume: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (resume = resolve));
      const filling = contents.fill(files('src/a.ts', 'src/b.ts'), { idle: () => held }, () => false);
      new Grep(pattern('alpha'), contents).searchFile(at('src/a.ts'), 'src/a.ts');
      assert.equal(contents.size, 1);
      resume();
      await filling;
      assert.equal(contents.state, 'filled');
      assert.equal(budget.usedBytes, budget.limitBytes, 'exactly the allowance');
    });

    it('turns a folder away for room, not for its size, when another thread takes the room between the sum and the reads', async () => {
      const cells = new Int32Array(new SharedArrayBuffer(8));
      const limit = CONTENT_CACHE_LIMITS.entryOverheadBytes * 3 + 100;
      const others = new ContentBudget(limit, { cells, own: 1 });
      const contents = new FileContents(new ContentBudget(limit, { cells, own: 0 }));
      // The filler waits for idleness once to sum the sizes and once to read: the room goes in between.
      let idles = 0;
      const idle = async (): Promise<void> => {
        if (++idles === 2) assert.equal(others.take(limit - 60), true);
      };
      await contents.fill(files('src/a.ts', 'src/b.ts'), { idle }, () => false);
      assert.equal(idles, 2);
      assert.equal(contents.state, 'noRoom');
      assert.equal(contents.size, 0);
      others.give(limit - 60);
      assert.equal(contents.roomToFillAgain, true);
    });

    it('refuses what a search read when the file grew past the identity taken before the read', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill([], IDLE, () => false);
      const stats = fs.statSync(at('src/a.ts'), { bigint: true });
      contents.keep(at('src/a.ts'), stats, nowNs(), Buffer.from('export const alpha = 1;\nexport const more = 1;\n'));
      assert.equal(contents.size, 0);
    });

    it('reads nothing while the thread runs a search, and fills once it is idle', async () => {
      // Each wait for idleness is held until the test lets it go, as a running search would hold it.
      const held: Array<() => void> = [];
      let asked: () => void = () => undefined;
      const nextAsk = (): Promise<void> => new Promise((resolve) => (asked = resolve));
      const idle = (): Promise<void> =>
        new Promise((resolve) => {
          held.push(resolve);
          asked();
        });
      const contents = new FileContents(new ContentBudget());
      let ask = nextAsk();
      const filling = contents.fill(files('src/a.ts', 'src/b.ts'), { idle }, () => false);
      await ask;
      assert.equal(contents.size, 0, 'nothing read while the sizes are summed');
      ask = nextAsk();
      held.shift()?.();
      await Promise.race([ask, filling]);
      assert.equal(contents.state, 'filling');
      assert.equal(contents.size, 0, 'nothing read until the thread is idle again');
      held.shift()?.();
      await filling;
      assert.equal(contents.state, 'filled');
      assert.equal(contents.size, 2);
    });

    it('keeps nothing of a folder with files on a network file system, and says it is not kept whole', async () => {
      const budget = new ContentBudget();
      const contents = new FileContents(budget, { isLocal: () => false });
      await contents.fill(files('src/a.ts', 'src/b.ts'), IDLE, () => false);
      assert.equal(contents.state, 'notLocal');
      assert.equal(contents.size, 0);
      assert.equal(budget.usedBytes, 0);
    });

    it('gives a file whose times are in whole seconds two seconds more before keeping it: a coarse clock ticks that slowly', async () => {
      const contents = new FileContents(new ContentBudget(), { isLocal: () => true });
      await contents.fill([], IDLE, () => false);
      const second = 1_000_000_000n;
      const changedAt = 1_700_000_000n * second;
      const coarse = { dev: 1n, ino: 2n, size: 3n, mtimeNs: changedAt, ctimeNs: changedAt } as fs.BigIntStats;
      assert.equal(contents.keep(at('src/a.ts'), coarse, changedAt + second, Buffer.from('abc')), 'passed');
      assert.equal(contents.keep(at('src/a.ts'), coarse, changedAt + 3n * second, Buffer.from('abc')), 'kept');
      const fine = { ...coarse, mtimeNs: changedAt + 1n, ctimeNs: changedAt + 1n } as fs.BigIntStats;
      assert.equal(contents.keep(at('src/b.ts'), fine, changedAt + second, Buffer.from('abc')), 'kept');
    });

    it('keeps each copy in a buffer of its own, not a slice of a shared pool it would hold whole', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill(files('src/a.ts'), IDLE, () => false);
      const kept = contents.lookup(at('src/a.ts')) as Buffer;
      assert.equal(kept.buffer.byteLength, kept.length);
    });

    it('never keeps a denied file', async () => {
      const contents = new FileContents(new ContentBudget());
      await contents.fill([{ realPath: at('src/a.ts'), denied: true }], IDLE, () => false);
      assert.equal(contents.size, 0);
    });
  });

  describe('the allowance (ContentBudget)', () => {
    it('is one allowance for every thread that shares its cells, each counting only its own', () => {
      const cells = new Int32Array(new SharedArrayBuffer(8));
      const first = new ContentBudget(1000, { cells, own: 0 });
      const second = new ContentBudget(1000, { cells, own: 1 });
      assert.equal(first.take(600), true);
      assert.equal(second.take(500), false, 'past the shared limit');
      assert.equal(second.take(400), true);
      assert.deepEqual([...cells], [600, 400]);
      first.give(600);
      assert.equal(second.usedBytes, 400);
    });
  });

  describe('the search threads (searchPool.ts)', () => {
    it("count what a thread keeps in the shared allowance, and give a thread's share back when it exits", async () => {
      await untilPastRacyWindow(['src/a.ts', 'src/b.ts', 'empty.txt', 'logo.png'].map(at));
      const pool = new SearchPool();
      const engine = new SearchEngine({ pool, fileIndex: true, ripgrepPath: null });
      try {
        assert.equal(await engine.prepareIndex(root, [], { waitForContents: true }), true);
        assert.ok(pool.contentBytesKept >= 4 * CONTENT_CACHE_LIMITS.entryOverheadBytes, 'the four files are counted');
      } finally {
        await pool.close();
      }
      assert.equal(pool.contentBytesKept, 0, 'a terminated thread frees nothing itself: the pool zeroes its cell');
    });
  });

  describe('the filler of a folder index (FileIndexes)', () => {
    it('drops what it read of a file that left the index while it ran', async () => {
      await untilPastRacyWindow(['src/a.ts', 'src/b.ts', 'empty.txt', 'logo.png'].map(at));
      // The filler waits here before it reads anything, as behind a running search, until the test lets it go.
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      let waiting: () => void = () => undefined;
      const filling = new Promise<void>((resolve) => (waiting = resolve));
      const idle = async (): Promise<void> => {
        waiting();
        await released;
      };
      const indexes = new FileIndexes({ fillContents: { idle }, contentBudget: new ContentBudget() });
      const boundary = await ReadBoundary.create(root, []);
      assert.equal(await indexes.prepare(root, boundary), true);
      await filling;
      // Ignored from now on, so out of the index, but still on the disk, and in the list the filler began with.
      fs.writeFileSync(at('.gitignore'), 'src/b.ts\n');
      const index = (await indexes.current(root, boundary)) as FolderIndex;
      // As a search does: checked against the disk on the way.
      const listed: string[] = [];
      for await (const batch of index.freshFiles('.')) listed.push(...batch.map((file) => file.relativePath));
      assert.equal(listed.includes('src/b.ts'), false);
      assert.equal(listed.includes('src/a.ts'), true);
      release();
      await indexes.prepare(root, boundary, true);
      assert.equal(index.contents.lookup(at('src/b.ts')), undefined);
      assert.ok(index.contents.lookup(at('src/a.ts')), 'the files still indexed are kept');
    });

    it("fills a folder turned away for room at its next search, once another thread's folder has given the room back", async () => {
      await untilPastRacyWindow(['src/a.ts', 'src/b.ts', 'empty.txt', 'logo.png'].map(at));
      const cells = new Int32Array(new SharedArrayBuffer(8));
      const limit = CONTENT_CACHE_LIMITS.entryOverheadBytes * 8;
      const otherThread = new ContentBudget(limit, { cells, own: 1 });
      assert.equal(otherThread.take(limit - CONTENT_CACHE_LIMITS.entryOverheadBytes), true);
      const indexes = new FileIndexes({ fillContents: IDLE, contentBudget: new ContentBudget(limit, { cells, own: 0 }) });
      const boundary = await ReadBoundary.create(root, []);
      assert.equal(await indexes.prepare(root, boundary, true), true);
      const index = (await indexes.current(root, boundary)) as FolderIndex;
      assert.equal(index.contents.state, 'noRoom');
      otherThread.give(limit - CONTENT_CACHE_LIMITS.entryOverheadBytes);
      await indexes.current(root, boundary);
      await indexes.prepare(root, boundary, true);
      assert.equal(index.contents.state, 'filled');
      assert.ok(index.contents.lookup(at('src/a.ts')));
    });
  });

  describe('a warm grep (searchJobs.ts with FileIndexes)', () => {
    let budget: ContentBudget;
    let indexes: FileIndexes;
    let boundary: ReadBoundary;

    // More files than the head start reads before it asks whether to go on (searchJobs.ts grepIndexedHeadStart).
    const more = Array.from({ length: 20 }, (_, i) => `lib/m${i}.ts`);

    beforeEach(async () => {
      writeTree(root, Object.fromEntries(more.map((relativePath) => [relativePath, `export const m = '${relativePath}';\n`])));
      await untilPastRacyWindow(['src/a.ts', 'src/b.ts', 'empty.txt', 'logo.png', ...more].map(at));
      budget = new ContentBudget();
      indexes = new FileIndexes({ fillContents: IDLE, contentBudget: budget });
      boundary = await ReadBoundary.create(root, []);
      assert.equal(await indexes.prepare(root, boundary, true), true);
    });

    const index = async (): Promise<FolderIndex> => (await indexes.current(root, boundary)) as FolderIndex;
    const job = (source: string, ripgrep?: string): GrepJob => ({
      kind: 'grep',
      root,
      denyRead: [],
      scope: { realPath: root, relativePath: '.', kind: 'directory' },
      pattern: source,
      useIndex: true,
      indexable: true,
      // No head start: only a folder kept whole is read to the end in this thread rather than by ripgrep.
      headStartMs: 0,
      ripgrep: ripgrep ? { path: ripgrep, version: /\d+\.\d+\.\d+/.exec(execFileSync(ripgrep, ['--version'], { encoding: 'utf8' }))?.[0] ?? '0.0.0' } : undefined,
    });
    const grep = async (source: string, ripgrep?: string): Promise<{ result: GrepJobResult; spawned: number }> => {
      let spawned = 0;
      const result = (await runSearchJob(job(source, ripgrep), { shouldStop: () => false, onSpawn: () => void (spawned += 1) }, indexes)) as GrepJobResult;
      return { result, spawned };
    };

    /** Two files, first in walk order (big/), that together pass what a folder kept whole reads from the disk before ripgrep. */
    const writeFilesPastTheDiskLimit = (): void => {
      fs.mkdirSync(at('big'), { recursive: true });
      for (const name of ['one.txt', 'two.txt']) fs.writeFileSync(at(`big/${name}`), 'filler line\n'.repeat(Math.ceil((CONTENT_CACHE_LIMITS.maxDiskBytesReadToTheEnd * 0.6) / 12)));
    };

    it('is answered from the kept files, and an in-place edit of the same size is in the very next answer', async () => {
      assert.equal((await index()).contents.state, 'filled');
      assert.equal((await index()).contents.size, 24);
      assert.deepEqual((await grep('alpha')).result.lines, ['src/a.ts:1: export const alpha = 1;']);
      fs.writeFileSync(at('src/a.ts'), 'export const gamma = 1;\n');
      assert.deepEqual((await grep('alpha')).result.lines, []);
      assert.deepEqual((await grep('gamma')).result.lines, ['src/a.ts:1: export const gamma = 1;']);
      await untilPastRacyWindow([at('src/a.ts')]);
      await grep('gamma');
      assert.equal(String((await index()).contents.lookup(at('src/a.ts'))), 'export const gamma = 1;\n', 'a search keeps the new contents it read');
    });

    it('starts no ripgrep for a folder kept whole, and reads every file in this thread', async function () {
      const ripgrep = ripgrepOnPath();
      if (!ripgrep) this.skip();
      const { result, spawned } = await grep('beta', ripgrep);
      assert.deepEqual(result.lines, ['src/b.ts:1: export const beta = 2;']);
      assert.equal(result.engine, 'index');
      assert.equal(spawned, 0);
    });

    it('drops the kept copy of a file that left the index, so it holds no share of the allowance', async () => {
      const before = budget.usedBytes;
      fs.rmSync(at('lib/m0.ts'));
      await grep('m0');
      assert.equal((await index()).contents.size, 23);
      assert.ok(budget.usedBytes < before);
    });

    it("keeps the copy of a link's target still indexed at its own path when the link goes", async () => {
      fs.symlinkSync('m1.ts', at('lib/link.ts'));
      assert.equal((await grep("lib/m1\\.ts'")).result.lines.length, 2, 'the link and its target');
      fs.rmSync(at('lib/link.ts'));
      const { result } = await grep('m1');
      assert.equal(result.filesFromMemory, (await index()).files.length, 'every file, the target among them, read from memory');
    });

    it('hands over to ripgrep once the files it must read from the disk pass the limit, though the folder is kept whole', async function () {
      const ripgrep = ripgrepOnPath();
      if (!ripgrep) this.skip();
      // Files too large to keep: in a folder kept whole, reading them all in the thread is what ripgrep's pre-filter saves.
      writeFilesPastTheDiskLimit();
      const { result, spawned } = await grep('beta', ripgrep);
      assert.deepEqual(result.lines, ['src/b.ts:1: export const beta = 2;']);
      assert.equal(spawned, 1, 'ripgrep read the rest');
    });

    it('keeps nothing of the files ripgrep named, which a search read from the disk', async function () {
      const ripgrep = ripgrepOnPath();
      if (!ripgrep) this.skip();
      // Read first in walk order and too large to keep: past them the search hands the rest (lib/, src/) to ripgrep.
      writeFilesPastTheDiskLimit();
      // Its kept copy is no longer the file: read again, it would be kept again by a search that keeps what it reads.
      fs.writeFileSync(at('src/a.ts'), 'export const gamma = 1;\n');
      fs.writeFileSync(at('src/new.ts'), 'export const gamma = 2;\n');
      await untilPastRacyWindow([at('src/a.ts'), at('src/new.ts')]);
      const { result, spawned } = await grep('gamma', ripgrep);
      assert.equal(spawned, 1);
      assert.deepEqual(result.lines, ['src/a.ts:1: export const gamma = 1;', 'src/new.ts:1: export const gamma = 2;']);
      const contents = (await index()).contents;
      assert.equal(contents.lookup(at('src/a.ts')), undefined);
      assert.equal(contents.lookup(at('src/new.ts')), undefined);
    });

    it("gives its memory back when the folder's index is dropped", async () => {
      assert.ok(budget.usedBytes > 0);
      (await index()).dispose();
      assert.equal(budget.usedBytes, 0);
    });
  });
});

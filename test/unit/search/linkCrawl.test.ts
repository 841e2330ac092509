import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { crawlLinksAndRules, ruleNamesIn } from '../../../server/src/search/linkCrawl';
import { walkVerdicts } from '../../../server/src/search/walk';
import { execFileSync } from 'node:child_process';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { SearchPool } from '../../../server/src/search/searchPool';
import { ripgrepOnPath, writeTree } from '../../support/toolFixture';

/** Every file under `root` but those in .git/, root-relative. */
function allFiles(root: string, relative = ''): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
    const entryPath = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== '.git') found.push(...allFiles(root, entryPath));
    } else {
      found.push(entryPath);
    }
  }
  return found;
}

describe("the crawl's ignore files, handed to the check of ripgrep's listing", () => {
  let root: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-crawl-')));
    writeTree(root, {
      '.gitignore': 'build/\n*.log\n!keep.log\n',
      'a.log': '',
      'keep.log': '',
      'build/out.ts': '',
      'src/.gitignore': 'gen-*.ts\n',
      'src/gen-a.ts': '',
      'src/main.ts': '',
      'src/debug.log': '',
      'src/deep/.ignore': 'skip.ts\nalso.ts\n',
      'src/deep/.rgignore': '!also.ts\n',
      'src/deep/skip.ts': '',
      'src/deep/also.ts': '',
      'src/deep/plain/x.ts': '',
      'vendor/lib/.git/info/exclude': 'local-*.ts\n',
      'vendor/lib/.gitignore': '!gen-b.ts\n',
      'vendor/lib/local-x.ts': '',
      'vendor/lib/gen-b.ts': '',
      'vendor/lib/kept.ts': '',
    });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('gives every file the verdict that reading the ignore files from disk gives, below a crawled scope and above it', async () => {
    const boundary = await ReadBoundary.create(root, []);
    const fromDisk = walkVerdicts(boundary);
    const files = allFiles(root);
    const expected = files.filter(fromDisk).sort();
    // Not a vacuous comparison: each kind of rule decides something here.
    assert.deepEqual(
      ['a.log', 'keep.log', 'build/out.ts', 'src/debug.log', 'src/gen-a.ts', 'src/deep/skip.ts', 'src/deep/also.ts', 'vendor/lib/local-x.ts', 'vendor/lib/kept.ts'].map((file) => expected.includes(file)),
      [false, true, false, false, false, false, true, false, true],
    );
    for (const scope of ['.', 'src', 'vendor/lib']) {
      const crawl = await crawlLinksAndRules(root, scope, 10_000, () => false);
      const fromCrawl = walkVerdicts(boundary, new Set(), ruleNamesIn(crawl));
      const inScope = scope === '.' ? files : files.filter((file) => file.startsWith(`${scope}/`));
      assert.deepEqual(inScope.filter(fromCrawl).sort(), expected.filter((file) => inScope.includes(file)), `crawled from ${scope}`);
    }
  });

  it('takes the ignore files of a crawled directory from the crawl, without looking for them on disk', async () => {
    const boundary = await ReadBoundary.create(root, []);
    const crawl = await crawlLinksAndRules(root, '.', 10_000, () => false);
    // Written after the crawl: only a verdict that looks on disk sees it.
    fs.writeFileSync(path.join(root, 'src', 'deep', 'plain', '.gitignore'), 'x.ts\n');
    assert.equal(walkVerdicts(boundary, new Set(), ruleNamesIn(crawl))('src/deep/plain/x.ts'), true);
    assert.equal(walkVerdicts(boundary)('src/deep/plain/x.ts'), false);
  });

  it('knows nothing of a directory it did not read, so that one is looked at on disk', async () => {
    const crawl = await crawlLinksAndRules(root, 'src', 10_000, () => false);
    const names = ruleNamesIn(crawl);
    assert.equal(names(''), undefined, 'the root, above the scope');
    assert.deepEqual([...(names('src/deep') ?? [])].sort(), ['.ignore', '.rgignore']);
    assert.deepEqual([...(names('src/deep/plain') ?? ['not read'])], [], 'read, and holding none');
  });
});

describe('the crawl leaves out what the ignore rules leave out, as ripgrep does', () => {
  let root: string;
  const pools: SearchPool[] = [];
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-crawl-pruned-')));
    writeTree(root, {
      '.gitignore': 'target/\n/dist\n*.egg-info/\n',
      'a.ts': 'export const needle = 1;\n',
      'target/debug/.gitignore': '*\n',
      'pkg.egg-info/.gitignore': 'x\n',
      'src/dist/.ignore': 'y\n',
      'dist/.ignore': 'z\n',
      'keep/.gitignore': '!target/\n',
      'keep/target/.ignore': 'w\n',
      'sub/.gitignore': 'out/\n',
      'sub/out/.ignore': 'v\n',
      'sub/in/.ignore': 'u\n',
    });
    for (const at of ['target/debug/link.ts', 'pkg.egg-info/link.ts', 'src/link.ts', 'dist/link.ts', 'keep/target/link.ts', 'sub/out/link.ts']) {
      fs.symlinkSync(path.relative(path.dirname(path.join(root, at)), path.join(root, 'a.ts')), path.join(root, at));
    }
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('reads no directory a rule names whole (target/, /dist, a nested out/), and still reads one a rule leaves out by a wildcard, one anchored elsewhere, and one a deeper rule lets back in', async () => {
    const crawl = await crawlLinksAndRules(root, '.', 10_000, () => false);
    assert.deepEqual(crawl.symlinks.sort(), ['keep/target/link.ts', 'pkg.egg-info/link.ts', 'src/link.ts']);
    assert.ok(!crawl.directories.some((directory) => directory === 'target' || directory.startsWith('target/') || directory === 'dist'), crawl.directories.join(', '));
    assert.ok(crawl.ruleEntries.includes('src/dist/.ignore') && crawl.ruleEntries.includes('keep/target/.ignore'));
    assert.ok(!crawl.ruleEntries.includes('target/debug/.gitignore') && !crawl.ruleEntries.includes('dist/.ignore'));
  });

  it('leaves out nothing below a scope, and beside an include glob enters a left-out directory the glob names: ripgrep may walk those', async () => {
    const scoped = await crawlLinksAndRules(root, 'sub', 10_000, () => false);
    assert.deepEqual(scoped.directories.sort(), ['sub', 'sub/in', 'sub/out']);
    const globbed = await crawlLinksAndRules(root, '.', 10_000, () => false, { enteredAnyway: (name) => name === 'dist' });
    assert.ok(globbed.directories.includes('dist') && !globbed.directories.includes('target'), globbed.directories.join(', '));
  });

  it('stops ripgrep for a FIFO ignore file in a directory the rules leave out when an include glob would take ripgrep into it', async function () {
    const ripgrep = ripgrepOnPath();
    if (!ripgrep) this.skip();
    // `--iglob *.ts` matches the directory's name, which beats the rule that leaves it out.
    fs.mkdirSync(path.join(root, 'evil.ts'));
    fs.appendFileSync(path.join(root, '.gitignore'), 'evil.ts/\n');
    execFileSync('mkfifo', [path.join(root, 'evil.ts', '.gitignore')]);
    const pool = new SearchPool({ maxWorkers: 1 });
    pools.push(pool);
    const engine = new SearchEngine({ ripgrepPath: ripgrep, pool, orderedHeadStartMs: 0 });
    const outcome = await engine.run({ kind: 'grep', root, denyRead: [], scope: { kind: 'directory', realPath: root, relativePath: '.' }, pattern: 'needle', glob: '**/*.ts' });
    assert.ok(outcome.ok && outcome.result.kind === 'grep', JSON.stringify(outcome));
    assert.equal(outcome.result.engine, 'node', 'the walk answered, ripgrep having been stopped');
    assert.ok(outcome.result.lines.includes('a.ts:1: export const needle = 1;'), outcome.result.lines.join('\n'));
  });

  it('leaves ripgrep to answer a grep beside a FIFO ignore file in a directory the rules leave out, which it never opens', async function () {
    const ripgrep = ripgrepOnPath();
    if (!ripgrep) this.skip();
    execFileSync('mkfifo', [path.join(root, 'target', 'debug', '.ignore')]);
    const pool = new SearchPool({ maxWorkers: 1 });
    pools.push(pool);
    // No head start: a walk that finished the folder first would answer instead.
    const engine = new SearchEngine({ ripgrepPath: ripgrep, pool, orderedHeadStartMs: 0 });
    const grep = { kind: 'grep' as const, root, denyRead: [], scope: { kind: 'directory' as const, realPath: root, relativePath: '.' }, pattern: 'needle' };
    const outcome = await engine.run(grep);
    assert.ok(outcome.ok && outcome.result.kind === 'grep', JSON.stringify(outcome));
    assert.equal(outcome.result.engine, 'ripgrep');
    const walkPool = new SearchPool({ maxWorkers: 1 });
    pools.push(walkPool);
    const walked = await new SearchEngine({ ripgrepPath: null, pool: walkPool }).run(grep);
    assert.ok(walked.ok && walked.result.kind === 'grep');
    assert.deepEqual(outcome.result.lines, walked.result.lines);
    assert.ok(outcome.result.lines.includes('src/link.ts:1: export const needle = 1;'), outcome.result.lines.join('\n'));
  });
});

describe('a FIFO ignore file ripgrep would wait on stops it, and the walk answers', () => {
  let root: string;
  const pools: SearchPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("in a directory the rules leave out that an include glob takes ripgrep into, where a warm index's listing, which lists only what the walk enters, is not used", async function () {
    const ripgrep = ripgrepOnPath();
    if (!ripgrep) this.skip();
    this.timeout(120_000);
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-crawl-warm-')));
    // Files too large to keep in memory, past what one grep reads from the disk: ripgrep is asked.
    const files: Record<string, string> = { '.gitignore': 'evil.ts/\n', 'a.ts': 'export const needle = 1;\n' };
    for (let i = 0; i < 18; i++) files[`big/b${i}.ts`] = `${'x'.repeat(80)}\n`.repeat(3_500);
    writeTree(root, files);
    fs.mkdirSync(path.join(root, 'evil.ts'));
    execFileSync('mkfifo', [path.join(root, 'evil.ts', '.gitignore')]);
    const pool = new SearchPool({ maxWorkers: 1 });
    pools.push(pool);
    const engine = new SearchEngine({ ripgrepPath: ripgrep, pool, fileIndex: true, orderedHeadStartMs: 0 });
    assert.equal(await engine.prepareIndex(root, [], { waitForContents: true }), true);
    const outcome = await engine.run({ kind: 'grep', root, denyRead: [], scope: { kind: 'directory', realPath: root, relativePath: '.' }, pattern: 'needle', glob: '**/*.ts' });
    assert.ok(outcome.ok && outcome.result.kind === 'grep', JSON.stringify(outcome).slice(0, 500));
    assert.deepEqual(outcome.result.lines, ['a.ts:1: export const needle = 1;']);
    assert.notEqual(outcome.result.engine, 'ripgrep');
  });

  it("as a repository's .git/info/exclude, which ripgrep reads, with no other odd ignore file beside it", async function () {
    const ripgrep = ripgrepOnPath();
    if (!ripgrep) this.skip();
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-crawl-exclude-')));
    writeTree(root, { 'a.ts': 'export const needle = 1;\n', '.git/HEAD': 'ref: refs/heads/main\n' });
    fs.mkdirSync(path.join(root, '.git', 'info'));
    execFileSync('mkfifo', [path.join(root, '.git', 'info', 'exclude')]);
    const pool = new SearchPool({ maxWorkers: 1 });
    pools.push(pool);
    const engine = new SearchEngine({ ripgrepPath: ripgrep, pool, orderedHeadStartMs: 0 });
    const outcome = await engine.run({ kind: 'grep', root, denyRead: [], scope: { kind: 'directory', realPath: root, relativePath: '.' }, pattern: 'needle' });
    assert.ok(outcome.ok && outcome.result.kind === 'grep', JSON.stringify(outcome).slice(0, 500));
    assert.equal(outcome.result.engine, 'node');
    assert.deepEqual(outcome.result.lines, ['a.ts:1: export const needle = 1;']);
  });
});

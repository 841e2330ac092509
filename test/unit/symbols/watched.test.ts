import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { effectOfChange, type FileChangeKind, watcherReportsEverything } from '../../../server/src/symbols/fileChanges';
import { currentIndex, FolderIndex, noteFileChanges, resetSymbolIndexes, setSymbolIndexClock, SYMBOL_INDEX_LIMITS, watchFolders } from '../../../server/src/symbols/symbolIndex';
import { untilPastRacyWindow } from '../../support/racyWindow';
import { closeSymbolIndexes, stopWatching } from '../../support/watchedFolder';
import { expectOk, NO_POLICY, OUTSIDE_MARKER, writeTree } from '../../support/toolFixture';

/**
 * A folder a client's file watcher covers keeps its symbol index fresh from
 * the watcher's reports: past the freshness interval a query walks the folder
 * only when a report asks for it, and looks again at just the files reported.
 * The freshness clock is injected; the reports are made by the test, as VS
 * Code's watcher would make them.
 */
describe('symbol index of a watched folder', function () {
  this.timeout(60_000);
  let base: string;
  let repo: string;
  let outside: string;
  let toolbox: Toolbox;
  let boundary: ReadBoundary;
  let now = 0;
  const later = (): void => {
    now += SYMBOL_INDEX_LIMITS.freshForMs * 10;
  };
  const report = (relativePath: string, kind: FileChangeKind, root = repo): void => noteFileChanges([{ path: path.join(root, relativePath), kind }]);
  /** The folder's index, held here so that looking at it never refreshes it. */
  let folder: FolderIndex;

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-watched-')));
    repo = path.join(base, 'repo');
    outside = path.join(base, 'outside');
    writeTree(outside, { 'stolen.ts': `export function outsideSecret() {\n  return '${OUTSIDE_MARKER}';\n}\n` });
    writeTree(repo, {
      '.gitignore': 'dist/\nlib/\n',
      'src/core.ts': 'export function coreThing(): number {\n  return 1;\n}\n',
      'src/use.ts': "import { coreThing } from './core';\n\nexport const used = coreThing();\n",
      'lib/shared.ts': 'export function sharedThing() {}\n',
    });
    fs.mkdirSync(path.join(repo, 'dist'));
    fs.symlinkSync('../lib/shared.ts', path.join(repo, 'src', 'alias.ts'));
    await resetSymbolIndexes();
    now = 0;
    setSymbolIndexClock(() => now);
    watchFolders([{ path: repo, realPath: repo, complete: true }]);
    toolbox = await createToolbox(repo, NO_POLICY);
    boundary = await ReadBoundary.create(repo);
    // The first query walks: the reports count from a walk made since watching began.
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /src\/core\.ts:1: function coreThing/);
    const outcome = await currentIndex(boundary);
    assert.ok(outcome.ok);
    folder = outcome.result;
  });
  afterEach(() => stopWatching(base));
  after(closeSymbolIndexes);

  it('is not walked again past the freshness interval while nothing is reported', async () => {
    const walks = folder.walks;
    later();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    await expectOk(toolbox, 'find_references', { symbol: 'coreThing' });
    assert.equal(folder.walks, walks);
  });

  it('answers the next query with a reported edit, looking at the edited file alone', async () => {
    const walks = folder.walks;
    fs.writeFileSync(path.join(repo, 'src', 'core.ts'), '\n\nexport function coreThing(): number {\n  return 2;\n}\nexport function coreOther() {}\n');
    report('src/core.ts', 'changed');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /src\/core\.ts:3: function coreThing/);
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreOther' }), /src\/core\.ts:6: function coreOther/);
    assert.equal(folder.walks, walks);
  });

  it('drops a reported deleted file from answers and counts without a walk', async () => {
    const { walks, status } = folder;
    fs.rmSync(path.join(repo, 'src', 'use.ts'));
    report('src/use.ts', 'deleted');
    assert.doesNotMatch(await expectOk(toolbox, 'find_references', { symbol: 'coreThing' }), /src\/use\.ts/);
    assert.equal(folder.walks, walks);
    assert.equal(folder.status.sourceFiles, status.sourceFiles - 1);
    assert.ok(folder.status.complete);
  });

  it('walks when a new source file the walk would visit is reported, and finds it', async () => {
    const walks = folder.walks;
    writeTree(repo, { 'src/added.ts': 'export function addedThing() {}\n' });
    report('src/added.ts', 'created');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'addedThing' }), /src\/added\.ts:1: function addedThing/);
    assert.equal(folder.walks, walks + 1);
  });

  /** Deletes src/ and reports it: only a walk settles a deleted directory that held indexed files, and the next query makes it. */
  async function deletingSrcWalksOnce(): Promise<void> {
    const walks = folder.walks;
    fs.rmSync(path.join(repo, 'src'), { recursive: true });
    report('src', 'deleted');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /^No symbols match/);
    assert.equal(folder.walks, walks + 1);
  }

  it('walks for a report only a walk settles even within the interval after a walk that changed nothing', async () => {
    await untilPastRacyWindow(['src/core.ts', 'src/use.ts', 'lib/shared.ts'].map((file) => path.join(repo, file)));
    await currentIndex(boundary, undefined, { refresh: true }); // parses again what the first walk read as racy
    await currentIndex(boundary, undefined, { refresh: true });
    assert.equal(folder.lastRefreshChanged, false, 'the last walk changed nothing, so the index counts as fresh for the interval');
    await deletingSrcWalksOnce();
  });

  it('sees an edit reported before the first walk under a new watch, within the interval', async () => {
    watchFolders([]);
    watchFolders([{ path: repo, realPath: repo, complete: true }]);
    fs.writeFileSync(path.join(repo, 'src', 'core.ts'), 'export function coreRenamed(): number {\n  return 1;\n}\n');
    report('src/core.ts', 'changed');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreRenamed' }), /src\/core\.ts:1: function coreRenamed/);
  });

  it('walks when a directory holding indexed files is reported deleted', async () => {
    await deletingSrcWalksOnce();
  });

  it('does not walk for a file reported in an ignored directory, nor for a file no index holds', async () => {
    const walks = folder.walks;
    writeTree(repo, { 'dist/built.ts': 'export function builtThing() {}\n', 'README.md': '# notes\n' });
    report('dist/built.ts', 'created');
    report('README.md', 'created');
    report('node_modules/dep/index.ts', 'changed');
    report('.git/index', 'changed');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'builtThing' }), /^No symbols match/);
    assert.equal(folder.walks, walks);
  });

  it('walks when an ignore file is reported changed, and answers by its new rules', async () => {
    const walks = folder.walks;
    fs.writeFileSync(path.join(repo, '.gitignore'), 'dist/\nlib/\nsrc/core.ts\n');
    report('.gitignore', 'changed');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /^No symbols match/);
    assert.equal(folder.walks, walks + 1);
  });

  it('never reads a reported file that has become a link out of the folder', async () => {
    fs.rmSync(path.join(repo, 'src', 'core.ts'));
    fs.symlinkSync(path.join(outside, 'stolen.ts'), path.join(repo, 'src', 'core.ts'));
    report('src/core.ts', 'changed');
    const answer = await expectOk(toolbox, 'find_symbol', { query: 'outsideSecret' });
    assert.match(answer, /^No symbols match/);
    assert.doesNotMatch(answer, new RegExp(OUTSIDE_MARKER));
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /^No symbols match/);
  });

  it("updates a link's entry when its target is reported changed under the target's own path", async () => {
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'sharedThing' }), /src\/alias\.ts:1: function sharedThing/);
    const walks = folder.walks;
    fs.writeFileSync(path.join(repo, 'lib', 'shared.ts'), 'export function sharedRenamed() {}\n');
    report('lib/shared.ts', 'changed');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'sharedRenamed' }), /src\/alias\.ts:1: function sharedRenamed/);
    assert.equal(folder.walks, walks);
  });

  it('walks a folder whose watcher does not see all of it past the interval, as an unwatched one', async () => {
    watchFolders([{ path: repo, realPath: repo, complete: false }]);
    const walks = folder.walks;
    later();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    assert.equal(folder.walks, walks + 1);
  });

  it('walks once more when watching begins again, before trusting the reports', async () => {
    watchFolders([]);
    watchFolders([{ path: repo, realPath: repo, complete: true }]);
    const walks = folder.walks;
    later();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    assert.equal(folder.walks, walks + 1, 'past the interval, and no walk yet under this watch: walked as an unwatched folder');
    later();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    assert.equal(folder.walks, walks + 1);
  });

  it('walks at the next query when the look at what was reported, or the walk it asked for, was cancelled', async () => {
    const cancelled = new AbortController();
    cancelled.abort();
    writeTree(repo, { 'src/added.ts': 'export function addedThing() {}\n' });
    report('src/added.ts', 'created'); // looked at first, then walked
    assert.equal((await currentIndex(boundary, cancelled.signal)).ok, false);
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'addedThing' }), /src\/added\.ts:1: function addedThing/);

    writeTree(repo, { 'src/second.ts': 'export function secondThing() {}\n' });
    report('.gitignore', 'changed'); // walked at once
    assert.equal((await currentIndex(boundary, cancelled.signal)).ok, false);
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'secondThing' }), /src\/second\.ts:1: function secondThing/);
  });

  it('walks again when a file is reported deleted while a walk runs, which may have listed it before it went', async () => {
    writeTree(repo, { 'src/brief.ts': 'export function briefThing() {}\n' });
    report('.gitignore', 'changed');
    const walking = currentIndex(boundary); // walks at once
    report('src/brief.ts', 'deleted'); // arrives during the walk, which has listed the file or will: it goes from disk after
    assert.ok((await walking).ok);
    fs.rmSync(path.join(repo, 'src', 'brief.ts'));
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'briefThing' }), /^No symbols match/);
  });

  it('looks again at an entry read through a link into node_modules at every query, since no watcher reports there', async () => {
    writeTree(repo, { 'node_modules/pkg/real.ts': 'export function vendoredThing() {}\n' });
    fs.symlinkSync('../node_modules/pkg/real.ts', path.join(repo, 'src', 'vendored.ts'));
    writeTree(repo, { 'src/added.ts': 'export const x = 1;\n' });
    report('src/added.ts', 'created'); // a walk, which finds the link
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'vendoredThing' }), /src\/vendored\.ts:1: function vendoredThing/);
    fs.writeFileSync(path.join(repo, 'node_modules', 'pkg', 'real.ts'), 'export function vendoredRenamed() {}\n');
    const walks = folder.walks;
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'vendoredRenamed' }), /src\/vendored\.ts:1: function vendoredRenamed/);
    assert.equal(folder.walks, walks);
  });

  it('trusts the reports only when every watched folder holding the index sees everything', async () => {
    watchFolders([
      { path: base, realPath: base, complete: true },
      { path: repo, realPath: repo, complete: false },
    ]);
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    const walks = folder.walks;
    later();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    assert.equal(folder.walks, walks + 1);
  });

  it('keeps trusting the reports when told the same folders again', async () => {
    watchFolders([{ path: repo, realPath: repo, complete: true }]);
    const walks = folder.walks;
    later();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    assert.equal(folder.walks, walks);
  });

  it('keeps a report that arrives while a recheck runs for the next query', async () => {
    fs.writeFileSync(path.join(repo, 'src', 'core.ts'), 'export function coreFirst() {}\n');
    report('src/core.ts', 'changed');
    const first = currentIndex(boundary); // takes the report at once
    fs.writeFileSync(path.join(repo, 'src', 'use.ts'), 'export function useSecond() {}\n');
    report('src/use.ts', 'changed');
    const firstIndex = await first;
    assert.ok(firstIndex.ok);
    assert.ok(firstIndex.result.byName.has('coreFirst'));
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'useSecond' }), /src\/use\.ts:1: function useSecond/);
  });

  it('still walks the folder in the background once the rewalk interval has passed, answering first', async () => {
    const walks = folder.walks;
    now += SYMBOL_INDEX_LIMITS.watchedRewalkMs + 1;
    writeTree(repo, { 'src/unreported.ts': 'export function unreportedThing() {}\n' });
    // Answered from the index as it is; the walk starts after.
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'unreportedThing' }), /^No symbols match/);
    await currentIndex(boundary); // the background walk, which a query arriving now shares
    assert.equal(folder.walks, walks + 1);
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'unreportedThing' }), /src\/unreported\.ts:1:/);
  });
});

describe('what a reported change means for an index', () => {
  const root = '/work/repo';

  it('names a path to look at for a file inside the folder, and nothing for one outside it', () => {
    assert.deepEqual(effectOfChange(root, '/work/repo/src/a.ts'), { effect: 'file', relativePath: 'src/a.ts' });
    assert.deepEqual(effectOfChange(root, '/work/repo/..notes/a.ts'), { effect: 'file', relativePath: '..notes/a.ts' });
    assert.deepEqual(effectOfChange(root, '/work/other/a.ts'), { effect: 'none' });
    assert.deepEqual(effectOfChange(root, '/work/repo/../other/a.ts'), { effect: 'none' });
    assert.deepEqual(effectOfChange(root, '/work/repository/a.ts'), { effect: 'none' });
  });

  it('asks for a walk where the walk decides what is visited: the folder itself, ignore files, .git entries and their exclude rules', () => {
    for (const changed of ['/work/repo', '/work/repo/.gitignore', '/work/repo/src/.ignore', '/work/repo/.rgignore', '/work/repo/vendor/.git', '/work/repo/.git/info/exclude']) {
      assert.deepEqual(effectOfChange(root, changed), { effect: 'walk' }, changed);
    }
  });

  it('ignores what the walk never visits: node_modules anywhere and the inside of .git', () => {
    for (const changed of ['/work/repo/node_modules/x/index.ts', '/work/repo/pkg/node_modules/y.ts', '/work/repo/.git/index', '/work/repo/.git/refs/heads/main']) {
      assert.deepEqual(effectOfChange(root, changed), { effect: 'none' }, changed);
    }
  });

  it("trusts a watcher whose excludes hide only what the walk skips, and no other", () => {
    assert.equal(watcherReportsEverything(undefined), true);
    assert.equal(watcherReportsEverything({ '**/.git/objects/**': true, '**/.git/subtree-cache/**': true, '**/node_modules/*/**': true, '**/.hg/store/**': true }), true);
    assert.equal(watcherReportsEverything({ '**/generated/**': false }), true);
    assert.equal(watcherReportsEverything({ '**/generated/**': true }), false);
    assert.equal(watcherReportsEverything({ '**/.git/**': true }), false, '.git/info/exclude holds ignore rules');
  });
});

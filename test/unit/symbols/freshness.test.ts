import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import type { FileIndex, IndexJobResult, RecheckJobResult } from '../../../server/src/symbols/indexer';
import { INDEX_LIMITS } from '../../../server/src/symbols/limits';
import { matchScore, mayMatch } from '../../../server/src/symbols/matching';
import { millisecondsSetting } from '../../../server/src/read/repoAccess';
import { closeSymbolPool, currentIndex, FolderIndex, resetSymbolIndexes, setSymbolFreshness, setSymbolIndexClock, SYMBOL_INDEX_LIMITS } from '../../../server/src/symbols/symbolIndex';
import { expectOk, writeTree } from '../../support/toolFixture';
import { sortInWalkOrder } from '../../../server/src/search/relativePaths';
import { untilPastRacyWindow } from '../../support/racyWindow';

/**
 * How the symbol index stays current without walking the folder for every
 * query (the freshness interval, on an injected clock), and how
 * find_references picks the files it reads (the name -> files index).
 */

function fileIndex(relativePath: string, references: string | undefined, extra: Partial<FileIndex> = {}): FileIndex {
  return { relativePath, realPath: `/r/${relativePath}`, stamp: '1:1', symbols: [], problems: [], moreProblems: 0, imports: [], reexports: [], references, ...extra };
}

function result(updated: FileIndex[], removed: string[] = []): IndexJobResult {
  return { kind: 'index', updated, removed, sourceFiles: updated.length, indexedFiles: updated.length, leftOut: 0, tooLarge: 0, walkComplete: true, fileCapReached: false };
}

describe('symbol index freshness and reference candidates', function () {
  this.timeout(60_000);
  let base: string;
  let repo: string;
  let toolbox: Toolbox;
  let now = 0;
  const afterTheInterval = (): void => {
    now += SYMBOL_INDEX_LIMITS.freshForMs;
  };

  before(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-symfresh-')));
    repo = path.join(base, 'repo');
    writeTree(repo, {
      'src/core.ts': 'export function coreThing(): number {\n  return 1;\n}\n',
      'src/use.ts': "import { coreThing } from './core';\n\nexport const used = coreThing();\n",
      'src/other.ts': '// coreThing is only named in this comment.\nexport const other = 2;\n',
    });
    // Trusted stamps: a file read within the racy window is parsed again at the next walk, which then counts as a change.
    await untilPastRacyWindow(['src/core.ts', 'src/use.ts', 'src/other.ts'].map((file) => path.join(repo, file)));
    toolbox = await createToolbox(repo, { denyTools: [], denyRead: [] });
    setSymbolIndexClock(() => now);
  });
  after(async () => {
    setSymbolIndexClock();
    await resetSymbolIndexes();
    await closeSymbolPool();
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('answers from the index without a walk within the interval after a refresh that changed nothing, and sees an edit, an addition, a deletion and a rename once it has passed', async () => {
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /src\/core\.ts:1: function coreThing/);
    afterTheInterval();
    // This refresh finds nothing changed: the next ones within the interval walk no more.
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });

    fs.writeFileSync(path.join(repo, 'src', 'added.ts'), "import { coreThing } from './core';\nexport function addedThing() {\n  return coreThing();\n}\n");
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'addedThing' }), /^No symbols match/, 'within the interval the index was not walked again');
    afterTheInterval();
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'addedThing' }), /src\/added\.ts:2: function addedThing/);
    assert.match(await expectOk(toolbox, 'find_references', { symbol: 'coreThing' }), /^src\/added\.ts:3: return coreThing\(\);$/m);

    // An edit: the name moves to another line and a new use appears in a file that had none.
    fs.writeFileSync(path.join(repo, 'src', 'core.ts'), '\n\nexport function coreThing(): number {\n  return 1;\n}\n');
    fs.writeFileSync(path.join(repo, 'src', 'other.ts'), "import { coreThing } from './core';\nexport const other = coreThing() + 2;\n");
    afterTheInterval();
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'coreThing' }), /src\/core\.ts:3: function coreThing/);
    assert.match(await expectOk(toolbox, 'find_references', { symbol: 'coreThing' }), /^src\/other\.ts:2: export const other = coreThing\(\) \+ 2;$/m);

    // A deletion and a rename.
    fs.rmSync(path.join(repo, 'src', 'added.ts'));
    fs.renameSync(path.join(repo, 'src', 'use.ts'), path.join(repo, 'src', 'renamed.ts'));
    afterTheInterval();
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'addedThing' }), /^No symbols match/);
    const references = await expectOk(toolbox, 'find_references', { symbol: 'coreThing' });
    assert.doesNotMatch(references, /src\/added\.ts|src\/use\.ts/);
    assert.match(references, /^src\/renamed\.ts:3: export const used = coreThing\(\);$/m);
  });

  it('walks again at once while the last refresh found changes, even within the interval', async () => {
    afterTheInterval();
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
    fs.writeFileSync(path.join(repo, 'src', 'first.ts'), 'export function firstAdded() {}\n');
    afterTheInterval();
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'firstAdded' }), /src\/first\.ts:1:/);
    // The clock has not moved: only the change just found makes this walk again.
    fs.writeFileSync(path.join(repo, 'src', 'second.ts'), 'export function secondAdded() {}\n');
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'secondAdded' }), /src\/second\.ts:1:/);
  });

  it('answers the query right after the walk that built the index without walking again, within the interval', async () => {
    await resetSymbolIndexes();
    const boundary = await ReadBoundary.create(repo);
    const built = await currentIndex(boundary);
    assert.ok(built.ok && built.result.status.complete);
    const walks = built.result.walks;
    const next = await currentIndex(boundary);
    assert.ok(next.ok);
    assert.equal(next.result.walks, walks, 'the files the build added are no sign of edits going on');
    afterTheInterval();
    const later = await currentIndex(boundary);
    assert.ok(later.ok);
    assert.equal(later.result.walks, walks + 1);
  });

  it('keeps an index fresh for as long as the interval it is given, and walks once that has passed', async () => {
    const boundary = await ReadBoundary.create(repo);
    // Files the tests before wrote a moment ago are read again by the next walk, which would count as a change.
    await untilPastRacyWindow(fs.readdirSync(path.join(repo, 'src')).map((name) => path.join(repo, 'src', name)));
    let walked = await currentIndex(boundary, undefined, { refresh: true });
    if (walked.ok && walked.result.lastRefreshChanged) walked = await currentIndex(boundary, undefined, { refresh: true });
    assert.ok(walked.ok && !walked.result.lastRefreshChanged);
    const walks = walked.result.walks;
    setSymbolFreshness(10 * SYMBOL_INDEX_LIMITS.freshForMs);
    try {
      now += 9 * SYMBOL_INDEX_LIMITS.freshForMs;
      assert.equal(((await currentIndex(boundary)) as { result: FolderIndex }).result.walks, walks, 'past the default interval, within the one given');
      now += 2 * SYMBOL_INDEX_LIMITS.freshForMs;
      assert.equal(((await currentIndex(boundary)) as { result: FolderIndex }).result.walks, walks + 1);
    } finally {
      setSymbolFreshness();
    }
  });

  it('takes the interval REPO_DISCUSS_SYMBOL_FRESH_MS gives in whole milliseconds, and the default for anything else', () => {
    assert.equal(millisecondsSetting('600000'), 600_000);
    assert.equal(millisecondsSetting('0'), 0);
    for (const value of [undefined, '', ' 5', '5s', '-1', '1.5', '1e9', '9999999999']) assert.equal(millisecondsSetting(value), undefined, String(value));
  });

  it('counts as a change only what a walk changed of the files an index it was building already had, or removed', () => {
    const index = new FolderIndex('/r', []);
    index.apply({ ...result([fileIndex('a.ts', 'x\t1')]), walkComplete: false, sourceFiles: 2 });
    assert.equal(index.lastRefreshChanged, false, 'a first walk stopped at its time limit');
    index.apply(result([fileIndex('b.ts', 'x\t1')]));
    assert.equal(index.lastRefreshChanged, false, 'the walk that finished the build');
    index.apply(result([fileIndex('c.ts', 'x\t1')]));
    assert.equal(index.lastRefreshChanged, true, 'a file added to a complete index');

    const building = new FolderIndex('/r', []);
    building.apply({ ...result([fileIndex('a.ts', 'x\t1')]), walkComplete: false, sourceFiles: 2 });
    building.apply(result([fileIndex('a.ts', 'x\t2', { stamp: '2:2' }), fileIndex('b.ts', 'x\t1')]));
    assert.equal(building.lastRefreshChanged, true, 'a file it had, changed while the build went on');
    const removing = new FolderIndex('/r', []);
    removing.apply({ ...result([fileIndex('a.ts', 'x\t1')]), walkComplete: false, sourceFiles: 2 });
    removing.apply(result([fileIndex('b.ts', 'x\t1')], ['a.ts']));
    assert.equal(removing.lastRefreshChanged, true, 'a file it had, gone');
  });

  it('finds a use in a file whose identifier list was cut at the cap, and one inside a syntax error', async () => {
    const many = Array.from({ length: INDEX_LIMITS.maxReferenceNamesPerFile + 50 }, (_, i) => `const filler${i} = ${i};`).join('\n');
    fs.writeFileSync(path.join(repo, 'src', 'huge.ts'), `${many}\nexport const late = coreThing();\n`);
    // The reference search finds identifiers inside an ERROR node: the file's list must hold them too.
    fs.writeFileSync(path.join(repo, 'src', 'broken.ts'), 'if (x) { coreThing( } }\n');
    afterTheInterval();
    const references = await expectOk(toolbox, 'find_references', { symbol: 'coreThing' });
    assert.match(references, /^src\/huge\.ts:\d+: export const late = coreThing\(\);$/m);
    assert.match(references, /^src\/broken\.ts:1: if \(x\) \{ coreThing\( \} \}$/m);
  });

  it("find_symbol's quick rejection never drops a name matchScore would match, and rejects most others", () => {
    const names = ['createServer', 'HTTPServer', 'create_server', 'crServer', 'Server', 'server', 'xServerY', '𝒜lpha', 'İstanbul', 'ServerFactory2', 'unrelated', 'a', 'ab'];
    const queries = ['cS', 'crSer', 'server', 'SERVER', 'crser', 'hs', '𝒜l', 'İst', 'ist', 'sf2', 'a', 'zz', 'ServerX'];
    let rejected = 0;
    for (const query of queries) {
      for (const name of names) {
        const passes = mayMatch(query.toLowerCase(), name.toLowerCase());
        if (matchScore(query, name) !== undefined) assert.ok(passes, `${query} matches ${name} but was rejected`);
        if (!passes) rejected += 1;
      }
    }
    assert.ok(rejected > names.length * queries.length / 2, `only ${rejected} rejected`);
  });

  it('reads for a name only the files whose identifier list holds it, kept in step as files change or go', () => {
    const index = new FolderIndex('/r', []);
    index.apply(result([fileIndex('a.ts', 'alpha\t2\nbeta\t1'), fileIndex('b.ts', 'beta\t3'), fileIndex('c.ts', 'gamma\t1')]));
    assert.deepEqual(index.referenceCandidates('beta').sort(), ['a.ts', 'b.ts']);
    assert.deepEqual(index.referenceCandidates('alpha'), ['a.ts']);
    assert.deepEqual(index.referenceCandidates('delta'), []);
    index.apply(result([fileIndex('a.ts', 'alpha\t1'), fileIndex('c.ts', 'gamma\t1\nbeta\t1')], ['b.ts']));
    assert.deepEqual(index.referenceCandidates('beta'), ['c.ts']);
    assert.deepEqual(index.referenceCandidates('alpha'), ['a.ts']);
  });

  it('hands out the candidates of a rare and of a common name in walk order, kept in step as files come and go one by one and in bulk', () => {
    const index = new FolderIndex('/r', []);
    const paths = (count: number, prefix: string): string[] => Array.from({ length: count }, (_, i) => `${prefix}/f${(i * 7919) % count}.ts`);
    const many = paths(400, 'lib');
    const usesOf = (relativePath: string): string => (relativePath === 'a.b.ts' ? 'rare\t1' : relativePath === 'lib/deep/x.ts' ? 'common\t1\nrare\t1' : 'common\t1');
    index.apply(result([...many, 'lib.ts', 'lib/deep/x.ts', 'a/b.ts', 'a.b.ts'].map((relativePath) => fileIndex(relativePath, usesOf(relativePath)))));
    const walkOrder = (): string[] => sortInWalkOrder([...index.files.keys()]);
    const users = (name: string): string[] => walkOrder().filter((relativePath) => (index.files.get(relativePath)?.references ?? '').split('\n').some((line) => line.startsWith(`${name}\t`)));
    assert.deepEqual(index.referenceCandidates('common'), users('common'), 'picked out of the ordered paths');
    assert.deepEqual(index.referenceCandidates('rare'), ['a.b.ts', 'lib/deep/x.ts'], 'sorted');
    assert.deepEqual(index.filesInWalkOrder(), walkOrder());
    // One by one: a file added between two others, one gone, one added at the very end.
    index.apply(result([fileIndex('lib/deep/w.ts', 'common\t1'), fileIndex('zzz.ts', 'common\t1')], ['lib/f7.ts']));
    assert.deepEqual(index.filesInWalkOrder(), walkOrder());
    assert.deepEqual(index.referenceCandidates('common'), users('common'));
    const recheck: RecheckJobResult = { kind: 'recheck', updated: [], removed: ['a/b.ts', 'not-indexed.ts'], walkNeeded: false };
    index.applyRecheck(recheck);
    assert.deepEqual(index.filesInWalkOrder(), walkOrder());
    // In bulk: past the number placed one by one, out of walk order, then in it (as a walk brings them), with one path both removed and brought back.
    index.apply(result(paths(300, 'more').map((relativePath) => fileIndex(relativePath, 'common\t1')), many.slice(0, 100)));
    assert.deepEqual(index.filesInWalkOrder(), walkOrder());
    const inWalkOrder = sortInWalkOrder([...paths(300, 'm'), 'lib/f150.ts']);
    index.apply(result(inWalkOrder.map((relativePath) => fileIndex(relativePath, 'common\t1')), ['lib/f150.ts', 'more/f1.ts']));
    assert.deepEqual(index.filesInWalkOrder(), walkOrder());
    assert.deepEqual(index.referenceCandidates('common'), users('common'));
    assert.deepEqual(index.referenceCandidates('rare'), ['a.b.ts', 'lib/deep/x.ts']);
  });

  it('always reads files whose identifier list may be incomplete, and every file for a name longer than the lists hold', () => {
    const index = new FolderIndex('/r', []);
    const capped = Array.from({ length: INDEX_LIMITS.maxReferenceNamesPerFile }, (_, i) => `n${i}\t1`).join('\n');
    index.apply(
      result([
        fileIndex('plain.ts', 'other\t1'),
        fileIndex('capped.ts', capped),
        fileIndex('unparsed.ts', undefined),
      ]),
    );
    assert.deepEqual(index.referenceCandidates('wanted').sort(), ['capped.ts', 'unparsed.ts']);
    assert.deepEqual(index.referenceCandidates('w'.repeat(INDEX_LIMITS.maxReferenceNameChars + 1)).sort(), ['capped.ts', 'plain.ts', 'unparsed.ts']);
    index.apply(result([fileIndex('capped.ts', 'n1\t1')], ['unparsed.ts']));
    assert.deepEqual(index.referenceCandidates('wanted'), []);
  });
});

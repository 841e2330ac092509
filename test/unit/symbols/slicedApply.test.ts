import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { FILES_PER_PART, type FileIndex, type IndexJobResult, nothingKnown, type RecheckJobResult, runSymbolJob } from '../../../server/src/symbols/indexer';
import { definingFile } from '../../support/indexedFiles';
import { closeSymbolPool, currentIndex, FolderIndex, noteFileChanges, resetSymbolIndexes, setSymbolIndexClock, SYMBOL_INDEX_LIMITS, watchFolders } from '../../../server/src/symbols/symbolIndex';
import { mergeInWalkOrder, sortInWalkOrder } from '../../../server/src/search/relativePaths';
import { turnsWhile } from '../../support/eventLoopTurns';
import { AS_UPKEEP, type SliceKindNow } from '../../../server/src/nextSlice';
import { packInSlices } from '../../../server/src/search/packedRecords';
import { writeTree } from '../../support/toolFixture';
import { untilPastRacyWindow } from '../../support/racyWindow';

/**
 * A walk's answer reaches the main thread in parts (one message each) and is
 * applied a slice at a time: the index that results is the one a single
 * message applied in one piece gave, and a reader between slices never finds
 * a definition of a file the index does not hold.
 */

const neverStop = { shouldStop: () => false };

function answer(updated: FileIndex[], removed: string[] = []): IndexJobResult {
  return { kind: 'index', updated, removed, sourceFiles: updated.length, indexedFiles: updated.length, leftOut: 0, tooLarge: 0, walkComplete: true, fileCapReached: false };
}

/** What a query can see of an index, in a form two indexes can be compared by. */
function seen(index: FolderIndex, names: string[]): unknown {
  return {
    files: [...index.files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
    walkOrder: index.filesInWalkOrder(),
    definitions: names.map((name) => (index.byName.get(name) ?? []).map((ref) => ref.file.relativePath).sort()),
    candidates: names.map((name) => index.referenceCandidates(name)),
    status: index.status,
    changed: index.lastRefreshChanged,
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('a walk answer handed over in parts and applied in slices', function () {
  this.timeout(60_000);
  let base: string;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-sliced-')));
  });
  afterEach(async () => {
    await resetSymbolIndexes();
    fs.rmSync(base, { recursive: true, force: true });
  });
  after(() => closeSymbolPool());

  const sourceTree = (count: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`src/m${i % 7}/f${i}.ts`, `export function fn${i}(): number {\n  return ${i};\n}\n`]));

  it('hands the parsed files over in parts of FILES_PER_PART, in walk order, and the answer holds the rest', async () => {
    writeTree(base, sourceTree(FILES_PER_PART * 2 + 5));
    const job = { kind: 'index' as const, root: base, denyRead: [], known: nothingKnown(), timeMs: 30_000 };
    const parts: FileIndex[][] = [];
    const inParts = (await runSymbolJob(job, { ...neverStop, sendFiles: (files) => parts.push(files) })) as IndexJobResult;
    const whole = (await runSymbolJob(job, neverStop)) as IndexJobResult;
    assert.deepEqual(parts.map((part) => part.length), [FILES_PER_PART, FILES_PER_PART]);
    assert.equal(inParts.updated.length, 5);
    const handedOver = [...parts.flat(), ...inParts.updated].map((file) => file.relativePath);
    assert.deepEqual(handedOver, whole.updated.map((file) => file.relativePath));
    assert.deepEqual(handedOver, sortInWalkOrder([...handedOver]));
    assert.equal(inParts.indexedFiles, whole.indexedFiles);
  });

  it('tells the symbol thread the stamps it holds when it walks again: only the file that changed is parsed again', async () => {
    const tree = sourceTree(FILES_PER_PART * 3 + 1);
    writeTree(base, tree);
    // Stamps older than the racy window, whose files a walk parses again whatever their stamps: setting the times
    // changes the ctime, which the window counts too, so it is waited out (a fast first walk read a file within it).
    const past = new Date(Date.now() - 60_000);
    for (const relativePath of Object.keys(tree)) fs.utimesSync(path.join(base, relativePath), past, past);
    await untilPastRacyWindow(Object.keys(tree).map((relativePath) => path.join(base, relativePath)));
    const boundary = await ReadBoundary.create(base, []);
    const first = await currentIndex(boundary);
    assert.ok(first.ok && first.result.status.complete);
    const before = new Map(first.result.files);
    fs.writeFileSync(path.join(base, 'src/m3/f3.ts'), 'export function changed(): number {\n  return 3;\n}\n');
    let now = performance.now();
    setSymbolIndexClock(() => now);
    try {
      now += SYMBOL_INDEX_LIMITS.freshForMs + 1;
      const second = await currentIndex(boundary);
      assert.ok(second.ok);
      const parsedAgain = [...second.result.files].filter(([relativePath, file]) => before.get(relativePath) !== file).map(([relativePath]) => relativePath);
      assert.deepEqual(parsedAgain, ['src/m3/f3.ts']);
      assert.equal(second.result.walks, 2);
    } finally {
      setSymbolIndexClock();
    }
  });

  it('leaves the next query to walk again when applying a walk\'s answer fails, and is walking no longer', async () => {
    writeTree(base, sourceTree(10));
    const boundary = await ReadBoundary.create(base, []);
    const first = await currentIndex(boundary);
    assert.ok(first.ok);
    const index = first.result;
    index.applyInSlices = () => Promise.reject(new Error('the apply failed'));
    await assert.rejects(currentIndex(boundary, undefined, { refresh: true }), /the apply failed/);
    assert.equal(index.walking, false);
    assert.equal(index.walkNeeded, true);
  });

  it('leaves the next query to walk again when applying a recheck\'s answer fails, so what the watcher reported is not lost', async () => {
    writeTree(base, sourceTree(10));
    const boundary = await ReadBoundary.create(base, []);
    watchFolders([{ path: base, realPath: base, complete: true }]);
    try {
      const first = await currentIndex(boundary); // walked under this watch: from now on the reports are trusted
      assert.ok(first.ok);
      const index = first.result;
      fs.appendFileSync(path.join(base, 'src/m1/f1.ts'), '// edited\n');
      noteFileChanges([{ path: path.join(base, 'src/m1/f1.ts'), kind: 'changed' }]);
      index.applyRecheckInSlices = () => Promise.reject(new Error('the recheck failed'));
      await assert.rejects(currentIndex(boundary), /the recheck failed/);
      assert.equal(index.walkNeeded, true);
    } finally {
      watchFolders([]);
    }
  });

  it('builds, through the symbol thread, the index of every file the walk parsed, in walk order', async () => {
    const tree = sourceTree(FILES_PER_PART * 3 + 1);
    writeTree(base, tree);
    const outcome = await currentIndex(await ReadBoundary.create(base, []));
    assert.ok(outcome.ok);
    const index = outcome.result;
    assert.ok(index.status.complete);
    assert.deepEqual([...index.files.keys()].sort(), Object.keys(tree).sort());
    assert.deepEqual(index.filesInWalkOrder(), sortInWalkOrder(Object.keys(tree)));
    assert.deepEqual(index.byName.get(`fn${FILES_PER_PART * 3}`)?.map((ref) => ref.file.relativePath), [`src/m${(FILES_PER_PART * 3) % 7}/f${FILES_PER_PART * 3}.ts`]);
  });

  it('applied in slices, gives the index applied in one piece: files, definitions, walk order, candidates and status', async () => {
    const first = answer(Array.from({ length: 400 }, (_, i) => definingFile(`lib/f${(i * 7919) % 400}.ts`, [`n${i % 13}`, 'common'])));
    // Removals, replacements, paths new to the index, and one path both removed and brought back.
    const second = answer(
      [...Array.from({ length: 300 }, (_, i) => definingFile(`lib/f${i}.ts`, [`m${i % 5}`], '2:2')), ...Array.from({ length: 300 }, (_, i) => definingFile(`new/g${i}.ts`, ['common']))],
      ['lib/f350.ts', 'lib/f399.ts', 'lib/f7.ts'],
    );
    const names = ['common', 'n0', 'n12', 'm0', 'm4', 'absent'];
    const whole = new FolderIndex('/r', []);
    const sliced = new FolderIndex('/r', []);
    let turns = 0;
    for (const walkAnswer of [first, second]) {
      whole.apply(walkAnswer);
      turns += (await turnsWhile(sliced.applyInSlices(walkAnswer, 0))).turns;
      assert.deepEqual(seen(sliced, names), seen(whole, names));
      assert.deepEqual(sliced.filesInWalkOrder(), sortInWalkOrder([...sliced.files.keys()]));
    }
    // A recheck's answer: files replaced and removed, the status counts down by those gone.
    const recheck: RecheckJobResult = { kind: 'recheck', updated: Array.from({ length: 100 }, (_, i) => definingFile(`new/g${i}.ts`, ['n0'], '3:3')), removed: ['lib/f1.ts', 'not-indexed.ts'], walkNeeded: false };
    whole.applyRecheck(recheck);
    turns += (await turnsWhile(sliced.applyRecheckInSlices(recheck, 0))).turns;
    assert.deepEqual(seen(sliced, names), seen(whole, names));
    assert.equal(sliced.status.indexedFiles, 599);
    assert.ok(turns > 10, `applied in ${turns} turns of the event loop`);
  });

  it('applies as its kind says at each slice: ahead of a map\'s packing while a call waits, taking turns with it as upkeep', async () => {
    const walkAnswer = answer(Array.from({ length: 300 }, (_, i) => definingFile(`a/f${i}.ts`, [`k${i}`])));
    const recordsPackedWhileApplying = async (kind: SliceKindNow): Promise<number> => {
      const index = new FolderIndex('/r', []);
      let packed = 0;
      // Counted only between the apply's first slice and its last: it waits for a timer before the first.
      const amidApply = (): boolean => index.files.size > 0 && index.files.size < walkAnswer.updated.length;
      const packing = packInSlices(Array.from({ length: 32 * 2_000 }, (_, i) => `p${i}`), 1, (item) => ((packed += amidApply() ? 1 : 0), [item]), -1, AS_UPKEEP);
      await index.applyInSlices(walkAnswer, 0, kind);
      const during = packed;
      await packing;
      return during;
    };
    const asUpkeep = await recordsPackedWhileApplying(AS_UPKEEP);
    const forACall = await recordsPackedWhileApplying(() => 'foreground');
    assert.ok(forACall * 2 <= asUpkeep, `${forACall} records packed while the answer was applied for a call, ${asUpkeep} as upkeep`);
  });

  it('between slices, lets a reader find each file as it was or as it is now, its definitions with it, and the walk order in step', async () => {
    const before = Array.from({ length: 200 }, (_, i) => definingFile(`a/f${i}.ts`, ['old', `k${i}`]));
    const after = [...Array.from({ length: 200 }, (_, i) => definingFile(`a/f${i}.ts`, ['new', `k${i}`], '2:2')), ...Array.from({ length: 100 }, (_, i) => definingFile(`b/f${i}.ts`, ['new']))];
    const index = new FolderIndex('/r', []);
    index.apply(answer(before));
    const versions = new Set([...before, ...after]);
    let applied = false;
    const applying = index.applyInSlices(answer(after, ['a/f0.ts']), 0).then(() => (applied = true));
    let looks = 0;
    for (; !applied; looks++) {
      for (const [relativePath, file] of index.files) assert.ok(versions.has(file) && file.relativePath === relativePath, relativePath);
      for (const refs of index.byName.values()) for (const ref of refs) assert.equal(index.files.get(ref.file.relativePath), ref.file, `a definition of a file replaced or gone: ${ref.file.relativePath}`);
      assert.deepEqual(index.filesInWalkOrder(), sortInWalkOrder([...index.files.keys()]));
      await turn();
    }
    await applying;
    assert.ok(looks > 5, `looked ${looks} times`);
    assert.equal(index.byName.get('old'), undefined);
    assert.equal(index.byName.get('new')?.length, 300);
  });

  it('between slices of an answer large enough to be merged rather than placed, keeps the walk order in step with the files', async () => {
    const index = new FolderIndex('/r', []);
    const many = Array.from({ length: 3_000 }, (_, i) => definingFile(`d${i % 17}/f${i}.ts`, []));
    index.apply(answer(many));
    // Removals are cheap: a slice of 2 ms takes hundreds of them, past the number placed one by one.
    const change = answer(Array.from({ length: 1_500 }, (_, i) => definingFile(`d${i % 13}/g${i}.ts`, [])), many.slice(0, 2_000).map((file) => file.relativePath));
    let applied = false;
    const applying = index.applyInSlices(change, 2).then(() => (applied = true));
    let looks = 0;
    for (; !applied; looks++) {
      assert.deepEqual(index.filesInWalkOrder(), sortInWalkOrder([...index.files.keys()]));
      await turn();
    }
    await applying;
    assert.equal(index.files.size, 2_500);
    assert.deepEqual(index.filesInWalkOrder(), sortInWalkOrder([...index.files.keys()]));
  });

  it('makes the next query walk again when a file the answer holds is deleted before it is applied', async () => {
    writeTree(base, sourceTree(40));
    const boundary = await ReadBoundary.create(base, []);
    const gone = 'src/m3/f3.ts';
    const applyInSlices = FolderIndex.prototype.applyInSlices;
    FolderIndex.prototype.applyInSlices = function (this: FolderIndex, walkAnswer: IndexJobResult, sliceMs?: number) {
      // Deleted and reported while the answer waits to be applied, as a watcher would report it.
      fs.rmSync(path.join(base, gone));
      this.noteChange(path.join(base, gone), 'deleted');
      FolderIndex.prototype.applyInSlices = applyInSlices;
      return applyInSlices.call(this, walkAnswer, sliceMs);
    };
    try {
      const first = await currentIndex(boundary);
      assert.ok(first.ok && first.result.files.has(gone), 'the answer applied holds the file the walk parsed');
      const next = await currentIndex(boundary);
      assert.ok(next.ok);
      assert.equal(next.result.walks, 2);
      assert.ok(!next.result.files.has(gone));
    } finally {
      FolderIndex.prototype.applyInSlices = applyInSlices;
    }
  });

  it('merges a few paths into many by binary search in the order of a merge in one pass', () => {
    const ordered = sortInWalkOrder(Array.from({ length: 5_000 }, (_, i) => `d${i % 37}/e${i % 11}/f${i}.ts`));
    const added = ['a.ts', 'd3.ts', 'd3/e1.ts', 'd3/e1/f0.ts', 'd36/e10/z.ts', 'zz/top.ts', 'd10/e5/f-.ts'];
    const merged = mergeInWalkOrder(ordered, [...added]);
    assert.deepEqual(merged, sortInWalkOrder([...ordered, ...added]));
    assert.deepEqual(mergeInWalkOrder(ordered.slice(0, 20), [...added]), sortInWalkOrder([...ordered.slice(0, 20), ...added]), 'the one-pass merge');
  });
});

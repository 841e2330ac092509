import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import type { SliceKindNow, SliceKind } from '../../../server/src/nextSlice';
import { buildFromIndex } from '../../../server/src/symbols/repoMap';
import { closeSymbolPool, currentIndex, FolderIndex, resetSymbolIndexes, SharedRefresh } from '../../../server/src/symbols/symbolIndex';
import { writeTree } from '../../support/toolFixture';

/**
 * Calls that ask for a folder's index while it is being refreshed share the
 * one refresh. A caller cancelled is answered at once and alone; the refresh
 * stops only when no caller is left waiting for it, and a caller arriving as
 * it stops gets a refresh of its own rather than its "Cancelled.". Its slices
 * of main-thread work go ahead of upkeep while a call waits for it.
 */

const CANCELLED = { ok: false, message: 'Cancelled.' };

describe('a folder refresh shared by several callers', function () {
  this.timeout(60_000);
  let base: string;
  let boundary: ReadBoundary;

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-shared-')));
    writeTree(base, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`src/m${i % 9}/f${i}.ts`, `export function fn${i}(): number {\n  return ${i};\n}\n`])));
    boundary = await ReadBoundary.create(base, []);
  });
  afterEach(async () => {
    await resetSymbolIndexes();
    fs.rmSync(base, { recursive: true, force: true });
  });
  after(() => closeSymbolPool());

  it('answers a caller cancelled during the walk at once, while the walk goes on for a caller still waiting', async () => {
    const kept = currentIndex(boundary);
    let keptAnswered = false;
    void kept.then(() => (keptAnswered = true));
    const cancel = new AbortController();
    const cancelled = currentIndex(boundary, cancel.signal);
    cancel.abort();
    assert.deepEqual(await cancelled, CANCELLED);
    assert.equal(keptAnswered, false, 'answered before the walk it shared had ended');
    const outcome = await kept;
    assert.ok(outcome.ok && outcome.result.status.complete);
    assert.equal(outcome.result.files.size, 200);
  });

  it('answers "Cancelled." only to the caller that was cancelled, not to another sharing its walk', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const firstAnswer = currentIndex(boundary, first.signal);
    const secondAnswer = currentIndex(boundary, second.signal);
    first.abort();
    assert.deepEqual(await firstAnswer, CANCELLED);
    const outcome = await secondAnswer;
    assert.ok(outcome.ok && outcome.result.status.complete);
    assert.equal(outcome.result.walks, 1);
  });

  it('stops the walk once every caller sharing it is cancelled, and a query arriving then walks afresh', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const answers = [currentIndex(boundary, first.signal), currentIndex(boundary, second.signal)];
    first.abort();
    second.abort();
    // In the same turn: the stopped refresh is still registered.
    const nextAnswer = currentIndex(boundary);
    assert.deepEqual(await Promise.all(answers), [CANCELLED, CANCELLED]);
    const next = await nextAnswer;
    assert.ok(next.ok && next.result.status.complete, JSON.stringify(next));
    assert.equal(next.result.walks, 2, 'the stopped walk, then one of its own');
  });

  it('answers a caller cancelled while it waits for a stopping refresh, and starts no refresh for it', async () => {
    const first = new AbortController();
    const stopping = currentIndex(boundary, first.signal);
    first.abort();
    const late = new AbortController();
    const lateAnswer = currentIndex(boundary, late.signal);
    late.abort();
    assert.deepEqual(await Promise.all([stopping, lateAnswer]), [CANCELLED, CANCELLED]);
    const next = await currentIndex(boundary);
    assert.ok(next.ok);
    assert.equal(next.result.walks, 2, 'the stopped walk, then the next query\'s: none for the late caller');
  });

  it('runs its slices as foreground while a call waits for it, and as upkeep when only upkeep does', async () => {
    let kindOf: SliceKindNow | undefined;
    let finish!: () => void;
    const shared = new SharedRefresh((_signal, kind) => {
      kindOf = kind;
      return new Promise((resolve) => (finish = () => resolve({ ok: true, result: new FolderIndex(base, []) })));
    });
    const mapBuild = shared.join('background');
    const kind = (): SliceKind => (kindOf as SliceKindNow)();
    assert.equal(kind(), 'background');
    const cancel = new AbortController();
    const call = shared.join('foreground', cancel.signal);
    assert.equal(kind(), 'foreground');
    cancel.abort();
    assert.deepEqual(await call, CANCELLED);
    assert.equal(kind(), 'background', 'the call was cancelled: only the map build waits');
    const stopWaiting = shared.waitFor('foreground');
    assert.equal(kind(), 'foreground', 'a call waits for it to end');
    stopWaiting();
    assert.equal(kind(), 'background');
    shared.waitFor('foreground');
    finish();
    assert.ok((await mapBuild).ok);
    assert.equal(kind(), 'background', 'a call waiting stops waiting once it has ended');
  });

  it('hands the kind of those waiting to the walk\'s packing and apply: a map build alone gets upkeep, a call foreground', async () => {
    const seen: string[] = [];
    const known = FolderIndex.prototype.known;
    const applyInSlices = FolderIndex.prototype.applyInSlices;
    // Read as the packing ends: the walk starts it in the turn the refresh starts, before a call joins.
    FolderIndex.prototype.known = function (kind, sliceMs) {
      return known.call(this, kind, sliceMs).finally(() => seen.push(`known ${kind?.()}`));
    };
    FolderIndex.prototype.applyInSlices = function (result, sliceMs, kind) {
      seen.push(`apply ${kind?.()}`);
      return applyInSlices.call(this, result, sliceMs, kind);
    };
    try {
      // A repository map's build, alone.
      assert.ok(await buildFromIndex(base, []));
      assert.ok((await currentIndex(boundary, undefined, { refresh: true })).ok);
      // A call joining a map build's walk in the same turn, before its first slice.
      const joined = [currentIndex(boundary, undefined, { refresh: true, kind: 'background' }), currentIndex(boundary)];
      assert.ok((await Promise.all(joined)).every((outcome) => outcome.ok));
      // A call arriving as a map build's walk stops waits for the rest of its slices, then walks.
      const cancel = new AbortController();
      const stopped = currentIndex(boundary, cancel.signal, { refresh: true, kind: 'background' });
      cancel.abort();
      const afterIt = currentIndex(boundary);
      assert.deepEqual(await stopped, CANCELLED);
      assert.ok((await afterIt).ok);
    } finally {
      FolderIndex.prototype.known = known;
      FolderIndex.prototype.applyInSlices = applyInSlices;
    }
    assert.deepEqual(seen, [
      ...['known background', 'apply background'],
      ...['known foreground', 'apply foreground'],
      ...['known foreground', 'apply foreground'],
      ...['known foreground', 'known foreground', 'apply foreground'],
    ]);
  });
});

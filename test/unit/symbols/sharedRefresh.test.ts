import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { closeSymbolPool, currentIndex, resetSymbolIndexes } from '../../../server/src/symbols/symbolIndex';
import { writeTree } from '../../support/toolFixture';

/**
 * Calls that ask for a folder's index while it is being refreshed share the
 * one refresh. A caller cancelled is answered at once and alone; the refresh
 * stops only when no caller is left waiting for it, and a caller arriving as
 * it stops gets a refresh of its own rather than its "Cancelled.".
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
});

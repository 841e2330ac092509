import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findEscape } from '../../../server/src/git/gitDirContents';

describe('the walk of a git directory (findEscape)', () => {
  let base: string;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-gitdir-walk-')));
    // Two levels of fan-out, as an object store has: more directories than one batch lists.
    for (let i = 0; i < 100; i++) fs.mkdirSync(path.join(base, 'objects', i.toString(16).padStart(2, '0'), 'pack'), { recursive: true });
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('walks every level and finds nothing when nothing leads out', async () => {
    assert.equal(await findEscape([{ path: base }], () => true), undefined);
  });

  it('stops before its next batch of directories once its call is cancelled, and says so', async () => {
    const cancelled = new AbortController();
    cancelled.abort();
    assert.deepEqual(await findEscape([{ path: base }], () => true, cancelled.signal), { kind: 'cancelled', path: base });

    // Cancelled while it walks: the level it is in is not finished.
    const midway = new AbortController();
    const listed: string[] = [];
    const watching = fs.promises.lstat;
    const escape = await (async () => {
      (fs.promises as { lstat: typeof fs.promises.lstat }).lstat = (async (file: fs.PathLike, options?: fs.StatOptions) => {
        listed.push(String(file));
        if (listed.length === 3) midway.abort();
        return watching(file, options as fs.StatOptions & { bigint?: false });
      }) as typeof fs.promises.lstat;
      try {
        return await findEscape([{ path: base }], () => true, midway.signal);
      } finally {
        (fs.promises as { lstat: typeof fs.promises.lstat }).lstat = watching;
      }
    })();
    assert.equal(escape?.kind, 'cancelled');
    assert.ok(listed.length < 100, `${listed.length} directories listed after the cancel`);
  });
});

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ABANDONED_AFTER_MS, SCRATCH_PREFIX, removeAbandoned, withScratchStore } from '../../../server/src/store/scratchStore';
import { FileStore } from '../../../server/src/store/fileStore';
import { makeTempFolder } from '../../support/coreHarness';

const posix = process.platform !== 'win32';

/** The pid of a process that has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('a scratch store', () => {
  it('is a file store in a private folder of its own under the temporary folder, named with its pid, removed once the turn is done', async () => {
    let folder = '';
    await withScratchStore(async (store) => {
      assert.ok(store instanceof FileStore);
      folder = store.root;
      assert.equal(path.dirname(folder), os.tmpdir());
      assert.ok(path.basename(folder).startsWith(`${SCRATCH_PREFIX}${process.pid}-`));
      if (posix) assert.equal(fs.statSync(folder).mode & 0o777, 0o700, 'no other user may read what a turn saves there');
      await store.acquire('disc-0123abcd');
    });
    assert.ok(folder !== '');
    assert.equal(fs.existsSync(folder), false);
  });

  it("is removed when the turn throws, and the error is the turn's", async () => {
    let folder = '';
    await assert.rejects(
      withScratchStore(async (store) => {
        folder = (store as FileStore).root;
        throw new Error('the turn failed');
      }),
      /the turn failed/,
    );
    assert.equal(fs.existsSync(folder), false);
  });

  (posix ? it : it.skip)("removes the scratch folders a process that ended left behind long ago, and no other: not a young one, not a running process's, not a link, not one others may enter, not another name", async () => {
    const temporary = makeTempFolder('rd-scratch-tmp-');
    const outside = makeTempFolder('rd-scratch-outside-');
    try {
      const ended = endedPid();
      const longAgo = (Date.now() - 2 * ABANDONED_AFTER_MS) / 1000;
      const make = (name: string, options: { mode?: number; young?: boolean } = {}): string => {
        const mode = options.mode ?? 0o700;
        const folder = path.join(temporary, name);
        fs.mkdirSync(folder, { mode });
        fs.chmodSync(folder, mode);
        fs.writeFileSync(path.join(folder, 'record.json'), '{}');
        if (!options.young) fs.utimesSync(folder, longAgo, longAgo);
        return folder;
      };
      const abandoned = make(`${SCRATCH_PREFIX}${ended}-aB3dE9`);
      // One seconds old may be a live process's in another pid namespace, which looks ended from here.
      make(`${SCRATCH_PREFIX}${ended}-young0`, { young: true });
      make(`${SCRATCH_PREFIX}${process.pid}-aB3dE9`);
      make(`${SCRATCH_PREFIX}${ended}-open00`, { mode: 0o755 });
      make(`${SCRATCH_PREFIX}${ended}-toolong1`);
      fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep');
      fs.symlinkSync(outside, path.join(temporary, `${SCRATCH_PREFIX}${ended}-link00`));

      await removeAbandoned(temporary);

      assert.equal(fs.existsSync(abandoned), false);
      assert.deepEqual(fs.readdirSync(temporary).sort(), [
        `${SCRATCH_PREFIX}${ended}-link00`,
        `${SCRATCH_PREFIX}${ended}-open00`,
        `${SCRATCH_PREFIX}${ended}-toolong1`,
        `${SCRATCH_PREFIX}${ended}-young0`,
        `${SCRATCH_PREFIX}${process.pid}-aB3dE9`,
      ].sort());
      assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'keep');
    } finally {
      fs.rmSync(temporary, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('is removed when the process exits while the turn runs (the server ends on SIGTERM through process.exit)', () => {
    const temporary = makeTempFolder('rd-scratch-exit-');
    try {
      const module = path.resolve(__dirname, '../../../server/src/store/scratchStore.js');
      const child = spawnSync(
        process.execPath,
        ['-e', `require(${JSON.stringify(module)}).withScratchStore(async (store) => { process.stdout.write(store.root); process.exit(0); })`],
        { encoding: 'utf8', env: { ...process.env, TMPDIR: temporary } },
      );
      assert.equal(child.status, 0, child.stderr);
      assert.ok(child.stdout.startsWith(path.join(temporary, SCRATCH_PREFIX)), child.stdout);
      assert.deepEqual(fs.readdirSync(temporary), []);
    } finally {
      fs.rmSync(temporary, { recursive: true, force: true });
    }
  });
});

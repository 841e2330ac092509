import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SCRATCH_PREFIX, removeAbandoned, withScratchStore } from '../../../server/src/store/scratchStore';
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

  (posix ? it : it.skip)('removes the scratch folders a process that ended left behind, and no other: not a running process\'s, not a link, not one others may enter, not another name', async () => {
    const temporary = makeTempFolder('rd-scratch-tmp-');
    const outside = makeTempFolder('rd-scratch-outside-');
    try {
      const ended = endedPid();
      const make = (name: string, mode = 0o700): string => {
        const folder = path.join(temporary, name);
        fs.mkdirSync(folder, { mode });
        fs.chmodSync(folder, mode);
        fs.writeFileSync(path.join(folder, 'record.json'), '{}');
        return folder;
      };
      const abandoned = make(`${SCRATCH_PREFIX}${ended}-aB3dE9`);
      make(`${SCRATCH_PREFIX}${process.pid}-aB3dE9`);
      make(`${SCRATCH_PREFIX}${ended}-open00`, 0o755);
      make(`${SCRATCH_PREFIX}${ended}-toolong1`);
      fs.writeFileSync(path.join(outside, 'keep.txt'), 'keep');
      fs.symlinkSync(outside, path.join(temporary, `${SCRATCH_PREFIX}${ended}-link00`));

      await removeAbandoned(temporary);

      assert.equal(fs.existsSync(abandoned), false);
      assert.deepEqual(fs.readdirSync(temporary).sort(), [
        `${SCRATCH_PREFIX}${ended}-link00`,
        `${SCRATCH_PREFIX}${ended}-open00`,
        `${SCRATCH_PREFIX}${ended}-toolong1`,
        `${SCRATCH_PREFIX}${process.pid}-aB3dE9`,
      ].sort());
      assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'keep');
    } finally {
      fs.rmSync(temporary, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});

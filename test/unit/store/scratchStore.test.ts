import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SCRATCH_PREFIX, withScratchStore } from '../../../server/src/store/scratchStore';
import { FileStore } from '../../../server/src/store/fileStore';

describe('a scratch store', () => {
  it('is a file store in a private folder of its own under the temporary folder, removed once the turn is done', async () => {
    let folder = '';
    await withScratchStore(async (store) => {
      assert.ok(store instanceof FileStore);
      folder = (store as FileStore).root;
      assert.equal(path.dirname(folder), os.tmpdir());
      assert.ok(path.basename(folder).startsWith(SCRATCH_PREFIX));
      assert.equal(fs.statSync(folder).mode & 0o777, 0o700, 'no other user may read what a turn saves there');
      await store.acquire('disc-0123abcd');
    });
    assert.ok(folder !== '');
    assert.equal(fs.existsSync(folder), false);
  });

  it('is removed when the turn throws, and the error is the turn\'s', async () => {
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
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ListRequest } from '../../../shared/protocol';
import { activeDiscussion, setUp, type Harness } from './harness';

describe('"Open saved discussion"', () => {
  let h: Harness;
  let elsewhere: string;
  before(async () => {
    h = await setUp();
    // A folder this window does not have open, as another window's would be.
    elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-elsewhere-')));
    fs.writeFileSync(path.join(elsewhere, 'README.md'), '# Another project\n');
  });
  after(() => {
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  it("offers this window's discussions and none of another folder's, open or saved", async () => {
    const ours = await activeDiscussion(h.ext);
    const theirsSaved = await h.ext.hub.open({ folder: elsewhere });
    await h.ext.hub.close(theirsSaved.id);
    const theirsOpen = await h.ext.hub.open({ folder: elsewhere });
    try {
      const everything = await h.ext.hub.request(ListRequest.method, {});
      assert.ok(everything.discussions.some((d) => d.discussionId === theirsOpen.id), "the server holds the other folder's open discussion");
      assert.ok(everything.saved.some((d) => d.discussionId === theirsSaved.id), 'and its saved one');

      const offered = await h.ext.discussionsOfWindow();
      assert.ok(offered.some((d) => d.discussionId === ours.id), "this window's discussion is offered");
      assert.deepEqual(
        offered.filter((d) => d.repo !== h.folder.uri.fsPath).map((d) => d.repo),
        [],
        'no discussion of another folder is offered',
      );
    } finally {
      await h.ext.hub.close(theirsOpen.id);
    }
  });
});

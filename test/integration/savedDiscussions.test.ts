import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { listDiscussionsOf, type Requester } from '../../client/src/common/savedDiscussions';
import type { DiscussionSummary } from '../../shared/protocol';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

describe('the discussions "Open saved discussion" lists, against the real server', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let work: string;
  let server: ServerProcess;
  let request: Requester;
  const folder = (name: string): string => {
    const dir = path.join(work, name);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'README.md'), `# ${name}\n`);
    return dir;
  };
  const start = async (repo: string): Promise<string> =>
    (await request('discuss/start', { folder: repo })).discussionId;
  const ids = (rows: DiscussionSummary[]) => rows.map((row) => row.discussionId);

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['m'] });
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-saved-')));
    server = await ServerProcess.start({ storageDir: path.join(work, 'storage'), model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'm' } });
    request = (method, params) => server.request(method, params);
  });
  afterEach(async () => {
    await server.stop().catch(() => server.kill());
    await fake.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("lists the discussions of the given folders, open and saved, and none of another folder's", async () => {
    const shop = folder('shop');
    const billing = folder('billing');
    const elsewhere = folder('elsewhere');
    const shopSaved = await start(shop);
    await request('discuss/close', { discussionId: shopSaved });
    const shopOpen = await start(shop);
    const billingOpen = await start(billing);
    const elsewhereOpen = await start(elsewhere);
    const elsewhereSaved = await start(elsewhere);
    await request('discuss/close', { discussionId: elsewhereSaved });

    const everything = await request('discuss/list', {});
    assert.ok(ids(everything.discussions).includes(elsewhereOpen), "the server holds the other folder's open discussion");
    assert.ok(ids(everything.saved).includes(elsewhereSaved), "and its saved one");

    const listed = await listDiscussionsOf([shop, billing], request);
    assert.deepEqual(new Set(ids(listed)), new Set([shopSaved, shopOpen, billingOpen]));
  });

  it("finds a folder's discussions when the window opened it through a symlink", async () => {
    const shop = folder('shop');
    const link = path.join(work, 'shop-link');
    fs.symlinkSync(shop, link);
    const id = await start(shop);

    assert.deepEqual(ids(await listDiscussionsOf([link], request)), [id]);
  });

  it('lists a discussion once when two of the folders are one real folder', async () => {
    const shop = folder('shop');
    const link = path.join(work, 'shop-link');
    fs.symlinkSync(shop, link);
    const id = await start(shop);

    assert.deepEqual(ids(await listDiscussionsOf([shop, link], request)), [id]);
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRepoAccess, searchSettings } from '../../../server/src/read/repoAccess';
import { RepoMaps } from '../../../server/src/symbols/repoMap';

describe("the search settings the server takes from its environment (repoAccess.ts searchSettings)", () => {
  it('keeps a warm file index and the default head start when nothing is set', () => {
    assert.deepEqual(searchSettings({}), { fileIndex: true, orderedHeadStartMs: undefined });
  });

  it('turns the index off with REPO_DISCUSS_FILE_INDEX=off, and takes the head start in whole milliseconds, 0 for none', () => {
    assert.deepEqual(searchSettings({ REPO_DISCUSS_FILE_INDEX: 'off', REPO_DISCUSS_SEARCH_HEAD_START_MS: '0' }), { fileIndex: false, orderedHeadStartMs: 0 });
    assert.deepEqual(searchSettings({ REPO_DISCUSS_SEARCH_HEAD_START_MS: '250' }), { fileIndex: true, orderedHeadStartMs: 250 });
  });

  it('keeps the default head start for anything but whole milliseconds, and the index for anything but "off"', () => {
    for (const value of ['', '-1', '2.5', '10ms']) assert.equal(searchSettings({ REPO_DISCUSS_SEARCH_HEAD_START_MS: value }).orderedHeadStartMs, undefined, value);
    assert.equal(searchSettings({ REPO_DISCUSS_FILE_INDEX: 'no' }).fileIndex, true);
  });
});

describe("the server's search engine, as createRepoAccess makes it from the environment", () => {
  let root: string;
  let saved: string | undefined;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-settings-')));
    fs.writeFileSync(path.join(root, 'a.ts'), 'export const a = 1;\n');
    saved = process.env.REPO_DISCUSS_FILE_INDEX;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.REPO_DISCUSS_FILE_INDEX;
    else process.env.REPO_DISCUSS_FILE_INDEX = saved;
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Whether warming the folder's toolbox built its warm file index (the engine says so in the server's log). */
  async function warmIndexBuilt(): Promise<boolean> {
    const logs: string[] = [];
    // An empty map builder: no symbol thread for a test of the search settings.
    const access = createRepoAccess({ ripgrepPath: null, log: (message) => logs.push(message), repoMaps: new RepoMaps(async () => undefined) });
    const { toolbox } = await access.bind(root, []);
    await toolbox.warm?.();
    return logs.some((message) => message.startsWith(`The warm file index of ${root} is ready`));
  }

  it('keeps a warm file index, and none with REPO_DISCUSS_FILE_INDEX=off', async () => {
    delete process.env.REPO_DISCUSS_FILE_INDEX;
    assert.equal(await warmIndexBuilt(), true);
    process.env.REPO_DISCUSS_FILE_INDEX = 'off';
    assert.equal(await warmIndexBuilt(), false);
  });
});

import * as assert from 'node:assert/strict';
import { searchSettings } from '../../../server/src/read/repoAccess';

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

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startFakeOpenAI } from '../../support/fakeOpenAI';
import { activeDiscussion, afterSettingsPush, replyScript, sendAndWait, setUp, updateSetting, type Harness } from './harness';

describe('settings and SecretStorage', () => {
  let h: Harness;
  before(async () => {
    h = await setUp();
  });

  it('a changed endpoint setting reaches the running server: the next turn goes to the new endpoint', async () => {
    const second = await startFakeOpenAI({ models: ['second-model'], fallback: replyScript });
    try {
      const discussion = await activeDiscussion(h.ext);
      const firstBefore = h.fake.completionRequests.length;
      await afterSettingsPush(h.ext, () => updateSetting('endpoint.baseUrl', second.baseUrl));
      await sendAndWait(h.ext, discussion, 'Which endpoint answers now?');
      assert.equal(second.completionRequests.length, 1);
      assert.equal(h.fake.completionRequests.length, firstBefore);
    } finally {
      await afterSettingsPush(h.ext, () => updateSetting('endpoint.baseUrl', h.fake.baseUrl));
      await second.close();
    }
  });

  it('the API key in SecretStorage reaches the endpoint as a bearer token and is never written to settings', async () => {
    const key = 'sk-test-4f1c-not-a-real-key';
    const discussion = await activeDiscussion(h.ext);
    // The store "Set API key" writes to.
    await afterSettingsPush(h.ext, () => h.ext.context.secrets.store('repoDiscuss.apiKey', key));
    try {
      const before = h.fake.completionRequests.length;
      await sendAndWait(h.ext, discussion, 'Is the key sent?');
      assert.equal(h.fake.completionRequests[before].headers.authorization, `Bearer ${key}`);

      const settingsFile = path.join(h.folder.uri.fsPath, '.vscode', 'settings.json');
      assert.doesNotMatch(fs.readFileSync(settingsFile, 'utf8'), new RegExp(key));
      const inspected = JSON.stringify(vscode.workspace.getConfiguration('repoDiscuss'));
      assert.doesNotMatch(inspected, new RegExp(key));
    } finally {
      await afterSettingsPush(h.ext, () => h.ext.context.secrets.delete('repoDiscuss.apiKey'));
    }
  });
});

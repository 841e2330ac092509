import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { activeDiscussion, once, ofType, sendAndWait, setUp, type Harness } from './harness';

describe('restarting the server', () => {
  let h: Harness;
  before(async () => {
    h = await setUp();
  });

  it('resumes the open discussion with its whole history, without a gap or a duplicate event', async () => {
    const discussion = await activeDiscussion(h.ext);
    await sendAndWait(h.ext, discussion, 'Remember the word pelican.');
    const seqBefore = discussion.lastSeq;

    const running = once(h.ext.server.onDidChangeState);
    await vscode.commands.executeCommand('repoDiscuss.restartServer');
    assert.equal(await running, 'running', 'a new server process started');
    assert.equal(h.ext.server.isRunning, true);
    assert.equal(h.ext.hub.get(discussion.id), discussion, 'the window still holds the same discussion');

    const requestsBefore = h.fake.completionRequests.length;
    await sendAndWait(h.ext, discussion, 'Which word did I ask you to remember?');
    // The new server process read the history back from disk and sent all of it.
    const request = h.fake.completionRequests[requestsBefore];
    const userTexts = (request.body?.messages ?? []).filter((m) => m.role === 'user').map((m) => String(m.content));
    assert.ok(userTexts.includes('Remember the word pelican.'), `history sent after the restart: ${JSON.stringify(userTexts)}`);
    assert.equal(ofType(discussion.events, 'assistant_message').at(-1)?.text, 'Echo: Which word did I ask you to remember?');

    const seqs = discussion.events.map((e) => e.seq);
    assert.ok(discussion.lastSeq > seqBefore);
    assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), 'events are in order, each once');
  });
});

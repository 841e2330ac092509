import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { createGate } from '../../support/fakeOpenAI';
import { DISTILLED, activeDiscussion, ofType, sendAndWait, setUp, until, updateSetting, type Harness } from './harness';

describe('a discussion against the fake OpenAI-compatible endpoint', () => {
  let h: Harness;
  before(async () => {
    h = await setUp();
  });

  it('"Discuss this repo" opens a discussion of the open folder', async () => {
    const before = h.ext.hub.all().length;
    await vscode.commands.executeCommand('repoDiscuss.discussRepo');
    const discussion = await h.ext.activeDiscussion({ create: false });
    assert.ok(discussion, 'a discussion is active');
    assert.equal(h.ext.hub.all().length, before + 1);
    assert.equal(discussion.repo, h.folder.uri.fsPath);
    assert.equal(discussion.answering, false);
  });

  it('streams the reply into the discussion before the turn completes', async () => {
    const discussion = await activeDiscussion(h.ext);
    const gate = createGate();
    h.fake.push({ kind: 'gate', deltas: ['Totals are ', 'rounded '], gate, then: { kind: 'text', deltas: ['per line.'] } });
    const start = discussion.lastSeq;
    await h.ext.send(discussion, 'How are totals rounded?');
    await gate.reached;
    // Deltas that reach the server together come as one event: wait for the text.
    await until(discussion, (events) => ofType(events.filter((e) => e.seq > start), 'assistant_delta').map((e) => e.text).join('') === 'Totals are rounded ');
    const mid = discussion.events.filter((e) => e.seq > start);
    assert.equal(ofType(mid, 'turn_complete').length, 0, 'the turn is still running while the deltas arrive');
    assert.equal(discussion.answering, true);
    assert.equal(ofType(mid, 'assistant_delta').map((e) => e.text).join(''), 'Totals are rounded ');

    gate.release();
    await until(discussion, (events) => ofType(events.filter((e) => e.seq > start), 'turn_complete').length === 1);
    const turn = discussion.events.filter((e) => e.seq > start);
    assert.deepEqual(ofType(turn, 'assistant_message').map((e) => e.text), ['Totals are rounded per line.']);
    assert.equal(discussion.answering, false);
  });

  it("runs the model's read-only tools in the bundled server: read_file, grep_files and find_files", async () => {
    const discussion = await activeDiscussion(h.ext);
    h.fake.push(
      {
        kind: 'toolCalls',
        calls: [
          { id: 'call_read', name: 'read_file', arguments: JSON.stringify({ path: 'src/invoice.ts' }) },
          { id: 'call_grep', name: 'grep_files', arguments: JSON.stringify({ pattern: 'TODO' }) },
          { id: 'call_find', name: 'find_files', arguments: JSON.stringify({ pattern: '**/*.ts' }) },
        ],
      },
      { kind: 'text', text: 'The TODO is in src/invoice.ts.' },
    );
    const start = discussion.lastSeq;
    await sendAndWait(h.ext, discussion, 'Where is the TODO?');
    const results = ofType(discussion.events.filter((e) => e.seq > start), 'tool_result');
    assert.deepEqual(results.map((r) => [r.tool, r.ok]), [['read_file', true], ['grep_files', true], ['find_files', true]]);
    assert.match(results[0].preview, /export function total/);
    assert.match(results[1].preview, /src\/invoice\.ts:7/);
    assert.match(results[2].preview, /src\/invoice\.ts/);
  });

  it('cancel stops a reply mid-stream, ends the turn and drops the connection to the endpoint', async () => {
    const discussion = await activeDiscussion(h.ext);
    h.fake.push({ kind: 'hang', deltas: ['Let me think about '] });
    const start = discussion.lastSeq;
    const disconnects = h.fake.disconnects;
    await h.ext.send(discussion, 'Explain the whole billing flow.');
    await until(discussion, (events) => ofType(events.filter((e) => e.seq > start), 'assistant_delta').length >= 1);
    assert.equal(discussion.answering, true);

    await h.ext.cancel(discussion);
    await until(discussion, (events) => ofType(events.filter((e) => e.seq > start), 'turn_complete').length === 1);
    await h.fake.waitForDisconnect(disconnects + 1);
    assert.equal(discussion.answering, false);
    // The discussion takes the next message as usual.
    await sendAndWait(h.ext, discussion, 'Then just the rounding, please.');
    const last = ofType(discussion.events, 'assistant_message').at(-1);
    assert.equal(last?.text, 'Echo: Then just the rounding, please.');
  });

  it('prepares a coding task from the discussion without starting anything', async () => {
    const discussion = await activeDiscussion(h.ext);
    const editorsBefore = vscode.window.visibleTextEditors.length;
    const requestsBefore = h.fake.completionRequests.length;
    const start = discussion.lastSeq;
    await h.ext.promote(discussion);
    await until(discussion, (events) => ofType(events.filter((e) => e.seq > start), 'task_prepared').length === 1);
    assert.deepEqual(discussion.task, DISTILLED);
    // One distillation request, no turn, no document: preparing starts nothing.
    assert.equal(h.fake.completionRequests.length, requestsBefore + 1);
    assert.equal(ofType(discussion.events.filter((e) => e.seq > start), 'user_message').length, 0);
    assert.equal(vscode.window.visibleTextEditors.length, editorsBefore);
  });

  it('hands the edited task off to a Markdown document', async () => {
    const discussion = await activeDiscussion(h.ext);
    await updateSetting('handoff.target', 'markdown');
    const edited = { intent: DISTILLED.intent, constraints: [DISTILLED.constraints[0], 'Round half away from zero'] };
    const opened = new Promise<vscode.TextEditor>((resolve) => {
      const subscription = vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor?.document.languageId === 'markdown' && editor.document.isUntitled) {
          subscription.dispose();
          resolve(editor);
        }
      });
    });
    await h.ext.handOff(discussion, edited);
    const editor = await opened;
    const text = editor.document.getText();
    assert.match(text, /Round invoice totals to cents once, after summing every line\./);
    assert.match(text, /Round half away from zero/);
    assert.doesNotMatch(text, /Add a test with three lines of 0\.333/, 'the constraint the user removed stays out');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('hands the task off to the clipboard', async () => {
    const discussion = await activeDiscussion(h.ext);
    await updateSetting('handoff.target', 'clipboard');
    await vscode.env.clipboard.writeText('');
    await h.ext.handOff(discussion, DISTILLED);
    const copied = await vscode.env.clipboard.readText();
    assert.match(copied, /Round invoice totals to cents once, after summing every line\./);
    assert.match(copied, /Keep the signature of total\(\) unchanged/);
  });
});

import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { TODO_LINE } from '../fixture';
import { activeDiscussion, ofType, setUp, until, type Harness } from './harness';

describe('the code actions the server offers', () => {
  let h: Harness;
  let document: vscode.TextDocument;
  before(async () => {
    h = await setUp();
    document = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(h.folder.uri, 'src', 'invoice.ts'));
    await vscode.window.showTextDocument(document);
  });

  async function actionsAt(range: vscode.Range): Promise<vscode.CodeAction[]> {
    const actions = await vscode.commands.executeCommand<Array<vscode.CodeAction | vscode.Command>>(
      'vscode.executeCodeActionProvider',
      document.uri,
      range,
    );
    // Only ours: other extensions may offer their own.
    return (actions ?? []).filter(
      (a): a is vscode.CodeAction => 'command' in a && typeof a.command === 'object' && a.command.command.startsWith('repoDiscuss.'),
    );
  }

  it('offers "Discuss selection" and "Promote to task" on a selection', async () => {
    const actions = await actionsAt(new vscode.Range(5, 0, 8, 1));
    assert.deepEqual(actions.map((a) => a.title).sort(), ['Discuss selection', 'Promote to task']);
    const location = actions[0].command!.arguments![0] as { text: string; kind: string };
    assert.equal(location.kind, 'selection');
    assert.match(location.text, /export function total/);
  });

  it('offers "Promote TODO to task" on a TODO comment, and running it brings the TODO into the discussion', async () => {
    const actions = await actionsAt(new vscode.Range(TODO_LINE, 4, TODO_LINE, 4));
    assert.deepEqual(actions.map((a) => a.title), ['Promote TODO to task']);

    const discussion = await activeDiscussion(h.ext);
    const start = discussion.lastSeq;
    const { command, arguments: args } = actions[0].command!;
    await vscode.commands.executeCommand(command, ...(args ?? []));
    await until(discussion, (events) => ofType(events.filter((e) => e.seq > start), 'turn_complete').length === 1);
    const sent = ofType(discussion.events.filter((e) => e.seq > start), 'user_message');
    assert.equal(sent.length, 1);
    assert.match(sent[0].text, /src\/invoice\.ts:7-7/);
    assert.match(sent[0].text, /TODO: round to cents once/);
  });

  it('offers nothing on a line that is neither selected nor a TODO', async () => {
    assert.deepEqual(await actionsAt(new vscode.Range(1, 2, 1, 2)), []);
  });
});

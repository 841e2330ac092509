import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { ListRequest, ModelsRequest } from '../../../shared/protocol';
import { EXTENSION_ID, setUp, type Harness } from './harness';

describe('Repo Discuss in a real VS Code extension host', () => {
  let h: Harness;
  before(async () => {
    h = await setUp();
  });

  it('activates and returns its RepoDiscussExtension instance', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.equal(extension.isActive, true);
    assert.equal(extension.exports, h.ext);
    assert.ok(h.ext.hub, 'the instance exposes its discussion hub');
    assert.ok(h.ext.server, 'the instance exposes its server client');
  });

  it('registers every command it contributes in package.json', async () => {
    const contributed = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.commands as Array<{ command: string }>).map(
      (c) => c.command,
    );
    assert.ok(contributed.length >= 15, `package.json contributes ${contributed.length} commands`);
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(contributed.filter((id) => !registered.has(id)), [], 'contributed but not registered');
  });

  it('its language client reaches the server process, which reaches the configured endpoint', async () => {
    assert.equal(h.ext.server.isRunning, true);
    const list = await h.ext.hub.request(ListRequest.method, {});
    assert.ok(Array.isArray(list.discussions) && Array.isArray(list.saved));
    const models = await h.ext.hub.request(ModelsRequest.method, {});
    assert.deepEqual(models.models.map((m) => m.id), ['fake-model']);
  });
});

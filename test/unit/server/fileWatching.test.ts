import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileChangeType, type ClientCapabilities, type Connection, type DidChangeWatchedFilesParams } from 'vscode-languageserver';
import { silentLogger, type RepoAccess } from '../../../server/src/core/deps';
import { watchWorkspaceFiles } from '../../../server/src/fileWatching';
import type { FileChange, WatchedFolder } from '../../../server/src/symbols/fileChanges';

/**
 * How the server asks a client to watch its workspace folders and passes the
 * reports on (fileWatching.ts), against a stand-in connection that records
 * what the server asks and answers as VS Code would.
 */
describe('the file watcher the server asks its client for', () => {
  let base: string;
  let folder: string;

  const WATCHING_CLIENT: ClientCapabilities = { workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, configuration: true, didChangeConfiguration: { dynamicRegistration: true } } };

  function connectionAnswering(settings: () => unknown) {
    const registered: Array<{ method: string; options: unknown }> = [];
    let onFiles: ((params: DidChangeWatchedFilesParams) => void) | undefined;
    let onSettings: (() => void) | undefined;
    let answered!: () => void;
    const configurationAsked = new Promise<void>((resolve) => (answered = resolve));
    const connection = {
      client: {
        register: async (type: { method: string }, options: unknown) => {
          registered.push({ method: type.method, options });
          return { dispose() {} };
        },
      },
      workspace: {
        getConfiguration: async (items: Array<{ scopeUri: string; section: string }>) => {
          answered();
          return items.map(() => settings());
        },
      },
      onDidChangeWatchedFiles: (handler: (params: DidChangeWatchedFilesParams) => void) => (onFiles = handler),
      onDidChangeConfiguration: (handler: () => void) => (onSettings = handler),
    } as unknown as Connection;
    return { connection, registered, configurationAsked, files: (params: DidChangeWatchedFilesParams) => onFiles?.(params), settingsChanged: () => onSettings?.() };
  }

  function recordingRepos() {
    const told: WatchedFolder[][] = [];
    const changes: FileChange[][] = [];
    const waiters: Array<() => void> = [];
    const repos: RepoAccess = {
      bind: () => Promise.reject(new Error('not bound in this test')),
      watchFolders: (folders) => {
        told.push(folders);
        waiters.splice(0).forEach((wake) => wake());
      },
      noteFileChanges: (reported) => changes.push(reported),
    };
    const nextTell = (): Promise<void> => new Promise((resolve) => waiters.push(resolve));
    return { repos, told, changes, nextTell };
  }

  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-watching-'));
    folder = path.join(base, 'folder');
    fs.mkdirSync(folder);
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('registers one watcher for every file of the workspace and tells the index which folders it covers, by their real paths', async () => {
    const link = path.join(base, 'link');
    fs.symlinkSync(folder, link);
    const client = connectionAnswering(() => ({ '**/.git/objects/**': true }));
    const { repos, told, nextTell } = recordingRepos();
    const toldOnce = nextTell();
    assert.ok(watchWorkspaceFiles(client.connection, WATCHING_CLIENT, () => [link], () => repos, silentLogger));
    await toldOnce;
    assert.deepEqual(client.registered[0], { method: 'workspace/didChangeWatchedFiles', options: { watchers: [{ globPattern: '**/*' }] } });
    assert.deepEqual(told, [[{ path: link, realPath: fs.realpathSync(folder), complete: true }]]);
  });

  it("marks a folder whose watcher excludes hide more than the walk skips as not completely watched, and reads the setting again when it changes", async () => {
    let excludes: Record<string, boolean> = { '**/generated/**': true };
    const client = connectionAnswering(() => excludes);
    const { repos, told, nextTell } = recordingRepos();
    const first = nextTell();
    watchWorkspaceFiles(client.connection, WATCHING_CLIENT, () => [folder], () => repos, silentLogger);
    await first;
    assert.equal(told[0][0].complete, false);
    excludes = {};
    const second = nextTell();
    client.settingsChanged();
    await second;
    assert.equal(told[1][0].complete, true);
  });

  it("trusts no client's reports as complete unless it answers VS Code's watcher excludes", async () => {
    for (const [capabilities, settings] of [
      [WATCHING_CLIENT, null],
      [{ workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } }, {}],
    ] as const) {
      const client = connectionAnswering(() => settings);
      const { repos, told, nextTell } = recordingRepos();
      const toldOnce = nextTell();
      watchWorkspaceFiles(client.connection, capabilities, () => [folder], () => repos, silentLogger);
      await toldOnce;
      assert.equal(told[0][0].complete, false);
    }
  });

  it('tells the index the newest answer of the settings, not an older one that came back later', async () => {
    const answers: Array<(excludes: unknown) => void> = [];
    const client = connectionAnswering(() => ({}));
    (client.connection.workspace as unknown as { getConfiguration: unknown }).getConfiguration = (items: unknown[]) =>
      new Promise((resolve) => answers.push((excludes) => resolve(items.map(() => excludes))));
    const { repos, told, nextTell } = recordingRepos();
    watchWorkspaceFiles(client.connection, WATCHING_CLIENT, () => [folder], () => repos, silentLogger);
    while (answers.length < 1) await new Promise((resolve) => setImmediate(resolve));
    client.settingsChanged();
    while (answers.length < 2) await new Promise((resolve) => setImmediate(resolve));
    const newest = nextTell();
    answers[1]({ '**/generated/**': true }); // the newer settings, answered first
    await newest;
    answers[0]({}); // the older ones, answered last
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(told.map((folders) => folders[0].complete), [false]);
  });

  it('passes reported changes on as paths with their kind, leaving out what is not a file: URI', async () => {
    const client = connectionAnswering(() => ({}));
    const { repos, changes, nextTell } = recordingRepos();
    const told = nextTell();
    watchWorkspaceFiles(client.connection, WATCHING_CLIENT, () => [folder], () => repos, silentLogger);
    await told;
    const file = path.join(folder, 'a.ts');
    client.files({
      changes: [
        { uri: pathToFileURL(file).href, type: FileChangeType.Changed },
        { uri: pathToFileURL(path.join(folder, 'b.ts')).href, type: FileChangeType.Created },
        { uri: pathToFileURL(path.join(folder, 'c.ts')).href, type: FileChangeType.Deleted },
        { uri: 'untitled:Untitled-1', type: FileChangeType.Changed },
      ],
    });
    assert.deepEqual(changes, [
      [
        { path: file, kind: 'changed' },
        { path: path.join(folder, 'b.ts'), kind: 'created' },
        { path: path.join(folder, 'c.ts'), kind: 'deleted' },
      ],
    ]);
  });

  it('asks nothing of a client that cannot watch files, whose folders the index keeps walking', () => {
    const client = connectionAnswering(() => ({}));
    const { repos, told } = recordingRepos();
    assert.equal(watchWorkspaceFiles(client.connection, {}, () => [folder], () => repos, silentLogger), undefined);
    assert.deepEqual(client.registered, []);
    assert.deepEqual(told, []);
  });
});

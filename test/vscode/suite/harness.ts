/**
 * What every extension-host test shares: the activated extension (its
 * `activate()` returns the RepoDiscussExtension instance), one fake
 * OpenAI-compatible endpoint running inside the extension host, and ways to
 * wait on events rather than on time.
 */
import { isDeepStrictEqual } from 'node:util';
import * as vscode from 'vscode';
import type { ClientDiscussion } from '../../../client/src/common/discussionHub';
import type { RepoDiscussExtension } from '../../../client/src/vscode/repoDiscuss';
import type { DiscussionEvent } from '../../../shared/protocol';
import { startFakeOpenAI, type FakeOpenAI } from '../../support/fakeOpenAI';
import { replyScript } from '../fakeScript';

export { DISTILLED, replyScript } from '../fakeScript';

export const EXTENSION_ID = 'repo-discuss.repo-discuss';

export interface Harness {
  ext: RepoDiscussExtension;
  fake: FakeOpenAI;
  folder: vscode.WorkspaceFolder;
}

let harness: Promise<Harness> | undefined;
let fakeToClose: FakeOpenAI | undefined;

/** Activates the extension and points it at the fake endpoint, once for the whole run. */
export function setUp(): Promise<Harness> {
  harness ??= (async () => {
    const extension = vscode.extensions.getExtension<RepoDiscussExtension>(EXTENSION_ID);
    if (!extension) throw new Error(`${EXTENSION_ID} is not loaded in this extension host.`);
    const ext = await extension.activate();
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) throw new Error('The suite needs the fixture folder open in the workbench.');
    const fake = await startFakeOpenAI({ models: ['fake-model'], fallback: replyScript });
    fakeToClose = fake;
    // The endpoint reaches the server the way a user's would: through the
    // workspace's settings.json, which the extension pushes to its server.
    await afterSettingsPush(ext, () => updateSetting('endpoint.baseUrl', fake.baseUrl));
    return { ext, fake, folder };
  })();
  return harness;
}

export async function stopHarness(): Promise<void> {
  await fakeToClose?.close();
}

/** Resolves on the next firing of `event`. */
export function once<T>(event: vscode.Event<T>): Promise<T> {
  return new Promise((resolve) => {
    const subscription = event((value) => {
      subscription.dispose();
      resolve(value);
    });
  });
}

/** Runs `change` and resolves once the extension has pushed the resulting settings to its server. */
export async function afterSettingsPush(ext: RepoDiscussExtension, change: () => Thenable<unknown>): Promise<void> {
  const pushed = once(ext.server.onDidPushSettings);
  await change();
  await pushed;
}

/** Sets a repoDiscuss.* workspace setting and resolves once the extension host sees the new value. */
export async function updateSetting(key: string, value: unknown): Promise<void> {
  const config = () => vscode.workspace.getConfiguration('repoDiscuss');
  let subscription: vscode.Disposable | undefined;
  const changed = new Promise<void>((resolve) => {
    subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`repoDiscuss.${key}`)) resolve();
    });
  });
  try {
    await config().update(key, value, vscode.ConfigurationTarget.Workspace);
    if (!isDeepStrictEqual(config().get(key), value)) await changed;
  } finally {
    subscription?.dispose();
  }
}

/** Resolves once the discussion's events satisfy `test` (checked now and on every new batch). */
export function until(discussion: ClientDiscussion, test: (events: DiscussionEvent[]) => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (test(discussion.events)) return resolve();
    const detach = discussion.attach(() => {
      if (!test(discussion.events)) return;
      detach();
      resolve();
    }, discussion.lastSeq);
  });
}

export function ofType<T extends DiscussionEvent['type']>(events: DiscussionEvent[], type: T): Array<Extract<DiscussionEvent, { type: T }>> {
  return events.filter((e) => e.type === type) as Array<Extract<DiscussionEvent, { type: T }>>;
}

/** Sends `text` through the extension and resolves when that turn has completed. */
export async function sendAndWait(ext: RepoDiscussExtension, discussion: ClientDiscussion, text: string): Promise<void> {
  const before = ofType(discussion.events, 'turn_complete').length;
  await ext.send(discussion, text);
  await until(discussion, (events) => ofType(events, 'turn_complete').length > before);
}

/** The window's discussion, started with "Discuss this repo" when there is none yet. */
export async function activeDiscussion(ext: RepoDiscussExtension): Promise<ClientDiscussion> {
  const existing = await ext.activeDiscussion({ create: false });
  if (existing) return existing;
  await vscode.commands.executeCommand('repoDiscuss.discussRepo');
  const started = await ext.activeDiscussion({ create: false });
  if (!started) throw new Error('"Discuss this repo" did not open a discussion.');
  return started;
}

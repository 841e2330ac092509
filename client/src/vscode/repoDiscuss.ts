import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  DeleteRequest,
  ExportRequest,
  ModelsRequest,
  RenameRequest,
  type DiscussionSummary,
  type PreparedTask,
} from '../../../shared/protocol';
import { locationMessage } from '../../../shared/locationMessage';
import type { CodeLocation } from '../../../shared/protocol';
import { DiscussionHub, type ClientDiscussion } from '../common/discussionHub';
import { listDiscussionsOf, noDiscussionsMessage } from '../common/savedDiscussions';
import { renderTaskMarkdown, renderTaskText } from '../common/taskText';
import { ChatController, chatWebviewOptions, type ChatHost } from './chatController';
import { ServerClient } from './serverClient';
import { ENDPOINT_PRESETS, SECTION, onApiKeyChange, readSettings, storeApiKey, type HandoffTarget } from './settings';

export const VIEW_ID = 'repoDiscuss.chat';
export const PANEL_TYPE = 'repoDiscuss.chatPanel';
const ACTIVE_KEY = 'repoDiscuss.activeDiscussion';

type CodeLocationArg = CodeLocation;

/**
 * The extension's state for one window: the server connection, the
 * discussions it shows, and the views. Extension-lifetime disposables live
 * here; server-lifetime ones live in ServerClient.
 */
export class RepoDiscussExtension implements ChatHost, vscode.WebviewViewProvider, vscode.WebviewPanelSerializer {
  readonly hub = new DiscussionHub();
  readonly log: vscode.LogOutputChannel;
  readonly server: ServerClient;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly controllers = new Set<ChatController>();
  private readonly status: vscode.StatusBarItem;
  private active: ClientDiscussion | undefined;
  private stopStatusWatch: (() => void) | undefined;

  // Public for the extension-host tests, which reach its SecretStorage.
  constructor(readonly context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('Repo Discuss', { log: true });
    this.server = new ServerClient(context, this.hub, this.log);
    this.status = vscode.window.createStatusBarItem('repoDiscuss.status', vscode.StatusBarAlignment.Right, 100);
    this.status.name = 'Repo Discuss';
    this.status.command = 'repoDiscuss.selectModel';
    this.disposables.push(this.log, this.server, this.status);
  }

  get extensionUri(): vscode.Uri {
    return this.context.extensionUri;
  }

  activate(): void {
    const register = (id: string, run: (...args: never[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, (...args: never[]) => this.guard(id, () => run(...args))));
    register('repoDiscuss.discussRepo', () => this.discussRepo());
    register('repoDiscuss.newDiscussion', () => this.newDiscussion());
    register('repoDiscuss.promote', () => this.promoteActive());
    register('repoDiscuss.openSaved', () => this.openSaved());
    register('repoDiscuss.selectModel', () => this.selectModel());
    register('repoDiscuss.selectEndpoint', () => this.selectEndpoint());
    register('repoDiscuss.setApiKey', () => this.setApiKey());
    register('repoDiscuss.export', () => this.exportActive());
    register('repoDiscuss.close', () => this.closeActive());
    register('repoDiscuss.showLogs', () => this.log.show());
    register('repoDiscuss.openSettings', () => vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${this.context.extension.id}`));
    register('repoDiscuss.restartServer', () => this.server.restart('requested by the user'));
    register('repoDiscuss.openInEditor', () => this.openPanel());
    register('repoDiscuss.discussSelection', (location?: CodeLocationArg) => this.discussLocation(location, false));
    register('repoDiscuss.promoteLocation', (location?: CodeLocationArg) => this.discussLocation(location, true));

    this.disposables.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, this, { webviewOptions: { retainContextWhenHidden: false } }),
      vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, this),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SECTION)) void this.server.pushSettings().catch((err) => this.log.warn(String(err)));
      }),
      onApiKeyChange(this.context.secrets, () => void this.server.pushSettings().catch((err) => this.log.warn(String(err)))),
      this.server.onDidChangeState((state) => this.updateStatus(state === 'running' ? undefined : 'stopped')),
    );
    // The server also serves the code actions, so it starts once VS Code has
    // settled rather than on first use; it holds no discussion until asked.
    void this.server.ensureStarted().then(
      () => this.restoreActive(),
      (err) => this.log.error(`the server did not start: ${String(err)}`),
    );
  }

  // ---- ChatHost ----------------------------------------------------------

  async activeDiscussion(options: { create: boolean }): Promise<ClientDiscussion | undefined> {
    if (this.active && this.hub.get(this.active.id)) return this.active;
    const restored = await this.restoreActive();
    if (restored || !options.create) return restored;
    return this.startDiscussion();
  }

  async send(discussion: ClientDiscussion, text: string): Promise<void> {
    await this.server.ensureStarted();
    await this.hub.send(discussion.id, text);
  }

  async cancel(discussion: ClientDiscussion): Promise<void> {
    await this.hub.cancel(discussion.id);
  }

  async promote(discussion: ClientDiscussion): Promise<void> {
    await vscode.window.withProgress(
      { location: { viewId: VIEW_ID }, title: 'Preparing the coding task…' },
      () => this.hub.promote(discussion.id),
    );
  }

  /** The one step that leads to work, and only when the user presses it. */
  async handOff(discussion: ClientDiscussion, task: PreparedTask): Promise<string> {
    const settings = readSettings();
    const target = settings.handoffTarget;
    const context = { repo: discussion.repo, files: [...discussion.groundedFiles], discussionId: discussion.id };
    const text = renderTaskText(task, context);
    await this.deliver(target, text, renderTaskMarkdown(task, context), settings.handoffCommand);
    await this.hub.consumeTask(discussion.id, target, task);
    return handedOffMessage(target);
  }

  private async deliver(target: HandoffTarget, text: string, markdown: string, command: string): Promise<void> {
    switch (target) {
      case 'chat':
        await vscode.commands.executeCommand('workbench.action.chat.open', { query: text, mode: 'agent' });
        return;
      case 'markdown': {
        const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: markdown });
        await vscode.window.showTextDocument(doc, { preview: false });
        return;
      }
      case 'clipboard':
        await vscode.env.clipboard.writeText(text);
        return;
      case 'command':
        // A workspace-configured command in an untrusted folder could be anything.
        if (!vscode.workspace.isTrusted) {
          throw new Error('Handing off to a command is disabled in an untrusted folder. Trust the folder, or pick another hand-off target.');
        }
        if (!command) {
          throw new Error('Hand-off target "command" needs a command id in the setting repoDiscuss.handoff.command.');
        }
        await vscode.commands.executeCommand(command, text);
        return;
    }
  }

  async newDiscussion(): Promise<void> {
    const discussion = await this.startDiscussion();
    if (discussion) await this.reveal();
  }

  // ---- views ---------------------------------------------------------------

  resolveWebviewView(view: vscode.WebviewView): void {
    const controller = this.track(new ChatController(view.webview, this));
    view.onDidDispose(() => this.untrack(controller));
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel): Promise<void> {
    panel.webview.options = chatWebviewOptions(this.extensionUri);
    const controller = this.track(new ChatController(panel.webview, this));
    panel.onDidDispose(() => this.untrack(controller));
  }

  private openPanel(): void {
    const panel = vscode.window.createWebviewPanel(PANEL_TYPE, 'Repo Discuss', vscode.ViewColumn.Beside, {
      ...chatWebviewOptions(this.extensionUri),
      retainContextWhenHidden: false,
    });
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.svg');
    const controller = this.track(new ChatController(panel.webview, this));
    panel.onDidDispose(() => this.untrack(controller));
    if (this.active) controller.show(this.active);
  }

  private track(controller: ChatController): ChatController {
    this.controllers.add(controller);
    return controller;
  }

  private untrack(controller: ChatController): void {
    controller.dispose();
    this.controllers.delete(controller);
  }

  private async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }

  private setActive(discussion: ClientDiscussion): void {
    this.active = discussion;
    void this.context.workspaceState.update(ACTIVE_KEY, { id: discussion.id, repo: discussion.repo });
    for (const controller of this.controllers) controller.show(discussion);
    this.stopStatusWatch?.();
    this.stopStatusWatch = discussion.attach(() => this.updateStatus(), discussion.lastSeq);
    this.updateStatus();
  }

  private updateStatus(problem?: string): void {
    const d = this.active;
    if (problem) {
      this.status.text = '$(warning) Repo Discuss';
      this.status.tooltip = 'The Repo Discuss server is not running. Click to pick a model once it restarts.';
    } else if (!d) {
      this.status.hide();
      return;
    } else {
      const model = d.model ?? 'auto';
      this.status.text = d.answering ? `$(loading~spin) ${model}` : `$(comment-discussion) ${model}`;
      this.status.tooltip = d.answering ? `Repo Discuss is answering with ${model}` : `Repo Discuss model: ${model} (click to change)`;
    }
    this.status.show();
  }

  // ---- discussions ---------------------------------------------------------

  /** After a window reload: bring back the discussion this window had open. */
  private async restoreActive(): Promise<ClientDiscussion | undefined> {
    const saved = this.context.workspaceState.get<{ id: string; repo: string }>(ACTIVE_KEY);
    if (!saved) return undefined;
    const known = this.hub.get(saved.id);
    if (known) return known;
    try {
      await this.server.ensureStarted();
      const discussion = await this.hub.open({ folder: saved.repo, resumeId: saved.id });
      this.setActive(discussion);
      return discussion;
    } catch (err) {
      this.log.warn(`could not resume ${saved.id}: ${err instanceof Error ? err.message : String(err)}`);
      await this.context.workspaceState.update(ACTIVE_KEY, undefined);
      return undefined;
    }
  }

  private async startDiscussion(folder?: vscode.WorkspaceFolder): Promise<ClientDiscussion | undefined> {
    const chosen = folder ?? (await this.pickFolder());
    if (!chosen) return undefined;
    await this.server.ensureStarted();
    const model = readSettings().model;
    const discussion = await this.hub.open({ folder: chosen.uri.fsPath, ...(model ? { model } : {}) });
    this.setActive(discussion);
    return discussion;
  }

  private async pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) {
      void vscode.window.showErrorMessage('Repo Discuss needs an open folder: open the repository you want to discuss (File › Open Folder).');
      return undefined;
    }
    if (folders.length === 1) return folders[0];
    return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which folder do you want to discuss?' });
  }

  private async discussRepo(): Promise<void> {
    await this.startDiscussion();
    await this.reveal();
  }

  private async promoteActive(): Promise<void> {
    const discussion = await this.activeDiscussion({ create: false });
    if (!discussion) {
      void vscode.window.showInformationMessage('Start a discussion first (Repo Discuss: Discuss this repo), then prepare the task.');
      return;
    }
    await this.reveal();
    await this.promote(discussion);
  }

  /** "Discuss selection" and "Promote to task" from the code actions. */
  private async discussLocation(location: CodeLocationArg | undefined, promote: boolean): Promise<void> {
    const where = location ?? this.editorLocation();
    if (!where) {
      void vscode.window.showInformationMessage('Select some code (or put the cursor on a TODO comment) first.');
      return;
    }
    const uri = vscode.Uri.parse(where.uri);
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    if (!folder) {
      void vscode.window.showErrorMessage('That file is not inside an open workspace folder, so a discussion cannot read it.');
      return;
    }
    let discussion = await this.activeDiscussion({ create: false });
    if (!discussion || discussion.repo !== folder.uri.fsPath) discussion = await this.startDiscussion(folder);
    if (!discussion) return;
    await this.reveal();
    const text = locationMessage(where, discussion.repo, promote);
    await this.send(discussion, text);
  }

  private editorLocation(): CodeLocationArg | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.selection.isEmpty) return undefined;
    const s = editor.selection;
    return {
      uri: editor.document.uri.toString(),
      range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
      text: editor.document.getText(s),
      kind: 'selection',
    };
  }

  /**
   * What "Open saved discussion" offers: the discussions of this window's
   * folders, not every folder's the server has saved (another folder's
   * discussion belongs in that folder's window). Public for the
   * extension-host tests.
   */
  async discussionsOfWindow(): Promise<DiscussionSummary[]> {
    await this.server.ensureStarted();
    return listDiscussionsOf(
      windowFolders().map((folder) => folder.uri.fsPath),
      (method, params) => this.hub.request(method, params),
    );
  }

  private async openSaved(): Promise<void> {
    const rows = await this.discussionsOfWindow();
    if (rows.length === 0) {
      void vscode.window.showInformationMessage(noDiscussionsMessage(windowFolders().map((folder) => folder.name)));
      return;
    }
    type Item = vscode.QuickPickItem & { row: DiscussionSummary };
    const items: Item[] = rows.map((row) => ({
      label: row.title || '(untitled)',
      description: `${path.basename(row.repo)} · ${age(row.updatedAt ?? row.createdAt)}`,
      detail: `${row.turns} turn${row.turns === 1 ? '' : 's'} · ${row.repo}`,
      row,
      buttons: [
        { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename' },
        { iconPath: new vscode.ThemeIcon('export'), tooltip: 'Export as Markdown' },
        { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete' },
      ],
    }));
    const pick = vscode.window.createQuickPick<Item>();
    pick.items = items;
    pick.placeholder = 'Open a saved discussion';
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.onDidTriggerItemButton(async ({ item, button }) => {
      const id = item.row.discussionId;
      try {
        if (button.tooltip === 'Rename') {
          const title = await vscode.window.showInputBox({ prompt: 'New title', value: item.row.title });
          if (title) await this.rename(id, item.row, title);
        } else if (button.tooltip === 'Export as Markdown') {
          await this.exportDiscussion(id);
        } else if (button.tooltip === 'Delete') {
          const ok = await vscode.window.showWarningMessage(`Delete "${item.label}"? This cannot be undone.`, { modal: true }, 'Delete');
          if (ok) {
            await this.hub.request(DeleteRequest.method, { discussionId: id });
            this.hub.forget(id);
            pick.items = pick.items.filter((i) => i !== item);
          }
        }
      } catch (err) {
        void vscode.window.showErrorMessage(`Repo Discuss: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    const chosen = await new Promise<Item | undefined>((resolve) => {
      pick.onDidAccept(() => resolve(pick.selectedItems[0]));
      pick.onDidHide(() => resolve(undefined));
      pick.show();
    });
    pick.dispose();
    if (!chosen) return;
    const existing = this.hub.get(chosen.row.discussionId);
    const discussion = existing ?? (await this.hub.open({ folder: chosen.row.repo, resumeId: chosen.row.discussionId }));
    this.setActive(discussion);
    await this.reveal();
  }

  private async rename(id: string, row: DiscussionSummary, title: string): Promise<void> {
    if (!this.hub.get(id)) await this.hub.open({ folder: row.repo, resumeId: id });
    await this.hub.request(RenameRequest.method, { discussionId: id, title });
  }

  private async selectModel(): Promise<void> {
    await this.server.ensureStarted();
    let models: string[] = [];
    try {
      models = (await this.hub.request(ModelsRequest.method, {})).models.map((m) => m.id);
    } catch (err) {
      this.log.warn(`listing models failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const current = readSettings().model || 'auto';
    const items: vscode.QuickPickItem[] = [
      { label: 'auto', description: "the endpoint's default" },
      ...models.map((id) => ({ label: id })),
    ].map((item) => ({ ...item, picked: item.label === current, detail: item.label === current ? 'current' : undefined }));
    const pick = vscode.window.createQuickPick();
    pick.items = items;
    pick.placeholder = models.length ? 'Pick a model, or type one' : 'The endpoint did not list its models: type a model id';
    const chosen = await new Promise<string | undefined>((resolve) => {
      pick.onDidAccept(() => resolve(pick.selectedItems[0]?.label ?? pick.value.trim()));
      pick.onDidHide(() => resolve(undefined));
      pick.show();
    });
    pick.dispose();
    if (!chosen) return;
    const value = chosen === 'auto' ? '' : chosen;
    await vscode.workspace.getConfiguration(SECTION).update('model', value, vscode.ConfigurationTarget.Global);
    // The open discussion switches too: it is resumed with the new choice.
    const active = this.active;
    if (active && !active.answering) {
      await this.hub.close(active.id);
      const reopened = await this.hub.open({ folder: active.repo, resumeId: active.id, model: value || 'auto' });
      this.setActive(reopened);
    }
  }

  private async selectEndpoint(): Promise<void> {
    const pick = await vscode.window.showQuickPick(
      [...ENDPOINT_PRESETS.map((p) => ({ label: p.label, description: p.baseUrl, detail: p.detail, baseUrl: p.baseUrl })), { label: 'Custom…', baseUrl: '' }],
      { placeHolder: 'Which OpenAI-compatible endpoint?' },
    );
    if (!pick) return;
    const baseUrl = pick.baseUrl || (await vscode.window.showInputBox({ prompt: 'Base URL of the OpenAI-compatible endpoint', placeHolder: 'http://localhost:8000/v1' }));
    if (!baseUrl) return;
    await vscode.workspace.getConfiguration(SECTION).update('endpoint.baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
  }

  private async setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      prompt: 'API key for the model endpoint (stored in VS Code secret storage; leave empty to remove it)',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    await storeApiKey(this.context.secrets, key.trim());
    void vscode.window.showInformationMessage(key.trim() ? 'Repo Discuss: API key saved.' : 'Repo Discuss: API key removed.');
  }

  private async exportActive(): Promise<void> {
    const discussion = await this.activeDiscussion({ create: false });
    if (!discussion) {
      void vscode.window.showInformationMessage('There is no discussion to export yet.');
      return;
    }
    await this.exportDiscussion(discussion.id);
  }

  private async exportDiscussion(id: string): Promise<void> {
    const result = await this.hub.request(ExportRequest.method, { discussionId: id, format: 'markdown' });
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: result.text });
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  private async closeActive(): Promise<void> {
    const discussion = this.active;
    if (!discussion) return;
    await this.hub.close(discussion.id);
    this.active = undefined;
    this.stopStatusWatch?.();
    await this.context.workspaceState.update(ACTIVE_KEY, undefined);
    for (const controller of this.controllers) controller.post({ type: 'detached', message: 'The discussion was closed. Start a new one, or open a saved one.' });
    this.updateStatus();
  }

  /** Every command's errors end up in front of the user, with the log for detail. */
  private async guard(id: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log.error(`${id}: ${message}`);
      const choice = await vscode.window.showErrorMessage(`Repo Discuss: ${message}`, 'Show logs');
      if (choice) this.log.show();
    }
  }

  dispose(): void {
    this.stopStatusWatch?.();
    for (const controller of this.controllers) controller.dispose();
    this.controllers.clear();
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
  }
}

/** The window's folders on disk; the server reads nothing else. */
function windowFolders(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file');
}

function handedOffMessage(target: HandoffTarget): string {
  switch (target) {
    case 'chat':
      return 'Task handed to chat in agent mode.';
    case 'markdown':
      return 'Task opened as a Markdown document.';
    case 'clipboard':
      return 'Task copied to the clipboard.';
    case 'command':
      return 'Task handed to the configured command.';
  }
}

function age(epochMs: number): string {
  const minutes = Math.round((Date.now() - epochMs) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return `${Math.round(hours / 24)} d ago`;
}

import * as vscode from 'vscode';
import {
  DeleteRequest,
  FilesRequest,
  SymbolsRequest,
  type SymbolSuggestion,
  type Attachment,
  ExportRequest,
  ModelsRequest,
  RenameRequest,
  ReviewRequest,
  type DiscussionSummary,
  type PreparedTask,
} from '../../../shared/protocol';
import { locationMessage } from '../../../shared/locationMessage';
import { NO_VSCODE_MODELS_REMEDY, VSCODE_MODEL_PREFIX, type CodeLocation } from '../../../shared/protocol';
import { DiscussionHub, type ClientDiscussion } from '../common/discussionHub';
import { listDiscussionsOf, noDiscussionsMessage } from '../common/savedDiscussions';
import { folderRelativePath } from '../common/pathInFolder';
import { renderTaskMarkdown, renderTaskText } from '../common/taskText';
import { ChatController, chatWebviewOptions, type ChatHost } from './chatController';
import { registerCommands, type CommandHandlers } from './commands';
import { deliverTask } from './handoff';
import { VSCODE_MODELS_SOURCE, pickEndpoint, pickFolder, pickModel, pickSavedDiscussion, promptApiKey, windowFolders, type ModelChoice } from './pickers';
import { listVscodeModels, vscodeModelId } from './languageModels';
import { defaultModelFor } from '../common/modelSource';
import { ServerClient } from './serverClient';
import { SECTION, onApiKeyChange, readApiKey, readSettings, storeApiKey } from './settings';
import { DiscussionStatusBar } from './statusBar';
import { errorText } from '../../../shared/errorText';

export const VIEW_ID = 'repoDiscuss.chat';
export const PANEL_TYPE = 'repoDiscuss.chatPanel';
const ACTIVE_KEY = 'repoDiscuss.activeDiscussion';

/**
 * The extension's state for one window: the server connection, the
 * discussions it shows, and the views. Extension-lifetime disposables live
 * here; server-lifetime ones live in ServerClient.
 */
export class RepoDiscussExtension implements ChatHost, CommandHandlers, vscode.WebviewViewProvider, vscode.WebviewPanelSerializer {
  readonly hub = new DiscussionHub();
  readonly log: vscode.LogOutputChannel;
  readonly server: ServerClient;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly controllers = new Set<ChatController>();
  private readonly status = new DiscussionStatusBar();
  private active: ClientDiscussion | undefined;
  private stopStatusWatch: (() => void) | undefined;

  // Public for the extension-host tests, which reach its SecretStorage.
  constructor(readonly context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('Repo Discuss', { log: true });
    this.server = new ServerClient(context, this.hub, this.log);
    this.disposables.push(this.log, this.server, this.status);
  }

  get extensionUri(): vscode.Uri {
    return this.context.extensionUri;
  }

  activate(): void {
    this.disposables.push(...registerCommands(this, (id, run) => this.guard(id, run)));
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, this, { webviewOptions: { retainContextWhenHidden: false } }),
      vscode.window.registerWebviewPanelSerializer(PANEL_TYPE, this),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SECTION)) void this.server.pushSettings().catch((err) => this.log.warn(String(err)));
      }),
      onApiKeyChange(this.context.secrets, () => void this.server.pushSettings().catch((err) => this.log.warn(String(err)))),
      this.server.onDidChangeState((state) => this.status.show(this.active, state !== 'running')),
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

  async send(discussion: ClientDiscussion, text: string, attachments: Attachment[] = []): Promise<void> {
    await this.server.ensureStarted();
    await this.hub.send(discussion.id, text, attachments);
  }

  async files(discussion: ClientDiscussion, query: string): Promise<string[]> {
    return (await this.hub.request(FilesRequest.method, { discussionId: discussion.id, query })).files;
  }

  async symbols(discussion: ClientDiscussion, query: string): Promise<SymbolSuggestion[]> {
    return (await this.hub.request(SymbolsRequest.method, { discussionId: discussion.id, query })).symbols;
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

  async review(discussion: ClientDiscussion, base?: string): Promise<void> {
    await vscode.window.withProgress(
      { location: { viewId: VIEW_ID }, title: 'Reviewing the implementation…' },
      () => this.hub.request(ReviewRequest.method, base ? { discussionId: discussion.id, base } : { discussionId: discussion.id }),
    );
  }

  /** The one step that leads to work, and only when the user presses it. */
  async handOff(discussion: ClientDiscussion, task: PreparedTask): Promise<string> {
    const settings = readSettings();
    const target = settings.handoffTarget;
    const context = { repo: discussion.repo, files: [...discussion.groundedFiles], discussionId: discussion.id };
    const text = renderTaskText(task, context);
    const done = await deliverTask(target, text, renderTaskMarkdown(task, context), settings.handoffCommand);
    await this.hub.consumeTask(discussion.id, target, task);
    return done;
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

  openInEditor(): void {
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
    this.stopStatusWatch = discussion.attach(() => {
      this.status.show(this.active);
      this.updateHandedOffContext(discussion);
    }, discussion.lastSeq);
    this.status.show(discussion);
    this.updateHandedOffContext(discussion);
  }

  /** `repoDiscuss.handedOff` enables "Review implementation" in the palette. */
  private updateHandedOffContext(discussion: ClientDiscussion | undefined): void {
    const handedOff = discussion !== undefined && discussion.events.some((event) => event.type === 'task_handed_off');
    void vscode.commands.executeCommand('setContext', 'repoDiscuss.handedOff', handedOff);
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
      this.log.warn(`could not resume ${saved.id}: ${errorText(err)}`);
      await this.context.workspaceState.update(ACTIVE_KEY, undefined);
      return undefined;
    }
  }

  private async startDiscussion(folder?: vscode.WorkspaceFolder): Promise<ClientDiscussion | undefined> {
    const chosen = folder ?? (await pickFolder());
    if (!chosen) return undefined;
    await this.server.ensureStarted();
    const settings = readSettings();
    const model = defaultModelFor(
      { model: settings.model, baseUrl: settings.baseUrl, hasApiKey: !!(await readApiKey(this.context.secrets)) },
      await listVscodeModels(),
    );
    const discussion = await this.hub.open({ folder: chosen.uri.fsPath, ...(model ? { model } : {}) });
    this.setActive(discussion);
    return discussion;
  }

  async discussRepo(): Promise<void> {
    await this.startDiscussion();
    await this.reveal();
  }

  async promoteActive(): Promise<void> {
    const discussion = await this.activeDiscussion({ create: false });
    if (!discussion) {
      void vscode.window.showInformationMessage('Start a discussion first (Repo Discuss: Discuss this repo), then prepare the task.');
      return;
    }
    await this.reveal();
    await this.promote(discussion);
  }

  /** The palette's "Review implementation": an optional base, then the same request as the panel's button. */
  async reviewActive(): Promise<void> {
    const discussion = await this.activeDiscussion({ create: false });
    if (!discussion || !discussion.events.some((event) => event.type === 'task_handed_off')) {
      void vscode.window.showInformationMessage('Hand off a coding task first (Prepare coding task, then Hand off), then review its implementation.');
      return;
    }
    const base = await vscode.window.showInputBox({
      title: 'Review implementation',
      prompt: 'Compare from which commit, branch or tag? Leave empty for the commit recorded at hand-off.',
      placeHolder: 'the commit recorded at hand-off',
      ignoreFocusOut: true,
    });
    if (base === undefined) return;
    await this.reveal();
    await this.review(discussion, base.trim() || undefined);
  }

  /** "Discuss selection" and "Promote to task" from the code actions. */
  async discussLocation(location: CodeLocation | undefined, promote: boolean): Promise<void> {
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
    if (!promote) {
      // The selection becomes a chip in the input, read through the read
      // boundary when the user sends; the question is theirs to type.
      const attachment = selectionAttachment(where, discussion.repo);
      if (attachment) {
        for (const controller of this.controllers) if (controller.current === discussion) controller.post({ type: 'addAttachment', attachment });
        return;
      }
    }
    const text = locationMessage(where, discussion.repo, promote);
    await this.send(discussion, text);
  }

  private editorLocation(): CodeLocation | undefined {
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

  async openSaved(): Promise<void> {
    const rows = await this.discussionsOfWindow();
    if (rows.length === 0) {
      void vscode.window.showInformationMessage(noDiscussionsMessage(windowFolders().map((folder) => folder.name)));
      return;
    }
    const chosen = await pickSavedDiscussion(rows, {
      rename: (row, title) => this.rename(row, title),
      export: (row) => this.exportDiscussion(row.discussionId),
      delete: async (row) => {
        await this.hub.request(DeleteRequest.method, { discussionId: row.discussionId });
        this.hub.forget(row.discussionId);
      },
    });
    if (!chosen) return;
    const existing = this.hub.get(chosen.discussionId);
    const discussion = existing ?? (await this.hub.open({ folder: chosen.repo, resumeId: chosen.discussionId }));
    this.setActive(discussion);
    await this.reveal();
  }

  private async rename(row: DiscussionSummary, title: string): Promise<void> {
    const id = row.discussionId;
    if (!this.hub.get(id)) await this.hub.open({ folder: row.repo, resumeId: id });
    await this.hub.request(RenameRequest.method, { discussionId: id, title });
  }

  async selectModel(): Promise<void> {
    await this.server.ensureStarted();
    let models: ModelChoice[] = [];
    try {
      // VS Code's models are listed below, with their names, straight from vscode.lm.
      models = (await this.hub.request(ModelsRequest.method, {})).models.filter((m) => !m.id.startsWith(VSCODE_MODEL_PREFIX)).map((m) => ({ id: m.id }));
    } catch (err) {
      this.log.warn(`listing models failed: ${errorText(err)}`);
    }
    models.push(...(await listVscodeModels()).map((m) => ({ id: vscodeModelId(m), label: m.name, description: `${m.vendor} · ${m.family} · VS Code language model` })));
    const chosen = await pickModel(models, this.active?.model ?? (readSettings().model || 'auto'));
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

  async selectEndpoint(): Promise<void> {
    const baseUrl = await pickEndpoint();
    if (!baseUrl) return;
    if (baseUrl === VSCODE_MODELS_SOURCE) {
      if ((await listVscodeModels()).length === 0) {
        void vscode.window.showErrorMessage(`Repo Discuss: VS Code offers no language models. ${NO_VSCODE_MODELS_REMEDY}.`);
        return;
      }
      return this.selectModel();
    }
    await vscode.workspace.getConfiguration(SECTION).update('endpoint.baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
  }

  async setApiKey(): Promise<void> {
    const key = await promptApiKey();
    if (key === undefined) return;
    await storeApiKey(this.context.secrets, key.trim());
    void vscode.window.showInformationMessage(key.trim() ? 'Repo Discuss: API key saved.' : 'Repo Discuss: API key removed.');
  }

  showLogs(): void {
    this.log.show();
  }

  openSettings(): Thenable<unknown> {
    return vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${this.context.extension.id}`);
  }

  restartServer(): Promise<void> {
    return this.server.restart('requested by the user');
  }

  async exportActive(): Promise<void> {
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

  async closeActive(): Promise<void> {
    const discussion = this.active;
    if (!discussion) return;
    await this.hub.close(discussion.id);
    this.active = undefined;
    this.stopStatusWatch?.();
    await this.context.workspaceState.update(ACTIVE_KEY, undefined);
    this.updateHandedOffContext(undefined);
    for (const controller of this.controllers) controller.post({ type: 'detached', message: 'The discussion was closed. Start a new one, or open a saved one.' });
    this.status.show(undefined);
  }

  /** Every command's errors end up in front of the user, with the log for detail. */
  private async guard(id: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (err) {
      const message = errorText(err);
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

/** A code action's location as a selection chip, folder-relative; undefined outside the folder. */
function selectionAttachment(where: CodeLocation, repo: string): Attachment | undefined {
  const file = vscode.Uri.parse(where.uri);
  if (file.scheme !== 'file') return undefined;
  const relative = folderRelativePath(repo, file.fsPath);
  if (relative === undefined) return undefined;
  const { start, end } = where.range;
  const endLine = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
  return { kind: 'selection', path: relative, startLine: start.line + 1, endLine };
}

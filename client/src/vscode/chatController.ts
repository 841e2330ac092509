import * as vscode from 'vscode';
import { DeleteDecisionRequest, EditDecisionRequest, replyTo, type Attachment, type SymbolSuggestion, type DiscussionEvent, type ExtensionToWebview, type WebviewToExtension } from '../../../shared/protocol';
import type { ClientDiscussion, DiscussionHub } from '../common/discussionHub';
import { pathInFolder } from '../common/pathInFolder';
import { makeNonce, renderPanelHtml } from '../panel/html';
import { ActiveEditorReporter } from './activeEditor';
import { errorText } from '../../../shared/errorText';

/** What a chat webview asks of the extension beyond its own discussion. */
export interface ChatHost {
  readonly extensionUri: vscode.Uri;
  /** The discussion this view should show: the active one, resumed or started as needed. */
  activeDiscussion(options: { create: boolean }): Promise<ClientDiscussion | undefined>;
  send(discussion: ClientDiscussion, text: string, attachments?: Attachment[]): Promise<void>;
  /** The folder's files matching `query`, for the panel's `@` completion. */
  files(discussion: ClientDiscussion, query: string): Promise<string[]>;
  /** The folder's symbols matching `query`, for the panel's `@` completion. */
  symbols(discussion: ClientDiscussion, query: string): Promise<SymbolSuggestion[]>;
  cancel(discussion: ClientDiscussion): Promise<void>;
  promote(discussion: ClientDiscussion): Promise<void>;
  /** Reviews the implementation since the last hand-off (discuss/review); the panel shows the `review` event. */
  review(discussion: ClientDiscussion, base?: string): Promise<void>;
  /** Delivers the task to the configured target; resolves to what to tell the user. */
  handOff(discussion: ClientDiscussion, task: { intent: string; constraints: string[] }): Promise<string>;
  newDiscussion(): Promise<void>;
  /** Requests the panel forwards as they are (the decision log's edits). */
  readonly hub: Pick<DiscussionHub, 'request'>;
  log: vscode.LogOutputChannel;
}

/** The webview options every chat view uses: scripts on, local files only from media/. */
export function chatWebviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    // Only the panel's own assets: nothing in the workspace, nothing remote.
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media')],
    enableCommandUris: false,
  };
}

/**
 * Binds one webview (the sidebar view or an editor panel) to the active
 * discussion: forwards its events, carries out what the webview asks, and
 * re-attaches from the webview's cursor whenever it reloads.
 */
export class ChatController implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private detach: (() => void) | undefined;
  private discussion: ClientDiscussion | undefined;
  private readonly activeEditor: ActiveEditorReporter;

  constructor(
    private readonly webview: vscode.Webview,
    private readonly host: ChatHost,
  ) {
    webview.options = chatWebviewOptions(host.extensionUri);
    webview.html = this.html();
    this.disposables.push(webview.onDidReceiveMessage((message: WebviewToExtension) => void this.receive(message)));
    this.activeEditor = new ActiveEditorReporter(() => this.discussion?.repo, (attachment) => this.post({ type: 'activeEditor', attachment }));
    this.disposables.push(this.activeEditor);
  }

  /** Shows `discussion` in this webview (a new or another discussion was chosen). */
  show(discussion: ClientDiscussion): void {
    this.bind(discussion, undefined, -1);
  }

  get current(): ClientDiscussion | undefined {
    return this.discussion;
  }

  post(message: ExtensionToWebview): void {
    void this.webview.postMessage(message);
  }

  private bind(discussion: ClientDiscussion, webviewHas: string | undefined, lastSeq: number): void {
    this.detach?.();
    this.discussion = discussion;
    const reset = webviewHas !== discussion.id;
    this.post({ type: 'attached', discussionId: discussion.id, repo: discussion.repo, model: discussion.model, reset });
    this.detach = discussion.attach((events: DiscussionEvent[]) => {
      this.post({ type: 'events', events });
      this.post({ type: 'status', answering: discussion.answering, model: discussion.model });
    }, reset ? -1 : lastSeq);
    this.post({ type: 'status', answering: discussion.answering, model: discussion.model });
    this.post({ type: 'activeEditor', attachment: this.activeEditor.current() });
  }

  private async receive(message: WebviewToExtension): Promise<void> {
    try {
      switch (message.type) {
        case 'ready': {
          const discussion = this.discussion ?? (await this.host.activeDiscussion({ create: false }));
          if (discussion) this.bind(discussion, message.discussionId, message.lastSeq);
          break;
        }
        case 'send': {
          const discussion = this.discussion ?? (await this.host.activeDiscussion({ create: true }));
          if (!discussion) return;
          if (discussion !== this.discussion) this.bind(discussion, undefined, -1);
          await this.host.send(discussion, message.text, validAttachments(message.attachments));
          break;
        }
        case 'files': {
          const discussion = this.discussion;
          let files: string[] = [];
          try {
            if (discussion && typeof message.query === 'string') files = await this.host.files(discussion, message.query);
          } catch (err) {
            this.host.log.warn(`chat: listing files failed: ${errorText(err)}`);
          }
          this.post(replyTo(message, { files }));
          break;
        }
        case 'symbols': {
          const discussion = this.discussion;
          let symbols: SymbolSuggestion[] = [];
          try {
            if (discussion && typeof message.query === 'string') symbols = await this.host.symbols(discussion, message.query);
          } catch (err) {
            this.host.log.warn(`chat: listing symbols failed: ${errorText(err)}`);
          }
          this.post(replyTo(message, { symbols }));
          break;
        }
        case 'cancel':
          if (this.discussion) await this.host.cancel(this.discussion);
          break;
        case 'promote':
          if (this.discussion) await this.host.promote(this.discussion);
          break;
        case 'review':
          if (this.discussion) await this.host.review(this.discussion);
          break;
        case 'handOff':
          if (!this.discussion) return;
          try {
            this.post(replyTo(message, { ok: true, message: await this.host.handOff(this.discussion, message.task) }));
          } catch (err) {
            this.post(replyTo(message, { ok: false, message: errorText(err) }));
          }
          break;
        case 'insertCode':
          await this.insertCode(message.code);
          break;
        case 'openExternal':
          await this.openExternal(message.url);
          break;
        case 'newDiscussion':
          await this.host.newDiscussion();
          break;
        case 'runCommand':
          await vscode.commands.executeCommand(COMMAND_FOR_ACTION[message.command]);
          break;
        case 'openFile':
          await this.openFile(message.path, message.line);
          break;
        case 'editDecision':
          // The log on screen changes when the server's decision_recorded event arrives.
          if (this.discussion && typeof message.id === 'string' && typeof message.text === 'string') {
            await this.host.hub.request(EditDecisionRequest.method, { discussionId: this.discussion.id, id: message.id, text: message.text });
          }
          break;
        case 'deleteDecision':
          if (this.discussion && typeof message.id === 'string') {
            await this.host.hub.request(DeleteDecisionRequest.method, { discussionId: this.discussion.id, id: message.id });
          }
          break;
        default:
          break;
      }
    } catch (err) {
      const text = errorText(err);
      this.host.log.warn(`chat: ${message.type} failed: ${text}`);
      this.post({ type: 'notice', level: 'error', message: text });
    }
  }

  /**
   * Opens a path the model cited, only when it resolves inside the
   * discussion's folder: model output must never steer the editor elsewhere.
   */
  private async openFile(requested: string, line?: number): Promise<void> {
    const discussion = this.discussion;
    if (!discussion || typeof requested !== 'string') return;
    const target = await pathInFolder(discussion.repo, requested);
    if (!target.ok) {
      const message = target.why === 'outside' ? `${requested} leads outside this discussion's folder.` : `${requested} does not exist in ${discussion.repo}.`;
      this.post({ type: 'notice', level: 'error', message });
      return;
    }
    const uri = vscode.Uri.file(target.realPath);
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position), preview: true });
  }

  private async insertCode(code: string): Promise<void> {
    const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!editor || typeof code !== 'string') {
      this.post({ type: 'notice', level: 'info', message: 'Open an editor and place the cursor where the code should go.' });
      return;
    }
    await editor.edit((edit) => {
      for (const selection of editor.selections) edit.replace(selection, code);
    });
  }

  /** Only web links leave through here; anything else a reply names is ignored. */
  private async openExternal(url: string): Promise<void> {
    let parsed: vscode.Uri;
    try {
      parsed = vscode.Uri.parse(url, true);
    } catch {
      return;
    }
    if (parsed.scheme !== 'http' && parsed.scheme !== 'https') return;
    await vscode.env.openExternal(parsed);
  }

  private html(): string {
    const media = (...parts: string[]) => this.webview.asWebviewUri(vscode.Uri.joinPath(this.host.extensionUri, 'media', ...parts));
    return renderPanelHtml({
      cspSource: this.webview.cspSource,
      nonce: makeNonce(),
      scriptUri: media('dist', 'chat.js').toString(),
      styleUri: media('chat.css').toString(),
      codiconsUri: media('dist', 'codicon.css').toString(),
      title: 'Repo Discuss',
    });
  }

  dispose(): void {
    this.detach?.();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

const COMMAND_FOR_ACTION: Record<Extract<WebviewToExtension, { type: 'runCommand' }>['command'], string> = {
  setApiKey: 'repoDiscuss.setApiKey',
  selectModel: 'repoDiscuss.selectModel',
  openSettings: 'repoDiscuss.openSettings',
  showLogs: 'repoDiscuss.showLogs',
};

/** What the webview sent as attachments, kept only where each has the shape the server expects (it checks again). */
function validAttachments(value: unknown): Attachment[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (a): a is Attachment =>
      !!a && typeof a === 'object' && (a.kind === 'file' || a.kind === 'selection' || a.kind === 'symbol') && typeof a.path === 'string',
  );
}

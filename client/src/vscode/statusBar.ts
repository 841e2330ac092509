import * as vscode from 'vscode';
import type { ClientDiscussion } from '../common/discussionHub';

/** The status bar item: the active discussion's model, whether it is answering, or a stopped server. */
export class DiscussionStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('repoDiscuss.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Repo Discuss';
    this.item.command = 'repoDiscuss.selectModel';
  }

  show(discussion: ClientDiscussion | undefined, serverStopped = false): void {
    if (serverStopped) {
      this.item.text = '$(warning) Repo Discuss';
      this.item.tooltip = 'The Repo Discuss server is not running. Click to pick a model once it restarts.';
    } else if (!discussion) {
      this.item.hide();
      return;
    } else {
      const model = discussion.model ?? 'auto';
      this.item.text = discussion.answering ? `$(loading~spin) ${model}` : `$(comment-discussion) ${model}`;
      this.item.tooltip = discussion.answering ? `Repo Discuss is answering with ${model}` : `Repo Discuss model: ${model} (click to change)`;
    }
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

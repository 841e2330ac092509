import * as vscode from 'vscode';
import type { HandoffTarget } from './settings';

/**
 * Delivers a prepared task's text to where the user's settings say. It is
 * the one step that leads to work, and runs only when the user presses Hand
 * off; it resolves to what to tell the user.
 */
export async function deliverTask(target: HandoffTarget, text: string, markdown: string, command: string): Promise<string> {
  switch (target) {
    case 'chat':
      await vscode.commands.executeCommand('workbench.action.chat.open', { query: text, mode: 'agent' });
      return 'Task handed to chat in agent mode.';
    case 'markdown': {
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: markdown });
      await vscode.window.showTextDocument(doc, { preview: false });
      return 'Task opened as a Markdown document.';
    }
    case 'clipboard':
      await vscode.env.clipboard.writeText(text);
      return 'Task copied to the clipboard.';
    case 'command':
      // A workspace-configured command in an untrusted folder could be anything.
      if (!vscode.workspace.isTrusted) {
        throw new Error('Handing off to a command is disabled in an untrusted folder. Trust the folder, or pick another hand-off target.');
      }
      if (!command) {
        throw new Error('Hand-off target "command" needs a command id in the setting repoDiscuss.handoff.command.');
      }
      await vscode.commands.executeCommand(command, text);
      return 'Task handed to the configured command.';
  }
}

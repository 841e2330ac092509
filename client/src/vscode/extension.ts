import type * as vscode from 'vscode';
import { RepoDiscussExtension } from './repoDiscuss';

let extension: RepoDiscussExtension | undefined;

export function activate(context: vscode.ExtensionContext): RepoDiscussExtension {
  extension = new RepoDiscussExtension(context);
  context.subscriptions.push(extension);
  extension.activate();
  // Returned for the extension-host tests, which drive it directly.
  return extension;
}

export async function deactivate(): Promise<void> {
  // Stop the server cleanly so it releases its discussions' leases.
  await extension?.server.stop();
  extension = undefined;
}

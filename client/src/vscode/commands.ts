import * as vscode from 'vscode';
import type { CodeLocation } from '../../../shared/protocol';

/** What each contributed command runs; the ids are those of package.json's `contributes.commands`. */
export interface CommandHandlers {
  discussRepo(): unknown;
  newDiscussion(): unknown;
  promoteActive(): unknown;
  reviewActive(): unknown;
  openSaved(): unknown;
  selectModel(): unknown;
  selectEndpoint(): unknown;
  setApiKey(): unknown;
  exportActive(): unknown;
  closeActive(): unknown;
  showLogs(): unknown;
  openSettings(): unknown;
  restartServer(): unknown;
  openInEditor(): unknown;
  discussLocation(location: CodeLocation | undefined, promote: boolean): unknown;
}

/**
 * Registers every command, each behind `guard` so its errors reach the user.
 * Returns the registrations to dispose.
 */
export function registerCommands(handlers: CommandHandlers, guard: (id: string, run: () => unknown) => Promise<void>): vscode.Disposable[] {
  const table: Array<[string, (...args: never[]) => unknown]> = [
    ['repoDiscuss.discussRepo', () => handlers.discussRepo()],
    ['repoDiscuss.newDiscussion', () => handlers.newDiscussion()],
    ['repoDiscuss.promote', () => handlers.promoteActive()],
    ['repoDiscuss.reviewImplementation', () => handlers.reviewActive()],
    ['repoDiscuss.openSaved', () => handlers.openSaved()],
    ['repoDiscuss.selectModel', () => handlers.selectModel()],
    ['repoDiscuss.selectEndpoint', () => handlers.selectEndpoint()],
    ['repoDiscuss.setApiKey', () => handlers.setApiKey()],
    ['repoDiscuss.export', () => handlers.exportActive()],
    ['repoDiscuss.close', () => handlers.closeActive()],
    ['repoDiscuss.showLogs', () => handlers.showLogs()],
    ['repoDiscuss.openSettings', () => handlers.openSettings()],
    ['repoDiscuss.restartServer', () => handlers.restartServer()],
    ['repoDiscuss.openInEditor', () => handlers.openInEditor()],
    ['repoDiscuss.discussSelection', (location?: CodeLocation) => handlers.discussLocation(location, false)],
    ['repoDiscuss.promoteLocation', (location?: CodeLocation) => handlers.discussLocation(location, true)],
  ];
  return table.map(([id, run]) => vscode.commands.registerCommand(id, (...args: never[]) => guard(id, () => run(...args))));
}

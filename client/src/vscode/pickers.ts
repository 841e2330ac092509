import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DiscussionSummary } from '../../../shared/protocol';
import { ENDPOINT_PRESETS } from './settings';
import { errorText } from '../../../shared/errorText';

/** The window's folders on disk; the server reads nothing else. */
export function windowFolders(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file');
}

/** The folder to discuss: the only one, or the one the user picks. */
export async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showErrorMessage('Repo Discuss needs an open folder: open the repository you want to discuss (File › Open Folder).');
    return undefined;
  }
  if (folders.length === 1) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which folder do you want to discuss?' });
}

/** What a saved discussion's buttons in the picker do; each may throw, and its message is shown. */
export interface SavedDiscussionActions {
  rename(row: DiscussionSummary, title: string): Promise<void>;
  export(row: DiscussionSummary): Promise<void>;
  delete(row: DiscussionSummary): Promise<void>;
}

/** "Open saved discussion": the rows to pick from, with rename, export and delete buttons on each. */
export async function pickSavedDiscussion(rows: DiscussionSummary[], actions: SavedDiscussionActions): Promise<DiscussionSummary | undefined> {
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
    try {
      if (button.tooltip === 'Rename') {
        const title = await vscode.window.showInputBox({ prompt: 'New title', value: item.row.title });
        if (title) await actions.rename(item.row, title);
      } else if (button.tooltip === 'Export as Markdown') {
        await actions.export(item.row);
      } else if (button.tooltip === 'Delete') {
        const ok = await vscode.window.showWarningMessage(`Delete "${item.label}"? This cannot be undone.`, { modal: true }, 'Delete');
        if (ok) {
          await actions.delete(item.row);
          pick.items = pick.items.filter((i) => i !== item);
        }
      }
    } catch (err) {
      void vscode.window.showErrorMessage(`Repo Discuss: ${errorText(err)}`);
    }
  });
  const chosen = await new Promise<Item | undefined>((resolve) => {
    pick.onDidAccept(() => resolve(pick.selectedItems[0]));
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  pick.dispose();
  return chosen?.row;
}

/** One row of Select model: an endpoint model, or a VS Code language model with its vendor and family. */
export interface ModelChoice {
  id: string;
  label?: string;
  description?: string;
}

/** The "VS Code language models" source in Select endpoint. */
export const VSCODE_MODELS_SOURCE = 'vscode-lm';

/** A model id from those listed (the endpoint's and VS Code's), or typed; `auto` is the endpoint's default. */
export async function pickModel(models: ModelChoice[], current: string): Promise<string | undefined> {
  type Item = vscode.QuickPickItem & { id: string };
  const items: Item[] = [
    { id: 'auto', label: 'auto', description: "the endpoint's default" },
    ...models.map((m) => ({ id: m.id, label: m.label ?? m.id, ...(m.description ? { description: m.description } : {}) })),
  ].map((item) => ({ ...item, picked: item.id === current, detail: item.id === current ? 'current' : undefined }));
  const pick = vscode.window.createQuickPick<Item>();
  pick.items = items;
  pick.placeholder = models.length ? 'Pick a model, or type one' : 'No models were listed: type a model id';
  const chosen = await new Promise<string | undefined>((resolve) => {
    pick.onDidAccept(() => resolve(pick.selectedItems[0]?.id ?? pick.value.trim()));
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  pick.dispose();
  return chosen || undefined;
}

/** A base URL from the presets, or typed; or `VSCODE_MODELS_SOURCE` for VS Code's own language models. */
export async function pickEndpoint(): Promise<string | undefined> {
  const pick = await vscode.window.showQuickPick(
    [
      { label: 'VS Code language models', description: 'no key needed', detail: 'The models extensions such as GitHub Copilot provide in VS Code', baseUrl: VSCODE_MODELS_SOURCE },
      ...ENDPOINT_PRESETS.map((p) => ({ label: p.label, description: p.baseUrl, detail: p.detail, baseUrl: p.baseUrl })),
      { label: 'Custom…', baseUrl: '' },
    ],
    { placeHolder: 'Which model source?' },
  );
  if (!pick) return undefined;
  return pick.baseUrl || (await vscode.window.showInputBox({ prompt: 'Base URL of the OpenAI-compatible endpoint', placeHolder: 'http://localhost:8000/v1' })) || undefined;
}

/** The API key typed by the user; empty removes it, undefined means cancelled. */
export function promptApiKey(): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    prompt: 'API key for the model endpoint (stored in VS Code secret storage; leave empty to remove it)',
    password: true,
    ignoreFocusOut: true,
  });
}

function age(epochMs: number): string {
  const minutes = Math.round((Date.now() - epochMs) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return `${Math.round(hours / 24)} d ago`;
}

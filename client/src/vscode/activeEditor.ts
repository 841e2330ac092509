import * as vscode from 'vscode';
import type { Attachment } from '../../../shared/protocol';
import { SECTION } from './settings';
import { folderRelativePath } from '../common/pathInFolder';

/** A selection moving with the mouse fires many events: the panel hears of it once it settles. */
const SELECTION_SETTLE_MS = 250;

/**
 * The active editor's file (and its selection) as the panel's implicit
 * chip: folder-relative, only for a `file:` document inside `repo`, and none
 * when `repoDiscuss.context.includeActiveFile` is off.
 */
export function activeEditorAttachment(repo: string | undefined, editor = vscode.window.activeTextEditor): Attachment | null {
  if (!repo || !editor || editor.document.uri.scheme !== 'file') return null;
  if (!vscode.workspace.getConfiguration(SECTION).get<boolean>('context.includeActiveFile', true)) return null;
  const shown = folderRelativePath(repo, editor.document.uri.fsPath);
  if (shown === undefined) return null;
  const selection = editor.selection;
  if (selection.isEmpty) return { kind: 'file', path: shown };
  // A selection ending at column 0 of a line does not take that line.
  const endLine = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line : selection.end.line + 1;
  return { kind: 'selection', path: shown, startLine: selection.start.line + 1, endLine };
}

/** Reports the active editor's attachment whenever the editor, its selection or the setting changes. */
export class ActiveEditorReporter implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last: string | undefined;
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;

  constructor(
    private readonly repo: () => string | undefined,
    private readonly report: (attachment: Attachment | null) => void,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        // Focusing a chat panel in the editor area leaves no active text
        // editor; the file the user was reading is still what they mean.
        if (editor || !this.lastEditor || !vscode.window.visibleTextEditors.includes(this.lastEditor)) this.lastEditor = editor;
        this.send();
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (event.textEditor !== vscode.window.activeTextEditor) return;
        this.lastEditor = event.textEditor;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.send(), SELECTION_SETTLE_MS);
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SECTION}.context.includeActiveFile`)) this.send();
      }),
    );
  }

  /** The attachment as of now, also remembered as reported (the caller posts it). */
  current(): Attachment | null {
    const attachment = activeEditorAttachment(this.repo(), this.lastEditor);
    this.last = JSON.stringify(attachment);
    return attachment;
  }

  private send(): void {
    const attachment = activeEditorAttachment(this.repo(), this.lastEditor);
    const key = JSON.stringify(attachment);
    if (key === this.last) return;
    this.last = key;
    this.report(attachment);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

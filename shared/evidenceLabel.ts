import { printablePath } from './printablePath';

/**
 * A decision's cited place as every reader is shown it (the system prompt's
 * decision log, the task, the panel, the terminal's /decisions): `path:line`,
 * or the path alone for a whole-file citation. The path is a repository name,
 * shown as tool answers show it (printablePath), so a line break in it cannot
 * start a forged entry wherever the label is printed.
 *
 * No Node imports: the webview bundle uses this module too.
 */
export function evidenceLabel(evidence: { path: string; line?: number }): string {
  const shown = printablePath(evidence.path);
  // Lines are 1-based: a saved log's 0 or null names no line, so the path stands alone.
  return evidence.line ? `${shown}:${evidence.line}` : shown;
}

/**
 * The small repository the extension-host and end-to-end suites open: a few
 * real files to read, a selection to discuss and a TODO comment to promote.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const FIXTURE_FILES: Record<string, string> = {
  'README.md': '# Invoice service\n\nComputes invoice totals for the billing page.\n',
  'src/invoice.ts': [
    'export interface Line {',
    '  price: number;',
    '  quantity: number;',
    '}',
    '',
    'export function total(lines: Line[]): number {',
    '  // TODO: round to cents once, at the end, not per line',
    '  return lines.reduce((sum, line) => sum + Math.round(line.price * line.quantity * 100) / 100, 0);',
    '}',
    '',
  ].join('\n'),
  'package.json': JSON.stringify({ name: 'invoice-service', version: '1.0.0', private: true }, null, 2) + '\n',
};

/** 0-based line of the TODO comment in src/invoice.ts. */
export const TODO_LINE = 6;

/**
 * Writes the fixture into `dir` (its real path is returned: the server
 * reports real paths) with workspace settings that keep discussions out of
 * the user's own storage.
 */
export function createFixtureRepo(dir: string, workspaceSettings: Record<string, unknown> = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(FIXTURE_FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  if (Object.keys(workspaceSettings).length > 0) {
    fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.vscode', 'settings.json'), JSON.stringify(workspaceSettings, null, 2));
  }
  return fs.realpathSync(dir);
}

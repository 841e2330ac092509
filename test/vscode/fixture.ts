/**
 * The small repository the extension-host and end-to-end suites open: a few
 * real files to read, a selection to discuss and a TODO comment to promote,
 * and a small TypeScript project for the symbol tools: a class defined in one
 * file, used from two others and from one the project's policy denies.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What the fixture's `.repo-discuss/policy.json` denies reading: one file that uses Ledger. */
export const DENIED_GLOB = 'src/billing/audit/**';

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
  // A configured project, so the TypeScript server knows every file that uses the class, open or not.
  'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ['src'] }, null, 2) + '\n',
  'src/billing/ledger.ts': [
    'export class Ledger {',
    '  private readonly entries: number[] = [];',
    '',
    '  add(amount: number): void {',
    '    this.entries.push(amount);',
    '  }',
    '',
    '  balance(): number {',
    '    return this.entries.reduce((sum, entry) => sum + entry, 0);',
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/billing/payments.ts': [
    "import { Ledger } from './ledger';",
    '',
    'export function pay(ledger: Ledger, amount: number): void {',
    '  ledger.add(-amount);',
    '}',
    '',
  ].join('\n'),
  'src/billing/refunds.ts': [
    "import { Ledger } from './ledger';",
    '',
    'export function refund(amount: number): Ledger {',
    '  const ledger = new Ledger();',
    '  ledger.add(amount);',
    '  return ledger;',
    '}',
    '',
  ].join('\n'),
  'src/billing/audit/vault.ts': [
    "import { Ledger } from '../ledger';",
    '',
    'export const sealed = new Ledger();',
    '',
  ].join('\n'),
  '.repo-discuss/policy.json': JSON.stringify({ denyRead: [DENIED_GLOB] }, null, 2) + '\n',
};

/** 0-based line of the TODO comment in src/invoice.ts. */
export const TODO_LINE = 6;

/** Where the symbol tools' test starts from: the 1-based line of `new Ledger()` in src/billing/refunds.ts. */
export const LEDGER_USE = { path: 'src/billing/refunds.ts', line: 4 };

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

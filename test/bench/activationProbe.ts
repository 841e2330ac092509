/**
 * Loaded by a VS Code extension host as its `extensionTestsPath` (see
 * activation.ts): waits until Repo Discuss is active, then prints the
 * extension host's own timing marks for it on one console line, which the
 * workbench forwards to the benchmark. It measures nothing itself, so the
 * figures are VS Code's, as "Developer: Show Running Extensions" reports them.
 */
import * as vscode from 'vscode';
import { ACTIVATION_REPORT_PREFIX, EXTENSION_ID, type ActivationReport, type PerformanceMark } from './activationMarks';

/** Where `vs/base/common/performance` keeps its marks in the extension host. */
interface MonacoPerformance {
  getMarks(): PerformanceMark[];
}

export async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  if (!extension) throw new Error(`${EXTENSION_ID} is not loaded in this extension host.`);
  const activatedBy = extension.isActive ? 'startup' : 'probe';
  await extension.activate();
  const performance = (globalThis as { MonacoPerformanceMarks?: MonacoPerformance }).MonacoPerformanceMarks;
  if (!performance) throw new Error('This extension host keeps no performance marks (globalThis.MonacoPerformanceMarks).');
  const report: ActivationReport = {
    vscodeVersion: vscode.version,
    activatedBy,
    marks: performance.getMarks().filter((mark) => mark.name.endsWith(`/${EXTENSION_ID}`)),
  };
  console.log(`${ACTIVATION_REPORT_PREFIX}${JSON.stringify(report)}`);
}

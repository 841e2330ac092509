/**
 * The extension-host suite's entry: VS Code loads this file in the extension
 * host (extensionTestsPath) and treats a rejected `run()` as failure. The same
 * entry serves @vscode/test-electron on desktop and the code-server runner.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import SummaryReporter from '../../support/summaryReporter';
import { stopHarness } from './harness';
import { SUITE_START_MARKER } from './marker';

export async function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    // Generous: a cold server start on a loaded 2-core machine; waits are on events, never on time.
    timeout: 60_000,
    reporter: SummaryReporter,
    reporterOptions: { label: 'extension-host' },
  });
  // Sorted: activation first, then what builds on a running discussion.
  for (const file of fs.readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort()) {
    mocha.addFile(path.join(__dirname, file));
  }
  console.log(SUITE_START_MARKER);
  try {
    const failures = await new Promise<number>((resolve) => mocha.run(resolve));
    if (failures > 0) throw new Error(`${failures} extension-host test${failures === 1 ? '' : 's'} failed.`);
  } finally {
    await stopHarness();
  }
}

/**
 * Runs the extension-host suite in desktop VS Code with @vscode/test-electron,
 * where VS Code can be downloaded (it is cached in .vscode-test/). The suite is
 * the same one runInCodeServer.ts runs in the browser.
 *
 *   npm run build && node out/test/vscode/runDesktop.js
 *   VSCODE_VERSION=stable node out/test/vscode/runDesktop.js     (default: 1.100.3)
 *   On a Linux machine without a display: xvfb-run -a node out/test/vscode/runDesktop.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { QUIET_USER_SETTINGS, REPO_ROOT, writeUserSettings } from './codeServer';
import { createFixtureRepo } from './fixture';
import { FAKE_LM_EXTENSION_DIR, FAKE_LM_EXTENSION_ID } from './fakeLanguageModel';

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-vscode-desktop-'));
  try {
    const workspace = createFixtureRepo(path.join(tmp, 'invoice-service'), {
      // Read when the extension starts its server: discussions stay in this run's folder.
      'repoDiscuss.storageDir': path.join(tmp, 'storage'),
    });
    const userDataDir = path.join(tmp, 'user-data');
    writeUserSettings(userDataDir, QUIET_USER_SETTINGS);
    await runTests({
      // The oldest VS Code the extension supports (engines.vscode), as code-server 4.100.3 runs.
      version: process.env.VSCODE_VERSION ?? '1.100.3',
      // The second is the suite's VS Code language model (a proposed API, allowed below).
      extensionDevelopmentPath: [REPO_ROOT, FAKE_LM_EXTENSION_DIR],
      extensionTestsPath: path.join(REPO_ROOT, 'out', 'test', 'vscode', 'suite', 'index.js'),
      // As runInCodeServer.ts: a change to the symbol index shows only through VS Code's file watcher (symbols.test.ts).
      extensionTestsEnv: { REPO_DISCUSS_SYMBOL_FRESH_MS: String(10 * 60_000) },
      launchArgs: [
        workspace,
        '--user-data-dir', userDataDir,
        '--extensions-dir', path.join(tmp, 'extensions'),
        '--disable-extensions',
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        '--enable-proposed-api', FAKE_LM_EXTENSION_ID,
      ],
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

/**
 * Runs the extension-host suite (test/vscode/suite) inside a real VS Code
 * without a desktop build: code-server serves the workbench, headless
 * Chromium opens it, and the workbench's `payload` URL parameter loads this
 * repository as the extension under development and the suite as its tests,
 * the way VS Code's own remote integration tests run. The suite's `run()`
 * result comes back through `codeAutomationExit` as the exit code.
 *
 *   npm run test:vscode            (builds first)
 *   node out/test/vscode/runInCodeServer.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { format } from 'node:util';
import { chromium } from 'playwright-core';
import {
  CHROMIUM,
  QUIET_USER_SETTINGS,
  REPO_ROOT,
  addUnpackedExtension,
  ensureCodeServer,
  startCodeServer,
  writeUserSettings,
  type RunningCodeServer,
} from './codeServer';
import { createFixtureRepo } from './fixture';
import { CHROMIUM_ARGS } from './browser';
import { SUITE_START_MARKER } from './suite/marker';
import { FAKE_LM_EXTENSION_DIR, FAKE_LM_EXTENSION_ID } from './fakeLanguageModel';

/** Upper bound for the whole suite: a hung workbench must fail the run, not stall CI. */
const SUITE_LIMIT_MS = Number(process.env.VSCODE_SUITE_TIMEOUT_MS ?? 10 * 60_000);
const SUITE_INDEX = path.join(REPO_ROOT, 'out', 'test', 'vscode', 'suite', 'index.js');

async function main(): Promise<number> {
  if (!fs.existsSync(SUITE_INDEX)) throw new Error(`${SUITE_INDEX} is missing: run \`npm run build\` first.`);
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'extension.js'))) throw new Error('dist/extension.js is missing: run `npm run build` first.');
  ensureCodeServer();

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-vscode-suite-'));
  const workspace = createFixtureRepo(path.join(tmp, 'invoice-service'), {
    // Read once, when the extension starts its server: discussions stay in this run's folder.
    'repoDiscuss.storageDir': path.join(tmp, 'storage'),
  });
  const userDataDir = path.join(tmp, 'user-data');
  writeUserSettings(userDataDir, QUIET_USER_SETTINGS);

  const extensionsDir = path.join(tmp, 'extensions');
  // The suite's VS Code language model, installed beside the extension under development.
  addUnpackedExtension(FAKE_LM_EXTENSION_DIR, { extensionsDir });

  let server: RunningCodeServer | undefined;
  let browser: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined;
  try {
    server = await startCodeServer({
      folder: workspace,
      userDataDir,
      extensionsDir,
      // The fake language model's extension uses the proposed provider API.
      enableProposedApi: [FAKE_LM_EXTENSION_ID],
      log: process.env.VERBOSE ? (line) => console.log(`[code-server] ${line}`) : undefined,
      // A symbol index stays fresh for 10 minutes instead of 2 s: a change then shows only through VS Code's file watcher (symbols.test.ts).
      env: { REPO_DISCUSS_SYMBOL_FRESH_MS: String(10 * 60_000) },
    });
    browser = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      // The suite's clipboard hand-off reads back what it wrote: in the web
      // workbench the clipboard is the browser's.
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = browser.pages()[0] ?? (await browser.newPage());

    let reportExit!: (code: number) => void;
    const exited = new Promise<number>((resolve) => (reportExit = resolve));
    // Both must exist before the workbench loads: it looks them up once.
    await page.exposeFunction('codeAutomationExit', (code: number) => reportExit(code));
    // The workbench's log and the extension host's console both arrive here.
    // Everything goes to a log file; the terminal gets the suite's own output,
    // which starts at its marker line (the workbench's start-up chatter,
    // offline marketplace errors included, is noise there).
    const logFile = path.join(REPO_ROOT, 'test-results', 'vscode-extension-host.log');
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    const log = fs.createWriteStream(logFile);
    let suiteStarted = false;
    await page.exposeFunction('codeAutomationLog', (level: string, message: unknown) => {
      const text = Array.isArray(message) ? format(...(message as unknown[])) : String(message);
      log.write(`[${level}] ${text}\n`);
      if (text.includes(SUITE_START_MARKER)) suiteStarted = true;
      else if (suiteStarted || process.env.VERBOSE) console.log(text);
    });
    page.on('pageerror', (error) => console.error(`[workbench] ${error.message}`));

    const authority = `127.0.0.1:${server.port}`;
    const payload = [
      ['extensionDevelopmentPath', `vscode-remote://${authority}${REPO_ROOT}`],
      ['extensionTestsPath', `vscode-remote://${authority}${SUITE_INDEX}`],
      ['skipWelcome', 'true'],
    ];
    await page.goto(server.workbenchUrl(workspace, { payload: JSON.stringify(payload) }));

    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<number>((resolve) => {
      timer = setTimeout(() => {
        console.error(`The extension-host suite did not finish within ${SUITE_LIMIT_MS / 1000} s.`);
        resolve(1);
      }, SUITE_LIMIT_MS);
    });
    const code = await Promise.race([exited, timedOut]);
    clearTimeout(timer);
    return code;
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    console.log(code === 0 ? 'Extension-host suite passed.' : `Extension-host suite failed (exit ${code}).`);
    process.exit(code);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack ?? error.message : error);
    process.exit(1);
  },
);

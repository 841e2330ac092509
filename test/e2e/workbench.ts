/**
 * A real VS Code workbench for the browser suite: the packaged .vsix installed
 * into code-server, opened by headless Chromium on the fixture repository,
 * talking to a fake OpenAI-compatible endpoint in this process.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type FrameLocator, type Locator, type Page } from 'playwright-core';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { CHROMIUM_ARGS } from '../vscode/browser';
import {
  CHROMIUM,
  QUIET_USER_SETTINGS,
  REPO_ROOT,
  ensureCodeServer,
  installExtension,
  packagedVsix,
  startCodeServer,
  writeUserSettings,
  type RunningCodeServer,
} from '../vscode/codeServer';
import { replyScript } from '../vscode/fakeScript';
import { createFixtureRepo } from '../vscode/fixture';

export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-results', 'e2e');

export interface Workbench {
  readonly page: Page;
  readonly fake: FakeOpenAI;
  readonly repo: string;
  /** The chat webview's document. */
  readonly chat: FrameLocator;
  /** Runs a command from the command palette by its full title ("Category: Title"). */
  runCommand(title: string): Promise<void>;
  /** The text of the active editor, as Monaco renders it. */
  activeEditorText(): Promise<string>;
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function openWorkbench(): Promise<Workbench> {
  const vsix = packagedVsix();
  if (!fs.existsSync(vsix)) throw new Error(`${vsix} is missing: run \`npm run package\` first (npm run test:e2e does).`);
  ensureCodeServer();

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-e2e-'));
  const cleanups: Array<() => Promise<unknown> | unknown> = [() => fs.rmSync(tmp, { recursive: true, force: true })];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  };
  try {
    const fake = await startFakeOpenAI({ models: ['fake-model'], fallback: replyScript });
    cleanups.push(() => fake.close());
    const repo = createFixtureRepo(path.join(tmp, 'invoice-service'));
    const userDataDir = path.join(tmp, 'user-data');
    const extensionsDir = path.join(tmp, 'extensions');
    // As a user would configure it: the endpoint in settings.json, the key through "Set API key".
    writeUserSettings(userDataDir, {
      ...QUIET_USER_SETTINGS,
      'repoDiscuss.endpoint.baseUrl': fake.baseUrl,
      'repoDiscuss.storageDir': path.join(tmp, 'storage'),
      'repoDiscuss.handoff.target': 'markdown',
    });
    installExtension(vsix, { userDataDir, extensionsDir });

    const codeServer: RunningCodeServer = await startCodeServer({ folder: repo, userDataDir, extensionsDir });
    cleanups.push(() => codeServer.stop());
    const context: BrowserContext = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1400, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    cleanups.push(() => context.close());
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(codeServer.workbenchUrl(repo));
    await extensionRegistered(page);
    fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });

    return {
      page,
      fake,
      repo,
      chat: page.frameLocator('iframe.webview.ready').frameLocator('#active-frame'),
      async runCommand(title: string) {
        // Focus back on the workbench's own document: keys typed into the
        // chat webview's frame stay there.
        await page.evaluate(() => (document.activeElement as { blur?: () => void } | null)?.blur?.());
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget .quick-input-box input');
        await input.waitFor();
        await input.fill(`>${title}`);
        await page.locator('.quick-input-widget .monaco-list-row.focused', { hasText: title }).waitFor();
        await page.keyboard.press('Enter');
      },
      async activeEditorText() {
        const lines = page.locator('.editor-group-container.active .monaco-editor .view-lines');
        await lines.waitFor();
        return (await lines.innerText()).replace(/\u00a0/g, ' ');
      },
      async screenshot(name: string) {
        await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Resolves once the workbench knows the extension's contributions: its
 * activity bar entry is drawn from them, and so is its part of the command
 * palette, which does not refresh while open.
 */
export async function extensionRegistered(page: Page): Promise<void> {
  await page.locator('.activitybar .action-item a.action-label[aria-label^="Repo Discuss"]').waitFor();
}

/** Text of every turn in the chat, as a person reads it: who said what, in order. */
export async function transcript(chat: FrameLocator): Promise<Array<{ user: string; reply: string }>> {
  const turns = chat.locator('article.turn');
  const out: Array<{ user: string; reply: string }> = [];
  for (const turn of await turns.all()) {
    out.push({ user: await textOf(turn.locator('.user-text')), reply: await textOf(turn.locator('.reply')) });
  }
  return out;
}

async function textOf(locator: Locator): Promise<string> {
  return (await locator.count()) ? (await locator.first().innerText()).trim() : '';
}

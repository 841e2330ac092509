/**
 * Figure 7, extension activation time: how long Repo Discuss keeps the
 * extension host busy when it activates, as VS Code itself records it.
 *
 * The extension is the one that ships: client/bundle.mjs --production into a
 * temporary folder (the repository's dist/ is left as it is). Each run is a
 * fresh workbench in headless Chromium on code-server, so a fresh extension
 * host that has never loaded the extension; the extension host's test runner
 * loads activationProbe.ts, which waits for the activation (onStartupFinished,
 * or its own activate() if that comes first) and prints the host's
 * performance marks for it: require() of dist/extension.js ("code loading")
 * and activate() until its value resolved. Figures are medians over the runs.
 *
 * Without code-server (test/vscode/setup.sh) or Chromium, or when the
 * workbench fails, it falls back to plain Node with a stub `vscode`
 * (activationNodeHost.ts), and says so in `where`, `method` and
 * `fallbackReason`.
 *
 *   const timing = await measureActivation({ runs: 7, log });
 *   if ('unavailable' in timing) … else timing.activationMs, timing.method
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { format } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS } from '../vscode/browser';
import { QUIET_USER_SETTINGS, codeServerInstalled, startCodeServer, writeUserSettings, type RunningCodeServer } from '../vscode/codeServer';
import { createFixtureRepo } from '../vscode/fixture';
import { ACTIVATION_REPORT_PREFIX, sampleFromMarks, type ActivationReport, type ActivationSample } from './activationMarks';
import { median } from './measure';
import { findChromium } from './webviewRender';
import { buildProductionBundle } from './productionBundle';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const PROBE = path.join(__dirname, 'activationProbe.js');
const NODE_HOST = path.join(__dirname, 'activationNodeHost.js');
/** One workbench start on a loaded 2-CPU machine takes seconds; a hung one must not stall the benchmark. */
const RUN_LIMIT_MS = 90_000;

export interface ActivationTiming {
  where: 'extension host' | 'plain Node';
  /** One line: what was loaded, in what, how often, and what the figures cover. */
  method: string;
  runs: number;
  /** Median of code loading plus activate() per run: the figure compared with the 50 ms goal. */
  activationMs: number;
  /** Median require() of dist/extension.js. */
  codeLoadingMs: number;
  /** Median activate(), from the call until its value resolved. */
  activateMs: number;
  /** Size of the production dist/extension.js that was measured. */
  bundleBytes: number;
  samples: ActivationSample[];
  /** Why the extension host was not used, when `where` is 'plain Node'. */
  fallbackReason?: string;
}

export interface ActivationOptions {
  /** Workbench launches (or Node processes) to take the medians over; default 7. */
  runs?: number;
  /** Progress lines (each run is a workbench start of several seconds). */
  log?: (message: string) => void;
  /**
   * An extension folder already built (package.json, dist/, media/) to
   * measure instead of building the current sources: for comparing builds.
   */
  extensionDir?: string;
}

export async function measureActivation(options: ActivationOptions = {}): Promise<ActivationTiming | { unavailable: string }> {
  const runs = Math.max(1, options.runs ?? 7);
  const log = options.log ?? (() => undefined);
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-activation-')));
  try {
    let extensionDir: string;
    let bundleBytes: number;
    try {
      extensionDir = options.extensionDir ? path.resolve(options.extensionDir) : buildShippedExtension(path.join(work, 'extension'));
      bundleBytes = fs.statSync(path.join(extensionDir, 'dist', 'extension.js')).size;
    } catch (error) {
      return { unavailable: `no extension to measure: ${(error as Error).message}` };
    }
    const summarize = (where: ActivationTiming['where'], method: string, samples: ActivationSample[], fallbackReason?: string): ActivationTiming => ({
      where,
      method,
      runs: samples.length,
      activationMs: median(samples.map((s) => s.codeLoadingMs + s.activateMs)),
      codeLoadingMs: median(samples.map((s) => s.codeLoadingMs)),
      activateMs: median(samples.map((s) => s.activateMs)),
      bundleBytes,
      samples,
      ...(fallbackReason ? { fallbackReason } : {}),
    });
    const bundle = `${options.extensionDir ? extensionDir : 'production'} dist/extension.js (${(bundleBytes / 1024).toFixed(0)} KiB)`;

    const chromiumPath = findChromium();
    let fallbackReason: string;
    if (!codeServerInstalled()) fallbackReason = 'code-server is not installed (bash test/vscode/setup.sh)';
    else if (!chromiumPath) fallbackReason = 'no Chromium found (Debian: apt-get install -y chromium, or set CHROMIUM_PATH)';
    else {
      try {
        const { samples, vscodeVersion, activatedBy } = await measureInExtensionHost(extensionDir, path.join(work, 'host'), chromiumPath, runs, log);
        const method = `VS Code ${vscodeVersion} extension host (code-server), ${bundle}, ${samples.length} fresh workbenches; VS Code's own marks (activated by ${activatedBy})`;
        return summarize('extension host', method, samples);
      } catch (error) {
        fallbackReason = `the extension-host run failed: ${(error as Error).message}`;
      }
    }
    log(`activation: ${fallbackReason}; measuring in plain Node instead`);
    try {
      const samples: ActivationSample[] = [];
      for (let i = 0; i < runs; i++) samples.push(await runNodeHost(extensionDir));
      const method = `plain Node ${process.version} with a stub vscode module (NOT a VS Code host; overstates: Node's own modules load cold), ${bundle}, ${samples.length} processes`;
      return summarize('plain Node', method, samples, fallbackReason);
    } catch (error) {
      return { unavailable: `${fallbackReason}; in plain Node too: ${(error as Error).message}` };
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The extension as a .vsix would install it: package.json, media/ and the production dist/. */
function buildShippedExtension(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  buildProductionBundle(path.join(dir, 'dist'));
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.cpSync(path.join(REPO_ROOT, 'media'), path.join(dir, 'media'), { recursive: true });
  return dir;
}

async function measureInExtensionHost(
  extensionDir: string,
  work: string,
  chromiumPath: string,
  runs: number,
  log: (message: string) => void,
): Promise<{ samples: ActivationSample[]; vscodeVersion: string; activatedBy: string }> {
  const workspace = createFixtureRepo(path.join(work, 'invoice-service'), {
    // The extension starts its server on activation: keep its storage in this run's folder.
    'repoDiscuss.storageDir': path.join(work, 'storage'),
  });
  const userDataDir = path.join(work, 'user-data');
  writeUserSettings(userDataDir, QUIET_USER_SETTINGS);
  let server: RunningCodeServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startCodeServer({ folder: workspace, userDataDir, extensionsDir: path.join(work, 'extensions') });
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS });
    const samples: ActivationSample[] = [];
    const versions = new Set<string>();
    const activatedBy = new Map<string, number>();
    for (let i = 0; i < runs; i++) {
      const report = await oneWorkbench(browser, server, workspace, extensionDir);
      const sample = sampleFromMarks(report.marks);
      if (!sample) throw new Error(`the extension host's marks lack the activation steps: ${JSON.stringify(report.marks)}`);
      samples.push(sample);
      versions.add(report.vscodeVersion);
      activatedBy.set(report.activatedBy, (activatedBy.get(report.activatedBy) ?? 0) + 1);
      log(`activation run ${i + 1}/${runs}: code loading ${sample.codeLoadingMs} ms, activate() ${sample.activateMs} ms (activated by ${report.activatedBy})`);
    }
    const by = [...activatedBy].map(([cause, count]) => (count === runs ? cause : `${cause} ${count}x`)).join(', ');
    return { samples, vscodeVersion: [...versions].join('/'), activatedBy: by === 'startup' ? 'onStartupFinished' : by === 'probe' ? "the probe's activate()" : by };
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.stop();
  }
}

/** One workbench, so one new extension host, with the extension under development and the probe as its tests. */
async function oneWorkbench(browser: Browser, server: RunningCodeServer, workspace: string, extensionDir: string): Promise<ActivationReport> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    let reportReceived!: (report: ActivationReport) => void;
    const reported = new Promise<ActivationReport>((resolve) => (reportReceived = resolve));
    let probeExited!: (code: number) => void;
    const exited = new Promise<number>((resolve) => (probeExited = resolve));
    // Both must exist before the workbench loads: it looks them up once.
    await page.exposeFunction('codeAutomationExit', (code: number) => probeExited(code));
    await page.exposeFunction('codeAutomationLog', (_level: string, message: unknown) => {
      const text = Array.isArray(message) ? format(...(message as unknown[])) : String(message);
      const at = text.indexOf(ACTIVATION_REPORT_PREFIX);
      if (at >= 0) reportReceived(JSON.parse(text.slice(at + ACTIVATION_REPORT_PREFIX.length)) as ActivationReport);
    });
    const authority = `127.0.0.1:${server.port}`;
    const payload = [
      ['extensionDevelopmentPath', `vscode-remote://${authority}${extensionDir}`],
      ['extensionTestsPath', `vscode-remote://${authority}${PROBE}`],
      ['skipWelcome', 'true'],
    ];
    await page.goto(server.workbenchUrl(workspace, { payload: JSON.stringify(payload) }));

    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no activation report within ${RUN_LIMIT_MS / 1000} s`)), RUN_LIMIT_MS);
    });
    const failed = exited.then((code) => (code === 0 ? new Promise<never>(() => undefined) : Promise.reject(new Error(`the probe failed in the extension host (exit ${code})`))));
    try {
      return await Promise.race([reported, failed, limit]);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await context.close().catch(() => undefined);
  }
}

function runNodeHost(extensionDir: string): Promise<ActivationSample> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [NODE_HOST, extensionDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`activationNodeHost exited ${code}: ${stderr.trim()}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as ActivationSample);
    });
  });
}

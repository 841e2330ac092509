/**
 * code-server (VS Code 1.100 served to a browser) as the extension-host
 * runner, the end-to-end suite and `npm start` use it: installed once by
 * setup.sh into .vscode-test/code-server, started in a process group of its
 * own, and stopped by killing that whole group, because the extension hosts
 * (and our server processes under them) outlive the browser that opened them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const CODE_SERVER_HOME = process.env.CODE_SERVER_HOME ?? path.join(REPO_ROOT, '.vscode-test', 'code-server');
const ENTRY = path.join(CODE_SERVER_HOME, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const SETUP = path.join(REPO_ROOT, 'test', 'vscode', 'setup.sh');

/** Debian's chromium: playwright-core downloads no browser of its own here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether setup.sh has installed code-server (for callers that must not install it themselves). */
export function codeServerInstalled(): boolean {
  return fs.existsSync(ENTRY);
}

/** Installs code-server on first use; returns at once when it is installed. */
export function ensureCodeServer(): void {
  const result = spawnSync('bash', [SETUP], { stdio: 'inherit', env: { ...process.env, CODE_SERVER_HOME } });
  if (result.status !== 0) throw new Error(`${SETUP} failed (exit ${result.status ?? result.signal})`);
}

export interface CodeServerOptions {
  /** The folder the workbench opens. */
  folder: string;
  /** Holds User/settings.json, the workbench's storage and the logs. */
  userDataDir: string;
  extensionsDir: string;
  /** Extensions (publisher.name) allowed the proposed API they declare. */
  enableProposedApi?: string[];
  /** 0 picks a free port. */
  port?: number;
  /** Where code-server's own output goes; default: kept in memory for error messages. */
  log?: (line: string) => void;
  /** Set in code-server's environment, which its extension hosts, and the servers they start, inherit. */
  env?: Record<string, string>;
}

export interface RunningCodeServer {
  /** e.g. http://127.0.0.1:40123 (no trailing slash). */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** The workbench opened on `folder`, with extra query parameters. */
  workbenchUrl(folder: string, query?: Record<string, string>): string;
  /** Kills the whole process group (code-server, extension hosts, their servers). */
  stop(): Promise<void>;
}

function baseArgs(options: Pick<CodeServerOptions, 'userDataDir' | 'extensionsDir'>): string[] {
  return [
    // A config file of its own: otherwise code-server writes ~/.config/code-server/config.yaml.
    '--config', path.join(options.userDataDir, 'config.yaml'),
    '--user-data-dir', options.userDataDir,
    '--extensions-dir', options.extensionsDir,
  ];
}

/** code-server reads $PORT over --bind-addr; a caller's PORT must not move it. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.PORT;
  return env;
}

/** Installs a .vsix into `extensionsDir` (replacing an installed version). */
export function installExtension(vsix: string, options: Pick<CodeServerOptions, 'userDataDir' | 'extensionsDir'>): void {
  fs.mkdirSync(options.userDataDir, { recursive: true });
  fs.mkdirSync(options.extensionsDir, { recursive: true });
  const result = spawnSync(process.execPath, [ENTRY, ...baseArgs(options), '--force', '--install-extension', vsix], {
    encoding: 'utf8',
    env: childEnv(),
  });
  if (result.status !== 0) {
    throw new Error(`installing ${vsix} into code-server failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
}

/**
 * Lists an unpacked extension folder (left where it is) in `extensionsDir`'s
 * extensions.json, as installing would. For a second extension beside the one
 * under development: the workbench's `payload` keeps one extensionDevelopmentPath
 * (it is read into a Map, so a second entry replaces the first).
 */
export function addUnpackedExtension(folder: string, options: Pick<CodeServerOptions, 'extensionsDir'>): void {
  const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as { publisher: string; name: string; version: string };
  const list = path.join(options.extensionsDir, 'extensions.json');
  fs.mkdirSync(options.extensionsDir, { recursive: true });
  let entries: unknown[] = [];
  try {
    entries = JSON.parse(fs.readFileSync(list, 'utf8')) as unknown[];
  } catch {
    // None installed yet.
  }
  entries.push({
    identifier: { id: `${manifest.publisher}.${manifest.name}` },
    version: manifest.version,
    location: { $mid: 1, scheme: 'file', path: folder },
    metadata: { installedTimestamp: Date.now(), source: 'vsix' },
  });
  fs.writeFileSync(list, JSON.stringify(entries));
}

/** Starts code-server and resolves once it listens. */
export async function startCodeServer(options: CodeServerOptions): Promise<RunningCodeServer> {
  fs.mkdirSync(options.userDataDir, { recursive: true });
  fs.mkdirSync(options.extensionsDir, { recursive: true });
  const args = [
    ENTRY,
    ...baseArgs(options),
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${options.port ?? 0}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    ...(options.enableProposedApi ?? []).flatMap((id) => ['--enable-proposed-api', id]),
    options.folder,
  ];
  // detached: a new process group, so stop() can kill everything it started.
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...childEnv(), ...options.env } });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        output.push(line);
        options.log?.(line);
        const listening = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
        if (listening) resolve(Number(listening[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`code-server exited (${code ?? signal}) before listening:\n${output.join('\n')}`)),
    );
  });

  const url = `http://127.0.0.1:${port}`;
  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    child,
    workbenchUrl(folder: string, query: Record<string, string> = {}): string {
      const params = new URLSearchParams({ folder, ...query });
      return `${url}/?${params.toString()}`;
    },
    stop(): Promise<void> {
      stopping ??= (async () => {
        killGroup(child, 'SIGTERM');
        // Extension hosts may linger after code-server itself is gone: the
        // group is killed outright once the leader has exited (or has not, in time).
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
        killGroup(child, 'SIGKILL');
        await exited;
      })();
      return stopping;
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** User settings that keep the workbench quiet and offline for tests and `npm start`. */
export const QUIET_USER_SETTINGS: Record<string, unknown> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
  'git.enabled': false,
  'chat.commandCenter.enabled': false,
};

/**
 * Writes User/settings.json under `userDataDir`, merged with what is there:
 * ours win, unless `keepExisting` (a person's own choices in `npm start`'s
 * long-lived profile must survive the next start).
 */
export function writeUserSettings(userDataDir: string, settings: Record<string, unknown>, keepExisting = false): void {
  const file = path.join(userDataDir, 'User', 'settings.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let current: Record<string, unknown> = {};
  try {
    current = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // Missing or hand-edited beyond JSON: start from ours.
  }
  const merged = keepExisting ? { ...settings, ...current } : { ...current, ...settings };
  fs.writeFileSync(file, JSON.stringify(merged, null, 2));
}

/** The .vsix `npm run package` makes (vsce's default name). */
export function packagedVsix(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  return path.join(REPO_ROOT, `${pkg.name}-${pkg.version}.vsix`);
}

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The built terminal client, as `package.json`'s bin names it. */
export const CLIENT_ENTRY = path.resolve(__dirname, '../../client/src/terminal/main.js');

export function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/**
 * A sandbox for one test: its own home, config and data folders, so neither
 * the user's config file nor their saved discussions are ever touched.
 */
export class Sandbox {
  readonly root = tempDir('rd-term-');
  readonly home = path.join(this.root, 'home');
  readonly repo = path.join(this.root, 'repo');
  readonly storage = path.join(this.root, 'storage');

  constructor() {
    for (const dir of [this.home, this.repo, this.storage]) fs.mkdirSync(dir, { recursive: true });
  }

  env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
    return {
      PATH: process.env.PATH,
      HOME: this.home,
      XDG_CONFIG_HOME: path.join(this.home, '.config'),
      XDG_DATA_HOME: path.join(this.home, '.local', 'share'),
      ...extra,
    };
  }

  remove(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The terminal client as a child process driven through its stdin and
 * stdout, the way a person (or a script) would. Every wait is on output or
 * on the process exiting, never on a timer.
 */
export class TerminalProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private exit: Exit | undefined;
  private readonly waiters: Array<() => void> = [];

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      this.stdout += chunk;
      this.notify();
    });
    child.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
      this.notify();
    });
    child.stdin!.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        resolve(this.exit);
      }),
    );
  }

  static start(args: string[], options: { env: Record<string, string | undefined>; cwd: string }): TerminalProcess {
    const child = spawn(process.execPath, [CLIENT_ENTRY, ...args], {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new TerminalProcess(child);
  }

  /** Runs `command` under `script`, which gives it a pseudo-terminal as stdin and stdout. */
  static startInPty(args: string[], options: { env: Record<string, string | undefined>; cwd: string; size?: { columns: number; rows: number } }): TerminalProcess {
    let command = [process.execPath, CLIENT_ENTRY, ...args].map(shellQuote).join(' ');
    // A pseudo-terminal nobody sized is 0 by 0; `stty` gives it the size a test draws against.
    if (options.size) command = `stty cols ${options.size.columns} rows ${options.size.rows} && exec ${command}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: options.cwd,
      env: { TERM: 'xterm-256color', ...options.env } as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new TerminalProcess(child);
  }

  write(text: string): void {
    this.child.stdin!.write(text);
  }

  line(text: string): void {
    this.write(`${text}\n`);
  }

  /** Ends stdin: Ctrl+D for a pipe-fed session. */
  endInput(): void {
    this.child.stdin!.end();
  }

  interrupt(): void {
    this.child.kill('SIGINT');
  }

  /** Resolves once `test` holds for the output; fails at once if the process exits first. */
  until(test: (p: TerminalProcess) => boolean, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (test(this)) {
          resolve();
          return true;
        }
        if (this.exit) {
          reject(new Error(`The client exited (${JSON.stringify(this.exit)}) before ${what}.\n${this.transcript()}`));
          return true;
        }
        return false;
      };
      if (check()) return;
      const waiter = () => {
        if (check()) this.waiters.splice(this.waiters.indexOf(waiter), 1);
      };
      this.waiters.push(waiter);
    });
  }

  untilStdout(text: string | RegExp, what = `stdout shows ${String(text)}`): Promise<void> {
    return this.until((p) => (typeof text === 'string' ? p.stdout.includes(text) : text.test(p.stdout)), what);
  }

  /** Resolves once the prompt has been shown `count` times in all. */
  untilPrompts(count: number): Promise<void> {
    return this.until((p) => countOf(p.stdout, PROMPT) >= count, `the prompt has appeared ${count} times`);
  }

  transcript(): string {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`;
  }

  kill(): void {
    if (!this.exit) this.child.kill('SIGKILL');
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

export const PROMPT = '› ';

export function countOf(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** A one-shot command run to completion. */
export async function runClient(
  args: string[],
  options: { env: Record<string, string | undefined>; cwd: string; input?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const client = TerminalProcess.start(args, options);
  if (options.input !== undefined) client.write(options.input);
  client.endInput();
  const exit = await client.exited;
  return { code: exit.code, stdout: client.stdout, stderr: client.stderr };
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}

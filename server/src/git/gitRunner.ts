import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inertLine, printablePath } from '../../../shared/printablePath';
import { isSameOrInside, toPosix, type ReadBoundary } from '../access/boundary';
import { checkConfigIncludes, type ConfigQuery } from './configIncludes';
import { discoveryReadFault } from './discoveryReads';
import { checkGitDirOwnership, type Readable } from './gitDirOwnership';

/**
 * The one way the git tools run git. A repository is untrusted input, and so
 * is its `.git/config`: git runs programs named there (fsmonitor hooks,
 * external diff, textconv, clean filters, pagers, gpg, remote helpers on a
 * lazy fetch). Every run here therefore
 *
 *  - starts `git` directly from an argument vector (never a shell), with
 *    `--no-pager` and a fresh environment: no system or global config, no
 *    inherited GIT_DIR / GIT_WORK_TREE / GIT_EXTERNAL_DIFF / GIT_CONFIG_*,
 *    HOME pointed at nothing, no prompts, no optional locks (no index writes);
 *  - overrides, as command-scope config (which wins over the repository's),
 *    every setting that names a program or reaches the network, plus the
 *    clean/smudge/process command of every filter driver the repository's
 *    config defines (git would run a clean filter while comparing a
 *    working-tree file);
 *  - is bounded by a timeout and an output cap, and killed at either.
 *
 * Why the binary and not an in-process reader (isomorphic-git): isomorphic-git
 * is not among the installed packages, has no blame and no unified diff (both
 * would be re-implemented here), and walks history in JavaScript on the
 * server's own thread. Measured on this machine with git 2.39.5: `log -50
 * --name-only` 4 ms on a generated 3,000-commit / 2,000-file history and
 * 24 ms on this project's repository; `blame --porcelain` of 200 lines 6 ms;
 * `diff --numstat` across 30 commits 85 ms. Each call is one short child
 * process that cannot stall the main thread, and the adversarial suite
 * (test/adversarial/gitHostile.test.ts) checks that a hostile config runs
 * nothing.
 */

/** Settings forced on every run, as `[key, value]`; command-scope config beats the repository's own. */
const SAFE_CONFIG: ReadonlyArray<readonly [string, string]> = [
  // Programs the repository's config could name.
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.alternateRefsCommand', ''],
  ['core.askPass', ''],
  ['core.sshCommand', ''],
  ['core.gitProxy', ''],
  ['credential.helper', ''],
  ['diff.external', ''],
  ['gpg.program', 'false'],
  ['gpg.openpgp.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['log.showSignature', 'false'],
  // No network at all, remote helpers (`ext::`, `vcs`) included: a partial clone's lazy fetch of a
  // missing object fails instead of running the promisor remote's transport. Per-protocol settings
  // win over protocol.allow, so each known one is pinned as well.
  ['protocol.allow', 'never'],
  ...['file', 'git', 'ssh', 'http', 'https', 'ftp', 'ftps', 'ext', 'fd'].map((name) => [`protocol.${name}.allow`, 'never'] as const),
  ['fetch.recurseSubmodules', 'false'],
  ['submodule.recurse', 'false'],
  // Files outside the folder the config could make git read.
  ['core.attributesFile', '/dev/null'],
  ['core.excludesFile', '/dev/null'],
  ['mailmap.file', '/dev/null'],
  ['mailmap.blob', ''],
  ['log.mailmap', 'false'],
  ['blame.ignoreRevsFile', ''],
  // A bare repository planted inside the folder is not discovered as the repository.
  ['safe.bareRepository', 'explicit'],
  // Output shape the parsers rely on.
  ['core.quotePath', 'true'],
  ['core.abbrev', '10'],
  ['color.ui', 'never'],
  ['diff.noprefix', 'false'],
  ['diff.mnemonicPrefix', 'false'],
  ['diff.relative', 'false'],
  ['diff.renames', 'false'],
  ['diff.submodule', 'short'],
  ['diff.ignoreSubmodules', 'all'],
  ['log.follow', 'false'],
  ['log.decorate', 'false'],
  ['grep.patternType', 'basic'],
  ['i18n.logOutputEncoding', 'UTF-8'],
];

/** Flags for every command that prints a diff: no external diff, no textconv, no submodule runs, no order file. */
export const SAFE_DIFF_FLAGS: readonly string[] = [
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
  '--no-renames',
  '--ignore-submodules=all',
  '--submodule=short',
  '-O/dev/null',
];

const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_BYTES = 8 * 1024;

export interface GitRun {
  /** Exit code; null when killed. */
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout reached the cap and git was killed. */
  truncated: boolean;
  failure?: 'missing' | 'timeout' | 'aborted' | 'spawn';
}

export interface GitRunOptions {
  cwd: string;
  /** Extra command-scope config, e.g. the filter overrides of one repository. */
  config?: ReadonlyArray<readonly [string, string]>;
  maxBytes?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Written to git's standard input, which is then closed; without it git gets none. */
  input?: Buffer;
  /** Has git report on stderr where it found the repository (GIT_TRACE_SETUP), before it reads any config but the repository's format. */
  traceSetup?: boolean;
}

/** The environment git runs in: built from nothing, so no GIT_* variable of ours reaches it. */
function gitEnvironment(config: ReadonlyArray<readonly [string, string]>, traceSetup: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent-home-for-git',
    XDG_CONFIG_HOME: '/nonexistent-home-for-git',
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_SYSTEM: '/dev/null',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_NO_LAZY_FETCH: '1', // honoured from git 2.45; protocol.allow=never covers older ones
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_ALLOW_PROTOCOL: '', // set and empty: no transport allowed
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
  };
  if (traceSetup) env.GIT_TRACE_SETUP = '2';
  if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT; // Windows needs it to start processes
  // Passed as GIT_CONFIG_KEY_n/VALUE_n rather than `-c key=value`: a driver name containing `=`
  // would split a `-c` argument in the wrong place and leave that driver's command in force.
  const all = [...SAFE_CONFIG, ...config];
  env.GIT_CONFIG_COUNT = String(all.length);
  all.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Runs `git <args>` in `cwd`. Never throws; never runs through a shell. */
export function runGit(args: readonly string[], options: GitRunOptions): Promise<GitRun> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise((resolve) => {
    if (options.signal?.aborted) {
      resolve({ code: null, stdout: Buffer.alloc(0), stderr: '', truncated: false, failure: 'aborted' });
      return;
    }
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn('git', ['--no-pager', ...args], {
        cwd: options.cwd,
        env: gitEnvironment(options.config ?? [], options.traceSetup === true),
        stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
    } catch {
      resolve({ code: null, stdout: Buffer.alloc(0), stderr: '', truncated: false, failure: 'spawn' });
      return;
    }
    if (options.input && child.stdin) {
      child.stdin.on('error', () => undefined); // git may exit without reading it all (EPIPE)
      child.stdin.end(options.input);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let stderr = '';
    let failure: GitRun['failure'];
    let settled = false;
    const kill = () => {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      failure = 'timeout';
      kill();
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const onAbort = () => {
      failure = 'aborted';
      kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ code, stdout: Buffer.concat(chunks, size), stderr, truncated, failure });
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      if (truncated) return;
      const room = maxBytes - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        truncated = true;
        kill(); // enough for the cap: git need not produce the rest
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8').slice(0, MAX_STDERR_BYTES - stderr.length);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') failure = 'missing';
      else failure ??= 'spawn';
      finish(null);
    });
    child.on('close', (code) => finish(truncated ? 0 : code));
  });
}

/** A repository the folder is in, checked: its work tree contains the folder. */
export interface GitRepository {
  /** The folder (the boundary's root): git runs here and paths are shown relative to it. */
  cwd: string;
  /** The real path of the work tree's top: the folder or a folder above it. */
  top: string;
  shallow: boolean;
  /** Filter-driver overrides for this repository, passed on every run. */
  config: ReadonlyArray<readonly [string, string]>;
}

export type Opened = { ok: true; repo: GitRepository } | { ok: false; message: string };

export const GIT_MISSING = 'git is not installed (no `git` on the PATH of the server); the git tools need it.';

/** A model-facing message for a failed run that is not one of the expected cases. */
export function describeFailure(run: GitRun, what: string): string {
  if (run.failure === 'missing') return GIT_MISSING;
  if (run.failure === 'timeout') return `${what} took too long and was stopped. Narrow it with a path or a smaller range.`;
  if (run.failure === 'aborted') return 'Cancelled.';
  if (run.failure === 'spawn') return 'git could not be started.';
  if (/lazy fetching disabled|promisor remote|unable to read [0-9a-f]{7,}|missing (blob|tree|commit) object/i.test(run.stderr)) {
    return `${what} failed: an object it needs is missing (a partial or damaged clone), and the git tools never fetch. Try a narrower path or another commit.`;
  }
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
  // The reason is on the fatal/error line; warnings come first.
  const firstLine = lines.find((line) => /^(fatal|error):/.test(line)) ?? lines[0] ?? `exit code ${run.code}`;
  // git quotes the repository's config values and file lines here: a bidi override among them would reorder the message.
  return `${what} failed: ${inertLine(firstLine.slice(0, 300))}`;
}

/**
 * The names of the filter drivers the repository's config defines (includes
 * followed). A `.gitattributes` may name any driver, but git runs only those
 * with a command in the config, so these are all the commands to switch off.
 */
async function filterOverrides(cwd: string, signal?: AbortSignal): Promise<Array<[string, string]> | undefined> {
  const run = await runGit(['config', '-z', '--name-only', '--get-regexp', '^filter\\.'], { cwd, signal, maxBytes: 1024 * 1024 });
  // Exit 1 means "no such keys".
  if (run.failure || run.truncated || (run.code !== 0 && run.code !== 1)) return undefined;
  const names = new Set<string>();
  for (const key of run.stdout.toString('utf8').split('\0')) {
    const last = key.lastIndexOf('.');
    if (key.startsWith('filter.') && last > 'filter.'.length) names.add(key.slice('filter.'.length, last));
  }
  const overrides: Array<[string, string]> = [];
  for (const name of names) {
    for (const variable of ['clean', 'smudge', 'process']) overrides.push([`filter.${name}.${variable}`, '']);
    overrides.push([`filter.${name}.required`, 'false']);
  }
  return overrides;
}

/** One value of a config file read as plain data (no includes followed); undefined when unset or unreadable. */
async function readConfigValue(cwd: string, file: string, key: string, signal?: AbortSignal): Promise<string | undefined> {
  const run = await runGit(['config', '--file', file, '--get', key], { cwd, signal, maxBytes: 64 * 1024 });
  return run.code === 0 && !run.failure && !run.truncated ? run.stdout.toString('utf8').replace(/\n$/, '') : undefined;
}

const CONFIG_UNREADABLE = "the repository's config could not be read, so the git tools cannot be run safely.";

/**
 * The runs before the git directory is checked (the include listing,
 * rev-parse) read whatever the repository's pointers and links lead to:
 * their error text is never passed on. git quotes or prints what it read
 * there ("bad shallow line: …", "unexpected line in .git/packed-refs: …",
 * "bad numeric config value '…'"), and through a `.git/shallow` linked to
 * `.env` that was the secret's first line. Each takes a few milliseconds;
 * the short limit bounds anything the checks before them missed.
 */
export const GIT_RUN_LIMITS = { beforeChecksTimeoutMs: 5_000 };
const UNREADABLE_HERE = 'git could not read the repository here (run `git status` in the folder to see why)';

/** A run before the checks that went past its limit: as with its errors, nothing of what git printed is passed on. */
function tooSlowHere(): string {
  return `not a git repository the tools can use: git did not finish finding the repository within ${GIT_RUN_LIMITS.beforeChecksTimeoutMs / 1000} s (run \`git status\` in the folder to see why); the git tools need one.`;
}

/** `git config` in the folder for configIncludes; exit 1 is "no such keys". */
function configQuery(cwd: string, signal?: AbortSignal): ConfigQuery {
  return async (args, options = {}) => {
    const run = await runGit(['config', ...args], { cwd, signal, maxBytes: 1024 * 1024, timeoutMs: GIT_RUN_LIMITS.beforeChecksTimeoutMs, ...options });
    if (run.failure === 'timeout') return { ok: false, message: tooSlowHere(), rejected: false };
    if (run.failure) return { ok: false, message: describeFailure({ ...run, stderr: '' }, 'git config'), rejected: false };
    if (run.truncated) return { ok: false, message: CONFIG_UNREADABLE, rejected: false };
    if (run.code !== 0 && run.code !== 1) return { ok: false, message: `not a git repository the tools can use: ${UNREADABLE_HERE}; the git tools need one.`, rejected: true };
    return { ok: true, stdout: run.stdout.toString('utf8'), stderr: run.stderr };
  };
}

/**
 * Finds the repository the folder is in and checks it: its config may
 * include only files the folder's read rules allow (configIncludes, checked
 * before any git run follows them), the work tree must contain the folder (a
 * hostile `core.worktree` pointing elsewhere would make every diff one of
 * another directory's files), and its git directory must belong to that work
 * tree (gitDirOwnership: a planted `.git` file would show another
 * repository's history).
 */
export async function openRepository(boundary: ReadBoundary, signal?: AbortSignal): Promise<Opened> {
  const cwd = boundary.root;
  // A link in the git directory to a secret had git quote its first line in an error ("unexpected line in .git/packed-refs: …").
  // Only what the folder's read rules allow: in a folder below the work tree's top, a link to a file elsewhere in the work tree
  // (its `.env` among them) passed as "outside the folder". An object store may sit in another clone's `.git` inside the folder.
  const readable: Readable = (realPath, asObjectStore) => {
    if (!boundary.isInside(realPath)) return false;
    const denial = boundary.denialOf(boundary.relativeOf(realPath));
    return denial === undefined || (asObjectStore && denial.kind === 'git');
  };
  const waitsOn = await discoveryReadFault(cwd);
  if (waitsOn !== undefined) {
    const where = printablePath(isSameOrInside(cwd, waitsOn) ? toPosix(path.relative(cwd, waitsOn)) : waitsOn);
    return {
      ok: false,
      message: `not a git repository the tools can use: git would wait on a FIFO or device (${where}), or read it without end, while finding the repository; the git tools are off for this folder. Replace it with a plain file to use them.`,
    };
  }
  const includes = await checkConfigIncludes(cwd, configQuery(cwd, signal), readable);
  if (!includes.ok) return includes;
  const run = await runGit(
    ['rev-parse', '--is-inside-work-tree', '--is-shallow-repository', '--show-toplevel', '--absolute-git-dir', '--path-format=absolute', '--git-common-dir'],
    { cwd, signal, maxBytes: 64 * 1024, timeoutMs: GIT_RUN_LIMITS.beforeChecksTimeoutMs },
  );
  if (run.failure === 'timeout') return { ok: false, message: tooSlowHere() };
  if (run.failure) return { ok: false, message: describeFailure({ ...run, stderr: '' }, 'git rev-parse') };
  if (run.code !== 0) {
    if (/not a git repository/i.test(run.stderr)) {
      return { ok: false, message: 'not a git repository: the folder of this discussion is not inside a Git work tree; the git tools need one. Use the other read tools instead.' };
    }
    if (/dubious ownership/i.test(run.stderr)) {
      return { ok: false, message: 'not a git repository that can be read: it is owned by another user (git "dubious ownership"); the git tools need one.' };
    }
    return { ok: false, message: `not a git repository the tools can use: ${UNREADABLE_HERE}; the git tools need one.` };
  }
  const [inside, shallow, toplevel, gitDir, commonDir] = run.stdout.toString('utf8').split('\n');
  if (inside !== 'true' || !toplevel || !gitDir || !commonDir) {
    return { ok: false, message: 'not a git repository: the folder is not in a Git work tree (a bare repository or inside .git); the git tools need one.' };
  }
  let realTop: string;
  try {
    realTop = await fs.promises.realpath(path.resolve(toplevel));
  } catch {
    return { ok: false, message: 'not a git repository: its work tree could not be found; the git tools need one.' };
  }
  if (!isSameOrInside(realTop, cwd)) {
    return { ok: false, message: "not a git repository the tools can use: the repository's configured work tree does not contain this folder." };
  }
  const ownership = await checkGitDirOwnership(
    { toplevel: path.resolve(toplevel), gitDir: path.resolve(gitDir), commonDir: path.resolve(cwd, commonDir) },
    (file, key) => readConfigValue(cwd, file, key, signal),
    readable,
    signal,
  );
  if (!ownership.ok) return { ok: false, message: ownership.message };
  const config = await filterOverrides(cwd, signal);
  if (!config) return { ok: false, message: CONFIG_UNREADABLE };
  return { ok: true, repo: { cwd, top: realTop, shallow: shallow === 'true', config } };
}

/** Runs git inside an opened repository. */
export function runInRepository(repo: GitRepository, args: readonly string[], options: Omit<GitRunOptions, 'cwd' | 'config'> = {}): Promise<GitRun> {
  return runGit(args, { ...options, cwd: repo.cwd, config: repo.config });
}

import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { RipgrepPattern } from './rgPattern';

/**
 * Running ripgrep for the read tools. ripgrep is only ever asked for file
 * names (`--files`, `--files-with-matches`): file contents never come back
 * from it, and every name it prints is checked again against our boundary
 * and deny rules before anything is read.
 *
 * Its flags make it leave out exactly what our walk leaves out: hidden files
 * are searched, .gitignore/.ignore/.rgignore are honored (even outside a git
 * repository), nothing from above the folder or from the user's global git
 * config applies, symlinks are not followed, node_modules/ and .git/ are
 * skipped.
 */

export interface Ripgrep {
  path: string;
  version: string;
}

/** What `ripgrepPath` may say: a binary to use, `null` for off, undefined to look on PATH. */
export type RipgrepOption = string | null | undefined;

/**
 * The ripgrep processes this thread started that have not ended, killed when
 * the process exits: a ripgrep blocked opening a FIFO named as an ignore file
 * in a hostile folder waits forever, and one the server's census started
 * outlived the server that stopped before the census's time limit. In a
 * search worker the handler runs only if the worker ends by itself; its
 * pool, which knows its jobs' ripgreps, kills them at the process's exit
 * (searchPool.ts).
 */
const running = new Set<ChildProcess>();
let endsWithThread = false;

/**
 * In a search worker, cells shared with the pool's thread where each running
 * ripgrep's pid is noted the moment it starts, for the pool to kill at the
 * process's exit (searchPool.ts `killRipgreps`). The pid the worker sends in a
 * message was lost when the process exited before its main thread read it,
 * and a ripgrep blocked on a FIFO outlived the server. Cell CLOSING is set by
 * the pool at exit, after which no ripgrep starts; cell SPAWNING counts starts
 * under way, which the pool waits for, so none slips in between its kill and
 * the thread's end.
 */
export const PID_CELLS = { CLOSING: 0, SPAWNING: 1, FIRST_PID: 2 } as const;
let sharedPids: Int32Array | undefined;

export function notePidsIn(cells: Int32Array): void {
  sharedPids = cells;
}

/** `spawn`, noted as above; throws instead of starting ripgrep once the process is exiting. */
function spawnTracked(...args: Parameters<typeof spawn>): ChildProcess {
  const cells = sharedPids;
  if (!cells) return tracked(spawn(...args));
  Atomics.add(cells, PID_CELLS.SPAWNING, 1);
  try {
    if (Atomics.load(cells, PID_CELLS.CLOSING) !== 0) throw new Error('the server is exiting');
    return tracked(spawn(...args));
  } finally {
    Atomics.sub(cells, PID_CELLS.SPAWNING, 1);
    Atomics.notify(cells, PID_CELLS.SPAWNING);
  }
}

function tracked(child: ChildProcess): ChildProcess {
  if (!endsWithThread) {
    endsWithThread = true;
    process.once('exit', () => {
      for (const each of running) each.kill('SIGKILL');
    });
  }
  running.add(child);
  const pid = child.pid;
  let cell = -1;
  if (sharedPids && pid !== undefined) {
    for (let i = PID_CELLS.FIRST_PID; i < sharedPids.length && cell < 0; i++) if (Atomics.compareExchange(sharedPids, i, 0, pid) === 0) cell = i;
  }
  // Cleared once the process is reaped ('exit'), not at 'close': its pid may be reused from then on.
  const reaped = () => {
    if (cell >= 0 && sharedPids) Atomics.compareExchange(sharedPids, cell, pid as number, 0);
    cell = -1;
  };
  child.once('exit', reaped);
  child.once('close', () => running.delete(child));
  child.once('error', () => {
    running.delete(child);
    reaped();
  });
  return child;
}
const SYMLINK_LOG_MARKER = ': failed to pass subject filter';
/** How the debug log names an entry its ignore rules or globs left out. */
const IGNORED_LOG_MARKER = ': Ignore(';
/** Entries whose contents ripgrep reads as ignore rules (`.git` for its info/exclude). */
const RULE_ENTRY_NAMES = new Set(['.git', '.gitignore', '.ignore', '.rgignore']);

/**
 * ripgrep's stderr goes to a private temporary file, never a pipe. Its debug
 * log is written all along a run; if the server dies mid-run, writes to a
 * pipe fail, and ripgrep 13 then hangs for good (a logging thread panics
 * holding a lock) as an orphan. A file never refuses a write.
 */
interface StderrFile {
  directory: string;
  file: string;
  /** Open for reading and writing: ripgrep writes through its copy, we read through this one. */
  fd: number;
}

function openStderrFile(): StderrFile {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-rg-log-'));
  const file = path.join(directory, 'stderr.log');
  return { directory, file, fd: fs.openSync(file, 'w+', 0o600) };
}

/**
 * Once ripgrep holds its copy, the name is removed (where open files can be),
 * so nothing is left behind even if this process dies before ripgrep does.
 */
function unlinkStderrFile(log: StderrFile): void {
  if (process.platform === 'win32') return;
  try {
    fs.unlinkSync(log.file);
    fs.rmdirSync(log.directory);
  } catch {
    // removed again in removeStderrFile
  }
}

/** Calls `onLine` for each line of the log, reading it in pieces so a long log is never held whole. */
function readLogLines(log: StderrFile, onLine: (line: string) => void): void {
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  let carry = '';
  let position = 0;
  // A name's multi-byte character may straddle two reads: decoded whole, not as two U+FFFDs.
  const decoder = new StringDecoder('utf8');
  try {
    for (;;) {
      const read = fs.readSync(log.fd, chunk, 0, chunk.length, position);
      if (read === 0) break;
      position += read;
      const lines = (carry + decoder.write(chunk.subarray(0, read))).split('\n');
      carry = lines.pop() as string;
      for (const line of lines) onLine(line);
    }
  } catch {
    // an unreadable log says nothing
  }
  if (carry !== '') onLine(carry);
}

function removeStderrFile(log: StderrFile): void {
  fs.close(log.fd, () => undefined);
  fs.rm(log.directory, { recursive: true, force: true }, () => undefined);
}

export interface Captured {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `binary` to its end (or `timeoutMs`), its output and stderr kept. */
export function capture(binary: string, args: string[], cwd: string, timeoutMs: number): Promise<Captured> {
  return new Promise((resolve) => {
    let settled = false;
    let stdout = '';
    const log = openStderrFile();
    const done = (code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const lines: string[] = [];
      readLogLines(log, (line) => lines.push(line));
      removeStderrFile(log);
      resolve({ code, stdout, stderr: lines.join('\n') });
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawnTracked(binary, args, { cwd, stdio: ['ignore', 'pipe', log.fd], windowsHide: true });
    } finally {
      unlinkStderrFile(log);
    }
    const timer = setTimeout(() => {
      child.kill();
      done(null);
    }, timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.on('error', () => done(null));
    child.on('close', (code) => done(code));
  });
}


/** The path a debug line says was passed over (before `marker`), as ripgrep printed it. */
function loggedPath(line: string, marker: number): string | undefined {
  const start = line.indexOf(' ignoring ');
  return start === -1 || start > marker ? undefined : line.slice(start + ' ignoring '.length, marker);
}

/** Paths of the symlinks ripgrep's debug log says it passed over, as it printed them. */
export function parseSymlinkLog(stderr: string): string[] {
  const found: string[] = [];
  for (const line of stderr.split('\n')) {
    const marker = line.indexOf(SYMLINK_LOG_MARKER);
    const logged = marker === -1 ? undefined : loggedPath(line, marker);
    if (logged !== undefined) found.push(logged);
  }
  return found;
}

function isRuleEntry(printed: string): boolean {
  return RULE_ENTRY_NAMES.has(printed.slice(Math.max(printed.lastIndexOf('/'), printed.lastIndexOf('\\')) + 1));
}

/** Names of files that are never searched or listed, as ripgrep globs. */
export interface RipgrepExclusion {
  glob: string;
  caseInsensitive: boolean;
}

/** Skipped in every mode, as the walk skips them. */
const ALWAYS_EXCLUDED: readonly RipgrepExclusion[] = [
  { glob: '!.git', caseInsensitive: false },
  { glob: '!.git/', caseInsensitive: true },
  { glob: '!node_modules/', caseInsensitive: false },
];

export interface RipgrepQuery {
  /**
   * `files` lists every file; `matches` lists the files with a line matching
   * `pattern`; `rules` lists the ignore files and .git/info/exclude files
   * under the scope without reading any (the non-regular ones are in the
   * debug log), so they can be checked before a search lets ripgrep open them.
   */
  mode: 'files' | 'matches' | 'rules';
  /** Root-relative directory to search, `.` for the root. */
  scope: string;
  pattern?: RipgrepPattern;
  exclusions: readonly RipgrepExclusion[];
  /** Root-relative ignore rules from above `scope` (see ignoreRules.ts `ancestorIgnoreText`). */
  ignoreFile?: string;

  /**
   * Names only files matching one of these (`--iglob`): a pre-filter, a
   * superset of what the caller keeps, so ripgrep skips the rest itself.
   */
  includeGlobs?: readonly string[];
  /**
   * No `--debug` log: the caller finds symlinks and rule files another way
   * (linkCrawl.ts). With an include glob the log names every file it skips.
   */
  withoutLog?: boolean;

  /** Single-threaded, in path order: lets a capped listing stop at the same files every time. */
  sorted?: boolean;
  /**
   * No `.git` at or above the folder root: .gitignore files must still count
   * (`--no-require-git`). Inside a repository ripgrep's default is kept, so
   * that every ripgrep version treats a nested repository the same way (its
   * .gitignore rules start afresh, as the walk's do).
   */
  outsideRepository: boolean;
}

/**
 * Every ignore file ripgrep could read, found without reading one: no ignore
 * rules apply (`--no-ignore`), only the names ripgrep takes rules from are
 * kept, and of `.git` only `info/` is entered.
 */
function ruleFileArguments(query: RipgrepQuery): string[] {
  return [
    '--no-config',
    '--hidden',
    '--no-follow',
    '--no-ignore',
    '--no-messages',
    '--null',
    '--path-separator',
    '/',
    '--glob',
    '{.gitignore,.ignore,.rgignore}',
    '--glob',
    '**/.git/info/exclude',
    '--glob',
    '!**/.git/*/',
    '--glob',
    '**/.git/info/',
    '--glob',
    '!node_modules/',
    '--debug',
    '--files',
    '--',
    query.scope === '.' || query.scope === '' ? './' : query.scope,
  ];
}

export function ripgrepArguments(query: RipgrepQuery): string[] {
  if (query.mode === 'rules') return ruleFileArguments(query);
  const args = [
    '--no-config',
    '--hidden',
    '--no-follow',
    // Parent directories' ignore files are handed over as a file instead (`ignoreFile`): ripgrep
    // would read them up to the file system root, and ripgrep 13 misplaces their anchored rules.
    '--no-ignore-parent',
    '--no-ignore-global',
    '--no-messages',
    '--null',
    '--path-separator',
    '/',
  ];
  if (query.outsideRepository) args.push('--no-require-git');
  for (const exclusion of [...ALWAYS_EXCLUDED, ...query.exclusions]) {
    args.push(exclusion.caseInsensitive ? '--iglob' : '--glob', exclusion.glob);
  }
  for (const glob of query.includeGlobs ?? []) args.push('--iglob', glob);
  if (query.ignoreFile !== undefined) args.push('--ignore-file', query.ignoreFile);
  if (query.sorted) args.push('--sort', 'path');
  // The debug log names the symlinks and ignore files ripgrep passes over (locateRipgrep.ts `probeRipgrep` checks it does).
  if (!query.withoutLog) args.push('--debug');
  if (query.mode === 'files') {
    args.push('--files');
  } else {
    if (!query.pattern) throw new Error('a matches query needs a pattern');
    // --text: our own binary test runs on each candidate; --encoding none: see the bytes we will read.
    args.push('--files-with-matches', '--text', '--encoding', 'none');
    if (query.pattern.fixed) args.push('--fixed-strings');
    args.push('--regexp', query.pattern.pattern);
  }
  args.push('--', query.scope === '.' || query.scope === '' ? './' : query.scope);
  return args;
}

export interface RipgrepListing {
  /** Root-relative paths, in the order ripgrep printed them. */
  paths: string[];
  /** Root-relative paths of the symlinks passed over. */
  symlinks: string[];
  /** Stopped at the cap: more paths exist. */
  truncated: boolean;
  /** Stopped because `onPath` said so. */
  abandoned: boolean;
  /**
   * Root-relative paths of the ignore files and `.git` entries the debug log
   * mentions: where ripgrep may have read rules through a link. See ignoreRules.ts
   * `ignoreEntryLeadsOutside`.
   */
  ruleEntries: string[];
  /** ripgrep could not run the query (bad pattern or glob, failed to start); the caller falls back. */
  error?: string;
}

export interface RipgrepRun {
  ripgrep: Ripgrep;
  /** The folder root: ripgrep runs there so every path it prints is root-relative. */
  root: string;
  query: RipgrepQuery;
  /** Stop ripgrep once this many paths are in. */
  maxPaths: number;
  /** Sees each path as it arrives; returning false stops ripgrep (the listing is then `abandoned`). */
  onPath?: (relativePath: string) => boolean;
  shouldStop?: () => boolean;
  /** Lets the owner of a worker kill ripgrep if the worker itself is stopped. */
  onSpawn?: (pid: number) => void;
}

function normalizeListedPath(printed: string): string {
  let relative = process.platform === 'win32' ? printed.replace(/\\/g, '/') : printed;
  while (relative.startsWith('./')) relative = relative.slice(2);
  return relative;
}

/** Runs one listing query and collects the paths, killing ripgrep at the cap or when told to stop. */
export function runRipgrep(run: RipgrepRun): Promise<RipgrepListing> {
  return new Promise((resolve) => {
    const paths: string[] = [];
    let pendingOut = '';
    // A name's multi-byte character may straddle two chunks of the pipe: decoded whole, not as two U+FFFDs.
    const stdoutDecoder = new StringDecoder('utf8');
    let truncated = false;
    let abandoned = false;
    let settled = false;
    let stopPoll: NodeJS.Timeout | undefined;

    const log = openStderrFile();
    let child: ReturnType<typeof spawn>;
    try {
      child = spawnTracked(run.ripgrep.path, ripgrepArguments(run.query), {
        cwd: run.root,
        stdio: ['ignore', 'pipe', log.fd],
        windowsHide: true,
      });
    } catch (error) {
      // spawn throws, rather than emitting 'error', when the arguments are too long for
      // the system (E2BIG for a 128 KiB pattern): answered as a failed run, so the walk answers.
      removeStderrFile(log);
      resolve({ paths, symlinks: [], truncated: false, abandoned: false, ruleEntries: [], error: `ripgrep could not start (${(error as NodeJS.ErrnoException).code ?? String(error)})` });
      return;
    } finally {
      unlinkStderrFile(log);
    }
    if (child.pid !== undefined) run.onSpawn?.(child.pid);

    /** Reads the log once ripgrep is gone: symlinks, ignore files met, and any error it printed. */
    const finish = (failure?: (errorText: string) => string): void => {
      if (settled) return;
      settled = true;
      if (stopPoll) clearInterval(stopPoll);
      const symlinks: string[] = [];
      const ruleEntries: string[] = [];
      const errorLines: string[] = [];
      readLogLines(log, (line) => {
        const symlinkMarker = line.indexOf(SYMLINK_LOG_MARKER);
        const ignoredMarker = symlinkMarker === -1 ? line.indexOf(IGNORED_LOG_MARKER) : -1;
        const logged = symlinkMarker !== -1 ? loggedPath(line, symlinkMarker) : ignoredMarker !== -1 ? loggedPath(line, ignoredMarker) : undefined;
        if (logged !== undefined) {
          const relativePath = normalizeListedPath(logged);
          if (symlinkMarker !== -1) symlinks.push(relativePath);
          if (isRuleEntry(logged)) ruleEntries.push(relativePath);
        } else if (!line.startsWith('DEBUG|') && !line.startsWith('TRACE|') && line.trim() !== '' && errorLines.length < 20) {
          errorLines.push(line);
        }
      });
      removeStderrFile(log);
      const error = failure?.(errorLines.join('\n').trim());
      resolve({ paths, symlinks, truncated, abandoned, ruleEntries, ...(error !== undefined ? { error } : {}) });
    };
    const stop = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    };

    if (run.shouldStop) {
      stopPoll = setInterval(() => {
        if (run.shouldStop?.()) stop();
      }, 5);
    }

    child.stdout?.on('data', (chunk: Buffer) => {
      if (truncated || abandoned) return;
      const text = pendingOut + stdoutDecoder.write(chunk);
      const parts = text.split('\0');
      pendingOut = parts.pop() as string;
      for (const part of parts) {
        if (paths.length >= run.maxPaths) {
          truncated = true;
          stop();
          return;
        }
        const relativePath = normalizeListedPath(part);
        paths.push(relativePath);
        if (run.onPath && !run.onPath(relativePath)) {
          abandoned = true;
          stop();
          return;
        }
      }
    });
    child.on('error', (error) => finish(() => `ripgrep could not start (${(error as NodeJS.ErrnoException).code ?? error.message})`));
    child.on('close', (code) => {
      // Exit 2 is an error, but also "some file was unreadable": only a run that printed nothing failed.
      if (code === 2 && paths.length === 0 && !truncated && !abandoned) {
        finish((errorText) => errorText || 'ripgrep failed');
        return;
      }
      if (code !== 0 && code !== 1 && code !== 2 && !truncated && !abandoned && !run.shouldStop?.()) {
        finish(() => `ripgrep stopped unexpectedly (exit ${code})`);
        return;
      }
      finish();
    });
  });
}

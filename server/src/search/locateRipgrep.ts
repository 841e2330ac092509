import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { identityOf, ProbeVerdicts, type BinaryIdentity } from './probeVerdicts';
import { capture, parseSymlinkLog, type Ripgrep, type RipgrepOption } from './ripgrep';

/**
 * Finding the ripgrep to use and checking it before any search relies on it
 * (ripgrep.ts runs it). A binary that is missing, fails, or whose debug log
 * does not name the symlinks it passes over is not used, and the search
 * walks the folder itself.
 */

const located = new Map<string, Promise<Ripgrep | undefined>>();

async function isExecutableFile(candidate: string): Promise<boolean> {
  try {
    const stats = await fs.promises.stat(candidate);
    if (!stats.isFile()) return false;
    if (process.platform !== 'win32') await fs.promises.access(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `rg` in an absolute folder of `PATH`. */
export async function findOnPath(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const names = process.platform === 'win32' ? ['rg.exe', 'rg.cmd', 'rg.bat'] : ['rg'];
  for (const directory of (env.PATH ?? env.Path ?? '').split(path.delimiter)) {
    // A relative entry (`.`, `bin`) names a folder under the server's working directory, which may be the repository: its `rg` is never run.
    if (directory === '' || !path.isAbsolute(directory)) continue;
    for (const name of names) {
      const candidate = path.join(directory, name);
      if (await isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Checks a candidate binary: it must run, and its `--debug` log must name the
 * symlinks it passes over. ripgrep never lists a symlink, and the log is how
 * symlinked files (which the walk includes) and symlinked ignore files (which
 * the walk refuses to read) are found; a ripgrep without that log line is not
 * used. Where no symlink can be made to check (Windows without the
 * privilege), the line is taken on trust: it has been in ripgrep for years.
 *
 * The verdict on the very same native binary is kept in the probe's directory
 * (probeVerdicts.ts), so a later process answers without running it (not on
 * Windows, where the directory's owner is not checked). Never rejects: a
 * check that cannot be made refuses the binary.
 */
export async function probeRipgrep(binary: string, options: ProbeOptions = {}): Promise<Ripgrep | undefined> {
  const directory = options.directory ?? defaultProbeDirectory();
  const keepsVerdictOf = options.keepsVerdictOf ?? isRipgrepItself;
  try {
    const own = await ensureOwnDirectory(directory);
    // On Windows the directory's owner and rights are not checked (ensureOwnDirectory), so nothing read from it is trusted.
    const verdicts = own && process.platform !== 'win32' && (await keepsVerdictOf(binary)) ? new ProbeVerdicts(directory) : undefined;
    const before = await identityOfFile(binary);
    const known = verdicts && before ? await verdicts.lookup(binary, before) : undefined;
    if (known) return known.usable ? { path: binary, version: known.version } : undefined;
    const checked = own ? await runProbe(binary, directory) : await inFreshDirectory((fresh) => runProbe(binary, fresh));
    // Kept under the identity taken before the runs: a binary replaced meanwhile is another file, which this verdict never matches.
    if (checked.conclusive && verdicts && before) await verdicts.remember(binary, before, { version: checked.version, usable: checked.usable });
    return checked.usable ? { path: binary, version: checked.version } : undefined;
  } catch {
    return undefined;
  }
}

export interface ProbeOptions {
  /** Where the check runs and its verdicts are kept (default: one per user in the temp folder). */
  directory?: string;
  /** Whether a verdict on `binary` may be kept (default: only on ripgrep's own native binary, see isRipgrepItself). */
  keepsVerdictOf?: (binary: string) => Promise<boolean>;
}

interface ProbeOutcome {
  version: string;
  usable: boolean;
  /** What the runs said holds for this file until it changes: it is worth keeping. */
  conclusive: boolean;
}

async function runProbe(binary: string, directory: string): Promise<ProbeOutcome> {
  const ran = await capture(binary, ['--version'], os.tmpdir(), 5000);
  // Only a binary that ran and said it is something else is refused for good; a failed run may be the moment's.
  if (ran.code !== 0) return { version: '', usable: false, conclusive: false };
  if (!/^ripgrep \d/.test(ran.stdout)) return { version: '', usable: false, conclusive: true };
  const version = ran.stdout.split('\n')[0].trim();
  const link = await withProbeLink(directory);
  if (link === 'unsupported') return { version, usable: true, conclusive: false };
  // A full disk or an odd folder: nothing was checked, and an unchecked ripgrep is not used (the walk answers).
  if (link === 'failed') return { version, usable: false, conclusive: false };
  // No ignore rules: a `.ignore` naming link.txt in a folder above (anyone may write one in /tmp) hid the link from the check.
  const listing = await capture(binary, ['--no-config', '--files', '--hidden', '--no-ignore', '--debug', './'], directory, 5000);
  // A listing that failed (killed at its time limit, out of descriptors), or did not list the file beside the link, says nothing for good.
  if (listing.code !== 0 || !listing.stdout.split('\n').some((line) => line.endsWith('target.txt'))) return { version, usable: false, conclusive: false };
  return { version, usable: parseSymlinkLog(listing.stderr).some((entry) => entry.endsWith('link.txt')), conclusive: true };
}

async function identityOfFile(binary: string): Promise<BinaryIdentity | undefined> {
  try {
    return identityOf(await fs.promises.stat(binary));
  } catch {
    return undefined;
  }
}

/** ELF, Mach-O (either byte order, or universal) or PE. */
const NATIVE_MAGIC = ['7f454c46', 'feedface', 'cefaedfe', 'feedfacf', 'cffaedfe', 'cafebabe'];

/**
 * Whether `binary` is itself the program, not a launcher: a shim script (asdf,
 * mise, a `.cmd`) stays the same file while the ripgrep it starts changes, so
 * a verdict on it would outlive what it checked.
 */
export async function isNativeExecutable(binary: string): Promise<boolean> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    // Non-blocking, and judged by the handle itself: a FIFO put where the binary was would hold a blocking open for good.
    handle = await fs.promises.open(binary, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    if (!(await handle.stat()).isFile()) return false;
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    const magic = head.subarray(0, bytesRead).toString('hex');
    return NATIVE_MAGIC.includes(magic) || (process.platform === 'win32' && magic.startsWith('4d5a'));
  } catch {
    return false;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * Whether `binary`, its links followed, is a native program named `rg`: the
 * only file whose verdict is kept. A launcher that is itself native (mise's
 * shims are links to mise, which starts whichever ripgrep the folder's
 * settings name) stays the same file while the ripgrep it starts changes,
 * like a launcher script.
 */
export async function isRipgrepItself(binary: string): Promise<boolean> {
  let real: string;
  try {
    real = await fs.promises.realpath(binary);
  } catch {
    return false;
  }
  const name = path.basename(real);
  return (name === 'rg' || (process.platform === 'win32' && name.toLowerCase() === 'rg.exe')) && (await isNativeExecutable(real));
}

/**
 * The probe's directory: one per user, made once and kept, so a process
 * killed mid-probe leaves nothing new behind, and its verdicts outlive the
 * process.
 */
function defaultProbeDirectory(): string {
  const user = typeof process.getuid === 'function' ? String(process.getuid()) : (os.userInfo().username || 'user').replace(/[^A-Za-z0-9_-]/g, '_');
  return path.join(os.tmpdir(), `repo-discuss-rg-probe-${user}`);
}

/**
 * Makes `directory` if it is not there, and says whether it is a real
 * directory of this user's that no one else may write to: a shared temp
 * folder could hold someone else's, whose link or verdicts must not be
 * trusted.
 */
async function ensureOwnDirectory(directory: string): Promise<boolean> {
  try {
    await fs.promises.mkdir(directory, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const stats = await fs.promises.lstat(directory);
    if (!stats.isDirectory()) return false;
    if (process.platform === 'win32') return true;
    return stats.uid === process.getuid?.() && (stats.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * Runs `check` in a new private directory, removed after: when the shared
 * one is someone else's (made first by another user), the check is still
 * made, but nothing is kept.
 */
async function inFreshDirectory<T>(check: (directory: string) => Promise<T>): Promise<T> {
  const directory = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'repo-discuss-rg-probe-'));
  try {
    return await check(directory);
  } finally {
    await fs.promises.rm(directory, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * Puts a file and a symlink to it in the probe's directory. `unsupported`
 * where symlinks cannot be made (Windows without the privilege): the log line
 * is then taken on trust. Anything else that fails is `failed`.
 */
async function withProbeLink(directory: string): Promise<'ready' | 'unsupported' | 'failed'> {
  const link = path.join(directory, 'link.txt');
  try {
    await fs.promises.writeFile(path.join(directory, 'target.txt'), 'probe\n');
    if (!(await isProbeLink(link))) {
      // Something else in its place (a file left by an older version, a link elsewhere) would fail every check to come: it is made again.
      await fs.promises.rm(link, { force: true });
      await fs.promises.symlink('target.txt', link);
    }
    return (await isProbeLink(link)) ? 'ready' : 'failed';
  } catch (error) {
    return process.platform === 'win32' && (error as NodeJS.ErrnoException).code === 'EPERM' ? 'unsupported' : 'failed';
  }
}

async function isProbeLink(link: string): Promise<boolean> {
  try {
    return (await fs.promises.readlink(link)) === 'target.txt';
  } catch {
    return false;
  }
}

/**
 * Resolves the `ripgrepPath` option to a working ripgrep, or undefined (the
 * pure-Node path is used). Looked up once per binary per process, and
 * checked then (probeRipgrep: run, or answered by a verdict kept from an
 * earlier process).
 */
export function findRipgrep(option: RipgrepOption, env: NodeJS.ProcessEnv = process.env): Promise<Ripgrep | undefined> {
  if (option === null) return Promise.resolve(undefined);
  const key = option === undefined || option === '' ? '\0PATH' : path.resolve(option);
  let pending = located.get(key);
  if (!pending) {
    pending = (async () => {
      const binary = key === '\0PATH' ? await findOnPath(env) : (await isExecutableFile(key)) ? key : undefined;
      return binary ? probeRipgrep(binary) : undefined;
    })().catch(() => undefined);
    located.set(key, pending);
  }
  return pending;
}

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseQuotedPath, quotedPath } from '../../../shared/printablePath';
import { describeDenial, ReadDenial, ReadDenialKind, ReadDenyRules } from './secrets';
import { isSameOrInside } from '../../../shared/pathContainment';

/**
 * The read boundary: every path the model names is resolved to its real path
 * and refused unless that real path is the folder root or inside it, and not
 * denied. An earlier design checked paths lexically, and a committed symlink
 * (`docs -> /home/me`) read straight through it.
 */

/** Longer requests are refused before touching the file system (and are never legitimate here). */
export const MAX_REQUESTED_PATH_LENGTH = 4096;
/** Same bound the kernel uses for symlink chains; stops loops. */
const MAX_SYMLINK_HOPS = 40;

export type PathKind = 'file' | 'directory' | 'other';

export interface ResolvedPath {
  ok: true;
  /** Real path: no symlinks in any component, inside the root. */
  realPath: string;
  /** The real path relative to the root with `/` separators; `.` for the root itself. */
  relativePath: string;
  kind: PathKind;
  size: number;
}

export type RefusalKind = 'invalid' | 'outside' | 'not_found' | 'denied' | 'loop';

export interface RefusedPath {
  ok: false;
  kind: RefusalKind;
  /** Short, model-facing, reveals nothing about paths outside the root. */
  message: string;
  /** For `denied`: which rule (a secret, .git, the policy), so an attachment's chip can say why. */
  denial?: ReadDenialKind;
}

export type PathResolution = ResolvedPath | RefusedPath;

// Re-exported: the server's modules take it from here, with the rest of the boundary.
export { isSameOrInside };

export function toPosix(relativePath: string): string {
  return path.sep === '/' ? relativePath : relativePath.split(path.sep).join('/');
}

/** Keeps echoed model input short in messages. */
export function shortenForMessage(requested: string): string {
  return requested.length > 200 ? `${requested.slice(0, 200)}…` : requested;
}

/** Echoed input in double quotes, escaped when it holds a line break, control or bidi character. */
function quoteForMessage(requested: string): string {
  return quotedPath(shortenForMessage(requested));
}

function outsideMessage(requested: string): string {
  // Deliberately the same whether or not the outside path exists.
  return `Refused: ${quoteForMessage(requested)} is outside the folder this discussion can read. Use a path relative to the folder root (list_dir with no path shows the top level).`;
}

function notFoundMessage(requested: string): string {
  return `Not found: ${quoteForMessage(requested)} does not exist in the folder. Use list_dir or find_files to see what is there.`;
}

function kindOf(stats: fs.Stats): PathKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  return 'other';
}

/**
 * One file-system call a resolution needs (ReadBoundary's `resolution`),
 * made by the caller: awaited (`resolve`) or blocking (`resolveSync`), so
 * both follow the one set of checks.
 */
interface FileSystemCall {
  call: 'lstat' | 'stat' | 'readlink' | 'realpath';
  path: string;
}

type Resolution = Generator<FileSystemCall, PathResolution, unknown>;

const AWAITED_CALLS: Record<FileSystemCall['call'], (path: string) => Promise<unknown>> = {
  lstat: (target) => fs.promises.lstat(target),
  stat: (target) => fs.promises.stat(target),
  readlink: (target) => fs.promises.readlink(target),
  realpath: (target) => fs.promises.realpath(target),
};

const BLOCKING_CALLS: Record<FileSystemCall['call'], (path: string) => unknown> = {
  lstat: (target) => fs.lstatSync(target),
  stat: (target) => fs.statSync(target),
  readlink: (target) => fs.readlinkSync(target),
  // The system's realpath, as fs.promises.realpath uses: fs.realpathSync walks the path in JavaScript.
  realpath: (target) => fs.realpathSync.native(target),
};

async function answeredAsync(resolution: Resolution): Promise<PathResolution> {
  let step = resolution.next();
  while (!step.done) {
    let answer: unknown;
    try {
      answer = await AWAITED_CALLS[step.value.call](step.value.path);
    } catch (error) {
      step = resolution.throw(error);
      continue;
    }
    step = resolution.next(answer);
  }
  return step.value;
}

function answeredSync(resolution: Resolution): PathResolution {
  let step = resolution.next();
  while (!step.done) {
    let answer: unknown;
    try {
      answer = BLOCKING_CALLS[step.value.call](step.value.path);
    } catch (error) {
      step = resolution.throw(error);
      continue;
    }
    step = resolution.next(answer);
  }
  return step.value;
}

export class ReadBoundary {
  private constructor(
    /** The root's real path. */
    readonly root: string,
    /** The root as given (resolved but not realpath'd), so absolute paths the user sees still work. */
    private readonly givenRoot: string,
    readonly denyRules: ReadDenyRules,
  ) {}

  static async create(root: string, denyReadGlobs: readonly string[] = []): Promise<ReadBoundary> {
    const givenRoot = path.resolve(root);
    const realRoot = await fs.promises.realpath(givenRoot);
    const stats = await fs.promises.stat(realRoot);
    if (!stats.isDirectory()) throw new Error(`Not a folder: ${root}`);
    return new ReadBoundary(realRoot, givenRoot, new ReadDenyRules(denyReadGlobs));
  }

  isInside(realPath: string): boolean {
    return isSameOrInside(this.root, realPath);
  }

  /** Root-relative `/`-separated form of a path inside the root; `.` for the root. */
  relativeOf(absolutePath: string): string {
    const relative = toPosix(path.relative(this.root, absolutePath));
    return relative === '' ? '.' : relative;
  }

  denialOf(relativePath: string): ReadDenial | undefined {
    return relativePath === '.' ? undefined : this.denyRules.denialOf(relativePath);
  }

  /**
   * Resolves a path the model supplied: relative to the root, absolute, a
   * `file:` URI, or a name as the tools print it quoted (`"a\nb.txt"`, see
   * printablePath.ts). Percent-escapes in plain paths are literal and `~` is
   * not expanded, so a path means exactly one thing.
   */
  async resolve(requested: string): Promise<PathResolution> {
    return answeredAsync(this.resolution(requested));
  }

  /**
   * `resolve`, with each file-system call made blocking. Only for a worker
   * thread: there each promise's round trip through the thread pool cost far
   * more than the call (0.7 ms a link on vite, resolved after ripgrep's
   * listing and beside it). Never on the main thread, which streams every
   * discussion.
   */
  resolveSync(requested: string): PathResolution {
    return answeredSync(this.resolution(requested));
  }

  private *resolution(requested: string): Resolution {
    // A quoted form is read as the name it stands for first: the tools print
    // every name that starts with `"` quoted, so this is the reading that
    // matches their output. Both readings go through the whole boundary; the
    // literal one is the fallback for a file whose name really is quoted.
    const unquoted = typeof requested === 'string' ? parseQuotedPath(requested) : undefined;
    if (unquoted === undefined) return yield* this.literalResolution(requested);
    const named = yield* this.literalResolution(unquoted);
    if (named.ok || named.kind !== 'not_found') return named;
    const literal = yield* this.literalResolution(requested);
    return literal.ok || literal.kind !== 'not_found' ? literal : named;
  }

  private *literalResolution(requested: string): Resolution {
    if (typeof requested !== 'string') {
      return { ok: false, kind: 'invalid', message: 'Refused: the path must be a string.' };
    }
    if (requested.includes('\0')) {
      // Node rejects NUL anyway, but older C APIs would truncate at it.
      return { ok: false, kind: 'invalid', message: 'Refused: the path contains a NUL byte.' };
    }
    if (requested.length > MAX_REQUESTED_PATH_LENGTH) {
      return { ok: false, kind: 'invalid', message: `Refused: the path is longer than ${MAX_REQUESTED_PATH_LENGTH} characters.` };
    }

    let plainPath = requested;
    if (/^file:/i.test(requested)) {
      try {
        plainPath = fileURLToPath(requested);
      } catch {
        return { ok: false, kind: 'invalid', message: `Refused: ${quoteForMessage(requested)} is not a valid local file: URI. Use a path relative to the folder root.` };
      }
      if (plainPath.includes('\0')) {
        return { ok: false, kind: 'invalid', message: 'Refused: the path contains a NUL byte.' };
      }
    }

    let lexical = path.resolve(this.root, plainPath || '.');
    if (!isSameOrInside(this.root, lexical) && isSameOrInside(this.givenRoot, lexical)) {
      // The user may know the folder by a symlinked path (macOS /var -> /private/var).
      lexical = path.join(this.root, path.relative(this.givenRoot, lexical));
    }
    // Lexically outside: refuse without touching the file system, so the
    // answer cannot depend on whether the outside path exists.
    if (!isSameOrInside(this.root, lexical)) {
      return { ok: false, kind: 'outside', message: outsideMessage(requested) };
    }

    const requestedDenial = this.denialOf(this.relativeOf(lexical));
    if (requestedDenial) {
      // Checked on the requested path as well as the real one: `.env -> notes.txt` stays refused.
      return { ok: false, kind: 'denied', denial: requestedDenial.kind, message: describeDenial(this.relativeOf(lexical), requestedDenial) };
    }

    return yield* this.componentResolution(requested, lexical);
  }

  /**
   * Follows the path one component at a time from the root, reading each
   * symlink ourselves so a link that leaves the root is refused before
   * anything outside is stat'ed: a dangling link pointing out gets the same
   * answer as one pointing at an existing outside file.
   */
  private *componentResolution(requested: string, lexical: string): Resolution {
    let pending = path.relative(this.root, lexical).split(path.sep).filter((part) => part !== '' && part !== '.');
    let current = this.root;
    let hops = 0;

    while (pending.length > 0) {
      const name = pending.shift() as string;
      const next = path.join(current, name);
      let stats: fs.Stats;
      try {
        stats = (yield { call: 'lstat', path: next }) as fs.Stats;
      } catch {
        // ENOENT, ENOTDIR, ENAMETOOLONG, EACCES: all "not here" from inside the root.
        return { ok: false, kind: 'not_found', message: notFoundMessage(requested) };
      }
      if (!stats.isSymbolicLink()) {
        current = next;
        continue;
      }

      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) {
        return { ok: false, kind: 'loop', message: `Refused: ${quoteForMessage(requested)} goes through a symbolic link loop.` };
      }
      let target: string;
      try {
        target = (yield { call: 'readlink', path: next }) as string;
      } catch {
        return { ok: false, kind: 'not_found', message: notFoundMessage(requested) };
      }
      const targetPath = path.resolve(current, target);
      if (!isSameOrInside(this.root, targetPath)) {
        return { ok: false, kind: 'outside', message: outsideMessage(requested) };
      }
      const rewritten = path.join(targetPath, ...pending);
      if (!isSameOrInside(this.root, rewritten)) {
        return { ok: false, kind: 'outside', message: outsideMessage(requested) };
      }
      // A hop through a denied name is refused too (`notes -> .env.d/x`).
      const hopDenial = this.denialOf(this.relativeOf(rewritten));
      if (hopDenial) {
        return { ok: false, kind: 'denied', denial: hopDenial.kind, message: describeDenial(shortenForMessage(requested), hopDenial) };
      }
      pending = path.relative(this.root, rewritten).split(path.sep).filter((part) => part !== '' && part !== '.');
      current = this.root;
    }

    // Defense in depth: the OS's own answer must agree that we are inside.
    let realPath: string;
    let stats: fs.Stats;
    try {
      realPath = (yield { call: 'realpath', path: current }) as string;
      stats = (yield { call: 'stat', path: realPath }) as fs.Stats;
    } catch {
      return { ok: false, kind: 'not_found', message: notFoundMessage(requested) };
    }
    if (!this.isInside(realPath)) {
      return { ok: false, kind: 'outside', message: outsideMessage(requested) };
    }
    const relativePath = this.relativeOf(realPath);
    const realDenial = this.denialOf(relativePath);
    if (realDenial) {
      return { ok: false, kind: 'denied', denial: realDenial.kind, message: describeDenial(shortenForMessage(requested), realDenial) };
    }
    return { ok: true, realPath, relativePath, kind: kindOf(stats), size: stats.size };
  }
}

// ------------------------------------------------------------ opening safely

/**
 * Opening what `resolve` approved. A path checked and then opened by name can
 * change in between: a concurrent writer swapping a file (or a directory
 * above it) for a symlink to an outside file made read_file and both search
 * engines show outside content and names. So every content read and every
 * listing opens through here:
 *
 * - the last component is opened with O_NOFOLLOW, so a link that appeared
 *   there is refused by the kernel; O_NONBLOCK, so a FIFO swapped in (or
 *   committed as an ignore file) cannot hold the thread in open(2);
 * - after opening, the path is resolved again (realpath) and must still be
 *   the checked real path, and the file there must be the open one (same
 *   device and inode). A link swapped into a directory above is followed by
 *   open(2), but then either the re-resolved path differs, or it is the
 *   checked inside path holding another file than the open one: an outside
 *   file can pass only if it is that very inside file.
 * - on Linux the kernel's own name for the descriptor (/proc/self/fd/N) must
 *   also be the checked path, which closes the window between the realpath
 *   and the stat above.
 */

const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0);
const DIRECTORY_FLAGS = OPEN_FLAGS | (fs.constants.O_DIRECTORY ?? 0);
/** Where the kernel names open descriptors; listing through it lists the very directory opened. */
const PROC_FD = process.platform === 'linux' && fs.existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;

export type OpenRefusal = 'unopenable' | 'not_regular' | 'changed';

export type VerifiedOpen = { ok: true; fd: number; stats: fs.Stats } | { ok: false; refusal: OpenRefusal };

export type VerifiedHandle = { ok: true; handle: fs.promises.FileHandle; stats: fs.Stats } | { ok: false; refusal: OpenRefusal };

/** The model-facing words for a refused open. */
export function describeOpenRefusal(requested: string, refusal: OpenRefusal): string {
  if (refusal === 'changed') return `${quoteForMessage(requested)} changed while it was being read (it was replaced or moved); it is not shown. Try again.`;
  if (refusal === 'not_regular') return `${quoteForMessage(requested)} is not a regular file.`;
  return `${quoteForMessage(requested)} could not be opened.`;
}

function isExpectedKind(stats: fs.Stats, kind: 'file' | 'directory'): boolean {
  return kind === 'file' ? stats.isFile() : stats.isDirectory();
}

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * ELOOP: the last component became a symlink after it was checked (O_NOFOLLOW).
 * For a directory Linux answers ENOTDIR instead (O_DIRECTORY is checked first).
 */
function openFailure(error: unknown, kind: 'file' | 'directory'): OpenRefusal {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ELOOP' || (kind === 'directory' && code === 'ENOTDIR') ? 'changed' : 'unopenable';
}

function kernelNameMatchesSync(fd: number, checkedPath: string): boolean {
  if (!PROC_FD) return true;
  try {
    return fs.readlinkSync(`${PROC_FD}/${fd}`) === checkedPath;
  } catch {
    return false;
  }
}

/** The post-open check (see above), on a descriptor already fstat'ed. */
function verifyOpenedSync(fd: number, opened: fs.Stats, checkedPath: string): boolean {
  try {
    if (fs.realpathSync.native(checkedPath) !== checkedPath) return false;
    if (!sameFile(fs.statSync(checkedPath), opened)) return false;
  } catch {
    return false;
  }
  return kernelNameMatchesSync(fd, checkedPath);
}

/**
 * Opens a real path `resolve` returned (or one built from a verified
 * listing), for reading, and proves it is still that path. The caller closes
 * `fd`. Synchronous, for the search threads.
 */
export function openVerifiedSync(checkedPath: string, kind: 'file' | 'directory' = 'file'): VerifiedOpen {
  let fd: number;
  try {
    fd = fs.openSync(checkedPath, kind === 'file' ? OPEN_FLAGS : DIRECTORY_FLAGS);
  } catch (error) {
    return { ok: false, refusal: openFailure(error, kind) };
  }
  let refusal: OpenRefusal | undefined;
  let stats: fs.Stats | undefined;
  try {
    stats = fs.fstatSync(fd);
    if (!isExpectedKind(stats, kind)) refusal = 'not_regular';
    else if (!verifyOpenedSync(fd, stats, checkedPath)) refusal = 'changed';
  } catch {
    refusal = 'unopenable';
  }
  if (refusal !== undefined || !stats) {
    fs.closeSync(fd);
    return { ok: false, refusal: refusal ?? 'unopenable' };
  }
  return { ok: true, fd, stats };
}

/** `openVerifiedSync` for the server's event loop. The caller closes `handle`. */
export async function openVerified(checkedPath: string, kind: 'file' | 'directory' = 'file'): Promise<VerifiedHandle> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(checkedPath, kind === 'file' ? OPEN_FLAGS : DIRECTORY_FLAGS);
  } catch (error) {
    return { ok: false, refusal: openFailure(error, kind) };
  }
  let refusal: OpenRefusal | undefined;
  let stats: fs.Stats | undefined;
  try {
    stats = await handle.stat();
    if (!isExpectedKind(stats, kind)) {
      refusal = 'not_regular';
    } else {
      const again = await fs.promises.realpath(checkedPath);
      const there = await fs.promises.stat(checkedPath);
      const kernelName = PROC_FD ? await fs.promises.readlink(`${PROC_FD}/${handle.fd}`) : checkedPath;
      if (again !== checkedPath || !sameFile(there, stats) || kernelName !== checkedPath) refusal = 'changed';
    }
  } catch {
    refusal = refusal ?? 'changed';
  }
  if (refusal !== undefined || !stats) {
    await handle.close().catch(() => undefined);
    return { ok: false, refusal: refusal ?? 'unopenable' };
  }
  return { ok: true, handle, stats };
}

export type VerifiedListing = { ok: true; entries: fs.Dirent[] } | { ok: false; refusal: OpenRefusal };

/**
 * Lists a checked directory, proving the listing is of that directory: a
 * directory swapped for a link to an outside one between the check and the
 * readdir listed outside names. On Linux the open, verified descriptor is
 * listed through /proc/self/fd, so the names are that directory's whatever
 * happens to the path. Elsewhere the path is listed between two checks that
 * it still names the opened directory; a swap and a swap back inside that
 * window is not caught there.
 */
export function listVerifiedDirectorySync(checkedPath: string): VerifiedListing {
  const opened = openVerifiedSync(checkedPath, 'directory');
  if (!opened.ok) return opened;
  try {
    if (PROC_FD) return { ok: true, entries: fs.readdirSync(`${PROC_FD}/${opened.fd}`, { withFileTypes: true }) };
    const entries = fs.readdirSync(checkedPath, { withFileTypes: true });
    return verifyOpenedSync(opened.fd, opened.stats, checkedPath) ? { ok: true, entries } : { ok: false, refusal: 'changed' };
  } catch {
    return { ok: false, refusal: 'unopenable' };
  } finally {
    fs.closeSync(opened.fd);
  }
}

export type VerifiedEntry = { ok: true; stats: fs.Stats } | { ok: false; refusal: OpenRefusal | 'missing' };

/**
 * lstat of one entry of a checked directory, proving the entry is that
 * directory's: checked on its own and then stated by its path, an entry of a
 * directory swapped for a link to an outside one in between was an outside
 * file under an inside name (the warm file index listed its name). On Linux
 * the name is looked up in the open, verified descriptor through
 * /proc/self/fd; elsewhere the path is stated between two checks, as
 * listVerifiedDirectorySync lists it.
 */
export function lstatVerifiedEntrySync(checkedDirectory: string, name: string): VerifiedEntry {
  const opened = openVerifiedSync(checkedDirectory, 'directory');
  if (!opened.ok) return opened;
  try {
    if (PROC_FD) return { ok: true, stats: fs.lstatSync(`${PROC_FD}/${opened.fd}/${name}`) };
    const stats = fs.lstatSync(path.join(checkedDirectory, name));
    return verifyOpenedSync(opened.fd, opened.stats, checkedDirectory) ? { ok: true, stats } : { ok: false, refusal: 'changed' };
  } catch {
    return { ok: false, refusal: 'missing' };
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** A directory held open and listed, for opening the directories inside it (`openListedChildSync`). */
export type OpenListing = { ok: true; fd: number; entries: fs.Dirent[] } | { ok: false; refusal: OpenRefusal };

/**
 * Whether directories can be opened inside an open one (`openListedChildSync`):
 * on Linux, through /proc/self/fd.
 */
export const CAN_OPEN_INSIDE_OPEN_DIRECTORY = PROC_FD !== undefined;

/** `listVerifiedDirectorySync`, keeping the descriptor open; the caller closes `fd`. Linux only. */
export function openListedDirectorySync(checkedPath: string): OpenListing {
  const opened = openVerifiedSync(checkedPath, 'directory');
  if (!opened.ok) return opened;
  return listOpened(opened.fd);
}

/**
 * Opens and lists the directory `name` inside the open directory `parentFd`,
 * refusing it if it is a link there now (O_NOFOLLOW applies to `name`, and
 * the descriptor's /proc/self/fd entry is the directory the parent was
 * opened as, whatever happened to its path since). A chain of these from a
 * verified directory proves every listing is of a directory inside, without
 * the realpath and stat of each verified open, which were half the time of a
 * walk of names. The caller closes `fd`. Linux only.
 */
export function openListedChildSync(parentFd: number, name: string): OpenListing {
  let fd: number;
  try {
    fd = fs.openSync(`${PROC_FD}/${parentFd}/${name}`, DIRECTORY_FLAGS);
  } catch (error) {
    return { ok: false, refusal: openFailure(error, 'directory') };
  }
  return listOpened(fd);
}

/**
 * Opens the file `name` inside the open directory `parentFd` for reading,
 * refusing it if it is a link there now or not a regular file: the file
 * counterpart of `openListedChildSync`, for a walk that reads what it lists
 * (grep_files without ripgrep). One open and one fstat, where the verified
 * open also resolves, stats and reads back the whole path: on vite's 2,800
 * files that was most of a grep's time. The caller closes `fd`. Linux only.
 */
export function openChildFileSync(parentFd: number, name: string): VerifiedOpen {
  let fd: number;
  try {
    fd = fs.openSync(`${PROC_FD}/${parentFd}/${name}`, OPEN_FLAGS);
  } catch (error) {
    return { ok: false, refusal: openFailure(error, 'file') };
  }
  try {
    const stats = fs.fstatSync(fd);
    if (stats.isFile()) return { ok: true, fd, stats };
    fs.closeSync(fd);
    return { ok: false, refusal: 'not_regular' };
  } catch {
    fs.closeSync(fd);
    return { ok: false, refusal: 'unopenable' };
  }
}

function listOpened(fd: number): OpenListing {
  try {
    return { ok: true, fd, entries: fs.readdirSync(`${PROC_FD}/${fd}`, { withFileTypes: true }) };
  } catch {
    fs.closeSync(fd);
    return { ok: false, refusal: 'unopenable' };
  }
}

/** `listVerifiedDirectorySync` for the server's event loop. */
export async function listVerifiedDirectory(checkedPath: string): Promise<VerifiedListing> {
  const opened = await openVerified(checkedPath, 'directory');
  if (!opened.ok) return opened;
  try {
    if (PROC_FD) return { ok: true, entries: await fs.promises.readdir(`${PROC_FD}/${opened.handle.fd}`, { withFileTypes: true }) };
    const entries = await fs.promises.readdir(checkedPath, { withFileTypes: true });
    const again = await fs.promises.realpath(checkedPath);
    const there = await fs.promises.stat(checkedPath);
    return again === checkedPath && sameFile(there, opened.stats) ? { ok: true, entries } : { ok: false, refusal: 'changed' };
  } catch {
    return { ok: false, refusal: 'unopenable' };
  } finally {
    await opened.handle.close().catch(() => undefined);
  }
}

/**
 * Reads at most `maxBytes` from the start of an opened file. A file that
 * grows while it is read (or is a huge sparse file by now) is not followed:
 * reading stops at the bound whatever the file does. Reading `limit + 1`
 * bytes tells a file over a limit from one at it.
 */
export async function readHead(handle: fs.promises.FileHandle, maxBytes: number): Promise<Buffer> {
  const buffer = Buffer.alloc(maxBytes);
  let filled = 0;
  while (filled < maxBytes) {
    const { bytesRead } = await handle.read(buffer, filled, maxBytes - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** readHead for a descriptor, for the synchronous walk. */
export function readHeadSync(fd: number, maxBytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(maxBytes);
  let filled = 0;
  while (filled < maxBytes) {
    const read = fs.readSync(fd, buffer, filled, maxBytes - filled, filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

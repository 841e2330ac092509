import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseQuotedPath, quotedPath } from '../../../shared/printablePath';
import { describeDenial, ReadDenial, ReadDenyRules } from './secrets';

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
}

export type PathResolution = ResolvedPath | RefusedPath;

/** Whether `candidate` is `parent` or inside it. Separator-aware: `/repo-other` is not inside `/repo`. */
export function isSameOrInside(parent: string, candidate: string): boolean {
  const relative = path.relative(parent, candidate);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false; // other drive on Windows
  return relative !== '..' && !relative.startsWith(`..${path.sep}`);
}

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
    // A quoted form is read as the name it stands for first: the tools print
    // every name that starts with `"` quoted, so this is the reading that
    // matches their output. Both readings go through the whole boundary; the
    // literal one is the fallback for a file whose name really is quoted.
    const unquoted = typeof requested === 'string' ? parseQuotedPath(requested) : undefined;
    if (unquoted === undefined) return this.resolveLiteral(requested);
    const named = await this.resolveLiteral(unquoted);
    if (named.ok || named.kind !== 'not_found') return named;
    const literal = await this.resolveLiteral(requested);
    return literal.ok || literal.kind !== 'not_found' ? literal : named;
  }

  private async resolveLiteral(requested: string): Promise<PathResolution> {
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
      return { ok: false, kind: 'denied', message: describeDenial(this.relativeOf(lexical), requestedDenial) };
    }

    return this.resolveComponents(requested, lexical);
  }

  /**
   * Follows the path one component at a time from the root, reading each
   * symlink ourselves so a link that leaves the root is refused before
   * anything outside is stat'ed: a dangling link pointing out gets the same
   * answer as one pointing at an existing outside file.
   */
  private async resolveComponents(requested: string, lexical: string): Promise<PathResolution> {
    let pending = path.relative(this.root, lexical).split(path.sep).filter((part) => part !== '' && part !== '.');
    let current = this.root;
    let hops = 0;

    while (pending.length > 0) {
      const name = pending.shift() as string;
      const next = path.join(current, name);
      let stats: fs.Stats;
      try {
        stats = await fs.promises.lstat(next);
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
        target = await fs.promises.readlink(next);
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
        return { ok: false, kind: 'denied', message: describeDenial(shortenForMessage(requested), hopDenial) };
      }
      pending = path.relative(this.root, rewritten).split(path.sep).filter((part) => part !== '' && part !== '.');
      current = this.root;
    }

    // Defense in depth: the OS's own answer must agree that we are inside.
    let realPath: string;
    let stats: fs.Stats;
    try {
      realPath = await fs.promises.realpath(current);
      stats = await fs.promises.stat(realPath);
    } catch {
      return { ok: false, kind: 'not_found', message: notFoundMessage(requested) };
    }
    if (!this.isInside(realPath)) {
      return { ok: false, kind: 'outside', message: outsideMessage(requested) };
    }
    const relativePath = this.relativeOf(realPath);
    const realDenial = this.denialOf(relativePath);
    if (realDenial) {
      return { ok: false, kind: 'denied', message: describeDenial(shortenForMessage(requested), realDenial) };
    }
    return { ok: true, realPath, relativePath, kind: kindOf(stats), size: stats.size };
  }
}

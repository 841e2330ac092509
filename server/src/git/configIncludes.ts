import * as fs from 'node:fs';
import * as path from 'node:path';
import { inertLine, printablePath } from '../../../shared/printablePath';
import { isSameOrInside, toPosix } from '../access/boundary';
import { readSmallFile } from './gitDirContents';
import type { Readable } from './gitDirOwnership';

/**
 * The files the repository's config has git read as config besides itself.
 * `[include] path = …` or `[includeIf "<condition>"] path = …` in
 * `.git/config` (or `config.worktree`) had git read any file on the machine
 * as config: one outside the folder, the folder's `.env` (whose lines git
 * may quote in an error), or a FIFO that held every git run until its
 * timeout; and what it read could set what the command-scope overrides do
 * not pin. Every include, whatever its condition, must lead to a file the
 * folder's read rules allow (the rule a link in `.git` is held to), and the
 * includes of that file are checked the same way, to git's depth.
 *
 * This runs before any git command that reads the config with its includes
 * (`rev-parse` does). git lists the include keys with its own parser and
 * `--no-includes`; an included file is opened here, non-blocking, and given
 * to git on stdin, so git never opens one itself during the check. git finds
 * the repository's own config files as it does for every command; a path it
 * prints relative is relative to where it found the repository, which it
 * reports through GIT_TRACE_SETUP without reading any config.
 */

/**
 * Answers `git config <args>` run in the folder, `input` on its stdin;
 * `rejected` when git ran and refused what it read (a parse error), rather
 * than not running. Injected, so this module runs no git itself.
 */
export type ConfigQuery = (
  args: readonly string[],
  options?: { input?: Buffer; traceSetup?: boolean },
) => Promise<{ ok: true; stdout: string; stderr: string } | { ok: false; message: string; rejected: boolean }>;

export type IncludeCheck = { ok: true } | { ok: false; message: string };

/**
 * The keys git follows (config.c, git_config_include): `include.path` and
 * `includeif.<condition>.path`. git lowercases section and key names
 * (`[IncludeIf "…"] PATH` is listed as `includeif.….path`), never the
 * condition; `include.<anything>.path` and `includeif.path` it ignores.
 */
const INCLUDE_KEYS = '^include\\.path$|^includeif\\..*\\.path$';
const LIST_INCLUDES = ['--no-includes', '-z', '--get-regexp', INCLUDE_KEYS];

const CONFIG_INCLUDE_LIMITS = {
  /** git's own (config.c, MAX_INCLUDE_DEPTH): one level deeper and it stops with an error. */
  maxDepth: 10,
  /** Included files parsed in one check: includes may fan out at every level. */
  maxFiles: 64,
  /** An included file is a few settings; a larger one is not read through. */
  maxBytes: 256 * 1024,
};

/** One include: `value` as written in `from` (a path as git names it, absolute), leading to a file `depth` includes deep (1: included by the repository's own config). */
interface Include {
  from: string;
  value: string;
  depth: number;
}

const NOT_USABLE = 'not a git repository the tools can use';

function refusal(root: string, include: Include, found: string, advice = 'Remove that include to use them.'): IncludeCheck {
  const where = printablePath(toPosix(path.relative(root, include.from)) || '.');
  const value = include.value.length > 200 ? `${include.value.slice(0, 200)}…` : include.value;
  return { ok: false, message: `${NOT_USABLE}: its config (${where}) includes ${found} (path = ${inertLine(value)}); the git tools are off for this folder. ${advice}` };
}

const UNCHECKED: IncludeCheck = {
  ok: false,
  message: `${NOT_USABLE}: its config includes other files, and where they lead could not be worked out; the git tools are off for this folder.`,
};

/** `git config -z` entries: with `--show-origin`, `origin NUL key LF value NUL`; a key with no `=` has no LF and no value. */
function parseListing(stdout: string, withOrigin: boolean): Array<{ origin: string; value: string | undefined }> | undefined {
  const tokens = stdout.split('\0');
  if (tokens.pop() !== '') return undefined; // every entry ends in NUL
  const step = withOrigin ? 2 : 1;
  if (tokens.length % step !== 0) return undefined;
  const entries: Array<{ origin: string; value: string | undefined }> = [];
  for (let i = 0; i < tokens.length; i += step) {
    const entry = tokens[i + step - 1];
    const newline = entry.indexOf('\n');
    entries.push({ origin: withOrigin ? tokens[i] : '', value: newline < 0 ? undefined : entry.slice(newline + 1) });
  }
  return entries;
}

const SETUP_CWD = ' setup: cwd: ';

/**
 * Where git ran once it had found the repository (GIT_TRACE_SETUP's `setup:
 * cwd:`): the folder or a directory above it. git ends the line with `\n`
 * alone and escapes `\`, `\n` and `\r` in the path (trace.c quote_crlf); read
 * with a multiline regular expression, a U+2028 in a directory name cut the
 * path short, and the includes were checked from another directory than
 * git's.
 */
function setupCwd(stderr: string, root: string): string | undefined {
  const reported = stderr
    .split('\n')
    .filter((line) => line.includes(SETUP_CWD))
    .map((line) => line.slice(line.indexOf(SETUP_CWD) + SETUP_CWD.length).replace(/\\([\\nr])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : '\\')));
  if (reported.length !== 1 || !path.isAbsolute(reported[0])) return undefined;
  return isSameOrInside(reported[0], root) ? reported[0] : undefined;
}

/**
 * The path git opens for an include (config.c, handle_path_include); undefined
 * for `~…` and `%(prefix)/…`, which lead to a home directory or to git's
 * installation, never into the folder.
 */
function includedPath(from: string, value: string): string | undefined {
  if (value.startsWith('~') || value.startsWith('%(prefix)/')) return undefined;
  if (path.isAbsolute(value)) return value;
  // Joined as text and resolved by the file system, as git's open resolves it: `..` after a link leaves the link's target.
  return `${path.dirname(from)}${path.sep}${value}`;
}

type Place = { kind: 'present' | 'absent'; real: string } | { kind: 'nowhere' };

/**
 * The real path an include leads to. git skips an include with nothing at
 * its path; that is allowed where a file may be, by its directory's real
 * path, and a file put there later meets this check on the next call. A
 * broken link or a missing directory leads nowhere that can be checked.
 */
async function placeOf(file: string): Promise<Place> {
  try {
    return { kind: 'present', real: await fs.promises.realpath(file) };
  } catch {
    // below
  }
  const name = path.basename(file);
  if (name === '' || name === '.' || name === '..') return { kind: 'nowhere' };
  try {
    await fs.promises.lstat(file);
    return { kind: 'nowhere' }; // something is there (a dangling link, a loop), leading where it cannot be told
  } catch {
    // nothing at that name
  }
  try {
    return { kind: 'absent', real: path.join(await fs.promises.realpath(path.dirname(file)), name) };
  } catch {
    return { kind: 'nowhere' };
  }
}

/**
 * Whether every include in the repository's config, followed as git follows
 * it, leads to a file `readable` allows (`root`: the folder, to tell outside
 * from denied in the message).
 */
export async function checkConfigIncludes(root: string, query: ConfigQuery, readable: Readable): Promise<IncludeCheck> {
  const listed = await query(['--show-origin', ...LIST_INCLUDES], { traceSetup: true });
  if (!listed.ok) return { ok: false, message: listed.message };
  const own = parseListing(listed.stdout, true);
  if (!own) return UNCHECKED;
  const queue: Include[] = [];
  for (const { origin, value } of own) {
    // No value: git stops with an error at a true condition and reads nothing either way.
    if (value === undefined) continue;
    // Only files are read here (system and global config are /dev/null, command-scope config is ours).
    if (!origin.startsWith('file:')) return UNCHECKED;
    let from = origin.slice('file:'.length);
    if (!path.isAbsolute(from)) {
      const top = setupCwd(listed.stderr, root);
      if (top === undefined) return UNCHECKED;
      from = `${top}${path.sep}${from}`;
    }
    queue.push({ from, value, depth: 1 });
  }
  // The directories of the repository's own config files: its git directory (and a worktree's), which git reads
  // whatever the config says. A file there is no secret of the folder's; git's relative include from
  // `.git/config` lands there (`path = config.local`), and was refused as a file the tools may not read.
  const gitDirectories = await Promise.all([...new Set(queue.map((include) => path.dirname(include.from)))].map((directory) => fs.promises.realpath(directory).catch(() => undefined)));
  const inGitDirectory = (real: string): boolean => gitDirectories.some((directory) => directory !== undefined && isSameOrInside(directory, real));
  let parsed = 0;
  for (let include = queue.shift(); include; include = queue.shift()) {
    const outside = () => refusal(root, include, 'a file outside this folder, which git would read as config', 'Remove that include, or point it at a file in the folder, to use them.');
    const file = includedPath(include.from, include.value);
    if (file === undefined) return outside();
    const place = await placeOf(file);
    // Leading nowhere, the path's text tells outside from inside, for the message only.
    if (!isSameOrInside(root, place.kind === 'nowhere' ? path.resolve(file) : place.real)) return outside();
    if (place.kind === 'nowhere') return refusal(root, include, 'a path that leads nowhere that can be checked (a broken link, or a directory that does not exist)');
    if (!readable(place.real, false) && !inGitDirectory(place.real)) return refusal(root, include, 'a file the tools may not read, which git would read as config and could quote in an error');
    if (place.kind === 'absent') continue;
    if (include.depth > CONFIG_INCLUDE_LIMITS.maxDepth) return refusal(root, include, 'files nested deeper than git follows');
    if (++parsed > CONFIG_INCLUDE_LIMITS.maxFiles) return refusal(root, include, 'more files than can be checked on each call (this one among them)');
    const read = await readSmallFile(place.real, CONFIG_INCLUDE_LIMITS.maxBytes);
    if (read.kind !== 'text') {
      return refusal(
        root,
        include,
        `something other than a plain file that can be opened (a FIFO or device git would wait on or read without end, a directory, an unreadable file or one over ${CONFIG_INCLUDE_LIMITS.maxBytes / 1024} KiB)`,
      );
    }
    const nested = await query(['--file', '-', ...LIST_INCLUDES], { input: Buffer.from(read.text, 'utf8') });
    if (!nested.ok) return nested.rejected ? refusal(root, include, 'a file git cannot read as config', 'Fix or remove that include to use them.') : { ok: false, message: nested.message };
    const entries = parseListing(nested.stdout, false);
    if (!entries) return UNCHECKED;
    // Relative to the included file's path as git names it (the link, when it is one), not to where a link leads.
    for (const { value } of entries) if (value !== undefined) queue.push({ from: file, value, depth: include.depth + 1 });
  }
  return { ok: true };
}

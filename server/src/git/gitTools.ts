import * as path from 'node:path';
import { escapeLineBreaks, inertLine, inertText, printablePath } from '../../../shared/printablePath';
import { isSameOrInside, type ReadBoundary, toPosix } from '../access/boundary';
import { attributeFileFault, attributeFolders } from './attributeFiles';
import { stripCarriageReturn } from '../read/answers';
import type { ToolOutcome } from '../read/types';
import { DIFF_CAP_BYTES, filterPatch, parseNumstat, quotePathForDisplay, unquoteGitPath } from './diffFilter';
import { describeFailure, type GitRepository, type GitRun, openRepository, runInRepository, SAFE_DIFF_FLAGS } from './gitRunner';

/**
 * The four read-only git tools: git_diff, git_log, git_show, git_blame. Each
 * runs git through gitRunner (nothing the repository configures runs), shows
 * paths relative to the discussion's folder and nothing outside it, and puts
 * every path through the read boundary: secrets and policy-denied files are
 * named at most, never shown.
 */

export const GIT_LIMITS = Object.freeze({
  diffCapBytes: DIFF_CAP_BYTES,
  logMaxCount: 50,
  logDefaultCount: 20,
  logMaxFilesPerCommit: 30,
  logCapBytes: 64 * 1024,
  blameMaxLines: 400,
  showMessageMaxBytes: 16 * 1024,
});

/** The empty tree: what an unborn HEAD is compared against. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/**
 * A plausible revision: names, hashes, `~`/`^` suffixes, `@{…}`. No leading
 * `-` (it would be read as an option), no `..` ranges, no `:` (blob paths),
 * no spaces or control characters.
 */
const PLAUSIBLE_REVISION = /^(?!-)(?!.*\.\.)[A-Za-z0-9_./~^@{}+-]{1,200}$/;

const failed = (output: string): ToolOutcome => ({ ok: false, output });

/**
 * The call's answer when a step falls short (an argument, the repository, a
 * git run): thrown there, so each tool reads as its steps, and answered by
 * `guarded` with its message.
 */
class Refusal extends Error {}

/** Never throws into the caller: a refusal is answered with its message, any surprise with a plain failure. */
function guarded(name: string, run: (boundary: ReadBoundary, args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome>) {
  return async (boundary: ReadBoundary, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome> => {
    try {
      if (signal?.aborted) return failed('Cancelled.');
      return await run(boundary, args ?? {}, signal);
    } catch (err) {
      return failed(err instanceof Refusal ? err.message : `The ${name} call failed. Try again with other arguments.`);
    }
  };
}

// ---------------------------------------------------------------------------
// Arguments

type Resolved<T> = { ok: true; value: T } | { ok: false; message: string };

/** The resolved value; else the call is refused with the message. */
function required<T>(resolved: Resolved<T>): T {
  if (!resolved.ok) throw new Refusal(resolved.message);
  return resolved.value;
}

/** A run that failed refuses the call with what went wrong; one cut at its byte bound is read as far as it goes. */
function refuseIfFailed(run: GitRun, what: string): void {
  if (run.failure || (run.code !== 0 && !run.truncated)) throw new Refusal(describeFailure(run, what));
}

/**
 * A `path` argument as a pathspec relative to the folder. Resolved through
 * the boundary; a path that no longer exists (a deleted file has history)
 * is accepted when it is lexically inside the folder and not denied.
 */
async function resolvePathArgument(boundary: ReadBoundary, requested: unknown): Promise<string> {
  if (typeof requested !== 'string' || requested === '') throw new Refusal('Refused: the path must be a non-empty string.');
  const resolved = await boundary.resolve(requested);
  if (resolved.ok) return resolved.relativePath;
  if (resolved.kind !== 'not_found' || /^file:/i.test(requested)) throw new Refusal(resolved.message);
  const lexical = path.resolve(boundary.root, requested);
  if (!boundary.isInside(lexical)) throw new Refusal(resolved.message);
  const relative = boundary.relativeOf(lexical);
  if (boundary.denialOf(relative)) throw new Refusal(resolved.message);
  return relative;
}

/** A pathspec that means exactly this path (no glob magic), relative to the folder. */
const literalPathspec = (relative: string) => (relative === '.' ? '.' : `:(literal)${relative}`);

/** The pathspec of an optional `path` argument: the whole folder when there is none. */
async function pathspecOf(boundary: ReadBoundary, requested: unknown): Promise<string> {
  return requested === undefined ? '.' : literalPathspec(await resolvePathArgument(boundary, requested));
}

/** Resolves a revision the model named to a full commit hash; the hash is what git is given afterwards. */
async function resolveCommit(repo: GitRepository, revision: unknown, what: string, signal?: AbortSignal): Promise<Resolved<string>> {
  if (typeof revision !== 'string' || !PLAUSIBLE_REVISION.test(revision)) {
    return { ok: false, message: `Invalid ${what}: give a commit hash, branch, tag or expression like HEAD~2 (no spaces, no leading "-", no ".." ranges).` };
  }
  const run = await runInRepository(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`], { signal, maxBytes: 4096 });
  if (run.failure) return { ok: false, message: describeFailure(run, 'git rev-parse') };
  const hash = run.stdout.toString('utf8').trim();
  if (run.code !== 0 || !/^[0-9a-f]{40,64}$/.test(hash)) {
    const shallowNote = repo.shallow ? ' This is a shallow clone: the commit may be older than the history it holds (fetch more with `git fetch --deepen`).' : '';
    return { ok: false, message: `Unknown ${what} "${inertLine(revision)}": no such commit in this repository.${shallowNote}` };
  }
  return { ok: true, value: hash };
}

async function headCommit(repo: GitRepository, signal?: AbortSignal): Promise<string | undefined> {
  const run = await runInRepository(repo, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { signal, maxBytes: 4096 });
  const hash = run.stdout.toString('utf8').trim();
  return run.code === 0 && /^[0-9a-f]{40,64}$/.test(hash) ? hash : undefined;
}

/** HEAD of the repository the folder is in; undefined when it is not one (or has no commit). */
export async function headCommitOf(boundary: ReadBoundary, signal?: AbortSignal): Promise<string | undefined> {
  const opened = await openRepository(boundary, signal);
  return opened.ok ? headCommit(opened.repo, signal) : undefined;
}

/** The repository the folder is in; else the call is refused with why it cannot be used. */
async function open(boundary: ReadBoundary, signal?: AbortSignal): Promise<GitRepository> {
  const opened = await openRepository(boundary, signal);
  if (!opened.ok) throw new Refusal(opened.message);
  return opened.repo;
}

// ---------------------------------------------------------------------------
// Diffs (git_diff, git_show)

interface BoundedDiff {
  text: string;
  files: number;
  added: number;
  deleted: number;
  hidden: string[];
}

/**
 * A diff of `revisions` (git diff / git show arguments) limited to the
 * folder, or to `pathspec`: the file list first (`--numstat`), then the
 * patch with every denied path excluded, then filtered again section by
 * section in case a pathspec missed one.
 */
async function boundedDiff(
  boundary: ReadBoundary,
  repo: GitRepository,
  command: readonly string[],
  pathspec: string,
  signal?: AbortSignal,
): Promise<BoundedDiff> {
  const common = [...command, ...SAFE_DIFF_FLAGS, '--relative'];
  await refuseWaitingAttributes(repo, await pathsDiffed(repo, command, common, pathspec, signal), signal);
  const numstat = await runInRepository(repo, [...common, '--numstat', '-z', '--', pathspec], { signal });
  if (numstat.failure || numstat.code !== 0) throw new Refusal(describeFailure(numstat, 'git diff'));
  const stats = parseNumstat(numstat.stdout.toString('utf8'));
  const denied = stats.filter((stat) => boundary.denialOf(stat.path)).map((stat) => `:(exclude,literal)${stat.path}`);
  const patch = await runInRepository(repo, [...common, '-p', '--', pathspec, ...denied], { signal, maxBytes: 2 * 1024 * 1024 });
  refuseIfFailed(patch, 'git diff');
  // A CR or U+2028 inside a line could pose as further diff lines, so they are escaped, before the cap so that it
  // counts what is shown. Unlike read_file, a CRLF line's last CR stays (as \r): the line ending may be the change.
  const filtered = filterPatch(boundary, escapeLineBreaks(patch.stdout.toString('utf8')), stats, patch.truncated);
  const shown = stats.filter((stat) => !boundary.denialOf(stat.path));
  return {
    text: filtered.text,
    files: shown.length,
    added: shown.reduce((sum, stat) => sum + (stat.added ?? 0), 0),
    deleted: shown.reduce((sum, stat) => sum + (stat.deleted ?? 0), 0),
    hidden: filtered.hidden,
  };
}

/** Lists of paths can be long: a work tree of 100,000 files lists about 5 MB. */
const PATH_LIST_MAX_BYTES = 32 * 1024 * 1024;

function nulSeparated(run: GitRun): string[] {
  return run.stdout.toString('utf8').split('\0').filter((entry) => entry !== '');
}

/**
 * The paths, relative to the folder, whose contents a diff reads: its files,
 * by name only (which reads no contents) for a diff of commits or of the index;
 * for one against the working tree, every tracked file and every file of the
 * commit it compares with, since refreshing the index reads whichever files
 * changed. A list cut at its cap checks what it holds. `withFlags`: the
 * command with the flags the diff itself runs with.
 */
async function pathsDiffed(repo: GitRepository, command: readonly string[], withFlags: readonly string[], pathspec: string, signal?: AbortSignal): Promise<string[]> {
  const revisions = command.slice(1).filter((argument) => !argument.startsWith('-'));
  const readsWorkTree = command[0] === 'diff' && !command.includes('--cached') && revisions.length <= 1;
  const list = async (args: readonly string[]): Promise<string[]> => {
    const run = await runInRepository(repo, args, { signal, maxBytes: PATH_LIST_MAX_BYTES });
    refuseIfFailed(run, 'git diff');
    return nulSeparated(run);
  };
  if (!readsWorkTree) return list([...withFlags, '--name-only', '-z', '--', pathspec]);
  const tracked = await list(['ls-files', '-z']);
  return revisions.length === 0 ? tracked : [...tracked, ...(await list(['ls-tree', '-r', '-z', '--name-only', revisions[0]]))];
}

/** Refuses before git runs when it would wait on a `.gitattributes` of the work tree for these paths (attributeFiles.ts). */
async function refuseWaitingAttributes(repo: GitRepository, paths: Iterable<string>, signal?: AbortSignal): Promise<void> {
  const fault = await attributeFileFault(attributeFolders(repo.top, repo.cwd, paths), signal);
  if (fault === undefined) return;
  const where = printablePath(isSameOrInside(repo.cwd, fault) ? toPosix(path.relative(repo.cwd, fault)) : fault);
  throw new Refusal(`${where} is not a regular file (a FIFO or a device): git would wait on it for the attributes of the files it compares. Replace it with a plain file, or remove it, and ask again.`);
}

/** git_diff's answer: the diff of `what`, or that there is none (`where` says what it was limited to). */
function diffAnswer(diff: BoundedDiff, what: string, where: string): ToolOutcome {
  const { files, added, deleted, text } = diff;
  if (files === 0 && diff.hidden.length === 0) return { ok: true, output: `No ${what}${where}. (Untracked files are not part of git diffs.)` };
  return { ok: true, output: `Diff of ${what}: ${files} file(s), +${added} −${deleted}.\n\n${text}` };
}

/** The base of a branch diff: the upstream, else the default branch (origin/HEAD, main, master). */
async function defaultBase(repo: GitRepository, signal?: AbortSignal): Promise<{ name: string; hash: string } | undefined> {
  for (const name of ['@{upstream}', 'refs/remotes/origin/HEAD', 'refs/heads/main', 'refs/heads/master', 'refs/remotes/origin/main', 'refs/remotes/origin/master']) {
    const resolved = await resolveCommit(repo, name, 'base', signal);
    if (resolved.ok) return { name, hash: resolved.value };
  }
  return undefined;
}

export const gitDiff = guarded('git_diff', async (boundary, args, signal) => {
  const scope = args.scope ?? (args.base !== undefined ? 'branch' : undefined);
  if (scope !== undefined && scope !== 'working' && scope !== 'staged' && scope !== 'branch') {
    return failed('Invalid scope: use "working" (unstaged changes), "staged" (the index against HEAD) or "branch" (this branch against its base); leave it out for all uncommitted changes.');
  }
  if (args.base !== undefined && scope !== 'branch') return failed('"base" goes with scope "branch" only.');
  const repo = await open(boundary, signal);
  const pathspec = await pathspecOf(boundary, args.path);
  const head = await headCommit(repo, signal);
  let command: string[];
  let what: string;
  if (scope === undefined) {
    command = ['diff', head ?? EMPTY_TREE];
    what = 'uncommitted changes (working tree and staged) against HEAD';
  } else if (scope === 'working') {
    command = ['diff'];
    what = 'unstaged changes (working tree against the index)';
  } else if (scope === 'staged') {
    command = ['diff', '--cached', head ?? EMPTY_TREE];
    what = 'staged changes (the index against HEAD)';
  } else {
    if (!head) return failed('The repository has no commits yet, so there is no branch to compare.');
    let base: { name: string; hash: string };
    if (args.base !== undefined) {
      base = { name: String(args.base), hash: required(await resolveCommit(repo, args.base, 'base', signal)) };
    } else {
      const found = await defaultBase(repo, signal);
      if (!found) return failed('No base to compare with: the branch has no upstream and there is no origin/HEAD, main or master. Pass "base" (a branch, tag or commit).');
      base = found;
    }
    const mergeBase = await runInRepository(repo, ['merge-base', base.hash, head], { signal, maxBytes: 4096 });
    const mergeHash = mergeBase.stdout.toString('utf8').trim();
    if (mergeBase.failure || mergeBase.code !== 0 || !/^[0-9a-f]{40,64}$/.test(mergeHash)) {
      const shallowNote = repo.shallow ? ' This is a shallow clone: the common ancestor may be older than the history it holds.' : '';
      return failed(`No common ancestor of HEAD and ${inertLine(base.name)} was found.${shallowNote}`);
    }
    command = ['diff', mergeHash, head];
    what = `this branch (HEAD) against ${inertLine(base.name)}, from their merge base ${mergeHash.slice(0, 10)}`;
  }
  return diffAnswer(await boundedDiff(boundary, repo, command, pathspec, signal), what, pathspec === '.' ? '' : ' in that path');
});

/**
 * What changed since `base` (a commit, e.g. the one recorded at a hand-off),
 * committed and uncommitted alike (`git diff <base>` against the working
 * tree); without `base`, the uncommitted changes against HEAD. For the
 * review of an implementation, through the same bounded, filtered diff as
 * git_diff.
 */
export const gitDiffSince = guarded('git_diff', async (boundary, args, signal) => {
  const repo = await open(boundary, signal);
  let command: string[];
  let what: string;
  if (args.base !== undefined) {
    const base = required(await resolveCommit(repo, args.base, 'base', signal));
    command = ['diff', base];
    what = `changes since ${base.slice(0, 10)} (commits and the working tree)`;
  } else {
    const head = await headCommit(repo, signal);
    command = ['diff', head ?? EMPTY_TREE];
    what = 'uncommitted changes (working tree and staged) against HEAD';
  }
  return diffAnswer(await boundedDiff(boundary, repo, command, '.', signal), what, '');
});

export const gitShow = guarded('git_show', async (boundary, args, signal) => {
  const repo = await open(boundary, signal);
  const commit = required(await resolveCommit(repo, args.commit, 'commit', signal));
  const pathspec = await pathspecOf(boundary, args.path);
  const meta = await runInRepository(
    repo,
    ['log', '-1', '--no-show-signature', '--no-mailmap', '--no-color', '--date=iso-strict', '--format=%H%x00%an%x00%ad%x00%P%x00%B', commit, '--'],
    { signal, maxBytes: GIT_LIMITS.showMessageMaxBytes },
  );
  refuseIfFailed(meta, 'git show');
  const [hash, author, date, parents, ...body] = meta.stdout.toString('utf8').split('\0');
  const message = inertText(body.join(' ').trimEnd()) + (meta.truncated ? '\n[… message cut]' : '');
  const diff = await boundedDiff(boundary, repo, ['show', '--format=', '--diff-merges=first-parent', commit], pathspec, signal);
  const parentList = (parents ?? '').trim().split(' ').filter(Boolean);
  const header = [
    `commit ${hash}`,
    parentList.length > 1 ? `Merge of ${parentList.map((p) => p.slice(0, 10)).join(' ')} (diff against the first parent)` : '',
    `Author: ${inertLine(author ?? '')}`,
    `Date:   ${date ?? ''}`,
    '',
    message.split('\n').map((line) => `    ${line}`).join('\n'),
  ].filter((line, i) => i !== 1 || line !== '');
  const { files, added, deleted, text } = diff;
  const changes = files === 0 && diff.hidden.length === 0 ? `No changes${pathspec === '.' ? ' inside this folder' : ' to that path'}.` : `${files} file(s), +${added} −${deleted}.\n\n${text}`;
  return { ok: true, output: `${header.join('\n')}\n\n${changes}` };
});

// ---------------------------------------------------------------------------
// git_log

export const gitLog = guarded('git_log', async (boundary, args, signal) => {
  let count: number = GIT_LIMITS.logDefaultCount;
  if (args.max_count !== undefined) {
    if (typeof args.max_count !== 'number' || !Number.isInteger(args.max_count) || args.max_count < 1) return failed('"max_count" must be a positive integer.');
    count = Math.min(args.max_count, GIT_LIMITS.logMaxCount);
  }
  if (args.grep !== undefined && (typeof args.grep !== 'string' || args.grep === '' || args.grep.length > 200 || /[\x00-\x1f]/.test(args.grep))) {
    return failed('"grep" must be a one-line string of at most 200 characters (an extended regular expression matched against commit messages, case-insensitive).');
  }
  const repo = await open(boundary, signal);
  const pathspec = await pathspecOf(boundary, args.path);
  const head = await headCommit(repo, signal);
  if (!head) return { ok: true, output: 'The repository has no commits yet.' };
  const grep = typeof args.grep === 'string' ? ['--extended-regexp', '--regexp-ignore-case', `--grep=${args.grep}`] : [];
  const run = await runInRepository(
    repo,
    [
      'log', `--max-count=${count}`, '--no-show-signature', '--no-mailmap', '--no-color', '--no-renames', '--relative', '--name-only',
      '--date=short', '--format=%x1e%h%x1f%ad%x1f%an%x1f%s', ...grep, head, '--', pathspec,
    ],
    { signal, maxBytes: 1024 * 1024 },
  );
  refuseIfFailed(run, 'git log');
  const records = run.stdout.toString('utf8').split('\x1e').slice(1);
  if (run.truncated) records.pop(); // the last record may be cut
  const entries: string[] = [];
  let size = 0;
  let left = 0;
  for (const record of records) {
    const [headerLine, ...rest] = record.split('\n');
    const [short, date, author, subject] = headerLine.split('\x1f');
    const files = rest.filter((line) => line !== '');
    const shown: string[] = [];
    const hidden: string[] = [];
    for (const quoted of files) {
      const file = unquoteGitPath(quoted);
      if (file === undefined) continue; // cannot be checked, so not named
      if (boundary.denialOf(file)) hidden.push(quotePathForDisplay(file));
      else shown.push(quotePathForDisplay(file));
    }
    const listed = shown.slice(0, GIT_LIMITS.logMaxFilesPerCommit);
    const more = shown.length - listed.length;
    const lines = [`${short} ${date} ${inertLine(author ?? '')}: ${inertLine(subject ?? '')}`];
    if (listed.length > 0) lines.push(`    files: ${listed.join(', ')}${more > 0 ? ` (+${more} more)` : ''}`);
    if (hidden.length > 0) lines.push(`    changed, not shown (secret or denied by policy): ${hidden.join(', ')}`);
    const entry = lines.join('\n');
    if (size + entry.length > GIT_LIMITS.logCapBytes) {
      left = records.length - entries.length;
      break;
    }
    entries.push(entry);
    size += entry.length + 1;
  }
  if (entries.length === 0) return { ok: true, output: `No commits${args.grep !== undefined ? ' whose message matches' : ''}${pathspec === '.' ? '' : ' touching that path'}.` };
  const notes: string[] = [];
  if (left > 0) notes.push(`[… ${left} more commits left out to keep the answer under ${GIT_LIMITS.logCapBytes / 1024} KiB; use path or a smaller max_count.]`);
  if (typeof args.max_count === 'number' && args.max_count > GIT_LIMITS.logMaxCount) notes.push(`[max_count is at most ${GIT_LIMITS.logMaxCount}.]`);
  if (repo.shallow) notes.push('[Shallow clone: older history is not in this repository.]');
  return { ok: true, output: [`${entries.length} commit(s), newest first:`, ...entries, ...notes].join('\n') };
});

// ---------------------------------------------------------------------------
// git_blame

interface BlameCommit {
  author: string;
  time: number;
  summary: string;
  boundary: boolean;
}

export const gitBlame = guarded('git_blame', async (boundary, args, signal) => {
  const start = args.start_line;
  const end = args.end_line;
  if (typeof start !== 'number' || !Number.isInteger(start) || start < 1 || typeof end !== 'number' || !Number.isInteger(end) || end < start) {
    return failed('"start_line" and "end_line" must be integers with 1 <= start_line <= end_line.');
  }
  const last = Math.min(end, start + GIT_LIMITS.blameMaxLines - 1);
  const file = await resolvePathArgument(boundary, args.path);
  if (file === '.') return failed('git_blame needs a file path.');
  const repo = await open(boundary, signal);
  const head = await headCommit(repo, signal);
  if (!head) return failed('The repository has no commits yet, so nothing can be blamed.');
  await refuseWaitingAttributes(repo, [file], signal);
  // Blamed at HEAD, not the working file: comparing the working file would run its clean filter and textconv.
  const run = await runInRepository(repo, ['blame', '--porcelain', '--no-textconv', `-L${start},${last}`, head, '--', file], {
    signal,
    maxBytes: 2 * 1024 * 1024,
  });
  if (run.failure) return failed(describeFailure(run, 'git blame'));
  if (run.code !== 0) {
    const only = /has only (\d+) lines?/.exec(run.stderr);
    if (only) return failed(`${quotePathForDisplay(file)} has only ${only[1]} lines in the last commit (HEAD).`);
    if (/no such path/i.test(run.stderr)) return failed(`${quotePathForDisplay(file)} is not in the last commit (HEAD), so it has no blame.`);
    return failed(describeFailure(run, 'git blame'));
  }
  const commits = new Map<string, BlameCommit>();
  const groups: string[] = [];
  let current: string | undefined;
  let lineHash = '';
  let lineNumber = 0;
  const lines = run.stdout.toString('utf8').split('\n');
  for (const line of lines) {
    const header = /^([0-9a-f]{40,64}) \d+ (\d+)(?: \d+)?$/.exec(line);
    if (header) {
      lineHash = header[1];
      lineNumber = Number(header[2]);
      if (!commits.has(lineHash)) commits.set(lineHash, { author: '', time: 0, summary: '', boundary: false });
      continue;
    }
    const commit = commits.get(lineHash);
    if (!commit) continue;
    if (line.startsWith('\t')) {
      if (current !== lineHash) {
        const date = commit.time ? new Date(commit.time * 1000).toISOString().slice(0, 10) : '';
        groups.push(`${lineHash.slice(0, 10)} ${date} ${inertLine(commit.author)}: ${inertLine(commit.summary)}${commit.boundary && repo.shallow ? ' (shallow clone: history before it is not here)' : ''}`);
        current = lineHash;
      }
      // As read_file shows the line: a CR or U+2028 inside it could pose as another blamed line.
      groups.push(`  ${lineNumber}: ${escapeLineBreaks(stripCarriageReturn(line.slice(1)))}`);
    } else if (line.startsWith('author ')) commit.author = line.slice(7);
    else if (line.startsWith('author-time ')) commit.time = Number(line.slice(12));
    else if (line.startsWith('summary ')) commit.summary = line.slice(8);
    else if (line === 'boundary') commit.boundary = true;
  }
  const notes: string[] = [];
  if (last < end) notes.push(`[At most ${GIT_LIMITS.blameMaxLines} lines per call: continue with start_line ${last + 1}.]`);
  return { ok: true, output: [`Blame of ${quotePathForDisplay(file)} lines ${start}-${last} as of HEAD (${head.slice(0, 10)}):`, ...groups, ...notes].join('\n') };
});

// ---------------------------------------------------------------------------
// Definitions, in the shape of the toolbox's READ_TOOLS entries

interface GitArgumentSpec {
  name: string;
  type: 'string' | 'integer';
  required: boolean;
  description: string;
  minimum?: number;
}

export interface GitToolDefinition {
  name: string;
  description: string;
  arguments: GitArgumentSpec[];
  run(context: { boundary: ReadBoundary }, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome>;
}

const PATH_HELP = 'relative to the folder root';

export const GIT_TOOLS: readonly GitToolDefinition[] = [
  {
    name: 'git_diff',
    description:
      'Show a unified diff from Git. Default: all uncommitted changes (working tree and staged) against HEAD. ' +
      'scope "working": unstaged changes only; "staged": the index against HEAD; "branch": this branch against base (default: its upstream, else origin/HEAD, main or master, from the merge base). ' +
      `Untracked files are not included. Cut at ${DIFF_CAP_BYTES / 1024} KiB with a per-file summary; secret and policy-denied files are named, never shown.`,
    arguments: [
      { name: 'scope', type: 'string', required: false, description: '"working", "staged" or "branch". Leave out for all uncommitted changes.' },
      { name: 'base', type: 'string', required: false, description: 'With scope "branch": the branch, tag or commit to compare against.' },
      { name: 'path', type: 'string', required: false, description: `Only this file or directory, ${PATH_HELP}.` },
    ],
    run: ({ boundary }, args, signal) => gitDiff(boundary, args, signal),
  },
  {
    name: 'git_log',
    description:
      `List commits, newest first: short hash, date, author, subject and files changed. At most ${GIT_LIMITS.logMaxCount} (default ${GIT_LIMITS.logDefaultCount}). ` +
      'Use path for the history of one file or directory, grep to find commits by message. Then git_show for one commit.',
    arguments: [
      { name: 'path', type: 'string', required: false, description: `Only commits touching this file or directory, ${PATH_HELP}.` },
      { name: 'max_count', type: 'integer', required: false, minimum: 1, description: `How many commits (at most ${GIT_LIMITS.logMaxCount}).` },
      { name: 'grep', type: 'string', required: false, description: 'Only commits whose message matches this extended regular expression (case-insensitive).' },
    ],
    run: ({ boundary }, args, signal) => gitLog(boundary, args, signal),
  },
  {
    name: 'git_show',
    description: `Show one commit: its message and its diff (cut at ${DIFF_CAP_BYTES / 1024} KiB with a per-file summary; a merge is diffed against its first parent).`,
    arguments: [
      { name: 'commit', type: 'string', required: true, description: 'Commit hash (short is fine), branch, tag or expression like HEAD~2.' },
      { name: 'path', type: 'string', required: false, description: `Only the changes to this file or directory, ${PATH_HELP}.` },
    ],
    run: ({ boundary }, args, signal) => gitShow(boundary, args, signal),
  },
  {
    name: 'git_blame',
    description:
      `For each line of a file as of HEAD, the commit that last changed it (short hash, date, author, subject), lines grouped by commit. At most ${GIT_LIMITS.blameMaxLines} lines per call. ` +
      'Then git_show that commit to see why.',
    arguments: [
      { name: 'path', type: 'string', required: true, description: `File path, ${PATH_HELP}.` },
      { name: 'start_line', type: 'integer', required: true, minimum: 1, description: 'First line (1-based, inclusive).' },
      { name: 'end_line', type: 'integer', required: true, minimum: 1, description: 'Last line (inclusive).' },
    ],
    run: ({ boundary }, args, signal) => gitBlame(boundary, args, signal),
  },
];

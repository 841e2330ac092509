import type { ReadBoundary } from '../access/boundary';

/**
 * Turning git's diff output into what the model may see: every file section
 * whose path the read boundary denies is taken out (its name kept in a
 * "changed, not shown" line), and the rest is capped with a per-file summary.
 *
 * Paths come from git with `core.quotePath=true`, so any name holding a
 * control character, a newline, a bidi override or any other non-ASCII byte
 * arrives C-quoted ("a\nb", "\342\200\256x") and is shown that way: inert text.
 */

export const DIFF_CAP_BYTES = 64 * 1024;

/** Git's C-quoted path ("…" with \n, \t, \\, \", \ooo octal bytes) decoded; a plain path as is. */
export function unquoteGitPath(text: string): string | undefined {
  if (!text.startsWith('"')) return text;
  if (!text.endsWith('"') || text.length < 2) return undefined;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = body[i + 1];
    if (next !== undefined && simple[next] !== undefined) {
      bytes.push(simple[next]);
      i += 1;
    } else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      return undefined;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Shows a path as git would quote it: anything but printable ASCII is escaped. */
export function quotePathForDisplay(raw: string): string {
  if (/^[\x20-\x7e]*$/.test(raw) && !raw.includes('"') && !raw.includes('\\')) return raw;
  let out = '"';
  for (const byte of Buffer.from(raw, 'utf8')) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += '\\\\';
    else if (byte === 0x0a) out += '\\n';
    else if (byte === 0x09) out += '\\t';
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\${byte.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** One file's changes, from `--numstat -z`. */
export interface FileStat {
  /** The path relative to the folder, decoded. */
  path: string;
  added: number | undefined;
  deleted: number | undefined;
}

/** Parses `git diff --numstat -z --no-renames` output: `added\tdeleted\tpath\0` per file. */
export function parseNumstat(output: string): FileStat[] {
  const stats: FileStat[] = [];
  for (const record of output.split('\0')) {
    const match = /^\n?(-|\d+)\t(-|\d+)\t([\s\S]+)$/.exec(record);
    if (!match) continue;
    stats.push({ added: match[1] === '-' ? undefined : Number(match[1]), deleted: match[2] === '-' ? undefined : Number(match[2]), path: match[3] });
  }
  return stats;
}

/** The path a `diff --git a/X b/X` header names (no renames are asked for, so both sides agree); undefined if unclear. */
export function headerPath(header: string): string | undefined {
  const rest = header.slice('diff --git '.length);
  if (rest.startsWith('"')) {
    // "a/…" "b/…": find the closing quote of the first name (not preceded by an escaping backslash).
    let end = 1;
    while (end < rest.length && !(rest[end] === '"' && countBackslashes(rest, end) % 2 === 0)) end++;
    const first = unquoteGitPath(rest.slice(0, end + 1));
    return first?.startsWith('a/') ? first.slice(2) : undefined;
  }
  const half = (rest.length - 1) / 2; // "a/X b/X": two equal halves around one space
  if (!Number.isInteger(half) || rest[half] !== ' ') return undefined;
  const left = rest.slice(0, half);
  const right = rest.slice(half + 1);
  if (!left.startsWith('a/') || !right.startsWith('b/') || left.slice(2) !== right.slice(2)) return undefined;
  return left.slice(2);
}

function countBackslashes(text: string, before: number): number {
  let count = 0;
  for (let i = before - 1; i >= 0 && text[i] === '\\'; i--) count++;
  return count;
}

/** Splits a patch into its per-file sections (each starts with `diff --git `); text before the first is returned apart. */
export function splitPatch(patch: string): { preamble: string; sections: string[] } {
  const starts: number[] = [];
  if (patch.startsWith('diff --git ')) starts.push(0);
  for (let i = patch.indexOf('\ndiff --git '); i !== -1; i = patch.indexOf('\ndiff --git ', i + 1)) starts.push(i + 1);
  if (starts.length === 0) return { preamble: patch, sections: [] };
  const sections = starts.map((start, k) => patch.slice(start, k + 1 < starts.length ? starts[k + 1] : patch.length));
  return { preamble: patch.slice(0, starts[0]), sections };
}

export interface FilteredPatch {
  text: string;
  /** Denied paths that changed, shown by name only. */
  hidden: string[];
  /** Whether the cap cut the patch. */
  cut: boolean;
}

function statLine(stat: FileStat): string {
  const counts = stat.added === undefined ? 'binary' : `+${stat.added} −${stat.deleted}`;
  return `  ${quotePathForDisplay(stat.path)} (${counts})`;
}

/**
 * The patch minus every section of a denied path (or one whose header cannot
 * be read, so it cannot be checked), capped at `cap` bytes. When cut, a
 * per-file summary from `stats` comes first so the model still sees every
 * file and its size.
 */
export function filterPatch(boundary: ReadBoundary, patch: string, stats: readonly FileStat[], gitTruncated: boolean, cap = DIFF_CAP_BYTES): FilteredPatch {
  const hidden = new Set<string>();
  for (const stat of stats) if (boundary.denialOf(stat.path)) hidden.add(stat.path);
  const { sections } = splitPatch(patch);
  const allowed: string[] = [];
  let unreadable = 0;
  for (const section of sections) {
    const newline = section.indexOf('\n');
    const file = headerPath(newline < 0 ? section : section.slice(0, newline));
    if (file === undefined) {
      unreadable += 1;
      continue;
    }
    if (boundary.denialOf(file)) {
      hidden.add(file);
      continue;
    }
    allowed.push(section);
  }
  const shownStats = stats.filter((stat) => !boundary.denialOf(stat.path));
  const hiddenList = [...hidden].map(quotePathForDisplay);
  const notes: string[] = [];
  if (hiddenList.length > 0) notes.push(`Changed, not shown (secret or denied by policy): ${hiddenList.join(', ')}`);
  if (unreadable > 0) notes.push(`${unreadable} file section(s) left out: their header could not be read.`);

  const whole = allowed.join('');
  const total = Buffer.byteLength(whole, 'utf8');
  if (total <= cap && !gitTruncated) {
    return { text: [whole.trimEnd(), ...notes].filter((part) => part !== '').join('\n\n'), hidden: [...hidden], cut: false };
  }

  const summary = [`Diff cut at ${cap / 1024} KiB${gitTruncated ? ' (git output stopped early)' : ` of ${Math.ceil(total / 1024)} KiB`}. All ${shownStats.length} files:`, ...shownStats.map(statLine)].join('\n');
  const budget = Math.max(0, cap - Buffer.byteLength(summary, 'utf8') - 512);
  let used = 0;
  let complete = 0;
  const kept: string[] = [];
  for (const section of allowed) {
    const size = Buffer.byteLength(section, 'utf8');
    if (used + size > budget) {
      const room = budget - used;
      if (room > 200) kept.push(cutAtLine(section, room));
      break;
    }
    kept.push(section);
    used += size;
    complete += 1;
  }
  const tail = `[… cut: ${complete} of ${allowed.length} file diffs shown in full, ${Math.max(0, total - used)} bytes left out. Use the path argument for one file.]`;
  return { text: [summary, kept.join('').trimEnd(), tail, ...notes].filter((part) => part !== '').join('\n\n'), hidden: [...hidden], cut: true };
}

/** The first `bytes` of `text`, ended at a line break so no line is half shown. */
function cutAtLine(text: string, bytes: number): string {
  const head = Buffer.from(text, 'utf8').subarray(0, bytes).toString('utf8');
  const lastBreak = head.lastIndexOf('\n');
  return lastBreak > 0 ? head.slice(0, lastBreak + 1) : '';
}

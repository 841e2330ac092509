/**
 * One line a person can read for a tool call and its result, e.g.
 * "references to `createServer` — 37 in 12 files". Used by the terminal and
 * the panel, so it imports nothing that needs Node or vscode.
 *
 * Everything it returns is plain text built from untrusted strings (the
 * model's arguments, the repository's names): the caller makes it inert for
 * its medium, and nothing here adds markup. The inputs are the events'
 * previews, which the server cuts (arguments at 200 characters, results at
 * 600), so every parse here accepts a cut or malformed preview and falls back
 * to less detail, at worst the tool's name.
 */

import { shortLine } from '../../../shared/oneLine';

export interface ToolSummary {
  /** What was asked, e.g. "references to `createServer`"; the tool's name when nothing better can be said. */
  subject: string;
  /** What came back, e.g. "37 in 12 files"; absent while running or when the result says nothing countable. */
  outcome?: string;
  /** Set when the call did not work: the first line of the reason. */
  refused?: string;
  failed?: string;
}

const VALUE_CHARS = 60;
const REASON_CHARS = 140;

/** The refusals the server writes (the boundary, the read-only rule, policy), as opposed to calls that merely failed. */
const REFUSAL = /^(Refused\b|This conversation is read-only|That tool is denied|prepare_coding_task is denied|not a git repository|the \.git file here points)/i;

export function isRefusal(preview: string): boolean {
  return REFUSAL.test(preview.trim());
}

/**
 * The arguments, from a preview that may be cut: whole JSON when it parses,
 * else each complete `"key": "string"` or `"key": number` pair found in it.
 */
export function parseArguments(paramsPreview: string | undefined): Record<string, unknown> {
  if (typeof paramsPreview !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(paramsPreview);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    const args: Record<string, unknown> = {};
    for (const match of paramsPreview.matchAll(/"([A-Za-z_]{1,40})"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d{1,12})(?=\s*[,}]))/g)) {
      if (match[2] !== undefined) {
        try {
          args[match[1]] = JSON.parse(`"${match[2]}"`);
        } catch {
          // an escape cut in half: leave the key out
        }
      } else if (match[3] !== undefined) args[match[1]] = Number(match[3]);
    }
    return args;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? shortLine(value, VALUE_CHARS) : undefined);
const integer = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);
const quoted = (value: string) => `\`${value}\``;
const plural = (count: number | string, one: string, many = `${one}s`) => `${count} ${count === 1 || count === '1' ? one : many}`;

/** "a.ts:10-40", "a.ts:10-", "a.ts:-40" or "a.ts". */
function range(file: string, start: number | undefined, end: number | undefined): string {
  if (start === undefined && end === undefined) return file;
  return `${file}:${start ?? 1}-${end ?? ''}`;
}

/** The result preview was cut by the server (it ends with the "…" bound adds). */
const wasCut = (preview: string) => preview.length > 600 && preview.endsWith('…');

/** The first match of `pattern` in the preview, as numbers. */
function numbers(preview: string, pattern: RegExp): number[] | undefined {
  const match = pattern.exec(preview);
  return match ? match.slice(1).map(Number) : undefined;
}

/** Lines of the preview, without the last one when the preview was cut inside it. */
function wholeLines(preview: string): string[] {
  const lines = preview.split('\n');
  if (wasCut(preview)) lines.pop();
  return lines;
}

type Summarizer = (args: Record<string, unknown>) => { subject: string; outcome?: (preview: string) => string | undefined };

const GIT_SCOPES: Record<string, string> = { working: 'unstaged', staged: 'staged', branch: 'branch' };

const SUMMARIZERS: Record<string, Summarizer> = {
  find_references: (args) => ({
    subject: text(args.symbol) ? `references to ${quoted(text(args.symbol)!)}` : 'references',
    outcome: (preview) => {
      if (/^No references to /.test(preview)) return 'none';
      const found = /^(\d+) reference\(s\) to .* in (\d+)(\+?) file\(s\)/.exec(preview);
      return found ? `${found[1]} in ${plural(`${found[2]}${found[3]}`, 'file')}` : undefined;
    },
  }),
  go_to_definition: (args) => ({
    subject: text(args.symbol) ? `definition of ${quoted(text(args.symbol)!)}` : 'definition',
    outcome: (preview) => {
      if (/^No definition of /.test(preview)) return 'not found';
      const count = numbers(preview, /^(\d+) definition\(s\) of /);
      const first = /\n([^\n]+?):(\d+)-\d+: /.exec(preview);
      if (!count) return undefined;
      const where = first ? `${shortLine(first[1], VALUE_CHARS)}:${first[2]}` : undefined;
      if (count[0] === 1) return where;
      return where ? `${where} (+${count[0] - 1} more)` : `${count[0]} definitions`;
    },
  }),
  find_symbol: (args) => ({
    subject: text(args.query) ? `symbols matching ${quoted(text(args.query)!)}` : 'symbols',
    outcome: (preview) => {
      if (/^No symbols/.test(preview)) return '0';
      const count = numbers(preview, /^(\d+) symbol\(s\)/);
      return count ? String(count[0]) : undefined;
    },
  }),
  list_symbols: (args) => ({
    subject: text(args.path) ? `outline of ${text(args.path)}` : 'outline',
    outcome: (preview) => {
      if (/: no definitions found\.$/.test(preview.split('\n')[0])) return '0 symbols';
      const count = numbers(preview, /^Outline of .* \((\d+) symbol\(s\);/);
      return count ? plural(count[0], 'symbol') : undefined;
    },
  }),
  get_diagnostics: (args) => ({
    subject: `problems in ${text(args.path) ?? 'the folder'}`,
    outcome: (preview) => {
      if (/^No syntax errors found/.test(preview)) return 'none';
      const count = numbers(preview, /^(\d+) syntax error\(s\) in \d+ file/);
      const warnings = numbers(preview, /(\d+) warning\(s\)/);
      if (!count) return undefined;
      return [plural(count[0], 'error'), ...(warnings ? [plural(warnings[0], 'warning')] : [])].join(', ');
    },
  }),
  git_diff: (args) => {
    const scope = typeof args.scope === 'string' ? GIT_SCOPES[args.scope] : undefined;
    const base = text(args.base);
    const label = scope === 'branch' && base ? `branch vs ${base}` : (scope ?? 'working tree');
    return {
      subject: `changes (${label})${text(args.path) ? ` in ${text(args.path)}` : ''}`,
      outcome: (preview) => {
        if (/^No /.test(preview)) return 'none';
        const count = numbers(preview, /^Diff of .*?: (\d+) file\(s\), \+(\d+) −(\d+)/);
        return count ? `${plural(count[0], 'file')}, +${count[1]} −${count[2]}` : undefined;
      },
    };
  },
  git_log: (args) => ({
    subject: `history${text(args.path) ? ` of ${text(args.path)}` : ''}${text(args.grep) ? ` matching ${quoted(text(args.grep)!)}` : ''}`,
    outcome: (preview) => {
      if (/^No commits/.test(preview)) return '0 commits';
      if (/^The repository has no commits yet/.test(preview)) return 'no commits yet';
      const count = numbers(preview, /^(\d+) commit\(s\), newest first/);
      return count ? plural(count[0], 'commit') : undefined;
    },
  }),
  git_show: (args) => ({
    subject: `commit ${text(args.commit) ? shortLine(text(args.commit)!, 20) : ''}`.trim(),
    outcome: (preview) => {
      const hash = /^commit ([0-9a-f]{7})[0-9a-f]*/.exec(preview);
      const files = numbers(preview, /\n(\d+) file\(s\), \+\d+ −\d+\./);
      const parts = [...(hash ? [hash[1]] : []), ...(files ? [plural(files[0], 'file')] : [])];
      return parts.length ? parts.join(', ') : undefined;
    },
  }),
  git_blame: (args) => ({ subject: `blame ${range(text(args.path) ?? '?', integer(args.start_line), integer(args.end_line))}` }),
  read_file: (args) => ({
    subject: `read ${text(args.path) ? range(text(args.path)!, integer(args.start_line), integer(args.end_line)) : 'a file'}`,
    outcome: (preview) => {
      if (/^\(empty file: /.test(preview)) return 'empty';
      const shown = /\[(?:Cut at [^:]*: )?[Ss]howing lines (\d+)-(\d+) of (?:more than )?(\d+)/.exec(preview);
      return shown ? `lines ${shown[1]}-${shown[2]} of ${shown[3]}` : undefined;
    },
  }),
  list_dir: (args) => ({
    subject: `list ${text(args.path) ?? 'the folder'}`,
    outcome: (preview) => {
      if (/^[^\n]*\/ is empty\./.test(preview)) return 'empty';
      const count = numbers(preview, /^[^\n]* \((\d+) entries\)/);
      return count ? plural(count[0], 'entry', 'entries') : undefined;
    },
  }),
  find_files: (args) => ({
    subject: `files matching ${text(args.pattern) ? quoted(text(args.pattern)!) : '?'}${text(args.path) ? ` in ${text(args.path)}` : ''}`,
    outcome: (preview) => {
      if (/^No files match /.test(preview)) return '0';
      const files = wholeLines(preview).filter((line) => line !== '' && !line.startsWith('['));
      const more = wasCut(preview) || /\[Showing the first \d+ matches; there are more/.test(preview);
      return `${files.length}${more ? '+' : ''}`;
    },
  }),
  grep_files: (args) => ({
    subject: `search for ${text(args.pattern) ? quoted(text(args.pattern)!) : '?'}${text(args.path) ? ` in ${text(args.path)}` : ''}${text(args.glob) ? ` (${text(args.glob)})` : ''}`,
    outcome: (preview) => {
      if (/^No matches for /.test(preview)) return '0 matches';
      // Each match line is "path:line: text".
      const matches = wholeLines(preview)
        .map((line) => /^(.+?):(\d+): /.exec(line))
        .filter((match): match is RegExpExecArray => match !== null);
      if (matches.length === 0) return undefined;
      const files = new Set(matches.map((match) => match[1])).size;
      const more = wasCut(preview) || /\[Stopped at \d+ matches; there are more/.test(preview) ? '+' : '';
      return `${plural(`${matches.length}${more}`, 'match', 'matches')} in ${plural(`${files}${more}`, 'file')}`;
    },
  }),
  prepare_coding_task: () => ({ subject: 'prepare a coding task', outcome: () => 'prepared' }),
};

/** The summary of a call, and of its result when there is one. Never throws. */
export function summarizeTool(call: { tool: string; paramsPreview?: string }, result?: { ok: boolean; preview: string }): ToolSummary {
  const name = shortLine(typeof call.tool === 'string' && call.tool !== '' ? call.tool : 'tool', VALUE_CHARS);
  let subject = name;
  let outcome: ((preview: string) => string | undefined) | undefined;
  const summarizer = Object.prototype.hasOwnProperty.call(SUMMARIZERS, call.tool) ? SUMMARIZERS[call.tool] : undefined;
  if (summarizer) {
    try {
      ({ subject, outcome } = summarizer(parseArguments(call.paramsPreview)));
    } catch {
      subject = name;
    }
  }
  if (!result) return { subject };
  const preview = typeof result.preview === 'string' ? result.preview : '';
  if (!result.ok) {
    const reason = shortLine(preview.trim().split(/\r?\n/, 1)[0]?.replace(/^Refused:\s*/, '') ?? '', REASON_CHARS);
    return isRefusal(preview) ? { subject, refused: reason } : { subject, failed: reason };
  }
  let said: string | undefined;
  try {
    said = outcome?.(preview);
  } catch {
    said = undefined;
  }
  return said ? { subject, outcome: shortLine(said, REASON_CHARS) } : { subject };
}

/** The summary as one line: "references to `x` — 37 in 12 files", "refused: <reason>". */
export function toolSummaryLine(call: { tool: string; paramsPreview?: string }, result?: { ok: boolean; preview: string }): string {
  const summary = summarizeTool(call, result);
  if (summary.refused !== undefined) return `refused: ${summary.refused || summary.subject}`;
  if (summary.failed !== undefined) return `${summary.subject} — failed${summary.failed ? `: ${summary.failed}` : ''}`;
  return summary.outcome ? `${summary.subject} — ${summary.outcome}` : summary.subject;
}

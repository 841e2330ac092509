import { strict as assert } from 'node:assert';
import { summarizeTool, toolSummaryLine } from '../../../client/src/common/toolSummary';

/** A summary line for a call with these arguments and this (successful) result text, as the server writes it. */
const line = (tool: string, args: unknown, preview?: string, ok = true) =>
  toolSummaryLine({ tool, paramsPreview: JSON.stringify(args) }, preview === undefined ? undefined : { ok, preview });

describe('tool summaries', () => {
  it('find_references: the symbol, the total and the number of files', () => {
    const preview = '37 reference(s) to "createServer" in 12 file(s) (by name: identifiers with this name, not strings or comments; one entry per line):\n\nsrc/a.ts (3)\nsrc/a.ts:1: x';
    assert.equal(line('find_references', { symbol: 'createServer' }, preview), 'references to `createServer` — 37 in 12 files');
    assert.equal(line('find_references', { symbol: 'x' }, 'No references to "x" found (by name; 3 files searched; strings and comments do not count).'), 'references to `x` — none');
  });

  it('go_to_definition: the first definition\'s place, and how many more', () => {
    const one = '1 definition(s) of "X" (followed the import from "./a"; by name):\nsrc/a.ts:10-14: class X\n  10: export class X {';
    assert.equal(line('go_to_definition', { symbol: 'X', path: 'src/b.ts', line: 3 }, one), 'definition of `X` — src/a.ts:10');
    const three = '3 definition(s) of "X" (by name):\nsrc/a.ts:10-14: class X\n  10: x\nsrc/c.ts:2-2: function X';
    assert.equal(line('go_to_definition', { symbol: 'X' }, three), 'definition of `X` — src/a.ts:10 (+2 more)');
    assert.equal(line('go_to_definition', { symbol: 'X' }, 'No definition of "X" found in the symbol index (4 files; by name).'), 'definition of `X` — not found');
  });

  it('find_symbol: the query and the number of matches', () => {
    assert.equal(line('find_symbol', { query: 'x' }, '12 symbol(s) match "x":\nsrc/a.ts:1: function x — function x() {'), 'symbols matching `x` — 12');
    assert.equal(line('find_symbol', { query: 'zz', kind: 'class' }, 'No symbols of kind class match "zz" (3 files indexed).'), 'symbols matching `zz` — 0');
  });

  it('list_symbols: the file and its number of symbols', () => {
    assert.equal(line('list_symbols', { path: 'src/a.ts' }, 'Outline of src/a.ts (23 symbol(s); "start-end" are its lines; read one with read_file start_line/end_line):\nfunction a 1-3: x'), 'outline of src/a.ts — 23 symbols');
    assert.equal(line('list_symbols', { path: 'src/e.ts' }, 'src/e.ts: no definitions found.'), 'outline of src/e.ts — 0 symbols');
  });

  it('get_diagnostics: where, and how many errors', () => {
    assert.equal(line('get_diagnostics', { path: 'src/a.ts' }, '2 syntax error(s) in 1 file(s) of src/a.ts (severity error, source "syntax (tree-sitter)"):\nsrc/a.ts:3: error: x'), 'problems in src/a.ts — 2 errors');
    assert.equal(line('get_diagnostics', { path: 'src/a.ts' }, '2 syntax error(s) in 1 file(s) of src/a.ts, 1 warning(s):'), 'problems in src/a.ts — 2 errors, 1 warning');
    assert.equal(line('get_diagnostics', {}, 'No syntax errors found in the folder (40 file(s) parsed by tree-sitter).'), 'problems in the folder — none');
  });

  it('git_diff: the scope, and the files and lines changed', () => {
    const preview = 'Diff of uncommitted changes (working tree and staged) against HEAD: 3 file(s), +10 −2.\n\ndiff --git a/x b/x';
    assert.equal(line('git_diff', {}, preview), 'changes (working tree) — 3 files, +10 −2');
    assert.equal(line('git_diff', { scope: 'branch', base: 'main', path: 'src' }, 'Diff of this branch (HEAD) against main, from their merge base 0123456789: 1 file(s), +1 −0.\n'), 'changes (branch vs main) in src — 1 file, +1 −0');
    assert.equal(line('git_diff', { scope: 'staged' }, 'No staged changes (the index against HEAD). (Untracked files are not part of git diffs.)'), 'changes (staged) — none');
  });

  it('git_log: the path and the number of commits', () => {
    assert.equal(line('git_log', { path: 'src/a.ts' }, '12 commit(s), newest first:\nabc1234 2024-03-01 Ada: One'), 'history of src/a.ts — 12 commits');
    assert.equal(line('git_log', { grep: 'token' }, 'No commits whose message matches.'), 'history matching `token` — 0 commits');
  });

  it('git_show: the commit, its short hash and the files it changed', () => {
    const preview = 'commit abc1234def567890abc1234def567890abc12345\nAuthor: Ada\nDate:   2024-03-01\n\n    Fix it\n\n2 file(s), +3 −1.\n\ndiff --git';
    assert.equal(line('git_show', { commit: 'HEAD' }, preview), 'commit HEAD — abc1234, 2 files');
    assert.equal(line('git_show', { commit: 'abc1234' }), 'commit abc1234');
  });

  it('git_blame and read_file: the file and its line range', () => {
    assert.equal(line('git_blame', { path: 'src/a.ts', start_line: 10, end_line: 40 }, 'Blame of src/a.ts lines 10-40 as of HEAD (abc1234def):'), 'blame src/a.ts:10-40');
    assert.equal(line('read_file', { path: 'src/a.ts', start_line: 1, end_line: 200 }, 'line one'), 'read src/a.ts:1-200');
    assert.equal(line('read_file', { path: 'src/a.ts' }, 'a\nb\n[Cut at 400 lines: showing lines 1-400 of 900. To continue, call read_file with {"path": "src/a.ts", "start_line": 401}.]'), 'read src/a.ts — lines 1-400 of 900');
    assert.equal(line('read_file', { path: 'e.txt' }, '(empty file: e.txt)'), 'read e.txt — empty');
  });

  it('list_dir, find_files and grep_files: what was listed or searched, and how much came back', () => {
    assert.equal(line('list_dir', { path: 'src' }, 'src/ (7 entries)\na.ts\nb.ts'), 'list src — 7 entries');
    assert.equal(line('list_dir', {}, './ (1 entries)\na.ts'), 'list the folder — 1 entry');
    assert.equal(line('find_files', { pattern: '**/*.ts' }, 'src/a.ts\nsrc/b.ts\nlib/c.ts'), 'files matching `**/*.ts` — 3');
    assert.equal(line('find_files', { pattern: '*.py' }, 'No files match "*.py" in the folder (node_modules/ and .git/ skipped).'), 'files matching `*.py` — 0');
    assert.equal(line('grep_files', { pattern: 'TODO', glob: '*.ts' }, 'src/a.ts:3: // TODO one\nsrc/a.ts:9: // TODO two\nsrc/b.ts:1: // TODO'), 'search for `TODO` (*.ts) — 3 matches in 2 files');
    assert.equal(line('grep_files', { pattern: 'x' }, 'No matches for "x" in the folder (skipped).'), 'search for `x` — 0 matches');
  });

  it('a cut result preview counts only whole lines and says there are more', () => {
    // Lines of 40 characters: the server's cut at 600 lands inside the 15th line's text, after its "path:line: ".
    const lines = Array.from({ length: 30 }, (_, i) => `src/f${i}.ts:${i + 1}: `.padEnd(40, 'x'));
    const cut = lines.join('\n').slice(0, 600) + '…';
    assert.match(cut.split('\n')[14], /^src\/f14\.ts:15: x+…$/);
    const whole = 14; // the 15th line was cut, so it is not counted
    assert.equal(line('grep_files', { pattern: 'match' }, cut), `search for \`match\` — ${whole}+ matches in ${whole}+ files`);
  });

  it('a refusal is "refused: <reason>", whatever the tool', () => {
    assert.equal(line('read_file', { path: '.env' }, 'Refused: ".env" may hold credentials, so it is never read.', false), 'refused: ".env" may hold credentials, so it is never read.');
    assert.equal(line('write_file', { path: 'a' }, 'This conversation is read-only: it cannot write files.', false), 'refused: This conversation is read-only: it cannot write files.');
    assert.equal(line('git_log', {}, 'the .git file here points to a git directory that does not belong to this folder; the git tools are off for it.', false), 'refused: the .git file here points to a git directory that does not belong to this folder; the git tools are off for it.');
    assert.equal(line('read_file', { path: 'gone.ts' }, 'File not found: gone.ts', false), 'read gone.ts — failed: File not found: gone.ts');
  });

  it('cut or malformed arguments and results fall back to less detail, at worst the tool name, and never throw', () => {
    // Cut inside the second value: the first complete pair is still used.
    assert.equal(toolSummaryLine({ tool: 'find_references', paramsPreview: '{"symbol":"createServer","path":"src/very/lo' }), 'references to `createServer`');
    assert.equal(toolSummaryLine({ tool: 'find_references', paramsPreview: 'not json' }, { ok: true, preview: 'garbage' }), 'references');
    assert.equal(toolSummaryLine({ tool: 'list_symbols', paramsPreview: '[1,2]' }, { ok: true, preview: '' }), 'outline');
    assert.equal(toolSummaryLine({ tool: 'git_blame', paramsPreview: '{"path":5,"start_line":"x"}' }), 'blame ?');
    assert.equal(toolSummaryLine({ tool: 'some_new_tool', paramsPreview: '{}' }, { ok: true, preview: 'x' }), 'some_new_tool');
    assert.equal(toolSummaryLine({ tool: '', paramsPreview: undefined as unknown as string }, { ok: true, preview: undefined as unknown as string }), 'tool');
    assert.equal(toolSummaryLine({ tool: '__proto__', paramsPreview: '{}' }), '__proto__');
    assert.equal(toolSummaryLine({ tool: 'toString', paramsPreview: '{}' }), 'toString');
  });

  it('untrusted names stay plain text on one line: no markup added, newlines flattened, long values cut', () => {
    const summary = summarizeTool({ tool: 'find_symbol', paramsPreview: JSON.stringify({ query: '<b>x</b>\n\u001b[31m' }) });
    assert.equal(summary.subject, 'symbols matching `<b>x</b> \u001b[31m`');
    assert.ok(!line('read_file', { path: 'a'.repeat(500) }).includes('a'.repeat(61)));
  });
});

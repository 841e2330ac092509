import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Toolbox } from '../../../server/src/read/types';
import { createToolbox, POLICY_DENIED_HANDOFF, READ_ONLY_REFUSAL } from '../../../server/src/read/toolbox';
import { READ_LIMITS } from '../../../server/src/read/limits';
import { INSTRUCTION_FILE_MAX_BYTES, readInstructionFiles } from '../../../server/src/context/instructions';
import { summarizeRepo, SUMMARY_LIMITS } from '../../../server/src/context/repoSummary';
import { expectFailure, expectOk, NO_POLICY, OUTSIDE_MARKER, runTool, SECRET_MARKER, writeDemoRepo, writeTree } from '../../support/toolFixture';

function numberedLines(count: number, width = 0): string {
  let text = '';
  for (let i = 1; i <= count; i++) text += `line ${i}${width > 0 ? ` ${'x'.repeat(width)}` : ''}\n`;
  return text;
}

describe('read tools', () => {
  let base: string;
  let repo: string;
  let outside: string;
  let toolbox: Toolbox;

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-tools-')));
    ({ repo, outside } = writeDemoRepo(base));
    toolbox = await createToolbox(repo, NO_POLICY);
  });
  afterEach(() => {
    fs.rmSync(base, { recursive: true, force: true });
  });

  describe('toolbox', () => {
    it('advertises exactly the read, symbol and git tools with the documented argument names', () => {
      const specs = toolbox.definitions();
      assert.deepEqual(
        specs.map((spec) => spec.name),
        ['read_file', 'list_dir', 'find_files', 'grep_files', 'find_symbol', 'go_to_definition', 'find_references', 'list_symbols', 'get_diagnostics', 'git_diff', 'git_log', 'git_show', 'git_blame'],
      );
      const properties = (name: string) => Object.keys((specs.find((spec) => spec.name === name)?.parameters as { properties: object }).properties);
      assert.deepEqual(properties('read_file'), ['path', 'start_line', 'end_line']);
      assert.deepEqual(properties('list_dir'), ['path']);
      assert.deepEqual(properties('find_files'), ['pattern', 'path']);
      assert.deepEqual(properties('grep_files'), ['pattern', 'path', 'glob']);
      for (const spec of specs) assert.ok(spec.description.length > 40, `${spec.name} needs a real description`);
    });

    it('exposes the real path of the folder as root', async () => {
      const alias = path.join(base, 'alias');
      fs.symlinkSync(repo, alias);
      assert.equal((await createToolbox(alias, NO_POLICY)).root, repo);
    });

    it('rejects a root that does not exist', async () => {
      await assert.rejects(createToolbox(path.join(base, 'missing'), NO_POLICY));
    });

    it('refuses mutating, invented and core-owned tool names with the read-only refusal', async () => {
      for (const name of ['write_file', 'edit_file', 'shell', 'apply_patch', 'run_command', 'delete_file', 'prepare_coding_task', 'constructor', '__proto__', '']) {
        const outcome = await runTool(toolbox, name, { path: 'README.md', content: 'x' });
        assert.deepEqual(outcome, { ok: false, output: READ_ONLY_REFUSAL }, name);
      }
      assert.equal(fs.readFileSync(path.join(repo, 'README.md'), 'utf8'), '# Demo\nSee src.\n');
    });

    it('words the read-only refusal so the model hands off instead of asking for permissions', async () => {
      // What the model receives for a mutating call, not the constant: a
      // refusal built some other way would pass a check of the constant.
      const refusal = await expectFailure(toolbox, 'write_file', { path: 'README.md', content: 'x' });
      assert.match(refusal, /read-only/);
      assert.match(refusal, /cannot write or edit files or run commands/);
      assert.match(refusal, /not a file-permission problem/);
      assert.match(refusal, /not refused the change/);
      assert.match(refusal, /call prepare_coding_task/);
      assert.match(refusal, /coding agent/);
      assert.match(refusal, /Do not ask the user to change permissions/);
    });

    it('answers invalid JSON arguments with the expected arguments', async () => {
      const output = await expectFailure(toolbox, 'read_file', '{"path": "README.md"');
      assert.match(output, /not valid JSON/);
      assert.match(output, /"path": string \(required\)/);
      assert.match(output, /"start_line": integer >= 1 \(optional\)/);
    });

    it('answers non-object, wrongly typed, missing and unknown arguments with the expected arguments', async () => {
      assert.match(await expectFailure(toolbox, 'read_file', '["README.md"]'), /must be a JSON object.*Expected/);
      assert.match(await expectFailure(toolbox, 'read_file', '"README.md"'), /must be a JSON object/);
      assert.match(await expectFailure(toolbox, 'read_file', { path: 42 }), /"path" must be a string/);
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'README.md', start_line: '2' }), /"start_line" must be an integer/);
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'README.md', start_line: 0 }), /at least 1/);
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'README.md', start_line: 1.5 }), /must be an integer/);
      assert.match(await expectFailure(toolbox, 'read_file', {}), /"path" is missing/);
      assert.match(await expectFailure(toolbox, 'grep_files', { path: 'src' }), /"pattern" is missing/);
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'README.md', startLine: 2 }), /unknown argument "startLine"/);
    });

    it('accepts empty arguments for a tool without required arguments', async () => {
      assert.match(await expectOk(toolbox, 'list_dir', ''), /README\.md/);
      assert.match(await expectOk(toolbox, 'list_dir', { path: null }), /README\.md/);
    });

    it('never throws, whatever it is given', async () => {
      const outcome = await toolbox.run(undefined as unknown as string, undefined as unknown as string);
      assert.equal(outcome.ok, false);
      assert.deepEqual(outcome, { ok: false, output: READ_ONLY_REFUSAL }, 'the model is told why, not handed an exception');
      const second = await toolbox.run('read_file', undefined as unknown as string);
      assert.equal(second.ok, false);
      assert.match(second.output, /"path" is missing/);
    });

    it('stops when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const outcome = await toolbox.run('grep_files', '{"pattern": "x"}', controller.signal);
      assert.deepEqual(outcome, { ok: false, output: 'Cancelled.' });
    });

    it('hides and refuses tools denied by policy', async () => {
      const narrowed = await createToolbox(repo, { denyTools: ['grep_files', 'prepare_coding_task', 'find_references'], denyRead: [] });
      assert.deepEqual(
        narrowed.definitions().map((spec) => spec.name),
        ['read_file', 'list_dir', 'find_files', 'find_symbol', 'go_to_definition', 'list_symbols', 'get_diagnostics', 'git_diff', 'git_log', 'git_show', 'git_blame'],
      );
      assert.match(await expectFailure(narrowed, 'find_references', { symbol: 'createThing' }), /denied by this project's policy/);
      assert.equal(narrowed.isDenied('grep_files'), true);
      assert.equal(narrowed.isDenied('prepare_coding_task'), true);
      assert.equal(narrowed.isDenied('read_file'), false);
      const refused = await expectFailure(narrowed, 'grep_files', { pattern: 'createThing' });
      assert.match(refused, /denied by this project's policy \(\.repo-discuss\/policy\.json\)/);
      assert.doesNotMatch(refused, /createThing/);
      // The core sends a denied hand-off here; pointing back at it would loop.
      assert.deepEqual(await runTool(narrowed, 'prepare_coding_task', {}), { ok: false, output: POLICY_DENIED_HANDOFF });
    });

    it('refuses reads and skips grep matches in files denied by policy', async () => {
      writeTree(repo, { 'internal/plan.md': 'createThing internal plan\n' });
      const narrowed = await createToolbox(repo, { denyTools: [], denyRead: ['internal/**'] });
      assert.match(await expectFailure(narrowed, 'read_file', { path: 'internal/plan.md' }), /policy/);
      const grep = await expectOk(narrowed, 'grep_files', { pattern: 'createThing' });
      assert.doesNotMatch(grep, /internal plan/);
      assert.match(grep, /src\/index\.ts:1:/);
    });
  });

  describe('read_file', () => {
    it('returns numbered lines', async () => {
      assert.equal(await expectOk(toolbox, 'read_file', { path: 'src/index.ts' }), '1: export function createThing() {\n2:   return 1;\n3: }');
    });

    it('returns a 1-based inclusive line window and says where it sits', async () => {
      writeTree(repo, { 'long.txt': numberedLines(50) });
      const output = await expectOk(toolbox, 'read_file', { path: 'long.txt', start_line: 10, end_line: 12 });
      assert.equal(output, '10: line 10\n11: line 11\n12: line 12\n[Showing lines 10-12 of 50.]');
    });

    it('shows a last line without a trailing newline and strips carriage returns', async () => {
      writeTree(repo, { 'no-eol.txt': 'a\r\nb' });
      assert.equal(await expectOk(toolbox, 'read_file', { path: 'no-eol.txt' }), '1: a\n2: b');
    });

    it('says when a file is empty', async () => {
      writeTree(repo, { 'empty.txt': '' });
      assert.match(await expectOk(toolbox, 'read_file', { path: 'empty.txt' }), /empty file/);
    });

    it('refuses a start_line past the end and an end_line before start_line', async () => {
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'src/index.ts', start_line: 10 }), /has 3 lines/);
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'src/index.ts', start_line: 3, end_line: 2 }), /before start_line/);
    });

    it('cuts at 2,000 lines and says which start_line continues', async () => {
      writeTree(repo, { 'big.txt': numberedLines(2500) });
      const first = await expectOk(toolbox, 'read_file', { path: 'big.txt' });
      const lines = first.split('\n');
      assert.equal(lines.length, READ_LIMITS.readMaxLines + 1);
      assert.equal(lines[READ_LIMITS.readMaxLines - 1], '2000: line 2000');
      assert.match(lines[READ_LIMITS.readMaxLines], /Cut at 2000 lines: showing lines 1-2000 of 2500\..*"start_line": 2001/);
      const rest = await expectOk(toolbox, 'read_file', { path: 'big.txt', start_line: 2001 });
      assert.ok(rest.startsWith('2001: line 2001\n'));
      assert.ok(rest.includes('2500: line 2500'));
    });

    it('cuts at 256 KiB of text and continues from the first line not shown in full', async () => {
      writeTree(repo, { 'wide.txt': numberedLines(1000, 1000) });
      const output = await expectOk(toolbox, 'read_file', { path: 'wide.txt' });
      assert.ok(Buffer.byteLength(output) < READ_LIMITS.readMaxBytes + 20_000);
      const note = output.slice(output.lastIndexOf('\n') + 1);
      const match = /Cut at 256 KiB: showing lines 1-(\d+) of 1000\..*"start_line": (\d+)/.exec(note);
      assert.ok(match, note);
      assert.equal(Number(match[2]), Number(match[1]) + 1);
    });

    it('shows the start of a single line longer than 256 KiB and says so', async () => {
      writeTree(repo, { 'min.js': `${'é'.repeat(200_000)}\nsecond\n` });
      const output = await expectOk(toolbox, 'read_file', { path: 'min.js' });
      assert.ok(output.startsWith('1: éé'));
      assert.doesNotMatch(output, /\uFFFD/, 'the cut never splits a character');
      assert.match(output, /line 1 is longer than 256 KiB.*"start_line": 2/);
    });

    it('reads a window deep in a large file', async () => {
      writeTree(repo, { 'huge.txt': numberedLines(200_000) });
      assert.equal(
        await expectOk(toolbox, 'read_file', { path: 'huge.txt', start_line: 199_999, end_line: 200_000 }),
        '199999: line 199999\n200000: line 200000\n[Showing lines 199999-200000 of 200000.]',
      );
    });

    it('stops looking for a start_line past the first 64 MiB of a file, names the last line it reached, and reads that line', async () => {
      // A 10-line text head (over 8 KiB, so not taken for binary), then a 256 MiB sparse file whose
      // only other bytes are a newline at the end of every MiB.
      const MIB = 1024 * 1024;
      const file = path.join(repo, 'huge.log');
      fs.writeFileSync(file, numberedLines(10, 1000));
      const fd = fs.openSync(file, 'r+');
      for (let end = MIB; end <= 256 * MIB; end += MIB) fs.writeSync(fd, '\n', end - 1);
      fs.closeSync(fd);
      assert.equal(READ_LIMITS.readScanMaxBytes, 64 * MIB);
      // 10 head lines and line 11 end in the first MiB; each next MiB ends one more line; line 75 starts at 64 MiB.
      const output = await expectFailure(toolbox, 'read_file', { path: 'huge.log', start_line: 5000 });
      assert.equal(
        output,
        'Stopped looking for line 5000 of "huge.log" (256 MiB): read_file looks for start_line only in the first 64 MiB of a file, which go as far as line 75. ' +
          'Pass a start_line of at most 75. Lines further in cannot be read here; ask the user which part of the file matters, or to save that part as a smaller file.',
      );
      assert.match(await expectOk(toolbox, 'read_file', { path: 'huge.log', start_line: 75, end_line: 75 }), /^75: /);
      assert.match(await expectOk(toolbox, 'read_file', { path: 'huge.log', start_line: 10, end_line: 10 }), /^10: line 10 x+\n\[Showing lines 10-10 of more than 10\.\]$/);
    });

    it('refuses binary files', async () => {
      writeTree(repo, { 'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01]) });
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'image.png' }), /binary/);
    });

    it('points to list_dir for a directory', async () => {
      assert.match(await expectFailure(toolbox, 'read_file', { path: 'src' }), /list_dir/);
    });

    it('never shows secrets, directly or through a symlink, but reads .env.example', async () => {
      fs.symlinkSync('.env', path.join(repo, 'notes.txt'));
      for (const requested of ['.env', 'deploy/server.pem', '.git/config', 'notes.txt', './.env', 'src/../.env']) {
        const output = await expectFailure(toolbox, 'read_file', { path: requested });
        assert.doesNotMatch(output, new RegExp(SECRET_MARKER), requested);
      }
      assert.equal(await expectOk(toolbox, 'read_file', { path: '.env.example' }), '1: API_KEY=');
    });

    it('never shows content from outside the folder', async () => {
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'docs.txt'));
      fs.symlinkSync(outside, path.join(repo, 'linked'));
      for (const requested of ['docs.txt', 'linked/secret.txt', path.join(outside, 'secret.txt'), `file://${outside}/secret.txt`, '../outside/secret.txt']) {
        const output = await expectFailure(toolbox, 'read_file', { path: requested });
        assert.doesNotMatch(output, new RegExp(OUTSIDE_MARKER), requested);
        assert.match(output, /outside the folder/, requested);
      }
    });
  });

  describe('list_dir', () => {
    it('lists the root by default, sorted, with directories marked', async () => {
      const output = await expectOk(toolbox, 'list_dir', {});
      const lines = output.split('\n');
      assert.match(lines[0], /^\.\/ \(\d+ entries\)$/);
      assert.deepEqual(lines.slice(1), [
        '.env  (contents not readable)',
        '.env.example',
        '.git/  (Git internals; not listable)',
        '.hidden/',
        'README.md',
        'deploy/',
        'node_modules/',
        'package.json',
        'src/',
      ]);
    });

    it('refuses to list .git', async () => {
      assert.match(await expectFailure(toolbox, 'list_dir', { path: '.git' }), /\.git/);
    });

    it('names symlinks without following them out of the folder', async () => {
      fs.symlinkSync(outside, path.join(repo, 'src', 'vendor'));
      fs.symlinkSync('util', path.join(repo, 'src', 'util-link'));
      fs.symlinkSync(path.join(outside, 'missing'), path.join(repo, 'src', 'gone'));
      const output = await expectOk(toolbox, 'list_dir', { path: 'src' });
      assert.match(output, /^util-link\/ {2}\(symbolic link\)$/m);
      assert.match(output, /^vendor {2}\(symbolic link leading outside the folder; not readable\)$/m);
      assert.match(output, /^gone {2}\(symbolic link leading outside the folder; not readable\)$/m, 'dangling or not, outside is outside');
      assert.doesNotMatch(output, /secret\.txt|pkg/);
      assert.match(await expectFailure(toolbox, 'list_dir', { path: 'src/vendor' }), /outside the folder/);
    });

    it('caps at 500 entries and says so', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 510; i++) files[`many/f${String(i).padStart(3, '0')}.txt`] = '';
      writeTree(repo, files);
      const output = await expectOk(toolbox, 'list_dir', { path: 'many' });
      const lines = output.split('\n');
      assert.equal(lines.length, 1 + READ_LIMITS.listMaxEntries + 1);
      assert.match(lines[lines.length - 1], /first 500 of 510 entries/);
    });

    it('points to read_file for a file', async () => {
      assert.match(await expectFailure(toolbox, 'list_dir', { path: 'README.md' }), /read_file/);
    });
  });

  describe('find_files', () => {
    it('matches a pattern without "/" at any depth, dot files included', async () => {
      assert.deepEqual((await expectOk(toolbox, 'find_files', { pattern: '*.ts' })).split('\n'), [
        '.hidden/config.ts',
        'src/index.ts',
        'src/util/strings.ts',
      ]);
    });

    it('matches a pattern with "/" against the path relative to the root', async () => {
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'src/**/*.ts' }), 'src/index.ts\nsrc/util/strings.ts');
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'util/*.ts', path: 'src' }), 'src/util/strings.ts');
    });

    it('leaves out node_modules/ and .git/', async () => {
      const output = await expectOk(toolbox, 'find_files', { pattern: '**' });
      assert.doesNotMatch(output, /node_modules|\.git\//);
    });

    it('names secret files without offering their contents', async () => {
      const output = await expectOk(toolbox, 'find_files', { pattern: '.env*' });
      assert.equal(output, '.env  (contents not readable)\n.env.example');
    });

    it('leaves out files ignored by the root and nested .gitignore, honoring re-includes', async () => {
      writeTree(repo, {
        '.gitignore': 'dist/\n*.log\n',
        'dist/bundle.ts': '',
        'app.log': '',
        'src/.gitignore': 'generated.ts\n!keep.log\n',
        'src/generated.ts': '',
        'src/keep.log': '',
        'src/other.log': '',
        'lib/generated.ts': '',
      });
      const output = (await expectOk(toolbox, 'find_files', { pattern: '**' })).split('\n');
      for (const ignored of ['dist/bundle.ts', 'app.log', 'src/generated.ts', 'src/other.log']) assert.ok(!output.includes(ignored), ignored);
      for (const kept of ['lib/generated.ts', 'src/keep.log', 'src/index.ts', '.gitignore']) assert.ok(output.includes(kept), kept);
    });

    it('applies ancestor .gitignore rules when searching a subdirectory', async () => {
      writeTree(repo, { '.gitignore': '*.gen.ts\n', 'src/a.gen.ts': '', 'src/b.ts': '' });
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.ts', path: 'src/' }), 'src/b.ts\nsrc/index.ts\nsrc/util/strings.ts');
    });

    it('does not descend into symlinked directories and includes only symlinked files that stay inside', async () => {
      fs.symlinkSync('.', path.join(repo, 'src', 'loop'));
      fs.symlinkSync(outside, path.join(repo, 'vendor'));
      fs.symlinkSync('index.ts', path.join(repo, 'src', 'alias.ts'));
      fs.symlinkSync(path.join(outside, 'pkg', 'index.ts'), path.join(repo, 'src', 'escape.ts'));
      fs.symlinkSync(path.join(outside, 'nothing.ts'), path.join(repo, 'src', 'dangling.ts'));
      fs.symlinkSync('../.env', path.join(repo, 'src', 'env.ts'));
      const output = await expectOk(toolbox, 'find_files', { pattern: '*.ts' });
      assert.deepEqual(output.split('\n'), ['.hidden/config.ts', 'src/alias.ts', 'src/index.ts', 'src/util/strings.ts']);
    });

    it('caps at 500 results and says so', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 600; i++) files[`gen/f${String(i).padStart(3, '0')}.txt`] = '';
      writeTree(repo, files);
      const lines = (await expectOk(toolbox, 'find_files', { pattern: '*.txt' })).split('\n');
      assert.equal(lines.length, READ_LIMITS.findMaxResults + 1);
      assert.match(lines[lines.length - 1], /first 500 matches; there are more/);
    });

    it('says when nothing matches', async () => {
      assert.match(await expectOk(toolbox, 'find_files', { pattern: '*.rs' }), /No files match "\*\.rs"/);
    });

    it('refuses a search scope outside the folder', async () => {
      assert.match(await expectFailure(toolbox, 'find_files', { pattern: '*', path: outside }), /outside the folder/);
    });
  });

  describe('grep_files', () => {
    it('reports matches as path:line: text', async () => {
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing' }), 'src/index.ts:1: export function createThing() {');
    });

    it('anchors ^ and $ per line and handles CRLF line ends', async () => {
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: '^export const other = 2;$' }), 'src/util/strings.ts:2: export const other = 2;');
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: '^\\}$' }), 'src/index.ts:3: }');
    });

    it('matches lookaround patterns line by line', async () => {
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: '(?<=return )1', glob: '*.ts' }), 'src/index.ts:2:   return 1;');
    });

    it('never matches across lines', async () => {
      assert.match(await expectOk(toolbox, 'grep_files', { pattern: '\\{\\s+return' }), /^No matches/);
    });

    it('answers an invalid regular expression with a clear error', async () => {
      const output = await expectFailure(toolbox, 'grep_files', { pattern: 'createThing(' });
      assert.match(output, /Invalid regular expression/);
    });

    it('filters by glob and by path', async () => {
      writeTree(repo, { 'docs/guide.md': 'hello world\n' });
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello', glob: '*.md' }), 'docs/guide.md:1: hello world');
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello', path: 'src' }), 'src/util/strings.ts:1: export const greeting = "hello";');
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello', path: 'src/util/strings.ts' }), 'src/util/strings.ts:1: export const greeting = "hello";');
    });

    it('skips secret files silently, including through symlinks, and searches .env.example', async () => {
      fs.symlinkSync('.env', path.join(repo, 'notes.txt'));
      const output = await expectOk(toolbox, 'grep_files', { pattern: 'API_KEY|SECRET' });
      assert.equal(output, '.env.example:1: API_KEY=');
      assert.doesNotMatch(output, new RegExp(SECRET_MARKER));
    });

    it('refuses a secret named as the search path', async () => {
      assert.doesNotMatch(await expectFailure(toolbox, 'grep_files', { pattern: '.', path: '.env' }), new RegExp(SECRET_MARKER));
    });

    it('never returns content from outside the folder', async () => {
      fs.symlinkSync(outside, path.join(repo, 'vendor'));
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'docs.txt'));
      assert.doesNotMatch(await expectOk(toolbox, 'grep_files', { pattern: 'OUTSIDE' }), new RegExp(OUTSIDE_MARKER));
    });

    it('leaves out gitignored files (root and nested), node_modules/ and .git/', async () => {
      writeTree(repo, {
        '.gitignore': 'build/\n',
        'build/out.ts': 'export function createThing() {}\n',
        'src/.gitignore': 'gen/\n',
        'src/gen/api.ts': 'export function createThing() {}\n',
      });
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing' }), 'src/index.ts:1: export function createThing() {');
    });

    it('skips binary files', async () => {
      writeTree(repo, { 'data.bin': Buffer.concat([Buffer.from('createThing'), Buffer.from([0, 1, 2])]) });
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing' }), 'src/index.ts:1: export function createThing() {');
    });

    it('skips files larger than the grep size limit and names them', async () => {
      writeTree(repo, { 'huge.log': `createThing\n${'x'.repeat(READ_LIMITS.grepMaxFileBytes)}\n` });
      const output = await expectOk(toolbox, 'grep_files', { pattern: 'createThing' });
      assert.match(output, /^src\/index\.ts:1:/);
      assert.match(output, /Skipped 1 file\(s\) larger than 4 MiB: huge\.log/);
    });

    it('caps at 200 matches and says so', async () => {
      writeTree(repo, { 'many.txt': 'needle\n'.repeat(300) });
      const lines = (await expectOk(toolbox, 'grep_files', { pattern: 'needle' })).split('\n');
      assert.equal(lines.length, READ_LIMITS.grepMaxMatches + 1);
      assert.equal(lines[199], 'many.txt:200: needle');
      assert.match(lines[200], /Stopped at 200 matches; there are more/);
    });

    it('shortens long lines around the match', async () => {
      writeTree(repo, { 'wide.txt': `${'a'.repeat(5000)}needle${'b'.repeat(5000)}\n` });
      const output = await expectOk(toolbox, 'grep_files', { pattern: 'needle' });
      assert.ok(output.length < 400, `line should be shortened, got ${output.length} chars`);
      assert.match(output, /^wide\.txt:1: …a+needleb+…$/);
    });

    it('finds plain strings with escaped punctuation and non-ASCII text', async () => {
      writeTree(repo, { 'i18n.txt': 'first\nsay héllo (twice)\n' });
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing\\(\\)' }), 'src/index.ts:1: export function createThing() {');
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'héllo \\(twice\\)' }), 'i18n.txt:2: say héllo (twice)');
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: '[^\\p{ASCII}]llo' }), 'i18n.txt:2: say héllo (twice)');
    });

    it('counts line numbers correctly across many matches in one file', async () => {
      writeTree(repo, { 'count.txt': numberedLines(100) });
      const output = await expectOk(toolbox, 'grep_files', { pattern: 'line (7|77)$' });
      assert.equal(output, 'count.txt:7: line 7\ncount.txt:77: line 77');
    });
  });
});

describe('repository context', () => {
  let base: string;
  let repo: string;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-context-')));
    repo = path.join(base, 'repo');
    fs.mkdirSync(repo);
  });
  afterEach(() => {
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('summarizes top level, manifests, git status and file counts by extension', async () => {
    writeTree(repo, { 'package.json': '{}', 'src/a.ts': '', 'src/b.ts': '', 'README.md': '', '.git/HEAD': 'ref: x\n', 'node_modules/x/y.js': '' });
    const summary = await summarizeRepo(repo, NO_POLICY);
    assert.match(summary, /a git repository/);
    assert.match(summary, /Manifests: package\.json/);
    assert.match(summary, /\.ts 2/);
    assert.match(summary, /\.json 1/);
    assert.doesNotMatch(summary, /\.js \d/, 'node_modules is not counted');
  });

  it('stays under 4 KB and caps the walk on a large tree', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`top-level-entry-with-a-long-name-${i}.ext${i}`] = '';
    for (let i = 0; i < SUMMARY_LIMITS.walkMaxEntries + 500; i++) files[`deep/f${i}.txt`] = '';
    writeTree(repo, files);
    const summary = await summarizeRepo(repo, NO_POLICY);
    assert.ok(summary.length <= SUMMARY_LIMITS.maxChars, `summary is ${summary.length} chars`);
    assert.match(summary, /and \d+ more/);
    assert.match(summary, /the tree is larger/);
  });

  it('does not count files behind a symlink out of the folder', async () => {
    writeTree(base, { 'outside/a.secretext': '', 'outside/b.secretext': '' });
    writeTree(repo, { 'x.ts': '' });
    fs.symlinkSync(path.join(base, 'outside'), path.join(repo, 'vendor'));
    fs.symlinkSync(path.join(base, 'outside', 'a.secretext'), path.join(repo, 'linked.secretext'));
    assert.doesNotMatch(await summarizeRepo(repo, NO_POLICY), /\.secretext \d/);
  });

  it('reads the instruction files that exist', async () => {
    writeTree(repo, { 'AGENTS.md': 'agents', '.github/copilot-instructions.md': 'copilot' });
    assert.deepEqual(await readInstructionFiles(repo, NO_POLICY), [
      { path: 'AGENTS.md', text: 'agents' },
      { path: '.github/copilot-instructions.md', text: 'copilot' },
    ]);
  });

  it('cuts an instruction file at 16 KiB and marks the cut', async () => {
    writeTree(repo, { 'CLAUDE.md': 'ü'.repeat(INSTRUCTION_FILE_MAX_BYTES) });
    const [file] = await readInstructionFiles(repo, NO_POLICY);
    assert.ok(Buffer.byteLength(file.text) < INSTRUCTION_FILE_MAX_BYTES + 300);
    assert.match(file.text, /\[… cut: CLAUDE\.md is 32 KiB; only the first 16 KiB are included/);
    assert.doesNotMatch(file.text, /\uFFFD/);
  });

  it('skips instruction files that are symlinks out of the folder or denied by policy, and reads a shared target once', async () => {
    writeTree(base, { 'outside.md': OUTSIDE_MARKER });
    fs.symlinkSync(path.join(base, 'outside.md'), path.join(repo, 'AGENTS.md'));
    writeTree(repo, { '.github/copilot-instructions.md': 'copilot', 'shared.md': 'shared' });
    fs.symlinkSync('shared.md', path.join(repo, 'CLAUDE.md'));
    assert.deepEqual(await readInstructionFiles(repo, { denyTools: [], denyRead: ['.github/**'] }), [{ path: 'CLAUDE.md', text: 'shared' }]);
  });
});

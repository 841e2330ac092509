import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { braceExpand, Minimatch } from 'minimatch';
import { compileGlob, countExpansions, GLOB_LIMITS, GlobError, globProblem } from '../../../server/src/access/globs';
import { denyReadSettingProblem, parsePolicy, PolicyError } from '../../../server/src/access/policy';
import { ReadDenyRules } from '../../../server/src/access/secrets';
import { createToolbox, DENIABLE_TOOL_NAMES, READ_TOOL_NAMES } from '../../../server/src/read/toolbox';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { expectFailure, expectOk, NO_POLICY, ripgrepOnPath, writeDemoRepo } from '../../support/toolFixture';

/** Globs that held the event loop or exhausted memory when compiled by minimatch. */
const HOSTILE: Array<[string, RegExp]> = [
  ['+(?|?|?)x', /extglob syntax "\+\(…\)"/],
  ['*(a|b)', /extglob syntax "\*\(…\)"/],
  ['src/@(x|y)/**', /extglob syntax "@\(…\)"/],
  ['src/!(a)', /extglob syntax "!\(…\)"/],
  ['**/?(a)?(a)?(a)aaa', /extglob/],
  ['{a,b}'.repeat(17), /more than 256 alternatives/],
  ['{a,b}'.repeat(51), /more than 256 alternatives/],
  ['{1..100000}', /more than 256 alternatives/],
  ['{a..z}{a..z}', /more than 256 alternatives/],
  ['{a,{b,{c,{d,e}}}}'.repeat(4), /more than 256 alternatives/],
  ['x'.repeat(GLOB_LIMITS.maxLength + 1), /characters long, more than the 256 allowed/],
];

const LEGITIMATE_PATHS = [
  'a.ts', 'src/a.ts', 'src/a.tsx', 'src/deep/b.test.ts', '.hidden/c.ts', 'README.md', 'docs/x.md', 'a', 'src/.env', 'x/y/z',
  'file1.ts', 'file10.tsx', 'a/', 'src/', 'x/y/z/', 'x/z', 'x/y/w/z', 'A.TS', 'Src/A.ts', 'secrets', 'secrets/', 'secrets/a/b.txt',
  'a.min.js', 'lib/a.min.js', 'test/x', 'test', 'src/test/y/z.ts', '[a].ts', 'b.ts', 'c-d.ts', 'ab/ab/ab',
];
const LEGITIMATE_GLOBS = [
  'src/**/*.{ts,tsx}', '**/test/**', '*.min.js', '*.ts', '**/*.ts', 'src/**', '*.{ts,md}', '.*', 'src/*.ts', '**', '*', 'file1*.ts',
  '[a-c].ts', '!*.ts', '?.ts', 'x/**/z', '**/deep/**', 'secrets', 'secrets/**', 'a/**', 'x/*/z', 'x/**/*/z', '[!a]*.ts',
  '[[:alpha:]].ts', '*.[tT][sS]', '{src,x}/**', 'a*b*', '*a*a*', 'x/**/**/z', 'file{1..3}.ts', 'ab/**/ab', 'a{,b}',
];

describe('globs', () => {
  it('match as minimatch does (dot files, names at any depth, ** segments, braces, classes, either case) on root-relative paths', () => {
    for (const glob of LEGITIMATE_GLOBS) {
      for (const nocase of [false, true]) {
        const reference = new Minimatch(glob, { dot: true, matchBase: !glob.includes('/'), nocase });
        const compiled = compileGlob(glob, { nocase });
        for (const candidate of LEGITIMATE_PATHS) {
          assert.equal(compiled.match(candidate), reference.match(candidate), `${glob}${nocase ? ' (nocase)' : ''} on ${candidate}`);
        }
      }
    }
  });

  it('refuse extglobs, brace bombs, long sequences and over-long globs with a message saying what to use instead', () => {
    for (const [glob, reason] of HOSTILE) {
      const problem = globProblem(glob);
      assert.ok(problem, `${glob.slice(0, 40)} is refused`);
      assert.match(problem, reason);
      assert.match(problem, /Use |List the alternatives/, 'the message says what to do');
      assert.throws(() => compileGlob(glob), (error: unknown) => error instanceof GlobError && reason.test(error.message));
    }
  });

  it('count brace alternatives without expanding them, agreeing with the expansion where it is small', () => {
    for (const glob of ['a', '{a,b}', '{a,b}{c,d,e}', 'x{a,{b,c}}y', 'f{1..12}.ts', '{a..e}', '{a}', 'src/**/*.{ts,tsx}', '{a,b']) {
      assert.equal(countExpansions(glob), braceExpand(glob).length, glob);
    }
    // 2^2000 alternatives: counted (capped just past the limit) where expanding them never ends.
    assert.equal(countExpansions('{a,b}'.repeat(2000)), GLOB_LIMITS.maxExpansions + 1);
  });

  it('match many-star globs against long names and paths with answers (no backtracking blow-up to wait out)', () => {
    const name = 'a'.repeat(255);
    assert.equal(compileGlob(`${'*a'.repeat(60)}*b`).match(name), false);
    assert.equal(compileGlob(`${'*a'.repeat(60)}*`).match(name), true);
    const deep = Array.from({ length: 16 }, () => 'a'.repeat(250)).join('/');
    assert.equal(compileGlob('**/a*a*a*/**/a*a*a*/**/a*a*a*/**/*a*b').match(deep), false);
    assert.equal(compileGlob('**/a*a*a*/**/a*a*a*/**/*a').match(deep), true);
  });

  it('keep a leading "!" literal in deny rules, and negate in the model\'s globs', () => {
    assert.equal(compileGlob('!.env', { nonegate: true }).match('!.env'), true);
    assert.equal(compileGlob('!.env', { nonegate: true }).match('src/a.ts'), false);
    assert.equal(compileGlob('!*.ts').match('README.md'), true);
  });

  it('deny with legitimate complex rules: the directory itself, any depth, either case', () => {
    const rules = new ReadDenyRules(['src/**/*.{ts,tsx}', '**/test/**', '*.min.js']);
    for (const denied of ['src/a.ts', 'src/x/y/B.TSX', 'test', 'test/x.txt', 'pkg/test/deep/a.md', 'lib/vendor/jquery.MIN.js']) {
      assert.equal(rules.denialOf(denied)?.kind, 'policy', `${denied} is denied`);
    }
    for (const readable of ['src/a.js', 'tests/x.txt', 'lib/jquery.js', 'README.md']) assert.equal(rules.denialOf(readable), undefined, `${readable} is readable`);
  });
});

describe('read policy limits', () => {
  const SOURCE = '/repo/.repo-discuss/policy.json';

  function policyError(text: string): PolicyError {
    try {
      parsePolicy(text, SOURCE);
    } catch (error) {
      assert.ok(error instanceof PolicyError);
      return error;
    }
    assert.fail(`accepted: ${text.slice(0, 80)}`);
  }

  it('refuses a hostile denyRead rule naming the file, the key and index, and what to do', () => {
    for (const [glob, reason] of HOSTILE) {
      const error = policyError(JSON.stringify({ denyRead: ['docs/**', glob] }));
      assert.ok(error.message.startsWith(`Invalid read policy in ${SOURCE}: "denyRead"[1] (`), error.message);
      assert.match(error.message, reason);
      assert.match(error.message, /Fix or remove it, then start the discussion again\.$/);
      assert.ok(error.message.length < 1000, 'a long rule is quoted cut, not whole');
    }
  });

  it('bounds the number of rules and their expanded size', () => {
    assert.match(policyError(JSON.stringify({ denyRead: Array.from({ length: 257 }, (_, i) => `d${i}/**`) })).message, /"denyRead" has 257 rules, more than the 256 allowed/);
    const wide = `{a,b,c,d}/{a,b,c,d}/{a,b,c,d}/${'x'.repeat(100)}`;
    assert.match(policyError(JSON.stringify({ denyRead: Array.from({ length: 4 }, () => wide) })).message, /"denyRead" up to \[2\] expands to more than 16384 characters/);
  });

  it('accepts legitimate complex rules and every tool name the toolbox has', () => {
    const policy = parsePolicy(JSON.stringify({ denyTools: DENIABLE_TOOL_NAMES, denyRead: ['src/**/*.{ts,tsx}', '**/test/**', '*.min.js', 'secrets/'] }), SOURCE);
    assert.deepEqual(policy.denyTools, [...READ_TOOL_NAMES, 'prepare_coding_task', 'record_decision']);
    assert.equal(policy.denyRead.length, 4);
  });

  it('refuses a denyTools name no tool has, listing the tools and suggesting the right case', () => {
    const miscased = policyError('{"denyTools": ["grep_files", "READ_FILE"]}');
    assert.ok(
      miscased.message.includes(`"denyTools"[1] names no tool: "READ_FILE" (did you mean "read_file"?); the tools are ${DENIABLE_TOOL_NAMES.map((name) => `"${name}"`).join(', ')}`),
      miscased.message,
    );
    assert.ok(DENIABLE_TOOL_NAMES.includes('git_diff') && DENIABLE_TOOL_NAMES.includes('find_references') && DENIABLE_TOOL_NAMES.includes('record_decision'), 'every tool the toolbox has is listed');
    assert.match(policyError('{"denyTools": ["Find-Files"]}').message, /did you mean "find_files"\?/);
    const unknown = policyError('{"denyTools": ["run_command"]}');
    assert.match(unknown.message, /"denyTools"\[0\] names no tool: "run_command"; the tools are/);
    assert.doesNotMatch(unknown.message, /did you mean/);
  });

  it('checks the denyRead setting as a start would, naming the entry', () => {
    assert.equal(denyReadSettingProblem(['secrets/**', '*.{pem,key}']), undefined);
    assert.match(denyReadSettingProblem(['ok/**', '+(a|b)']) ?? '', /^"denyRead"\[1\] \("\+\(a\|b\)"\) cannot be used: it uses the extglob syntax/);
  });
});

describe('model globs in find_files and grep_files', () => {
  let base: string;
  let repo: string;
  const rg = ripgrepOnPath();
  const engines = [
    { name: 'walk', search: () => new SearchEngine({ ripgrepPath: null }) },
    ...(rg ? [{ name: 'ripgrep', search: () => new SearchEngine({ ripgrepPath: rg }) }] : []),
  ];

  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-globs-')));
    ({ repo } = writeDemoRepo(base, { [`names/${'a'.repeat(200)}`]: 'long\n', 'src/view.tsx': 'export const view = 1;\n' }));
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  for (const engine of engines) {
    it(`answers a hostile glob, a file as path or not, with a refusal saying what to use instead (${engine.name})`, async () => {
      const toolbox = await createToolbox(repo, NO_POLICY, { search: engine.search() });
      const file = `names/${'a'.repeat(200)}`;
      for (const [glob, reason] of HOSTILE) {
        for (const where of [{}, { path: file }]) {
          const found = await expectFailure(toolbox, 'find_files', { pattern: glob, ...where });
          assert.match(found, /^The pattern argument ".*" cannot be used: /);
          assert.match(found, reason);
          const grepped = await expectFailure(toolbox, 'grep_files', { pattern: 'long', glob, ...where });
          assert.match(grepped, /^The glob argument ".*" cannot be used: /);
          assert.match(grepped, reason);
        }
      }
    });

    it(`still answers legitimate complex globs (${engine.name})`, async () => {
      const toolbox = await createToolbox(repo, NO_POLICY, { search: engine.search() });
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'src/**/*.{ts,tsx}' }), 'src/index.ts\nsrc/util/strings.ts\nsrc/view.tsx');
      assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.{ts,tsx}', path: 'src/view.tsx' }), 'src/view.tsx');
      assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'export const', glob: 'src/**/*.{ts,tsx}' }), 'src/util/strings.ts:1: export const greeting = "hello";\nsrc/util/strings.ts:2: export const other = 2;\nsrc/view.tsx:1: export const view = 1;');
    });
  }
});

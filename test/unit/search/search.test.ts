import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Toolbox } from '../../../server/src/read/types';
import { createToolbox } from '../../../server/src/read/toolbox';
import { READ_LIMITS } from '../../../server/src/read/limits';
import { RepoSummaries, summarizeRepo, SUMMARY_LIMITS } from '../../../server/src/context/repoSummary';
import { SearchEngine, SearchOptions } from '../../../server/src/search/searchEngine';
import { SearchPool } from '../../../server/src/search/searchPool';
import { sortInWalkOrder } from '../../../server/src/search/relativePaths';
import { isInsideRepository, keepsRulesInNestedRepositories } from '../../../server/src/search/ripgrepListing';
import { censusWithRipgrep, runSearchJob } from '../../../server/src/search/searchJobs';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { expectFailure, expectOk, NO_POLICY, ripgrepOnPath, runTool, SECRET_MARKER, writeDemoRepo, writeTree } from '../../support/toolFixture';

/**
 * One suite for find_files, grep_files and the summary census, run against
 * both ways of searching: through ripgrep and through the pure-Node walk.
 * Both must give the same answers; the ripgrep variant is skipped only when
 * no `rg` is on PATH (CI installs it).
 */

const RIPGREP = ripgrepOnPath();
/** Why a grep below the root left ripgrep for the walk (ripgrepListing.ts rankingFault). */
const OUTRANKED = 'ripgrep would rank the ignore rules above the searched directory below those inside it';
/** Why a grep in a folder in no repository left a ripgrep after 13 for the walk (ripgrepListing.ts nestedRepositoryFault). */
const KEPT_RULES = 'ripgrep after 13 keeps the .gitignore rules from above a nested repository inside it, in a folder that is in no repository';

/**
 * A launcher that says it is ripgrep `version` and runs the ripgrep on PATH
 * for everything else: what the search decides from a version, without that
 * version installed.
 */
function ripgrepSaying(version: string, directory: string): string {
  const launcher = path.join(directory, 'rg');
  fs.writeFileSync(launcher, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "ripgrep ${version}"; exit 0; fi\nexec "${RIPGREP}" "$@"\n`, { mode: 0o755 });
  return launcher;
}

interface Variant {
  name: string;
  options: SearchOptions;
  available: boolean;
  usesRipgrep: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'through ripgrep', options: { ripgrepPath: RIPGREP, orderedHeadStartMs: 0 }, available: RIPGREP !== undefined, usesRipgrep: true },
  { name: 'through the pure-Node walk', options: { ripgrepPath: null }, available: true, usesRipgrep: false },
];

function lines(output: string): string[] {
  return output.split('\n');
}

/**
 * A directory the root's rule leaves out and a deeper `!target/`, or a
 * `.ignore` over a `.gitignore`, lets back in. The files in it are judged by
 * the rules that name them (`*.log`), not by the rule their directory escaped.
 */
const LET_BACK_IN_TREE = {
  'lb/.gitignore': 'target/\nbuild/\n*.log\n',
  'lb/.ignore': '!build/\n',
  'lb/keep/.gitignore': '!target/\n',
  'lb/keep/target/out.ts': 'letbackin\n',
  'lb/keep/target/deep/more.ts': 'letbackin\n',
  'lb/keep/target/trace.log': 'letbackin\n',
  'lb/other/target/hidden.ts': 'letbackin\n',
  'lb/other/target/sub/deeper.ts': 'letbackin\n',
  'lb/other/target/skip.log': 'letbackin\n',
  'lb/build/gen/x.ts': 'letbackin\n',
};
/**
 * Of LET_BACK_IN_TREE, the files ripgrep shows, in walk order (git shows the
 * same but `lb/build/`, let back in by an `.ignore`, which git does not read).
 */
const LET_BACK_IN_FILES = ['lb/build/gen/x.ts', 'lb/keep/target/deep/more.ts', 'lb/keep/target/out.ts'];
/** Of LET_BACK_IN_TREE, what a search asked to look inside the ignored `lb/other/target/` shows: its files but the one a rule names. */
const INSIDE_IGNORED_FILES = ['lb/other/target/hidden.ts', 'lb/other/target/sub/deeper.ts'];
/** A link inside the ignored directory to a file beside it, made by the tests that search in there. */
const INSIDE_IGNORED_LINK = 'lb/other/target/sub/linked.ts';

for (const variant of VARIANTS) {
  describe(`searching ${variant.name}`, function () {
    let base: string;
    let repo: string;
    let outside: string;
    let engine: SearchEngine;
    let toolbox: Toolbox;
    /** Set by a test that expects ripgrep to hand the search to the walk. */
    let expectWalk = false;

    before(function () {
      if (!variant.available) this.skip();
    });

    beforeEach(async () => {
      expectWalk = false;
      base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-search-')));
      ({ repo, outside } = writeDemoRepo(base, {
        '.env.local': `API_KEY=${SECRET_MARKER}\n`,
        'lib/node_modules/nested/index.ts': 'export function createThing() {}\n',
      }));
      engine = new SearchEngine(variant.options);
      toolbox = await createToolbox(repo, NO_POLICY, { search: engine });
    });

    afterEach(() => {
      fs.rmSync(base, { recursive: true, force: true });
    });

    /** A test of this variant that also checks the variant's path really ran: a silent fallback would test the other path twice. */
    const test = (title: string, body: () => Promise<void>): void => {
      it(title, async () => {
        await body();
        if (variant.usesRipgrep) {
          assert.deepEqual(engine.counts.fallbackReasons, [], 'ripgrep was offered but not used');
          if (!expectWalk) assert.equal(engine.counts.node, 0, 'the search ran on the walk instead of ripgrep');
        } else {
          assert.equal(engine.counts.ripgrep, 0);
        }
      });
    };

    /** A toolbox over `repo` whose engine of this variant has its warm index built. */
    const warmToolbox = async (): Promise<{ warm: SearchEngine; warmBox: Toolbox }> => {
      const warm = new SearchEngine({ ...variant.options, fileIndex: true });
      const warmBox = await createToolbox(repo, NO_POLICY, { search: warm });
      assert.equal(await warm.prepareIndex(repo, []), true);
      return { warm, warmBox };
    };

    /** A find_files test: find_files walks names in either variant (searchJobs.ts find), so only a silent fallback is checked for. */
    const findTest = (title: string, body: () => Promise<void>): void => {
      it(title, async () => {
        await body();
        if (variant.usesRipgrep) assert.deepEqual(engine.counts.fallbackReasons, [], 'ripgrep was offered but not used');
        else assert.equal(engine.counts.ripgrep, 0);
      });
    };

    describe('find_files', () => {
      findTest('answers by a walk of names, never through ripgrep, whose listing could not be used without a crawl of every directory beside it', async () => {
        assert.deepEqual(lines(await expectOk(toolbox, 'find_files', { pattern: '**/*.ts' })), ['.hidden/config.ts', 'src/index.ts', 'src/util/strings.ts']);
        assert.deepEqual([engine.counts.ripgrep, engine.counts.node], [0, 1]);
      });

      findTest('matches a name glob at any depth and a path glob from the root, dot files included', async () => {
        assert.deepEqual(lines(await expectOk(toolbox, 'find_files', { pattern: '*.ts' })), ['.hidden/config.ts', 'src/index.ts', 'src/util/strings.ts']);
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'src/**/*.ts' }), 'src/index.ts\nsrc/util/strings.ts');
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.{md,json}' }), 'README.md\npackage.json');
      });

      findTest('matches a pattern ending in "/." as the pattern without it, its name filter not taking "." for a file name', async () => {
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'src/**/.' }), await expectOk(toolbox, 'find_files', { pattern: 'src/**' }));
        assert.match(await expectOk(toolbox, 'find_files', { pattern: 'src/**' }), /src\/index\.ts/);
      });

      findTest('matches a pattern relative to the directory it searches', async () => {
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'util/*.ts', path: 'src' }), 'src/util/strings.ts');
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.ts', path: 'src/util' }), 'src/util/strings.ts');
      });

      findTest('echoes a pattern of 20,000 characters cut short, so the answer does not grow with the call', async () => {
        // Refused for its length (see globs.ts); the refusal quotes it cut as well.
        const answer = await expectFailure(toolbox, 'find_files', { pattern: `${'q'.repeat(20_000)}.ts` });
        assert.ok(answer.length < 1000, `a ${answer.length}-character answer: ${answer.slice(0, 80)}…`);
      });

      findTest('leaves out node_modules/ and .git/ at any depth', async () => {
        const output = await expectOk(toolbox, 'find_files', { pattern: '**' });
        assert.doesNotMatch(output, /node_modules|\.git\//);
      });

      findTest('names secret files without offering their contents and never lists inside a secret-named directory', async () => {
        writeTree(repo, { 'keys.pem/inner.txt': 'x\n', 'config/.npmrc': 'x\n' });
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '.env*' }), '.env  (contents not readable)\n.env.example\n.env.local  (contents not readable)');
        const all = await expectOk(toolbox, 'find_files', { pattern: '**' });
        assert.doesNotMatch(all, /inner\.txt/);
        assert.match(all, /^config\/\.npmrc {2}\(contents not readable\)$/m);
      });

      findTest('refuses secret names that differ from the rules only in case, which ripgrep itself does not skip', async () => {
        writeTree(repo, { '.ENV': `KEY=${SECRET_MARKER}\n`, 'certs/Server.PEM': `${SECRET_MARKER}\n`, 'KEYS.PEM/inner.txt': `${SECRET_MARKER}\n` });
        const all = await expectOk(toolbox, 'find_files', { pattern: '**' });
        assert.match(all, /^\.ENV {2}\(contents not readable\)$/m);
        assert.match(all, /^certs\/Server\.PEM {2}\(contents not readable\)$/m);
        assert.doesNotMatch(all, /inner\.txt/);
      });

      findTest('honors .gitignore at every level with re-includes, and .ignore and .rgignore over it', async () => {
        writeTree(repo, {
          '.gitignore': 'dist/\n*.log\n',
          'dist/bundle.ts': '',
          'app.log': '',
          'src/.gitignore': 'generated.ts\n!keep.log\n',
          'src/generated.ts': '',
          'src/keep.log': '',
          'src/other.log': '',
          'lib/generated.ts': '',
          '.ignore': 'scratch/\n',
          'scratch/notes.ts': '',
          '.rgignore': '!wanted.log\n',
          'wanted.log': '',
        });
        const output = lines(await expectOk(toolbox, 'find_files', { pattern: '**' }));
        for (const ignored of ['dist/bundle.ts', 'app.log', 'src/generated.ts', 'src/other.log', 'scratch/notes.ts']) assert.ok(!output.includes(ignored), ignored);
        for (const kept of ['lib/generated.ts', 'src/keep.log', 'src/index.ts', '.gitignore', 'wanted.log']) assert.ok(output.includes(kept), kept);
      });

      findTest('enters a directory a rule above leaves out and a deeper rule or a stronger kind lets back in, showing what it holds, as ripgrep does, cold and warm', async () => {
        writeTree(repo, LET_BACK_IN_TREE);
        const { warm, warmBox } = await warmToolbox();
        for (const box of [toolbox, warmBox]) {
          assert.equal(await expectOk(box, 'find_files', { pattern: 'lb/**/*.ts' }), LET_BACK_IN_FILES.join('\n'));
          assert.equal(await expectOk(box, 'find_files', { pattern: '*.ts', path: 'lb/keep' }), LET_BACK_IN_FILES.slice(1).join('\n'));
          assert.equal(await expectOk(box, 'find_files', { pattern: '*.ts', path: 'lb/keep/target/deep' }), 'lb/keep/target/deep/more.ts');
        }
        assert.equal(warm.counts.index, 3, 'the index answered every warm find, the let-back-in directory being one it entered');
      });

      findTest('looks inside a directory the rules leave out when asked to, with the rules there, as ripgrep given that path does, cold and warm', async () => {
        writeTree(repo, LET_BACK_IN_TREE);
        const { warm, warmBox } = await warmToolbox();
        for (const box of [toolbox, warmBox]) {
          assert.equal(await expectOk(box, 'find_files', { pattern: '**', path: 'lb/other/target' }), INSIDE_IGNORED_FILES.join('\n'));
          assert.equal(await expectOk(box, 'find_files', { pattern: '*.ts', path: 'lb/other/target/sub' }), INSIDE_IGNORED_FILES[1]);
        }
        assert.equal(warm.counts.index, 0, 'the index, which never entered the ignored directory, handed both finds to the cold search');
      });

      findTest('lists inside node_modules/ when asked to, still leaving out a node_modules/ below it', async () => {
        writeTree(repo, { 'lib/node_modules/nested/node_modules/deeper/index.ts': 'export function createThing() {}\n' });
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '**', path: 'lib/node_modules' }), 'lib/node_modules/nested/index.ts');
      });

      findTest('applies the ignore rules above a subdirectory it searches, anchored ones included', async () => {
        writeTree(repo, {
          '.gitignore': '*.gen.ts\n/src/a/only-here.ts\n',
          '.git/info/exclude': 'excluded.ts\n',
          'src/.gitignore': 'local/\n',
          'src/a/b.gen.ts': '',
          'src/a/b.ts': '',
          'src/a/only-here.ts': '',
          'src/a/excluded.ts': '',
          'src/a/local/x.ts': '',
          'src/a/deeper/only-here.ts': '',
        });
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.ts', path: 'src/a' }), 'src/a/b.ts\nsrc/a/deeper/only-here.ts');
      });

      findTest('starts the git rules afresh inside a nested repository, keeping .ignore rules from above', async () => {
        writeTree(repo, {
          '.gitignore': '*.gen.ts\n',
          '.ignore': '*.tmp.ts\n',
          'vendor/lib/.git/HEAD': 'ref: refs/heads/main\n',
          'vendor/lib/.git/info/exclude': 'excluded.ts\n',
          'vendor/lib/.gitignore': 'local.ts\n',
          'vendor/lib/a.gen.ts': '',
          'vendor/lib/b.tmp.ts': '',
          'vendor/lib/excluded.ts': '',
          'vendor/lib/local.ts': '',
          'vendor/lib/kept.ts': '',
          'vendor/c.gen.ts': '',
        });
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'vendor/**/*.ts' }), 'vendor/lib/a.gen.ts\nvendor/lib/kept.ts');
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.ts', path: 'vendor/lib' }), 'vendor/lib/a.gen.ts\nvendor/lib/kept.ts');
      });

      findTest('honors .gitignore in a folder that is not a git repository', async () => {
        const plain = path.join(base, 'plain');
        writeTree(plain, { '.gitignore': 'out/\n', 'out/x.ts': '', 'src/y.ts': '' });
        const plainToolbox = await createToolbox(plain, NO_POLICY, { search: engine });
        assert.equal(await expectOk(plainToolbox, 'find_files', { pattern: '*.ts' }), 'src/y.ts');
        assert.equal(await expectOk(plainToolbox, 'grep_files', { pattern: '.', glob: '*.ts' }), 'No matches for "." in the folder matching glob "*.ts" (gitignored files, node_modules/ and .git/ are left out; binary files are skipped).');
      });

      findTest('never takes ignore rules from an ignore file or exclude file that is a symlink', async () => {
        writeTree(outside, { rules: 'visible-*.txt\n', 'exclude-rules': 'shown-*.md\n' });
        writeTree(repo, { 'sub/visible-1.txt': 'hello\n', 'docs/shown-1.md': 'hello\n' });
        fs.symlinkSync(path.join(outside, 'rules'), path.join(repo, 'sub', '.gitignore'));
        fs.mkdirSync(path.join(repo, '.git', 'info'), { recursive: true });
        fs.symlinkSync(path.join(outside, 'exclude-rules'), path.join(repo, '.git', 'info', 'exclude'));
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: '*.txt', path: 'sub' }), 'sub/visible-1.txt');
        assert.equal(await expectOk(toolbox, 'find_files', { pattern: 'docs/*.md' }), 'docs/shown-1.md');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello$' }), 'docs/shown-1.md:1: hello\nsub/visible-1.txt:1: hello');
        if (variant.usesRipgrep) {
          assert.match(engine.counts.fallbackReasons.join(), /symbolic link, which ripgrep would follow/);
          engine.counts.fallbackReasons.length = 0;
        }
      });

      findTest('lists symlinked files that stay inside the folder and never follows a symlinked directory', async () => {
        fs.symlinkSync('.', path.join(repo, 'src', 'loop'));
        fs.symlinkSync(outside, path.join(repo, 'vendor'));
        fs.symlinkSync('index.ts', path.join(repo, 'src', 'alias.ts'));
        fs.symlinkSync(path.join(outside, 'pkg', 'index.ts'), path.join(repo, 'src', 'escape.ts'));
        fs.symlinkSync(path.join(outside, 'nothing.ts'), path.join(repo, 'src', 'dangling.ts'));
        fs.symlinkSync('../.env', path.join(repo, 'src', 'env.ts'));
        fs.symlinkSync('../src/index.ts', path.join(repo, 'deploy', 'link.ts'));
        writeTree(repo, { '.gitignore': 'deploy/link.ts\n' });
        const output = await expectOk(toolbox, 'find_files', { pattern: '*.ts' });
        assert.deepEqual(lines(output), ['.hidden/config.ts', 'src/alias.ts', 'src/index.ts', 'src/util/strings.ts']);
      });

      findTest('returns files in walk order, each directory followed by its contents', async () => {
        const files: Record<string, string> = {};
        for (let i = 0; i < 200; i++) files[`gen/a/f${String(i).padStart(3, '0')}.txt`] = '';
        for (let i = 0; i < 200; i++) files[`gen/a-b/f${String(i).padStart(3, '0')}.txt`] = '';
        files['gen/a.txt'] = '';
        writeTree(repo, files);
        const output = lines(await expectOk(toolbox, 'find_files', { pattern: '*.txt' }));
        assert.equal(output.length, 401);
        // gen/a/… before gen/a-b/… before gen/a.txt, though plain string order would put them the other way round.
        assert.equal(output[0], 'gen/a/f000.txt');
        assert.equal(output[199], 'gen/a/f199.txt');
        assert.equal(output[200], 'gen/a-b/f000.txt');
        assert.equal(output[400], 'gen/a.txt');
      });

      findTest('returns the first 500 files in walk order and says there are more', async () => {
        const files: Record<string, string> = {};
        for (let i = 0; i < 300; i++) files[`gen/a/f${String(i).padStart(3, '0')}.txt`] = '';
        for (let i = 0; i < 300; i++) files[`gen/a-b/f${String(i).padStart(3, '0')}.txt`] = '';
        files['gen/a.txt'] = '';
        writeTree(repo, files);
        const output = lines(await expectOk(toolbox, 'find_files', { pattern: '*.txt' }));
        assert.equal(output.length, READ_LIMITS.findMaxResults + 1);
        assert.equal(output[299], 'gen/a/f299.txt');
        assert.equal(output[499], 'gen/a-b/f199.txt');
        assert.match(output[500], /first 500 matches; there are more/);
      });

      findTest('lists files denied by policy as not readable and nothing inside a directory denied by policy', async () => {
        writeTree(repo, { 'internal/plan.md': 'x\n', 'data/db.sqlite': '', 'docs/guide.md': 'x\n' });
        const narrowed = await createToolbox(repo, { denyTools: [], denyRead: ['internal/**', '*.sqlite'] }, { search: engine });
        const output = await expectOk(narrowed, 'find_files', { pattern: '**' });
        assert.doesNotMatch(output, /internal/);
        assert.match(output, /^data\/db\.sqlite {2}\(contents not readable\)$/m);
        assert.match(output, /^docs\/guide\.md$/m);
      });

      findTest('says when nothing matches and refuses a scope outside the folder', async () => {
        assert.match(await expectOk(toolbox, 'find_files', { pattern: '*.rs' }), /^No files match "\*\.rs" in the folder/);
        assert.match(await expectFailure(toolbox, 'find_files', { pattern: '*', path: outside }), /outside the folder/);
      });
    });

    describe('grep_files', () => {
      test('reports path:line: text, files in walk order and lines in order', async () => {
        writeTree(repo, { 'w/a/x.txt': 'needle one\nnone\nneedle two\n', 'w/a-b.txt': 'needle three\n', 'w/a.txt': 'needle four\n' });
        assert.equal(
          await expectOk(toolbox, 'grep_files', { pattern: 'needle', path: 'w' }),
          'w/a/x.txt:1: needle one\nw/a/x.txt:3: needle two\nw/a-b.txt:1: needle three\nw/a.txt:1: needle four',
        );
      });

      test('greps a directory a rule above leaves out and a deeper rule or a stronger kind lets back in, as ripgrep does', async () => {
        writeTree(repo, LET_BACK_IN_TREE);
        const expected = LET_BACK_IN_FILES.map((file) => `${file}:1: letbackin`);
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'letbackin' }), expected.join('\n'));
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'letbackin', glob: '*.ts' }), expected.join('\n'));
        assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'letbackin', path: 'lb', glob: '*.log' }), /^No matches/);
        // Below lb/, an `.ignore` above meets a `.gitignore` inside, which ripgrep would rank above it: the walk may answer.
        const scoped = await createToolbox(repo, NO_POLICY, { search: new SearchEngine(variant.options) });
        assert.equal(await expectOk(scoped, 'grep_files', { pattern: 'letbackin', path: 'lb/keep' }), expected.slice(1).join('\n'));
        assert.equal(await expectOk(scoped, 'grep_files', { pattern: 'letbackin', path: 'lb/keep/target/deep' }), expected[1]);
      });

      test('greps inside a directory the rules leave out when asked to, with the rules there, as ripgrep given that path does, cold and warm', async () => {
        writeTree(repo, LET_BACK_IN_TREE);
        const { warm, warmBox } = await warmToolbox();
        fs.symlinkSync('../hidden.ts', path.join(repo, INSIDE_IGNORED_LINK));
        const expected = [...INSIDE_IGNORED_FILES, INSIDE_IGNORED_LINK].map((file) => `${file}:1: letbackin`);
        for (const box of [toolbox, warmBox]) {
          assert.equal(await expectOk(box, 'grep_files', { pattern: 'letbackin', path: 'lb/other/target' }), expected.join('\n'));
          // A name glob goes to ripgrep as an include glob, which beats the rules for files: they are applied again.
          assert.equal(await expectOk(box, 'grep_files', { pattern: 'letbackin', path: 'lb/other/target', glob: '*.ts' }), expected.join('\n'));
          assert.match(await expectOk(box, 'grep_files', { pattern: 'letbackin', path: 'lb/other/target', glob: '*.log' }), /^No matches/);
        }
        assert.equal(warm.counts.index, 0, 'the index, which never entered the ignored directory, handed every grep to the cold search');
      });

      test('greps inside node_modules/ when asked to, cold and warm, with and without a glob, still leaving out a node_modules/ below it and never reading a secret there', async () => {
        writeTree(repo, {
          'lib/node_modules/nested/node_modules/deeper/index.ts': 'export function createThing() {}\n',
          'lib/node_modules/nested/.env': `createThing=${SECRET_MARKER}\n`,
        });
        const { warm, warmBox } = await warmToolbox();
        const expected = 'lib/node_modules/nested/index.ts:1: export function createThing() {}';
        for (const box of [toolbox, warmBox]) {
          for (const scope of ['lib/node_modules/nested', 'lib/node_modules']) {
            assert.equal(await expectOk(box, 'grep_files', { pattern: 'createThing', path: scope }), expected, scope);
            assert.equal(await expectOk(box, 'grep_files', { pattern: 'createThing', path: scope, glob: '*.ts' }), expected, scope);
            assert.doesNotMatch(await expectOk(box, 'grep_files', { pattern: 'createThing', path: scope, glob: '.env' }), new RegExp(SECRET_MARKER), scope);
          }
        }
        assert.doesNotMatch(await expectOk(toolbox, 'grep_files', { pattern: 'createThing' }), /node_modules/);
        // A file there named as the path is searched too, as the tool's description tells the model (one file is read
        // directly, never through ripgrep, so on an engine of its own).
        const deeper = 'lib/node_modules/nested/node_modules/deeper/index.ts';
        const single = await createToolbox(repo, NO_POLICY, { search: new SearchEngine(variant.options) });
        assert.equal(await expectOk(single, 'grep_files', { pattern: 'createThing', path: deeper }), `${deeper}:1: export function createThing() {}`);
        assert.equal(warm.counts.index, 0, 'the index, which never entered node_modules/, handed every search to the cold one');
      });

      test('anchors ^ and $ per line and handles CRLF line ends', async () => {
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: '^export const other = 2;$' }), 'src/util/strings.ts:2: export const other = 2;');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: '^\\}$' }), 'src/index.ts:3: }');
      });

      test('matches word boundaries, classes, lookaround and backreferences exactly as JavaScript does', async () => {
        // Searched as a directory so that ripgrep, not only the line matcher, takes part.
        writeTree(repo, {
          'm/m.txt': ['foobar', 'é foo', 'digits ٣ only', 'digits 3 here', 'nbsp\u00a0here', 'bom\ufeffhere', 'abab', 'abba', 'return 1;', 'x_y', 'café'].join('\n') + '\n',
        });
        const grep = async (pattern: string): Promise<string> => expectOk(toolbox, 'grep_files', { pattern, path: 'm' });
        assert.equal(await grep('\\bfoo\\b'), 'm/m.txt:2: é foo');
        assert.equal(await grep('digits \\d'), 'm/m.txt:4: digits 3 here');
        assert.equal(await grep('nbsp\\shere'), 'm/m.txt:5: nbsp\u00a0here');
        assert.equal(await grep('bom\\shere'), 'm/m.txt:6: bom\ufeffhere');
        assert.equal(await grep('^(ab)\\1$'), 'm/m.txt:7: abab');
        assert.equal(await grep('^a(?<mid>b)\\k<mid>a$'), 'm/m.txt:8: abba');
        assert.equal(await grep('(?<=return )1'), 'm/m.txt:9: return 1;');
        assert.match(await grep('^x\\Wy'), /^No matches/);
        assert.match(await grep('caf\\w'), /^No matches/);
        assert.equal(await grep('caf[^a]$'), 'm/m.txt:11: café');
      });

      test('finds lines in files that are not valid UTF-8 the way the text decodes', async () => {
        writeTree(repo, { 'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x62, 0x61, 0x72, 0x0a]) });
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'caf. bar' }), 'latin1.txt:1: caf\uFFFD bar');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'caf[^x] bar' }), 'latin1.txt:1: caf\uFFFD bar');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'caf\\uFFFD bar' }), 'latin1.txt:1: caf\uFFFD bar');
      });

      test('never matches across lines', async () => {
        assert.match(await expectOk(toolbox, 'grep_files', { pattern: '\\{\\s+return' }), /^No matches/);
      });

      test('skips a file with a NUL in its first 8 KiB and searches one whose NUL comes later', async () => {
        writeTree(repo, {
          'early.bin': Buffer.concat([Buffer.from('createThing\n'), Buffer.from([0, 1, 2])]),
          'late.dat': Buffer.concat([Buffer.from(`${'x'.repeat(9000)}\n`), Buffer.from([0]), Buffer.from('\ncreateThing late\n')]),
        });
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing' }), 'late.dat:3: createThing late\nsrc/index.ts:1: export function createThing() {');
        expectWalk = true; // a file named as the path needs no listing, so ripgrep has no part in it
        assert.match(await expectFailure(toolbox, 'grep_files', { pattern: 'createThing', path: 'early.bin' }), /binary/);
      });

      test('skips secret files, policy-denied files, node_modules/ and .git/, also through symlinks, and searches .env.example', async () => {
        fs.symlinkSync('.env', path.join(repo, 'notes.txt'));
        writeTree(repo, { 'internal/plan.md': 'API_KEY internal\n' });
        const narrowed = await createToolbox(repo, { denyTools: [], denyRead: ['internal/**'] }, { search: engine });
        const output = await expectOk(narrowed, 'grep_files', { pattern: 'API_KEY|SECRET|createThing' });
        assert.equal(output, '.env.example:1: API_KEY=\nsrc/index.ts:1: export function createThing() {');
        assert.doesNotMatch(await expectFailure(toolbox, 'grep_files', { pattern: '.', path: '.env' }), new RegExp(SECRET_MARKER));
      });

      test('never shows the contents of secret files whose names differ from the rules only in case', async () => {
        writeTree(repo, { '.ENV': `KEY=${SECRET_MARKER}\n`, 'certs/Server.PEM': `${SECRET_MARKER}\n`, 'KEYS.PEM/inner.txt': `${SECRET_MARKER}\n` });
        assert.match(await expectOk(toolbox, 'grep_files', { pattern: SECRET_MARKER }), /^No matches/);
      });

      test('never returns content from outside the folder', async () => {
        fs.symlinkSync(outside, path.join(repo, 'vendor'));
        fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'docs.txt'));
        assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'OUTSIDE' }), /^No matches/);
      });

      test('searches symlinked files that stay inside the folder under their own path', async () => {
        fs.symlinkSync('index.ts', path.join(repo, 'src', 'alias.ts'));
        assert.equal(
          await expectOk(toolbox, 'grep_files', { pattern: 'createThing', path: 'src' }),
          'src/alias.ts:1: export function createThing() {\nsrc/index.ts:1: export function createThing() {',
        );
      });

      test('searches every one of many symlinked files, in walk order, with links out and to secrets among them', async () => {
        const links = ['a1.ts', 'a2.ts', 'b1.ts', 'b2.ts', 'c1.ts', 'c2.ts', 'd1.ts'];
        for (const name of links) fs.symlinkSync('index.ts', path.join(repo, 'src', name));
        fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'src', 'b3.ts'));
        fs.symlinkSync('../.env', path.join(repo, 'src', 'c3.ts'));
        const expected = [...links, 'index.ts'].map((name) => `src/${name}:1: export function createThing() {`).join('\n');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing', path: 'src' }), expected);
      });

      test('leaves out ignored files, also above a subdirectory it searches', async () => {
        writeTree(repo, {
          '.gitignore': 'build/\n*.gen.ts\n',
          'build/out.ts': 'export function createThing() {}\n',
          'src/.gitignore': 'gen/\n',
          'src/gen/api.ts': 'export function createThing() {}\n',
          'src/x.gen.ts': 'export function createThing() {}\n',
        });
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing' }), 'src/index.ts:1: export function createThing() {');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing', path: 'src' }), 'src/index.ts:1: export function createThing() {');
      });

      test('searches a file named as the path even when it is ignored', async () => {
        expectWalk = true; // a file named as the path needs no listing, so ripgrep has no part in it
        writeTree(repo, { '.gitignore': 'build/\n', 'build/out.ts': 'export function createThing() {}\n' });
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'createThing', path: 'build/out.ts' }), 'build/out.ts:1: export function createThing() {}');
      });

      test('stops at 200 matches in walk order and says there are more', async () => {
        writeTree(repo, { 'many/b.txt': 'needle\n'.repeat(150), 'many/a.txt': 'needle\n'.repeat(100) });
        const output = lines(await expectOk(toolbox, 'grep_files', { pattern: 'needle' }));
        assert.equal(output.length, READ_LIMITS.grepMaxMatches + 1);
        assert.equal(output[99], 'many/a.txt:100: needle');
        assert.equal(output[199], 'many/b.txt:100: needle');
        assert.match(output[200], /Stopped at 200 matches; there are more/);
      });

      test('stops at 200 matches in walk order when most files match', async () => {
        expectWalk = true; // ripgrep hands a pattern this common to the ordered walk
        const files: Record<string, string> = {};
        for (let i = 0; i < 1200; i++) files[`spread/d${i % 7}/f${String(i).padStart(4, '0')}.txt`] = `common ${i}\n`;
        writeTree(repo, files);
        const output = lines(await expectOk(toolbox, 'grep_files', { pattern: 'common', path: 'spread' }));
        assert.equal(output.length, 201);
        assert.equal(output[0], 'spread/d0/f0000.txt:1: common 0');
        // d0 holds every 7th file from 0 (172 of them), so the cap falls in d1 at its 28th file.
        assert.equal(output[171], 'spread/d0/f1197.txt:1: common 1197');
        assert.equal(output[199], 'spread/d1/f0190.txt:1: common 190');
        if (variant.usesRipgrep) assert.equal(engine.counts.switchedToWalk, 1);
      });

      test('names a matching file over 4 MiB instead of searching it, and says nothing of one that does not match', async () => {
        writeTree(repo, {
          'huge.log': `${'x'.repeat(100)}\n`.repeat(45_000) + 'createThing at the end\n',
          'huge-other.log': `${'y'.repeat(100)}\n`.repeat(45_000),
        });
        const output = await expectOk(toolbox, 'grep_files', { pattern: 'createThing' });
        assert.match(output, /^src\/index\.ts:1:/);
        assert.match(output, /Skipped 1 file\(s\) larger than 4 MiB: huge\.log\. They contain matches/);
        assert.doesNotMatch(output, /huge-other/);
      });

      test('finds a match after the first read of a file larger than one read', async () => {
        writeTree(repo, { 'mid.txt': `${'z'.repeat(80)}\n`.repeat(5000) + 'createThing deep\n' + 'tail\n' });
        assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'createThing deep' }), /^mid\.txt:5001: createThing deep$/);
      });

      test('filters by name glob, by path glob and by path', async () => {
        writeTree(repo, { 'docs/guide.md': 'hello world\n', 'docs/deep/more.md': 'hello again\n' });
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello', glob: '*.md' }), 'docs/deep/more.md:1: hello again\ndocs/guide.md:1: hello world');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello', glob: 'docs/*.md' }), 'docs/guide.md:1: hello world');
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'hello', path: 'src' }), 'src/util/strings.ts:1: export const greeting = "hello";');
      });

      test('shortens long lines around the match', async () => {
        writeTree(repo, { 'wide.txt': `${'a'.repeat(5000)}needle${'b'.repeat(5000)}\n` });
        assert.match(await expectOk(toolbox, 'grep_files', { pattern: 'needle' }), /^wide\.txt:1: …a+needleb+…$/);
      });

      test('answers an invalid regular expression with a clear error', async () => {
        assert.match(await expectFailure(toolbox, 'grep_files', { pattern: 'createThing(' }), /Invalid regular expression/);
      });

      test('echoes a pattern of 100,000 characters cut to its first 200, and a glob of 20,000 cut short, so no answer grows with the call', async () => {
        const pattern = 'z'.repeat(100_000);
        const glob = `${'q'.repeat(20_000)}.ts`;
        const answers = [
          await expectOk(toolbox, 'grep_files', { pattern }),
          // A glob that long is refused (see globs.ts), quoted cut.
          await expectFailure(toolbox, 'grep_files', { pattern: 'createThing', glob }),
          await expectFailure(toolbox, 'grep_files', { pattern: '('.repeat(100_000) }),
        ];
        for (const answer of answers) assert.ok(answer.length < 1000, `a ${answer.length}-character answer: ${answer.slice(0, 80)}…`);
        assert.ok(answers[0].includes(`"${'z'.repeat(200)}…"`), answers[0].slice(0, 300));
        assert.match(answers[2], /^Invalid regular expression "\(+…": Too many captures\. /);
      });

      test('runs a pattern ripgrep cannot pre-filter on the walk, with the same answer', async () => {
        expectWalk = true;
        // `\a` is only valid without the u flag, where it means "a".
        assert.equal(await expectOk(toolbox, 'grep_files', { pattern: 'cre\\ateThing' }), 'src/index.ts:1: export function createThing() {');
        if (variant.usesRipgrep) {
          assert.match(engine.counts.fallbackReasons.join(), /cannot pre-filter/);
          engine.counts.fallbackReasons.length = 0;
        }
      });

      test('answers Cancelled when the signal aborts', async () => {
        const controller = new AbortController();
        controller.abort();
        assert.deepEqual(await runTool(toolbox, 'grep_files', { pattern: 'x' }, controller.signal), { ok: false, output: 'Cancelled.' });
      });

      test('stops a catastrophic pattern at its time limit with a clear failure, the event loop turning meanwhile', async () => {
        const pool = new SearchPool({ maxWorkers: 1 });
        const slow = await createToolbox(repo, NO_POLICY, { search: new SearchEngine({ ...variant.options, timeoutMs: 1000, pool }) });
        const after = await createToolbox(repo, NO_POLICY, { search: new SearchEngine({ ...variant.options, pool }) });
        writeTree(repo, { 'evil/evil.txt': `${'a'.repeat(40)}!\n` });
        let ticks = 0;
        const ticker = setInterval(() => (ticks += 1), 10);
        try {
          const outcome = await runTool(slow, 'grep_files', { pattern: '^(a+)+$', path: 'evil' });
          assert.equal(outcome.ok, false);
          assert.match(outcome.output, /grep_files stopped after 1 s without finishing/);
          assert.ok(ticks > 0, 'a timer fired while the search ran');
          // The stuck worker was replaced: the next search on the same pool answers.
          assert.equal(await expectOk(after, 'grep_files', { pattern: 'createThing', path: 'src' }), 'src/index.ts:1: export function createThing() {');
        } finally {
          clearInterval(ticker);
          await pool.close();
        }
      });
    });

    describe('the summary census', () => {
      test('counts files by extension without node_modules/, .git/ or anything behind a symlink out of the folder', async () => {
        fs.symlinkSync(outside, path.join(repo, 'vendor'));
        fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'linked.secretext'));
        const summary = await summarizeRepo(repo, NO_POLICY, { search: engine });
        assert.match(summary, /\.ts 3/);
        assert.doesNotMatch(summary, /\.secretext \d/);
      });

      test('stops at its cap on a large tree and says the tree is larger', async () => {
        const files: Record<string, string> = {};
        for (let i = 0; i < SUMMARY_LIMITS.walkMaxEntries + 500; i++) files[`deep/f${i}.txt`] = '';
        writeTree(repo, files);
        const summary = await summarizeRepo(repo, NO_POLICY, { search: engine });
        assert.ok(summary.length <= SUMMARY_LIMITS.maxChars);
        assert.match(summary, /first \d+ files seen; the tree is larger/);
      });

      test('answers again from its cache and refreshes the cache in the background', async () => {
        const summaries = new RepoSummaries(engine, { refreshAfterMs: 0, firstWaitMs: 60_000 });
        assert.match(await summaries.summarize(repo, NO_POLICY), /\.ts 3/);
        writeTree(repo, { 'src/extra.ts': '' });
        assert.match(await summaries.summarize(repo, NO_POLICY), /\.ts 3/, 'served from the cache');
        await summaries.settled();
        assert.match(await summaries.summarize(repo, NO_POLICY), /\.ts 4/, 'refreshed');
        await summaries.settled();
      });

      test('answers a first summary without counts when the census outlasts its wait, and with them once it is in', async () => {
        // No wait at all, and the only search thread kept busy by a stuck search (the walk census queues behind it).
        const pool = new SearchPool({ maxWorkers: 1 });
        try {
          writeTree(repo, { 'evil/evil.txt': `${'a'.repeat(40)}!\n` });
          const blocker = await createToolbox(repo, NO_POLICY, { search: new SearchEngine({ ...variant.options, timeoutMs: 300, pool }) });
          const blocked = runTool(blocker, 'grep_files', { pattern: '^(a+)+$', path: 'evil' });
          const summaries = new RepoSummaries(new SearchEngine({ ...variant.options, pool }), { firstWaitMs: 0 });
          const first = await summaries.summarize(repo, NO_POLICY);
          assert.match(first, /Files by extension: still being counted/);
          assert.match(first, /^Top level \(\d+ entries\): /m);
          assert.equal((await blocked).ok, false);
          await summaries.settled();
          assert.match(await summaries.summarize(repo, NO_POLICY), /\.ts 3/);
        } finally {
          await pool.close();
        }
      });
    });
  });
}

describe('ripgrep and the walk agree', function () {
  let base: string;
  const ripgrep = new SearchEngine({ ripgrepPath: RIPGREP });
  const walk = new SearchEngine({ ripgrepPath: null });

  before(function () {
    if (!RIPGREP) this.skip();
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-agree-')));
    writeTree(base, {
      '.gitignore': 'ignored/\n*.tmp\n',
      'ignored/a.txt': 'alpha beta\n',
      'x.tmp': 'alpha\n',
      'src/a.ts': 'const alpha = 1;\nfunction beta(gamma) { return gamma * 2; }\n// TODO: delta\n',
      'src/b.ts': 'export class Alpha {}\r\nexport const BETA = "β";\r\n',
      'src/c.py': 'def alpha():\n    return "αβγ"\n\tindented\n',
      'src/d/e.md': '# Title\n\n- item one\n- item two\n[link](http://example.com)\n',
      'src/d/f.json': '{ "a": [1, 2, 3], "b": null }\n',
      'odd/latin1.txt': Buffer.from([0x61, 0x6c, 0x70, 0x68, 0x61, 0xe9, 0x0a, 0x7a, 0x0a]),
      'odd/nul-late.txt': Buffer.concat([Buffer.from(`${'q'.repeat(9000)}\n`), Buffer.from([0]), Buffer.from('\nalpha after nul\n')]),
      'odd/emoji.txt': 'smile 😀 here\n',
      'odd/empty.txt': '',
      'odd/no-eol.txt': 'alpha without newline',
    });
  });
  after(() => {
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  const patterns = [
    'alpha', 'Alpha', '[Aa]lpha', '^alpha', 'alpha$', '\\balpha\\b', 'al.ha', 'a.*a', '\\w+\\(', '\\d', '\\d{2,}', '\\s\\s',
    '[^\\x00-\\x7F]', '\\p{L}+', '\\p{Script=Greek}', '[α-ω]+', 'β', '😀', '.', '^$', '^', '(?<=const )\\w+', '(?!alpha)\\b\\w{5}\\b',
    '(\\w)\\1', 'return|TODO', '(?:item|link)\\b', '\\[link\\]', 'http://', '\\{ "a"', 'null \\}', '\\t', '\\r', '\\x41', '\\u03b2', '\\u{1F600}',
    'a{', 'x\\-y', '[\\w-]+\\.md', '\\S+\\s*$', '[^]', 'alpha\\u00e9', 'alpha.$', 'alpha\\uFFFD', '[\\uFFF0-\\uFFFF]',
  ];

  // Both engines agreeing proves nothing when both are wrong the same way:
  // some answers are also pinned to what the fixture above holds.
  const GREP_ANSWERS: Record<string, string> = {
    alpha: 'odd/latin1.txt:1: alpha\uFFFD\nodd/no-eol.txt:1: alpha without newline\nodd/nul-late.txt:3: alpha after nul\nsrc/a.ts:1: const alpha = 1;\nsrc/c.py:1: def alpha():',
    '[Aa]lpha': 'odd/latin1.txt:1: alpha\uFFFD\nodd/no-eol.txt:1: alpha without newline\nodd/nul-late.txt:3: alpha after nul\nsrc/a.ts:1: const alpha = 1;\nsrc/b.ts:1: export class Alpha {}\nsrc/c.py:1: def alpha():',
    'β': 'src/b.ts:2: export const BETA = "β";\nsrc/c.py:2:     return "αβγ"',
    '^$': 'src/d/e.md:2: ',
    '\\t': 'src/c.py:3: \tindented',
    'return|TODO': 'src/a.ts:2: function beta(gamma) { return gamma * 2; }\nsrc/a.ts:3: // TODO: delta\nsrc/c.py:2:     return "αβγ"',
  };
  const FIND_ANSWERS: Record<string, string> = {
    '*': '.gitignore\nodd/emoji.txt\nodd/empty.txt\nodd/latin1.txt\nodd/no-eol.txt\nodd/nul-late.txt\nsrc/a.ts\nsrc/b.ts\nsrc/c.py\nsrc/d/e.md\nsrc/d/f.json',
    '**': '.gitignore\nodd/emoji.txt\nodd/empty.txt\nodd/latin1.txt\nodd/no-eol.txt\nodd/nul-late.txt\nsrc/a.ts\nsrc/b.ts\nsrc/c.py\nsrc/d/e.md\nsrc/d/f.json',
    '*.ts': 'src/a.ts\nsrc/b.ts',
    'src/**': 'src/a.ts\nsrc/b.ts\nsrc/c.py\nsrc/d/e.md\nsrc/d/f.json',
    '**/*.{md,json}': 'src/d/e.md\nsrc/d/f.json',
    'src/*/e.md': 'src/d/e.md',
    '?.ts': 'src/a.ts\nsrc/b.ts',
    '[a-c].ts': 'src/a.ts\nsrc/b.ts',
    '*.tmp': 'No files match "*.tmp" in the folder (gitignored files, node_modules/ and .git/ are left out).',
    'odd/*': 'odd/emoji.txt\nodd/empty.txt\nodd/latin1.txt\nodd/no-eol.txt\nodd/nul-late.txt',
  };

  it('shows what ripgrep itself lists where a directory escapes a rule above, and inside an ignored directory it is given (the shared suite pins both paths to the same)', () => {
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-let-back-in-'));
    try {
      writeTree(tree, LET_BACK_IN_TREE);
      // No glob, which would beat the rules for files: `trace.log` must be left out by `*.log`, not by a filter.
      const listed = execFileSync(RIPGREP as string, ['--no-config', '--no-ignore-global', '--files', '--hidden', '--no-require-git', 'lb'], { cwd: tree, encoding: 'utf8' });
      const files = (listing: string): string[] => listing.split('\n').filter((file) => file !== '' && !path.basename(file).startsWith('.')).sort();
      assert.deepEqual(files(listed), [...LET_BACK_IN_FILES].sort());
      const inside = execFileSync(RIPGREP as string, ['--no-config', '--no-ignore-global', '--files', '--hidden', '--no-require-git', 'lb/other/target'], { cwd: tree, encoding: 'utf8' });
      assert.deepEqual(files(inside), [...INSIDE_IGNORED_FILES].sort());
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });

  it('answers a grep below the root as a grep from the root would, where ripgrep would rank the rules from above below those inside: the walk answers', async () => {
    const tree = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-ranked-')));
    try {
      writeTree(tree, {
        // An `.ignore` above the searched directory beats a `.gitignore` inside it.
        'up/.ignore': 'src/**\n',
        'up/src/.gitignore': '!*.md\n',
        'up/src/h.md': 'ranked\n',
        'up/src/f.ts': 'ranked\n',
        // Git's rules from above stop at a nested repository.
        'nr/.gitignore': '*.gen.ts\n',
        'nr/vendor/lib/.git/HEAD': 'ref: refs/heads/main\n',
        'nr/vendor/lib/a.gen.ts': 'ranked\n',
        'nr/vendor/b.gen.ts': 'ranked\n',
        // No reason to leave ripgrep: rules above of the same kind as those inside, and no repository inside.
        'same/.gitignore': '*.gen.ts\n',
        'same/sub/.gitignore': '!keep.gen.ts\n',
        'same/sub/keep.gen.ts': 'ranked\n',
        'same/sub/drop.gen.ts': 'ranked\n',
      });
      const ranked = new SearchEngine({ ripgrepPath: RIPGREP, orderedHeadStartMs: 0 });
      const viaRipgrep = await createToolbox(tree, NO_POLICY, { search: ranked });
      const viaWalk = await createToolbox(tree, NO_POLICY, { search: walk });
      const answers: Record<string, string> = {
        'up/src': 'No matches for "ranked" in up/src (gitignored files, node_modules/ and .git/ are left out; binary files are skipped).',
        'nr/vendor': 'nr/vendor/lib/a.gen.ts:1: ranked',
        'same/sub': 'same/sub/keep.gen.ts:1: ranked',
      };
      for (const [scope, answer] of Object.entries(answers)) {
        assert.equal(await expectOk(viaWalk, 'grep_files', { pattern: 'ranked', path: scope }), answer, scope);
        assert.equal(await expectOk(viaRipgrep, 'grep_files', { pattern: 'ranked', path: scope }), answer, scope);
      }
      assert.deepEqual(ranked.counts.fallbackReasons, [OUTRANKED, OUTRANKED], 'the two outranked scopes went to the walk, the third stayed with ripgrep');
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });

  it('answers a grep in a folder that is in no repository as the walk does, where a ripgrep after 13 would keep the rules from above a nested repository inside it: the walk answers, and the census counts by the walk', async function () {
    if (process.platform === 'win32') this.skip(); // the launcher is a shell script
    const folders = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-kept-')));
    try {
      // The folders must be in no repository, and the launcher must run (a temporary folder may forbid it).
      if (isInsideRepository(folders)) this.skip();
      const launchers = path.join(folders, 'bin');
      fs.mkdirSync(launchers);
      const launcher = ripgrepSaying('14.1.1', launchers);
      try {
        execFileSync(launcher, ['--version']);
      } catch {
        this.skip();
      }
      const cases: Array<{ name: string; tree: Record<string, string>; answer: string; kept: boolean; counted?: number }> = [
        {
          name: 'a .gitignore above a nested repository, which names itself',
          tree: { '.gitignore': '*.gen.ts\n.gitignore\n', 'lib/.git/HEAD': 'ref: refs/heads/main\n', 'lib/a.gen.ts': 'kept\n', 'b.gen.ts': 'kept\n', 'c.ts': 'kept\n' },
          answer: 'c.ts:1: kept\nlib/a.gen.ts:1: kept',
          kept: true,
          counted: 2,
        },
        {
          name: "an outer nested repository's exclude file above an inner one",
          tree: { 'a/.git/info/exclude': '*.gen.ts\n', 'a/x.gen.ts': 'kept\n', 'a/b/.git/HEAD': 'ref: refs/heads/main\n', 'a/b/y.gen.ts': 'kept\n' },
          answer: 'a/b/y.gen.ts:1: kept',
          kept: true,
          counted: 1,
        },
        {
          name: "the nested repository's own .gitignore",
          tree: { 'lib/.git/HEAD': 'ref: refs/heads/main\n', 'lib/.gitignore': '*.gen.ts\n', 'lib/a.gen.ts': 'kept\n', 'c.ts': 'kept\n' },
          answer: 'c.ts:1: kept',
          kept: false,
          counted: 2,
        },
        {
          name: 'a .gitignore beside the nested repository, not above it',
          tree: { 'other/.gitignore': '*.gen.ts\n', 'other/o.gen.ts': 'kept\n', 'lib/.git/HEAD': 'ref: refs/heads/main\n', 'lib/a.gen.ts': 'kept\n' },
          answer: 'lib/a.gen.ts:1: kept',
          kept: false,
          counted: 2,
        },
      ];
      const installedVersion = execFileSync(RIPGREP as string, ['--version'], { encoding: 'utf8' }).split('\n')[0].trim();
      const installedKeeps = keepsRulesInNestedRepositories(installedVersion);
      for (const [i, testCase] of cases.entries()) {
        const folder = path.join(folders, `case-${i}`);
        writeTree(folder, testCase.tree);
        const later = new SearchEngine({ ripgrepPath: launcher, orderedHeadStartMs: 0 });
        const installed = new SearchEngine({ ripgrepPath: RIPGREP, orderedHeadStartMs: 0 });
        const grep = async (search: SearchEngine) => expectOk(await createToolbox(folder, NO_POLICY, { search }), 'grep_files', { pattern: 'kept' });
        assert.equal(await grep(walk), testCase.answer, `${testCase.name}: the walk`);
        assert.equal(await grep(later), testCase.answer, `${testCase.name}: a ripgrep after 13`);
        assert.deepEqual(later.counts.fallbackReasons, testCase.kept ? [KEPT_RULES] : [], `${testCase.name}: a ripgrep after 13 leaves it to the walk only where rules are above a nested repository`);
        assert.equal(await grep(installed), testCase.answer, `${testCase.name}: the installed ripgrep (${installedVersion})`);
        assert.deepEqual(installed.counts.fallbackReasons, testCase.kept && installedKeeps ? [KEPT_RULES] : [], `${testCase.name}: the installed ripgrep (${installedVersion})`);

        // The summary's census: a ripgrep after 13 leaves such a folder to the walk (undefined here) and counts the others.
        const census = async (ripgrep: { path: string; version: string }) => {
          const job = { kind: 'census' as const, root: folder, denyRead: [], scope: { kind: 'directory' as const, realPath: folder, relativePath: '.' }, ripgrep, maxEntries: 100, timeMs: 10_000, extensions: 5 };
          return censusWithRipgrep(job, await ReadBoundary.create(folder), { shouldStop: () => false, onSpawn: () => undefined });
        };
        const laterCensus = await census({ path: launcher, version: 'ripgrep 14.1.1' });
        assert.equal(laterCensus?.fileCount, testCase.kept ? undefined : testCase.counted, `${testCase.name}: the census through a ripgrep after 13`);
        const installedCensus = await census({ path: RIPGREP as string, version: installedVersion });
        assert.equal(installedCensus?.fileCount, testCase.kept && installedKeeps ? undefined : testCase.counted, `${testCase.name}: the census through the installed ripgrep`);
      }
    } finally {
      fs.rmSync(folders, { recursive: true, force: true });
    }
  });

  for (const pattern of patterns) {
    it(`answers grep_files ${JSON.stringify(pattern)} the same both ways`, async () => {
      const viaRipgrep = await createToolbox(base, NO_POLICY, { search: ripgrep });
      const viaWalk = await createToolbox(base, NO_POLICY, { search: walk });
      const expected = await runTool(viaWalk, 'grep_files', { pattern });
      if (pattern in GREP_ANSWERS) assert.equal(expected.output, GREP_ANSWERS[pattern]);
      assert.deepEqual(await runTool(viaRipgrep, 'grep_files', { pattern }), expected);
      assert.deepEqual(await runTool(viaRipgrep, 'grep_files', { pattern, path: 'src' }), await runTool(viaWalk, 'grep_files', { pattern, path: 'src' }));
    });
  }

  for (const pattern of ['*', '**', '*.ts', 'src/**', '**/*.{md,json}', 'src/*/e.md', '?.ts', '[a-c].ts', '*.tmp', 'odd/*']) {
    it(`answers find_files ${JSON.stringify(pattern)} the same both ways`, async () => {
      const viaRipgrep = await createToolbox(base, NO_POLICY, { search: ripgrep });
      const viaWalk = await createToolbox(base, NO_POLICY, { search: walk });
      const expected = await runTool(viaWalk, 'find_files', { pattern });
      assert.equal(expected.output, FIND_ANSWERS[pattern]);
      assert.deepEqual(await runTool(viaRipgrep, 'find_files', { pattern }), expected);
    });
  }
});

describe('search helpers', () => {
  it('tells a ripgrep after 13, which passes over nested repositories under --no-require-git, by the first line of its --version', () => {
    assert.equal(keepsRulesInNestedRepositories('ripgrep 13.0.0'), false);
    assert.equal(keepsRulesInNestedRepositories('ripgrep 13.0.0 (rev 7ec2fd51ba)'), false);
    assert.equal(keepsRulesInNestedRepositories('ripgrep 14.1.1'), true);
    assert.equal(keepsRulesInNestedRepositories('ripgrep 15.1.0 (rev af60c2de9d)'), true);
    assert.equal(keepsRulesInNestedRepositories('ripgrep 9.0.1'), false);
    assert.equal(keepsRulesInNestedRepositories('not ripgrep'), false);
  });

  it('sorts paths in the order the walk visits them', () => {
    assert.deepEqual(sortInWalkOrder(['a.txt', 'a-b/x', 'a/y', 'a/x/z', 'B', 'a']), ['B', 'a', 'a/x/z', 'a/y', 'a-b/x', 'a.txt']);
  });
});

describe('find_files, which opens each directory inside its parent rather than through the verified open', () => {
  // The module itself: the server's `import * as fs` reads its functions from it at each call.
  const nodeFs = require('node:fs') as { readdirSync: typeof fs.readdirSync; openSync: typeof fs.openSync };
  let base: string;
  let real: { readdirSync: typeof fs.readdirSync; openSync: typeof fs.openSync };
  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-names-')));
    real = { readdirSync: nodeFs.readdirSync, openSync: nodeFs.openSync };
  });
  afterEach(() => {
    Object.assign(nodeFs, real);
    fs.rmSync(base, { recursive: true, force: true });
  });

  /**
   * Swaps `repo/swap/d` for a link to `outside` at the worst moment: when the
   * walk, having seen `d` as a directory, first opens or lists it (by its
   * path, or inside its parent's descriptor). With `back`, the real `d` is put
   * back as soon as that call returns, so a later check of the path finds it.
   */
  async function findWhileSwapping(back: boolean): Promise<{ shown: string[]; changedEntries: number }> {
    const repo = path.join(base, 'repo');
    const swapped = path.join(repo, 'swap', 'd');
    const away = path.join(base, 'moved-away');
    let swaps = 0;
    const around = <T>(target: fs.PathLike | number, call: () => T): T => {
      const named = String(target);
      if (swaps > 0 || !(named === swapped || /^\/proc\/self\/fd\/\d+\/d$/.test(named))) return call();
      swaps += 1;
      fs.renameSync(swapped, away);
      fs.symlinkSync(path.join(base, 'outside'), swapped);
      try {
        return call();
      } finally {
        if (back) {
          fs.unlinkSync(swapped);
          fs.renameSync(away, swapped);
        }
      }
    };
    nodeFs.readdirSync = ((target: fs.PathLike, options?: unknown) => around(target, () => (real.readdirSync as (t: fs.PathLike, o?: unknown) => unknown)(target, options))) as typeof fs.readdirSync;
    nodeFs.openSync = ((target: fs.PathLike, ...rest: unknown[]) => around(target, () => (real.openSync as (t: fs.PathLike, ...r: unknown[]) => number)(target, ...rest))) as typeof fs.openSync;
    const result = await runSearchJob(
      { kind: 'find', pattern: '**/*.txt', root: repo, denyRead: [], scope: { relativePath: '.', realPath: repo, kind: 'directory' } },
      { shouldStop: () => false, onSpawn: () => undefined },
    );
    Object.assign(nodeFs, real);
    assert.equal(swaps, 1, 'the swap happened');
    assert.ok(result.kind === 'find');
    return { shown: result.kind === 'find' ? result.results.map((r) => r.relativePath) : [], changedEntries: result.changedEntries ?? 0 };
  }

  beforeEach(() => {
    // `both.txt` is in the real `d` and outside: shown from an outside listing, a later check of its path would pass.
    writeTree(base, { 'outside/both.txt': 'x\n', 'outside/planted.txt': 'x\n', 'repo/swap/d/both.txt': 'x\n', 'repo/swap/d/inside.txt': 'x\n', 'repo/kept.txt': 'x\n' });
  });

  it('shows no name from a directory swapped for a link to an outside one as the walk enters it', async () => {
    assert.deepEqual(await findWhileSwapping(false), { shown: ['kept.txt'], changedEntries: 1 });
  });

  it('closes every directory it opened, whether it walked the whole tree or stopped at the cap', async function () {
    if (!fs.existsSync('/proc/self/fd')) this.skip();
    const files: Record<string, string> = {};
    for (let i = 0; i < 600; i++) files[`repo/many/d${i % 30}/f${i}.txt`] = '';
    writeTree(base, files);
    const repo = path.join(base, 'repo');
    const open = (): number => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    for (const pattern of ['**/f1.txt', '**/*.txt']) {
      const result = await runSearchJob(
        { kind: 'find', pattern, root: repo, denyRead: [], scope: { relativePath: '.', realPath: repo, kind: 'directory' } },
        { shouldStop: () => false, onSpawn: () => undefined },
      );
      assert.ok(result.kind === 'find' && result.results.length > 0);
      if (pattern === '**/*.txt') assert.ok(result.kind === 'find' && result.more, 'stopped at the cap');
    }
    assert.equal(open(), before);
  });

  it('shows no name from it either when the real directory is put back before anything is shown, and counts one changed directory, not the outside names', async () => {
    assert.deepEqual(await findWhileSwapping(true), { shown: ['kept.txt'], changedEntries: 1 });
  });
});

describe('grep_files without ripgrep, which opens each directory and file inside its parent rather than through the verified open', () => {
  // The module itself: the server's `import * as fs` reads its functions from it at each call.
  const nodeFs = require('node:fs') as { openSync: typeof fs.openSync };
  let base: string;
  let realOpen: typeof fs.openSync;
  beforeEach(function () {
    if (!fs.existsSync('/proc/self/fd')) this.skip();
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-grep-inside-')));
    realOpen = nodeFs.openSync;
    // Every file holds the needle; the outside ones say so.
    writeTree(base, {
      'outside/both.txt': 'needle OUTSIDE\n',
      'outside/secret.txt': 'needle OUTSIDE-SECRET\n',
      'repo/swap/d/both.txt': 'needle inside\n',
      'repo/swap/f.txt': 'needle inside\n',
      'repo/kept.txt': 'needle inside\n',
    });
  });
  afterEach(() => {
    nodeFs.openSync = realOpen;
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  /**
   * Replaces `repo/<swapped>` with a link to `outside/<target>` the first time
   * the walk opens it inside its parent's descriptor, and with `back` puts the
   * real one back as soon as that open returns.
   */
  async function grepWhileSwapping(swapped: string, target: string, back: boolean): Promise<{ lines: string[]; changedEntries: number }> {
    const repo = path.join(base, 'repo');
    const at = path.join(repo, swapped);
    const away = path.join(base, 'moved-away');
    const opened = new RegExp(`^/proc/self/fd/\\d+/${path.basename(swapped).replace('.', '\\.')}$`);
    let swaps = 0;
    nodeFs.openSync = ((target_: fs.PathLike, ...rest: unknown[]) => {
      const call = (): number => (realOpen as (t: fs.PathLike, ...r: unknown[]) => number)(target_, ...rest);
      if (swaps > 0 || !opened.test(String(target_))) return call();
      swaps += 1;
      fs.renameSync(at, away);
      fs.symlinkSync(path.join(base, 'outside', target), at);
      try {
        return call();
      } finally {
        if (back) {
          fs.unlinkSync(at);
          fs.renameSync(away, at);
        }
      }
    }) as typeof fs.openSync;
    const result = await runSearchJob(
      { kind: 'grep', pattern: 'needle', root: repo, denyRead: [], scope: { relativePath: '.', realPath: repo, kind: 'directory' } },
      { shouldStop: () => false, onSpawn: () => undefined },
    );
    nodeFs.openSync = realOpen;
    assert.equal(swaps, 1, 'the swap happened');
    assert.ok(result.kind === 'grep' && result.engine === 'node');
    return { lines: result.kind === 'grep' ? result.lines : [], changedEntries: result.changedEntries ?? 0 };
  }

  for (const back of [false, true]) {
    const andBack = back ? ', and put back at once,' : '';
    it(`shows no line from a file swapped for a link to an outside one${andBack} as the walk opens it, and counts it changed`, async () => {
      assert.deepEqual(await grepWhileSwapping('swap/f.txt', 'secret.txt', back), {
        lines: ['kept.txt:1: needle inside', 'swap/d/both.txt:1: needle inside'],
        changedEntries: 1,
      });
    });

    it(`shows no line from a directory swapped for a link to an outside one${andBack} as the walk enters it`, async () => {
      assert.deepEqual(await grepWhileSwapping('swap/d', '.', back), { lines: ['kept.txt:1: needle inside', 'swap/f.txt:1: needle inside'], changedEntries: 1 });
    });
  }

  it('closes every directory and file it opened, whether it read the whole tree or stopped at the match cap', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 600; i++) files[`repo/many/d${i % 30}/f${i}.txt`] = 'needle\n';
    writeTree(base, files);
    const repo = path.join(base, 'repo');
    const open = (): number => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    for (const pattern of ['OUTSIDE', 'needle']) {
      const result = await runSearchJob(
        { kind: 'grep', pattern, root: repo, denyRead: [], scope: { relativePath: '.', realPath: repo, kind: 'directory' } },
        { shouldStop: () => false, onSpawn: () => undefined },
      );
      assert.ok(result.kind === 'grep');
      if (pattern === 'needle') assert.ok(result.kind === 'grep' && result.more, 'stopped at the cap');
    }
    assert.equal(open(), before);
  });
});

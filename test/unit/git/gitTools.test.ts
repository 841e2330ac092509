import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { ToolOutcome } from '../../../server/src/read/types';
import { gitBlame, gitDiff, gitLog, gitShow, GIT_TOOLS } from '../../../server/src/git/gitTools';
import { headerPath, unquoteGitPath } from '../../../server/src/git/diffFilter';
import { OUTSIDE_MARKER, SECRET_MARKER, writeTree } from '../../support/toolFixture';
import { testGit } from '../../support/testGit';

/** The name with a bidi override and a newline: it must come back quoted, never raw. */
const HOSTILE_NAME = 'docs/evil\u202etxt.exe\nfake.md';
const POLICY_MARKER = 'POLICY-DENIED-5be0';

const git = testGit;

function commitAll(repo: string, message: string): void {
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', message);
}

/**
 * main: three commits (the second changes .env and the policy-denied file);
 * feature: one more commit; then a staged change, an unstaged change and an
 * uncommitted .env change on top.
 */
function buildFixture(base: string): { repo: string; outside: string } {
  const repo = path.join(base, 'repo');
  const outside = path.join(base, 'outside');
  writeTree(outside, { 'secret.txt': `${OUTSIDE_MARKER}\n` });
  fs.mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeTree(repo, {
    'README.md': '# Demo\n',
    'src/app.ts': 'export const answer = 41;\n',
    'sub/inner.ts': 'export const inner = 1;\n',
    '.env': `TOKEN=${SECRET_MARKER}-1\n`,
    'private/notes.txt': `${POLICY_MARKER} one\n`,
    '.repo-discuss/policy.json': JSON.stringify({ denyRead: ['private/**'] }),
  });
  commitAll(repo, 'First commit');
  writeTree(repo, {
    'src/app.ts': 'export const answer = 42;\n',
    '.env': `TOKEN=${SECRET_MARKER}-2\n`,
    'private/notes.txt': `${POLICY_MARKER} two\n`,
  });
  commitAll(repo, 'Fix the answer and rotate the token');
  writeTree(repo, { [HOSTILE_NAME]: 'hostile name\n', 'sub/inner.ts': 'export const inner = 2;\n' });
  commitAll(repo, 'Add a file with a hostile name');
  git(repo, 'checkout', '-q', '-b', 'feature');
  writeTree(repo, { 'src/feature.ts': 'export const feature = true;\n', '.env': `TOKEN=${SECRET_MARKER}-3\n`, 'private/notes.txt': `${POLICY_MARKER} three\n` });
  commitAll(repo, 'Feature work');
  writeTree(repo, { 'src/app.ts': 'export const answer = 43; // staged\n' });
  git(repo, 'add', 'src/app.ts');
  writeTree(repo, { 'README.md': '# Demo\nUnstaged line.\n', '.env': `TOKEN=${SECRET_MARKER}-4\n`, 'private/notes.txt': `${POLICY_MARKER} four\n` });
  return { repo, outside };
}

function assertClean(outcome: ToolOutcome): void {
  assert.ok(!outcome.output.includes(SECRET_MARKER), `a secret's content was shown:\n${outcome.output}`);
  assert.ok(!outcome.output.includes(POLICY_MARKER), `a policy-denied file's content was shown:\n${outcome.output}`);
  assert.ok(!outcome.output.includes(OUTSIDE_MARKER), 'something outside the folder was shown');
  assert.ok(!/[\u202e\u0000]/.test(outcome.output), 'a raw bidi override or NUL reached the output');
}

async function ok(outcome: Promise<ToolOutcome>): Promise<string> {
  const result = await outcome;
  assert.equal(result.ok, true, result.output);
  assertClean(result);
  return result.output;
}

async function refused(outcome: Promise<ToolOutcome>): Promise<string> {
  const result = await outcome;
  assert.equal(result.ok, false, `expected a refusal, got:\n${result.output}`);
  assertClean(result);
  return result.output;
}

describe('git tools', function () {
  this.timeout(30_000);
  let base: string;
  let repo: string;
  let boundary: ReadBoundary;

  before(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-git-')));
    ({ repo } = buildFixture(base));
    boundary = await ReadBoundary.create(repo, ['private/**']);
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  describe('git_diff', () => {
    it('by default shows staged and unstaged changes together, and names a changed secret and a denied file without their content', async () => {
      const output = await ok(gitDiff(boundary, {}));
      assert.match(output, /answer = 43; \/\/ staged/);
      assert.match(output, /\+Unstaged line\./);
      assert.match(output, /Changed, not shown \(secret or denied by policy\): .*\.env/);
      assert.match(output, /private\/notes\.txt/);
      assert.doesNotMatch(output, /diff --git a\/\.env/);
    });

    it('scope "working" shows only unstaged changes and "staged" only the index', async () => {
      const working = await ok(gitDiff(boundary, { scope: 'working' }));
      assert.match(working, /Unstaged line/);
      assert.doesNotMatch(working, /staged\n/);
      assert.doesNotMatch(working, /answer = 43/);
      const staged = await ok(gitDiff(boundary, { scope: 'staged' }));
      assert.match(staged, /answer = 43/);
      assert.doesNotMatch(staged, /Unstaged line/);
    });

    it('scope "branch" compares the branch with main from their merge base, and keeps denied files out', async () => {
      const output = await ok(gitDiff(boundary, { scope: 'branch' }));
      assert.match(output, /against refs\/heads\/main/);
      assert.match(output, /\+export const feature = true;/);
      assert.doesNotMatch(output, /answer = 43/, 'uncommitted changes are not part of the branch diff');
      assert.match(output, /Changed, not shown.*\.env/);
      const explicit = await ok(gitDiff(boundary, { scope: 'branch', base: 'HEAD~1' }));
      assert.match(explicit, /feature = true/);
    });

    it('refuses a path that is a secret, denied by policy or outside the folder, and an unknown or option-like base', async () => {
      await refused(gitDiff(boundary, { path: '.env' }));
      await refused(gitDiff(boundary, { path: 'private/notes.txt' }));
      await refused(gitDiff(boundary, { path: 'private' }));
      await refused(gitDiff(boundary, { path: '../outside/secret.txt' }));
      assert.match(await refused(gitDiff(boundary, { scope: 'branch', base: 'no-such-branch' })), /Unknown base/);
      assert.match(await refused(gitDiff(boundary, { scope: 'branch', base: '--output=/tmp/x' })), /Invalid base/);
      assert.match(await refused(gitDiff(boundary, { scope: 'branch', base: 'main..HEAD' })), /Invalid base/);
      assert.match(await refused(gitDiff(boundary, { scope: 'everything' })), /Invalid scope/);
    });

    it('limits a diff to a path given relative to the folder', async () => {
      const output = await ok(gitDiff(boundary, { path: 'README.md' }));
      assert.match(output, /Unstaged line/);
      assert.doesNotMatch(output, /src\/app\.ts/);
    });
  });

  describe('git_log', () => {
    it('lists commits newest first with hash, date, author, subject and files, naming a changed secret as not shown', async () => {
      const output = await ok(gitLog(boundary, {}));
      const subjects = [...output.matchAll(/^[0-9a-f]{10} 2024-03-01 Ada: (.+)$/gm)].map((m) => m[1]);
      assert.deepEqual(subjects, ['Feature work', 'Add a file with a hostile name', 'Fix the answer and rotate the token', 'First commit']);
      assert.match(output, /files: src\/app\.ts/);
      assert.match(output, /changed, not shown \(secret or denied by policy\): \.env, private\/notes\.txt/);
    });

    it('shows a hostile file name C-quoted, never as a raw bidi override or line break', async () => {
      const output = await ok(gitLog(boundary, { max_count: 2 }));
      assert.ok(output.includes('"docs/evil\\342\\200\\256txt.exe\\nfake.md"'), output);
    });

    it("shows a commit's author, subject and message with control and bidi characters as visible escapes, in git_log and git_show", async () => {
      const other = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'git-inert-')));
      try {
        git(other, 'init', '-q', '-b', 'main');
        writeTree(other, { 'a.txt': 'a\n' });
        git(other, 'add', '-A');
        git(other, 'commit', '-q', '--author=Ev\u202eil <e@example.com>', '-m', 'Fix \u001b[31mred\u2066', '-m', 'Body \u202e line');
        const otherBoundary = await ReadBoundary.create(other);
        for (const output of [await ok(gitLog(otherBoundary, {})), await ok(gitShow(otherBoundary, { commit: 'HEAD' }))]) {
          assert.doesNotMatch(output, /[\u001b\u202e\u2066]/, output);
          assert.ok(output.includes('Ev\\u202eil'), output);
        }
        assert.ok((await ok(gitLog(otherBoundary, {}))).includes('Fix \\u001b[31mred\\u2066'));
        assert.ok((await ok(gitShow(otherBoundary, { commit: 'HEAD' }))).includes('Body \\u202e line'));
      } finally {
        fs.rmSync(other, { recursive: true, force: true });
      }
    });

    it('filters by path and by message, and caps max_count at 50', async () => {
      assert.deepEqual([...(await ok(gitLog(boundary, { path: 'src/app.ts' }))).matchAll(/Ada: (.+)/g)].map((m) => m[1]), [
        'Fix the answer and rotate the token',
        'First commit',
      ]);
      assert.match(await ok(gitLog(boundary, { grep: 'ROTATE' })), /^1 commit/);
      assert.match(await ok(gitLog(boundary, { max_count: 500 })), /max_count is at most 50/);
      await refused(gitLog(boundary, { path: '.env' }));
      await refused(gitLog(boundary, { path: 'private/notes.txt' }));
    });
  });

  describe('git_show', () => {
    it("shows a commit's message and diff, leaving out the secret and the denied file", async () => {
      const output = await ok(gitShow(boundary, { commit: 'main~1' }));
      assert.match(output, /Fix the answer and rotate the token/);
      assert.match(output, /\+export const answer = 42;/);
      assert.match(output, /Changed, not shown.*\.env/);
    });

    it('answers an unknown commit and an option-like one with a clear message', async () => {
      assert.match(await refused(gitShow(boundary, { commit: 'deadbeefdeadbeef' })), /Unknown commit/);
      assert.match(await refused(gitShow(boundary, { commit: '--output=/tmp/pwned' })), /Invalid commit/);
      assert.match(await refused(gitShow(boundary, { commit: 'HEAD:.env' })), /Invalid commit/);
    });
  });

  describe('git_blame', () => {
    it('gives the commit that last changed each line, as of HEAD', async () => {
      const output = await ok(gitBlame(boundary, { path: 'src/app.ts', start_line: 1, end_line: 1 }));
      assert.match(output, /[0-9a-f]{10} 2024-03-01 Ada: Fix the answer and rotate the token\n {2}1: export const answer = 42;/);
    });

    it('refuses secrets and denied paths, and caps a call at 400 lines', async () => {
      await refused(gitBlame(boundary, { path: '.env', start_line: 1, end_line: 1 }));
      await refused(gitBlame(boundary, { path: 'private/notes.txt', start_line: 1, end_line: 1 }));
      assert.match(await refused(gitBlame(boundary, { path: 'src/app.ts', start_line: 5, end_line: 9 })), /has only 1 lines?/);
      const big = Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
      const bigBase = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-git-big-')));
      try {
        git(bigBase, 'init', '-q', '-b', 'main');
        writeTree(bigBase, { 'big.txt': big });
        commitAll(bigBase, 'Big');
        const output = await ok(gitBlame(await ReadBoundary.create(bigBase), { path: 'big.txt', start_line: 1, end_line: 500 }));
        assert.match(output, /lines 1-400/);
        assert.match(output, / {2}400: line 400\n/);
        assert.doesNotMatch(output, /401: line 401/);
        assert.match(output, /continue with start_line 401/);
      } finally {
        fs.rmSync(bigBase, { recursive: true, force: true });
      }
    });
  });

  describe('repository shape', () => {
    it('answers "not a git repository" for a plain folder', async () => {
      const plain = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-plain-')));
      try {
        const b = await ReadBoundary.create(plain);
        for (const outcome of [gitDiff(b, {}), gitLog(b, {}), gitShow(b, { commit: 'HEAD' }), gitBlame(b, { path: '.', start_line: 1, end_line: 1 })]) {
          assert.match((await refused(outcome)), /not a git repository|needs a file path/);
        }
        assert.match((await refused(gitLog(b, {}))), /not a git repository: .*the git tools need one/);
      } finally {
        fs.rmSync(plain, { recursive: true, force: true });
      }
    });

    it('in a subfolder, shows paths relative to it and nothing outside it', async () => {
      const sub = await ReadBoundary.create(path.join(repo, 'sub'));
      const log = await ok(gitLog(sub, {}));
      assert.deepEqual([...log.matchAll(/Ada: (.+)/g)].map((m) => m[1]), ['Add a file with a hostile name', 'First commit']);
      assert.match(log, /files: inner\.ts/);
      assert.doesNotMatch(log, /src\/app\.ts|README|docs\//);
      const show = await ok(gitShow(sub, { commit: 'main' }));
      assert.match(show, /diff --git a\/inner\.ts b\/inner\.ts/);
      assert.doesNotMatch(show, /evil/);
      assert.match(await ok(gitDiff(sub, {})), /^No uncommitted changes/);
      assert.match(await ok(gitBlame(sub, { path: 'inner.ts', start_line: 1, end_line: 1 })), /1: export const inner = 2;/);
    });

    it('in a shallow clone, says an older commit is past the clone\'s depth', async () => {
      const shallow = path.join(base, 'shallow');
      git(base, 'clone', '-q', '--depth', '1', '--branch', 'main', `file://${repo}`, shallow);
      const b = await ReadBoundary.create(shallow);
      assert.match(await refused(gitShow(b, { commit: 'HEAD~1' })), /shallow clone/);
      assert.match(await ok(gitLog(b, {})), /Shallow clone/);
    });

    it("refuses a repository whose configured work tree does not contain the folder (core.worktree pointing elsewhere)", async () => {
      const elsewhereBase = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-git-worktree-')));
      try {
        const r = path.join(elsewhereBase, 'r');
        const elsewhere = path.join(elsewhereBase, 'elsewhere');
        writeTree(elsewhere, { 'secret.txt': `${OUTSIDE_MARKER}\n` });
        fs.mkdirSync(r);
        git(r, 'init', '-q', '-b', 'main');
        writeTree(r, { 'a.txt': 'a\n' });
        commitAll(r, 'One');
        git(r, 'config', 'core.worktree', elsewhere);
        const b = await ReadBoundary.create(r);
        assert.match(await refused(gitDiff(b, {})), /not a git repository|work tree does not contain this folder/);
        assert.match(await refused(gitLog(b, {})), /not a git repository|work tree does not contain this folder/);
      } finally {
        fs.rmSync(elsewhereBase, { recursive: true, force: true });
      }
    });

    describe('a .git that leads outside the folder', () => {
      let layoutBase: string;
      let other: string;
      before(() => {
        layoutBase = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-git-dotgit-')));
        // Another repository on the machine, whose messages and files must never be shown.
        other = path.join(layoutBase, 'other');
        fs.mkdirSync(other);
        git(other, 'init', '-q', '-b', 'main');
        writeTree(other, { 'a.txt': `${OUTSIDE_MARKER} file\n`, 'b.txt': 'b\n' });
        commitAll(other, `Other repository ${OUTSIDE_MARKER}`);
      });
      after(() => fs.rmSync(layoutBase, { recursive: true, force: true }));

      /** A folder with one file and the given `.git` entry. */
      function planted(name: string, makeDotGit: (dotGit: string) => void): string {
        const folder = path.join(layoutBase, name);
        writeTree(folder, { 'a.txt': 'planted\n' });
        makeDotGit(path.join(folder, '.git'));
        return folder;
      }

      async function assertAllRefused(folder: string, message = /the \.git file here points to a git directory that does not belong to this folder; the git tools are off for it/): Promise<void> {
        const b = await ReadBoundary.create(folder);
        for (const outcome of [gitDiff(b, {}), gitLog(b, {}), gitShow(b, { commit: 'HEAD' }), gitBlame(b, { path: 'a.txt', start_line: 1, end_line: 1 })]) {
          const output = await refused(outcome);
          assert.match(output, message);
          assert.doesNotMatch(output, /Other repository|b\.txt/);
        }
      }

      it('a worktree made with `git worktree add` works, with its own branch\'s history', async () => {
        const linked = path.join(layoutBase, 'linked');
        git(repo, 'worktree', 'add', '-q', linked, 'main');
        try {
          const b = await ReadBoundary.create(linked, ['private/**']);
          assert.match(await ok(gitLog(b, {})), /Add a file with a hostile name[\s\S]*First commit/);
          assert.match(await ok(gitShow(b, { commit: 'HEAD~1' })), /Fix the answer/);
          assert.match(await ok(gitDiff(b, {})), /^No uncommitted changes/);
          assert.match(await ok(gitBlame(b, { path: 'sub/inner.ts', start_line: 1, end_line: 1 })), /1: export const inner = 2;/);
        } finally {
          git(repo, 'worktree', 'remove', '--force', linked);
        }
      });

      it('a submodule layout (gitdir under the superproject\'s .git/modules, core.worktree pointing back) works', async () => {
        const superproject = path.join(layoutBase, 'super');
        fs.mkdirSync(superproject);
        git(superproject, 'init', '-q', '-b', 'main');
        const child = path.join(superproject, 'child');
        fs.mkdirSync(child);
        const modules = path.join(superproject, '.git', 'modules', 'child');
        fs.mkdirSync(path.dirname(modules), { recursive: true });
        git(child, 'init', '-q', '-b', 'main', `--separate-git-dir=${modules}`);
        // As `git submodule` writes them: relative pointers both ways.
        fs.writeFileSync(path.join(child, '.git'), 'gitdir: ../.git/modules/child\n');
        git(child, 'config', 'core.worktree', '../../../child');
        writeTree(child, { 'a.txt': 'child\n' });
        commitAll(child, 'Child commit');
        const b = await ReadBoundary.create(child);
        assert.match(await ok(gitLog(b, {})), /Ada: Child commit/);
        assert.match(await ok(gitBlame(b, { path: 'a.txt', start_line: 1, end_line: 1 })), /1: child/);
      });

      it('refuses a planted .git file pointing at another repository, and shows none of its commits or files', async () => {
        await assertAllRefused(planted('planted-file', (dotGit) => fs.writeFileSync(dotGit, `gitdir: ${path.join(other, '.git')}\n`)));
      });

      it("refuses a planted .git file pointing at another repository's linked worktree whose back-pointer names someone else", async () => {
        const elsewhere = path.join(layoutBase, 'other-linked');
        git(other, 'worktree', 'add', '-q', '-b', 'side', elsewhere);
        await assertAllRefused(planted('planted-worktree', (dotGit) => fs.writeFileSync(dotGit, `gitdir: ${path.join(other, '.git', 'worktrees', 'other-linked')}\n`)));
      });

      it('refuses a planted .git symlink to another repository\'s git directory', async () => {
        await assertAllRefused(planted('planted-link', (dotGit) => fs.symlinkSync(path.join(other, '.git'), dotGit)));
      });

      it("refuses a .git directory of the folder's own whose commondir or alternates lead to another repository", async () => {
        await assertAllRefused(planted('planted-commondir', (dotGit) => {
          git(path.dirname(dotGit), 'init', '-q', '-b', 'main');
          fs.writeFileSync(path.join(dotGit, 'commondir'), `${path.join(other, '.git')}\n`);
        }));
        await assertAllRefused(planted('planted-alternates', (dotGit) => {
          const folder = path.dirname(dotGit);
          git(folder, 'init', '-q', '-b', 'main');
          fs.writeFileSync(path.join(dotGit, 'objects', 'info', 'alternates'), `${path.join(other, '.git', 'objects')}\n`);
          git(folder, 'update-ref', 'refs/heads/main', git(other, 'rev-parse', 'HEAD').trim());
        }), /the repository's alternates \(\.git\/objects\/info\/alternates\) name an object directory outside this folder/);
      });
    });

    it('answers clearly when git is not on the PATH', async () => {
      const saved = process.env.PATH;
      process.env.PATH = path.join(base, 'no-bin');
      try {
        assert.match(await refused(gitLog(boundary, {})), /git is not installed/);
      } finally {
        process.env.PATH = saved;
      }
    });
  });

  describe('caps', () => {
    it('cuts a diff over 64 KiB and lists every file with its +/− counts', async () => {
      const bigBase = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-git-cap-')));
      try {
        git(bigBase, 'init', '-q', '-b', 'main');
        const files: Record<string, string> = {};
        for (let i = 0; i < 40; i++) files[`f${String(i).padStart(2, '0')}.txt`] = 'x'.repeat(60).concat('\n').repeat(50);
        writeTree(bigBase, files);
        commitAll(bigBase, 'Many files');
        const output = await ok(gitShow(await ReadBoundary.create(bigBase), { commit: 'HEAD' }));
        assert.ok(Buffer.byteLength(output) <= 64 * 1024 + 1024, `output is ${Buffer.byteLength(output)} bytes`);
        assert.match(output, /Diff cut at 64 KiB/);
        assert.match(output, /f39\.txt \(\+50 −0\)/);
        assert.match(output, /file diffs shown in full/);
      } finally {
        fs.rmSync(bigBase, { recursive: true, force: true });
      }
    });
  });

  describe('a hostile repository config', () => {
    it('runs no clean filter, textconv, external diff or fsmonitor hook named by the repository, in any tool', async () => {
      const hostileBase = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-git-hostile-')));
      const marker = path.join(hostileBase, 'ran');
      try {
        const r = path.join(hostileBase, 'r');
        fs.mkdirSync(r);
        git(r, 'init', '-q', '-b', 'main');
        writeTree(r, { 'a.txt': 'one\n', '.gitattributes': '*.txt filter=evil diff=evil\n' });
        commitAll(r, 'One');
        const run = `sh -c 'echo ran >> ${marker}'`;
        for (const [key, value] of [
          ['filter.evil.clean', `${run}; cat`], ['filter.evil.smudge', `${run}; cat`], ['filter.evil.required', 'true'],
          ['diff.evil.textconv', `${run}; cat`], ['diff.external', run], ['core.fsmonitor', run], ['core.pager', run],
        ]) {
          git(r, 'config', key, value);
        }
        writeTree(r, { 'a.txt': 'two\n' });
        const b = await ReadBoundary.create(r);
        await ok(gitDiff(b, {}));
        await ok(gitDiff(b, { scope: 'working' }));
        await ok(gitShow(b, { commit: 'HEAD' }));
        await ok(gitLog(b, {}));
        await ok(gitBlame(b, { path: 'a.txt', start_line: 1, end_line: 1 }));
        assert.equal(fs.existsSync(marker), false, 'a program named by the repository config ran');
      } finally {
        fs.rmSync(hostileBase, { recursive: true, force: true });
      }
    });
  });

  describe('parsing', () => {
    it('reads plain and C-quoted diff headers, and refuses one it cannot read', () => {
      assert.equal(headerPath('diff --git a/src/a b.ts b/src/a b.ts'), 'src/a b.ts');
      assert.equal(headerPath('diff --git "a/x\\ny" "b/x\\ny"'), 'x\ny');
      assert.equal(headerPath('diff --git a/x b/y'), undefined);
      assert.equal(unquoteGitPath('"\\342\\200\\256"'), '\u202e');
      assert.equal(unquoteGitPath('"bad\\q"'), undefined);
    });
  });

  describe('refusals', () => {
    it("answers with the first refused step's own message, in each tool's order of checks", async () => {
      const plain = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-plain-')));
      try {
        const b = await ReadBoundary.create(plain);
        const notARepository = (await refused(gitLog(b, {}))).split('\n')[0];
        // git_diff, git_log and git_show open the repository before the path is looked at; git_blame looks at the path first.
        for (const outcome of [gitDiff(b, { path: '' }), gitLog(b, { path: '' }), gitShow(b, { commit: '--x', path: '' })]) {
          assert.equal((await refused(outcome)).split('\n')[0], notARepository);
        }
        assert.equal(await refused(gitBlame(b, { path: '', start_line: 1, end_line: 1 })), 'Refused: the path must be a non-empty string.');
      } finally {
        fs.rmSync(plain, { recursive: true, force: true });
      }
      assert.match(await refused(gitShow(boundary, { commit: '--x', path: '' })), /^Invalid commit: /);
      assert.equal(await refused(gitShow(boundary, { commit: 'HEAD', path: '' })), 'Refused: the path must be a non-empty string.');
    });

    it('answers an error nothing foresaw with a plain failure naming the tool, never its text', async () => {
      const failing = Object.create(boundary) as ReadBoundary;
      failing.resolve = () => Promise.reject(new Error(`unforeseen ${SECRET_MARKER}`));
      assert.equal(await refused(gitLog(failing, { path: 'README.md' })), 'The git_log call failed. Try again with other arguments.');
      assert.equal(await refused(gitBlame(failing, { path: 'README.md', start_line: 1, end_line: 1 })), 'The git_blame call failed. Try again with other arguments.');
    });
  });

  describe('toolbox', () => {
    it('advertises the four git tools and lets the policy deny each of them', async () => {
      const all = await createToolbox(repo, { denyTools: [], denyRead: [] });
      const names = all.definitions().map((spec) => spec.name);
      for (const tool of GIT_TOOLS) assert.ok(names.includes(tool.name), tool.name);
      const denied = await createToolbox(repo, { denyTools: GIT_TOOLS.map((tool) => tool.name), denyRead: [] });
      assert.deepEqual(denied.definitions().map((spec) => spec.name).filter((name) => name.startsWith('git_')), []);
      const outcome = await denied.run('git_log', '{}');
      assert.equal(outcome.ok, false);
      assert.match(outcome.output, /denied by this project's policy/);
    });

    it('through the toolbox, the folder policy file keeps a denied path out of git output', async () => {
      const toolbox = await createToolbox(repo, { denyTools: [], denyRead: ['private/**'] });
      const outcome = await toolbox.run('git_show', JSON.stringify({ commit: 'main~1' }));
      assert.equal(outcome.ok, true, outcome.output);
      assertClean(outcome);
    });
  });
});

/**
 * Part — a hostile repository behind the git tools. The repository is real
 * (committed secrets included) and its `.git/config` names a program in
 * every place git would run one: fsmonitor, external diff, a textconv and a
 * filter driver bound through `.gitattributes`, the pager, signature
 * checking, hooks, and an `ext::` remote that is also the promisor of a
 * partial clone with a missing object (a lazy fetch would run it). Every
 * program is one script that appends to a marker file. The (fake) model
 * calls all four git tools through the real server process.
 *
 * Second case: a `.git` file planted in the folder pointing at another
 * repository on the machine, whose commits and files carry the sentinel.
 *
 * Third, with the tools called in this process: a `.git` of the folder's own
 * whose contents lead elsewhere (links to another repository's objects and
 * refs, alternates nested through a store in the folder, a link to a secret,
 * a FIFO or /dev/zero as the alternates file), a config value carrying a
 * bidi override that git quotes in its error, and a config whose includes
 * lead outside the folder, to its `.env` or to a FIFO.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../server/src/access/boundary';
import { GIT_WALK_LIMITS, LISTING_CACHE } from '../../server/src/git/gitDirContents';
import { gitBlame, gitDiff, gitLog, gitShow } from '../../server/src/git/gitTools';
import { GIT_RUN_LIMITS } from '../../server/src/git/gitRunner';
import type { ToolOutcome } from '../../server/src/read/types';
import type { FakeToolCall } from '../support/fakeOpenAI';
import { Lab, SENTINEL, assertNoLeak, assertValidHistory, recordFigures, runTurn, scanForLeaks, toolOutputs } from './lab';
import { removeFifo } from '../support/fifo';
import { within } from '../support/within';

function git(cwd: string, args: string[], extraEnv: Record<string, string> = {}): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Mallory',
      GIT_AUTHOR_EMAIL: 'm@example.com',
      GIT_COMMITTER_NAME: 'Mallory',
      GIT_COMMITTER_EMAIL: 'm@example.com',
      ...extraEnv,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Turns the lab's repository into a real one with history, then makes its config hostile. */
function makeHostileRepository(lab: Lab, marker: string): { missingBlobCommit: string } {
  const repo = lab.repo;
  fs.rmSync(path.join(repo, '.git'), { recursive: true, force: true });
  git(repo, ['init', '-q', '-b', 'main']);
  lab.write('docs/history.txt', 'first version\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'Initial import, secrets included']);
  const missingBlobCommit = git(repo, ['rev-parse', 'HEAD']).trim();
  const missingBlob = git(repo, ['rev-parse', 'HEAD:docs/history.txt']).trim();
  lab.write('docs/history.txt', 'second version\n');
  lab.write('.env', `API_TOKEN=${SENTINEL}-rotated\n`);
  lab.write('private/notes.txt', `rotated ${SENTINEL}\n`);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'Rotate the token']);
  git(repo, ['branch', 'feature']);
  git(repo, ['checkout', '-q', 'feature']);
  lab.write('src/feature.ts', 'export const feature = 1;\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'Feature']);

  // A signed-looking commit on top, so signature checking would call gpg.program.
  const commit = git(repo, ['cat-file', 'commit', 'HEAD']);
  const signed = commit.replace(/^(committer .*)$/m, '$1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----');
  const signedHash = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: repo, input: signed, encoding: 'utf8', env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }).trim();
  git(repo, ['update-ref', 'refs/heads/feature', signedHash]);

  // A missing object, as in a partial clone: reading it would lazily fetch from the promisor.
  fs.rmSync(path.join(repo, '.git', 'objects', missingBlob.slice(0, 2), missingBlob.slice(2)));

  const script = path.join(lab.root, 'evil.sh');
  fs.writeFileSync(script, `#!/bin/sh\necho "ran: $0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
  const hooks = path.join(repo, '.git', 'hooks');
  for (const hook of ['pre-commit', 'post-checkout', 'reference-transaction', 'fsmonitor-watchman', 'post-index-change']) {
    fs.writeFileSync(path.join(hooks, hook), `#!/bin/sh\n'${script}' hook-${hook}\n`, { mode: 0o755 });
  }
  const run = (label: string) => `'${script}' ${label}`;
  fs.appendFileSync(
    path.join(repo, '.git', 'config'),
    [
      '[core]',
      '\trepositoryformatversion = 1',
      `\tfsmonitor = ${run('fsmonitor')}`,
      `\tpager = ${run('pager')}`,
      `\thooksPath = ${hooks}`,
      `\talternateRefsCommand = ${run('alternateRefs')}`,
      `\tsshCommand = ${run('ssh')}`,
      '\tuntrackedCache = true',
      '[diff]',
      `\texternal = ${run('diff-external')}`,
      '[diff "evil"]',
      `\ttextconv = ${run('textconv')}`,
      `\tcommand = ${run('diff-command')}`,
      '[filter "evil"]',
      `\tclean = ${run('clean')}`,
      `\tsmudge = ${run('smudge')}`,
      `\tprocess = ${run('process')}`,
      '\trequired = true',
      '[pager]',
      `\tlog = ${run('pager-log')}`,
      `\tdiff = ${run('pager-diff')}`,
      `\tshow = ${run('pager-show')}`,
      `\tblame = ${run('pager-blame')}`,
      '[log]',
      '\tshowSignature = true',
      '[gpg]',
      `\tprogram = ${script}`,
      '[protocol]',
      '\tallow = always',
      '[protocol "ext"]',
      '\tallow = always',
      '[remote "origin"]',
      `\turl = ext::${script} origin-ext %S ${SENTINEL}`,
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '[remote "promisor"]',
      `\turl = ext::${script} promisor-ext %S ${SENTINEL}`,
      '\tpromisor = true',
      '\tpartialclonefilter = blob:none',
      '[extensions]',
      '\tpartialClone = promisor',
      '[branch "feature"]',
      '\tremote = origin',
      '\tmerge = refs/heads/main',
      '',
    ].join('\n'),
  );
  // Every file goes through the filter and diff drivers.
  lab.write('.gitattributes', '* filter=evil diff=evil\n');
  // Uncommitted changes, so the working-tree comparison (where git would clean) has work to do.
  lab.write('README.md', '# Demo project\n\nChanged in the working tree.\n');
  lab.write('src/app.ts', 'export const answer = 43;\n');
  lab.write('.env', `API_TOKEN=${SENTINEL}-uncommitted\n`);
  return { missingBlobCommit };
}

describe('adversarial: a hostile repository behind the git tools', function () {
  this.timeout(120_000);
  let lab: Lab;
  let marker: string;
  let missingBlobCommit: string;
  const figures: Record<string, unknown> = {};

  before(async () => {
    lab = await Lab.create({ plain: true });
    marker = path.join(lab.root, 'marker-ran');
    ({ missingBlobCommit } = makeHostileRepository(lab, marker));
  });
  after(async () => {
    await lab.dispose();
    recordFigures('gitHostile', figures);
  });

  it('every git tool answers, no program named by the repository runs, nothing is fetched, and no secret reaches an event, model request or log', async () => {
    const s = await lab.server();
    const id = await lab.open(s);
    const calls: Array<Omit<FakeToolCall, 'id'> & { expect: 'ok' | 'refused' | 'either' }> = [
      { name: 'git_diff', arguments: '{}', expect: 'ok' },
      { name: 'git_diff', arguments: '{"scope":"working"}', expect: 'ok' },
      { name: 'git_diff', arguments: '{"scope":"staged"}', expect: 'ok' },
      { name: 'git_diff', arguments: '{"scope":"branch"}', expect: 'ok' },
      { name: 'git_diff', arguments: '{"scope":"branch","base":"main"}', expect: 'ok' },
      { name: 'git_diff', arguments: '{"path":"README.md"}', expect: 'ok' },
      { name: 'git_diff', arguments: '{"path":".env"}', expect: 'refused' },
      { name: 'git_diff', arguments: '{"path":"private/notes.txt"}', expect: 'refused' },
      { name: 'git_diff', arguments: '{"scope":"branch","base":"--output=/tmp/x"}', expect: 'refused' },
      { name: 'git_diff', arguments: '{"scope":"branch","base":"origin/main"}', expect: 'refused' },
      { name: 'git_log', arguments: '{}', expect: 'ok' },
      { name: 'git_log', arguments: '{"max_count":50,"grep":"token"}', expect: 'ok' },
      { name: 'git_log', arguments: '{"path":"docs/history.txt"}', expect: 'ok' },
      { name: 'git_log', arguments: '{"path":".env"}', expect: 'refused' },
      { name: 'git_log', arguments: '{"path":"../outside/secret.txt"}', expect: 'refused' },
      { name: 'git_show', arguments: '{"commit":"HEAD"}', expect: 'ok' },
      { name: 'git_show', arguments: '{"commit":"main"}', expect: 'either' },
      { name: 'git_show', arguments: '{"commit":"main","path":"src"}', expect: 'ok' },
      // The commit whose blob is missing: a lazy fetch would run the promisor's ext:: command.
      { name: 'git_show', arguments: JSON.stringify({ commit: missingBlobCommit }), expect: 'either' },
      { name: 'git_show', arguments: JSON.stringify({ commit: missingBlobCommit, path: 'docs/history.txt' }), expect: 'either' },
      { name: 'git_show', arguments: '{"commit":"HEAD:.env"}', expect: 'refused' },
      { name: 'git_show', arguments: '{"commit":"-p"}', expect: 'refused' },
      { name: 'git_blame', arguments: '{"path":"README.md","start_line":1,"end_line":3}', expect: 'ok' },
      { name: 'git_blame', arguments: '{"path":"src/app.ts","start_line":1,"end_line":1}', expect: 'ok' },
      { name: 'git_blame', arguments: '{"path":".env","start_line":1,"end_line":1}', expect: 'refused' },
      { name: 'git_blame', arguments: '{"path":"private/notes.txt","start_line":1,"end_line":1}', expect: 'refused' },
    ];
    const ids = calls.map((_, i) => `g-${i}`);
    const firstRequest = lab.fake.completionRequests.length;
    const events = await runTurn(s, lab.fake, id, 'what changed, and who wrote it?', [
      { kind: 'toolCalls', calls: calls.map((call, i) => ({ id: ids[i], name: call.name, arguments: call.arguments })) },
      { kind: 'text', text: 'Looked at the history.' },
    ]);
    const results = events.filter((e) => e.type === 'tool_result') as Array<{ tool: string; ok: boolean; preview: string }>;
    const requests = lab.fake.completionRequests.slice(firstRequest);
    for (const request of requests) assertValidHistory(request);
    const outputs = toolOutputs(requests);
    assert.equal(results.length, calls.length, 'every git call got a tool_result');
    const markers = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean) : [];
    assert.deepEqual(markers, [], 'a program named by the repository ran');

    const wrong = calls
      .map((call, i) => ({ call, ok: results[i].ok, output: outputs.get(ids[i]) ?? '(none)' }))
      .filter(({ call, ok }) => (call.expect === 'ok' && !ok) || (call.expect === 'refused' && ok))
      .map(({ call, ok, output }) => `${call.name} ${call.arguments} -> ${ok ? 'ok' : 'refused'}: ${output.slice(0, 300)}`);
    assert.deepEqual(wrong, [], 'these git calls did not answer as expected');
    // The output is real: the changes and history are there, secrets named at most.
    assert.match(outputs.get(ids[0]) ?? '', /Changed in the working tree/);
    assert.match(outputs.get(ids[0]) ?? '', /Changed, not shown.*\.env/);
    assert.match(outputs.get(ids[10]) ?? '', /Rotate the token/);
    assert.match(outputs.get(ids[16]) ?? '', /object it needs is missing.*never fetch/);

    const leaks = scanForLeaks(lab, [s]);
    assertNoLeak(leaks);
    assert.equal(s.child.exitCode, null, 'the server is still running');
    await s.stop();
    lab.drop(s);

    // Control: the config is live. Plain git (no hardening) in the same repository runs the programs.
    try {
      git(lab.repo, ['diff', 'HEAD']);
    } catch {
      // a required filter may fail the command; the marker is what counts
    }
    const control = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean) : [];
    assert.ok(control.length > 0, 'plain git ran the hostile programs, so the config under test is live');

    figures.calls = calls.length;
    figures.answered = results.filter((r) => r.ok).length;
    figures.refused = results.filter((r) => !r.ok).length;
    figures.markersWritten = markers.length;
    figures.controlMarkersFromPlainGit = control.length;
    figures.leakedBytes = leaks.bytes;
    figures.scannedBytes = leaks.scanned;
  });

  it('a .git file pointing at another repository on the machine is refused by every git tool, and none of its commits or files reach an event, model request or log', async () => {
    const planted = await Lab.create({ plain: true });
    try {
      // The other repository: the lab's outside folder, its history and files carrying the sentinel.
      git(planted.outside, ['init', '-q', '-b', 'main']);
      git(planted.outside, ['add', '-A']);
      git(planted.outside, ['commit', '-q', '-m', `Other repository ${SENTINEL}`]);
      fs.rmSync(path.join(planted.repo, '.git'), { recursive: true, force: true });
      fs.writeFileSync(path.join(planted.repo, '.git'), `gitdir: ${path.join(planted.outside, '.git')}\n`);
      const s = await planted.server();
      const id = await planted.open(s);
      const calls: Array<Omit<FakeToolCall, 'id'>> = [
        { name: 'git_diff', arguments: '{}' },
        { name: 'git_diff', arguments: '{"scope":"staged"}' },
        { name: 'git_log', arguments: '{"max_count":50}' },
        { name: 'git_show', arguments: '{"commit":"HEAD"}' },
        { name: 'git_blame', arguments: '{"path":"README.md","start_line":1,"end_line":3}' },
      ];
      const ids = calls.map((_, i) => `p-${i}`);
      const firstRequest = planted.fake.completionRequests.length;
      const events = await runTurn(s, planted.fake, id, 'what changed?', [
        { kind: 'toolCalls', calls: calls.map((call, i) => ({ id: ids[i], ...call })) },
        { kind: 'text', text: 'Nothing to see.' },
      ]);
      const results = events.filter((e) => e.type === 'tool_result') as Array<{ ok: boolean }>;
      const outputs = toolOutputs(planted.fake.completionRequests.slice(firstRequest));
      assert.equal(results.length, calls.length, 'every git call got a tool_result');
      assert.deepEqual(results.map((r) => r.ok), calls.map(() => false), 'every git call was refused');
      for (const toolId of ids) assert.match(outputs.get(toolId) ?? '', /the \.git file here points to a git directory that does not belong to this folder; the git tools are off for it/);
      const leaks = scanForLeaks(planted, [s]);
      assertNoLeak(leaks);
      await s.stop();
      planted.drop(s);

      // Control: the plant is live. Plain git in the folder reads the other repository's history.
      const control = git(planted.repo, ['log', '--format=%s']);
      assert.ok(control.includes(SENTINEL), "plain git follows the planted .git file to the other repository's history");

      figures.plantedGitFileCalls = calls.length;
      figures.plantedGitFileRefused = results.filter((r) => !r.ok).length;
      figures.plantedGitFileLeakedBytes = leaks.bytes;
      figures.plantedGitFileScannedBytes = leaks.scanned;
      figures.plantedGitFileControlShowsOther = control.includes(SENTINEL);
    } finally {
      await planted.dispose();
    }
  });
});

describe("adversarial: a .git of the folder's own whose contents lead elsewhere", function () {
  this.timeout(60_000);
  let base: string;
  let other: string;
  let otherHead: string;
  /** A config file outside every folder: git quotes its core.abbrev in an error, and `git config` prints its secret. */
  let secretConfig: string;

  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-adv-gitdir-')));
    secretConfig = path.join(base, 'secret.gitconfig');
    fs.writeFileSync(secretConfig, `[secret]\n\ttoken = ${SENTINEL}\n[core]\n\tabbrev = ${SENTINEL}\n`);
    // A sibling repository, whose commit and file must never be shown.
    other = path.join(base, 'other');
    fs.mkdirSync(other);
    git(other, ['init', '-q', '-b', 'main']);
    fs.writeFileSync(path.join(other, 'payroll.txt'), `${SENTINEL} salaries\n`);
    git(other, ['add', '-A']);
    git(other, ['commit', '-q', '-m', `Payroll ${SENTINEL}`]);
    otherHead = git(other, ['rev-parse', 'HEAD']).trim();
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  /** A repository of its own in `base/<name>`, one commit. */
  function folder(name: string): string {
    const dir = path.join(base, name);
    fs.mkdirSync(dir);
    git(dir, ['init', '-q', '-b', 'main']);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'inside\n');
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'Inside commit']);
    return dir;
  }

  function everyTool(b: ReadBoundary): Array<Promise<ToolOutcome>> {
    return [
      gitLog(b, {}),
      gitShow(b, { commit: 'HEAD' }),
      gitBlame(b, { path: 'payroll.txt', start_line: 1, end_line: 1 }),
      gitDiff(b, {}),
    ];
  }

  async function assertAllRefused(dir: string, message: RegExp): Promise<void> {
    const b = await ReadBoundary.create(dir);
    for (const outcome of await within(20_000, 'the git tools', Promise.all(everyTool(b)))) {
      assert.equal(outcome.ok, false, `expected a refusal, got:\n${outcome.output}`);
      assert.match(outcome.output, message);
      assert.ok(!outcome.output.includes(SENTINEL), `the other repository's content was shown:\n${outcome.output}`);
    }
  }

  it("refuses a .git whose objects and refs are links to another repository's, naming the link, and shows none of its commits or files", async () => {
    const dir = folder('linked-objects');
    for (const name of ['objects', 'refs']) {
      fs.rmSync(path.join(dir, '.git', name), { recursive: true, force: true });
      fs.symlinkSync(path.join('..', '..', 'other', '.git', name), path.join(dir, '.git', name));
    }
    await assertAllRefused(dir, /the git directory holds a link \(\.git\/(objects|refs)\) that leads outside this folder.*Replace the link/);
    // Control: the plant is live; plain git reads the other repository's history and file.
    assert.match(git(dir, ['log', '--format=%s']), /Payroll/);
  });

  it('refuses a link anywhere in the objects tree (a fan-out directory), also when planted after a call on the unchanged repository was answered', async () => {
    const saved = LISTING_CACHE.settledMs;
    // Every listing is kept at once, so the second call runs on the cache and must still see the new link.
    LISTING_CACHE.settledMs = -60_000;
    try {
      const dir = folder('linked-fanout');
      const b = await ReadBoundary.create(dir);
      const first = await gitLog(b, {});
      assert.equal(first.ok, true, first.output);
      const fanOut = otherHead.slice(0, 2);
      const inside = path.join(dir, '.git', 'objects', fanOut);
      fs.mkdirSync(inside, { recursive: true });
      fs.writeFileSync(path.join(dir, '.git', 'refs', 'heads', 'main'), `${otherHead}\n`);
      // The fan-out directory is listed (and kept) while it holds no link: the check passes, git finds no such commit.
      const missing = await gitLog(b, {});
      assert.match(missing.output, /no commits yet|an object it needs is missing/);
      fs.symlinkSync(path.join(other, '.git', 'objects', fanOut, otherHead.slice(2)), path.join(inside, otherHead.slice(2)));
      assert.match(git(dir, ['log', '--format=%s']), /Payroll/, 'plain git reads the linked object');
      await assertAllRefused(dir, new RegExp(`holds a link \\(\\.git/objects/${fanOut}/${otherHead.slice(2)}\\)`));
    } finally {
      LISTING_CACHE.settledMs = saved;
    }
  });

  it("refuses alternates nested through a store inside the folder whose own alternates lead to another repository", async () => {
    const dir = folder('nested-alternates');
    const store = path.join(dir, 'vendor', 'store', 'objects');
    fs.mkdirSync(path.join(store, 'info'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.git', 'objects', 'info', 'alternates'), '../../vendor/store/objects\n');
    fs.writeFileSync(path.join(store, 'info', 'alternates'), '../../../../other/.git/objects\n');
    git(dir, ['update-ref', 'refs/heads/main', otherHead]);
    await assertAllRefused(dir, /the repository's alternates \(vendor\/store\/objects\/info\/alternates\) name an object directory outside this folder/);
    assert.match(git(dir, ['log', '--format=%s']), /Payroll/, 'plain git follows the nested alternates');
  });

  it('refuses a link in .git to a secret inside the folder, so git never quotes the secret in an error', async () => {
    const dir = folder('linked-secret');
    fs.writeFileSync(path.join(dir, '.env'), `API_TOKEN=${SENTINEL}\n`);
    fs.symlinkSync('../.env', path.join(dir, '.git', 'packed-refs'));
    await assertAllRefused(dir, /holds a link \(\.git\/packed-refs\) that leads outside this folder, to a file the tools may not read/);
    assert.throws(() => git(dir, ['log']), (error: { stderr?: string }) => String(error.stderr).includes(SENTINEL), 'plain git quotes the secret');
  });

  it('refuses a link in .git to a secret elsewhere in the work tree when the folder discussed is a subfolder of it', async () => {
    const dir = folder('linked-secret-above');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'b.txt'), 'below\n');
    fs.writeFileSync(path.join(dir, '.env'), `API_TOKEN=${SENTINEL}\n`);
    fs.symlinkSync('../.env', path.join(dir, '.git', 'packed-refs'));
    const b = await ReadBoundary.create(path.join(dir, 'sub'));
    for (const outcome of await within(20_000, 'the git tools', Promise.all([gitLog(b, {}), gitDiff(b, {}), gitShow(b, { commit: 'HEAD' })]))) {
      assert.equal(outcome.ok, false, outcome.output);
      assert.match(outcome.output, /holds a link \(\.git\/packed-refs\) that leads outside this folder/);
      assert.ok(!outcome.output.includes(SENTINEL), outcome.output);
    }
  });

  it("answers for a clone sharing the objects of another clone inside the folder (git clone --shared), and for hooks linked to a shared folder", async () => {
    const dir = folder('shared-clone');
    const upstream = path.join(dir, 'vendor', 'upstream');
    fs.mkdirSync(path.dirname(upstream), { recursive: true });
    git(path.dirname(upstream), ['clone', '-q', '--shared', dir, 'upstream']);
    const hooks = path.join(base, 'shared-hooks');
    fs.mkdirSync(hooks, { recursive: true });
    fs.rmSync(path.join(upstream, '.git', 'hooks'), { recursive: true, force: true });
    fs.symlinkSync(hooks, path.join(upstream, '.git', 'hooks'));
    // The clone's alternates name the folder's own .git/objects; asked from the clone's own folder, that is outside it,
    // so the store that counts here is the other way round: the folder's repository borrowing from the clone inside it.
    fs.writeFileSync(path.join(dir, '.git', 'objects', 'info', 'alternates'), `${path.join(upstream, '.git', 'objects')}\n`);
    fs.rmSync(path.join(dir, '.git', 'hooks'), { recursive: true, force: true });
    fs.symlinkSync(hooks, path.join(dir, '.git', 'hooks'));
    const outcome = await gitLog(await ReadBoundary.create(dir), {});
    assert.equal(outcome.ok, true, outcome.output);
    assert.match(outcome.output, /Inside commit/);
  });

  it('refuses a repository whose git directory and stores hold more directories than a check walks, saying so', async () => {
    const dir = folder('too-many-directories');
    const saved = GIT_WALK_LIMITS.maxDirectories;
    GIT_WALK_LIMITS.maxDirectories = 3;
    try {
      await assertAllRefused(dir, /hold more directories than can be checked on each call/);
    } finally {
      GIT_WALK_LIMITS.maxDirectories = saved;
    }
    const outcome = await gitLog(await ReadBoundary.create(dir), {});
    assert.equal(outcome.ok, true, outcome.output);
  });

  it('still answers for a HEAD that is a link to its branch inside .git, as core.preferSymlinkRefs writes it', async () => {
    const dir = folder('symlink-head');
    fs.rmSync(path.join(dir, '.git', 'HEAD'));
    fs.symlinkSync('refs/heads/main', path.join(dir, '.git', 'HEAD'));
    const outcome = await gitLog(await ReadBoundary.create(dir), {});
    assert.equal(outcome.ok, true, outcome.output);
    assert.match(outcome.output, /Inside commit/);
  });

  it('refuses a FIFO as the alternates file at once, and file reads keep answering after more such calls than the thread pool has threads', async () => {
    const dir = folder('fifo-alternates');
    const fifo = path.join(dir, '.git', 'objects', 'info', 'alternates');
    execFileSync('mkfifo', [fifo]);
    const b = await ReadBoundary.create(dir);
    try {
      const outcomes = await within(20_000, 'git_log on a FIFO alternates file', Promise.all(Array.from({ length: 6 }, () => gitLog(b, {}))));
      for (const outcome of outcomes) {
        assert.equal(outcome.ok, false, outcome.output);
        assert.match(outcome.output, /alternates file \(\.git\/objects\/info\/alternates\) is not a small plain file/);
      }
      assert.equal(await within(5_000, 'a file read after the git calls', fs.promises.readFile(path.join(dir, 'a.txt'), 'utf8')), 'inside\n');
    } finally {
      // Had a git call's read of it blocked in open(2), that open would hold a thread for good.
      removeFifo(fifo, 'reader');
    }
  });

  it('refuses a FIFO in .git that git itself would wait on (packed-refs) at once, naming it', async () => {
    const dir = folder('fifo-packed-refs');
    execFileSync('mkfifo', [path.join(dir, '.git', 'packed-refs')]);
    await assertAllRefused(dir, /(the git directory holds|git would wait on) a FIFO or device \(\.git\/packed-refs\)/);
  });

  it('refuses an alternates file that is a device (/dev/zero, /dev/null) or larger than 64 KiB as not a small plain file, without reading it through', async () => {
    for (const device of ['/dev/zero', '/dev/null']) {
      const dir = folder(`device-alternates-${path.basename(device)}`);
      fs.symlinkSync(device, path.join(dir, '.git', 'objects', 'info', 'alternates'));
      await assertAllRefused(dir, /alternates file \(\.git\/objects\/info\/alternates\) is not a small plain file/);
    }
    const large = folder('large-alternates');
    fs.writeFileSync(path.join(large, '.git', 'objects', 'info', 'alternates'), '# padding\n'.repeat(8 * 1024));
    await assertAllRefused(large, /alternates file \(\.git\/objects\/info\/alternates\) is not a small plain file/);
  });

  /** Appends `lines` to the folder's `.git/config`. */
  function configure(dir: string, ...lines: string[]): void {
    fs.appendFileSync(path.join(dir, '.git', 'config'), `${lines.join('\n')}\n`);
  }

  /** Control: plain git reads the secret config through the folder's includes (and quotes it in an error). */
  function assertPlainGitReadsSecret(dir: string): void {
    assert.equal(git(dir, ['config', '--get', 'secret.token']).trim(), SENTINEL, 'plain git reads the included file as config');
    assert.throws(() => git(dir, ['log']), (error: { stderr?: string }) => String(error.stderr).includes(SENTINEL), 'plain git quotes the included value in an error');
  }

  it("refuses a config that includes a file outside the folder by its absolute path, naming the include, and shows none of the file's values", async () => {
    const dir = folder('include-absolute');
    configure(dir, '[include]', `\tpath = ${secretConfig}`);
    await assertAllRefused(dir, /its config \(\.git\/config\) includes a file outside this folder, which git would read as config \(path = .*secret\.gitconfig\).*Remove that include/);
    assertPlainGitReadsSecret(dir);
  });

  it('refuses a config that includes a file outside the folder by a relative path, resolved from .git as git resolves it, also when the folder is a subfolder of the work tree', async () => {
    const dir = folder('include-relative');
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'b.txt'), 'below\n');
    configure(dir, '[include]', '\tpath = ../../secret.gitconfig');
    await assertAllRefused(dir, /its config \(\.git\/config\) includes a file outside this folder.*\(path = \.\.\/\.\.\/secret\.gitconfig\)/);
    const b = await ReadBoundary.create(path.join(dir, 'sub'));
    for (const outcome of await within(20_000, 'the git tools', Promise.all([gitLog(b, {}), gitDiff(b, {})]))) {
      assert.equal(outcome.ok, false, outcome.output);
      assert.match(outcome.output, /its config \(\.\.\/\.git\/config\) includes a file outside this folder/);
      assert.ok(!outcome.output.includes(SENTINEL), outcome.output);
    }
    assertPlainGitReadsSecret(dir);
    assert.match(git(path.join(dir, 'sub'), ['config', '--get', 'secret.token']), new RegExp(SENTINEL), 'plain git reads it from the subfolder too');
  });

  it('refuses a conditional include that matches (gitdir, onbranch, hasconfig), however its section and key are capitalized', async () => {
    const variants: Array<[string, string[]]> = [
      ['gitdir', [`[IncludeIf "gitdir:${base}/"]`, `\tPath = ${secretConfig}`]],
      ['onbranch', ['[includeIf "onbranch:ma*"]', `\tpath = ${secretConfig}`]],
      ['hasconfig', ['[remote "origin"]', '\turl = https://example.com/r.git', '[includeIf "hasconfig:remote.*.url:https://example.com/**"]', `\tpath = ${secretConfig}`]],
      ['capitals', ['[Include]', `\tPATH = ${secretConfig}`]],
    ];
    for (const [name, lines] of variants) {
      const dir = folder(`include-if-${name}`);
      configure(dir, ...lines);
      await assertAllRefused(dir, /its config \(\.git\/config\) includes a file outside this folder.*secret\.gitconfig/);
      assertPlainGitReadsSecret(dir);
    }
  });

  it("refuses a config that includes the folder's .env, which the tools may not read, and never shows its lines", async () => {
    const dir = folder('include-env');
    fs.writeFileSync(path.join(dir, '.env'), `API_TOKEN=${SENTINEL}\n`);
    configure(dir, '[include]', '\tpath = ../.env');
    await assertAllRefused(dir, /its config \(\.git\/config\) includes a file the tools may not read.*\(path = \.\.\/\.env\)/);
    // Control: plain git opens it as config (and stops at its first line, which is not config).
    assert.throws(() => git(dir, ['log']), (error: { stderr?: string }) => /bad config line 1 in file .*\.env/.test(String(error.stderr)), 'plain git reads the .env as config');
  });

  it('refuses an include inside the folder whose own include leads outside it, naming the file that holds it', async () => {
    const dir = folder('include-nested');
    fs.mkdirSync(path.join(dir, 'config'));
    fs.writeFileSync(path.join(dir, 'config', 'shared.gitconfig'), '[log]\n\tdate = iso\n[include]\n\tpath = ../../secret.gitconfig\n');
    configure(dir, '[include]', '\tpath = ../config/shared.gitconfig');
    await assertAllRefused(dir, /its config \(config\/shared\.gitconfig\) includes a file outside this folder.*\(path = \.\.\/\.\.\/secret\.gitconfig\)/);
    assertPlainGitReadsSecret(dir);
  });

  it('refuses includes nested deeper than git follows (an include of itself) without following them for ever', async () => {
    const dir = folder('include-loop');
    fs.writeFileSync(path.join(dir, 'loop.gitconfig'), '[include]\n\tpath = loop.gitconfig\n');
    configure(dir, '[include]', '\tpath = ../loop.gitconfig');
    await assertAllRefused(dir, /includes files nested deeper than git follows/);
    assert.throws(() => git(dir, ['log']), (error: { stderr?: string }) => /exceeded maximum include depth/.test(String(error.stderr)), 'plain git follows the loop to its limit');
  });

  it('refuses an include of a FIFO in the folder at once, without opening it to wait', async () => {
    const dir = folder('include-fifo');
    const fifo = path.join(dir, 'settings.gitconfig');
    execFileSync('mkfifo', [fifo]);
    configure(dir, '[include]', '\tpath = ../settings.gitconfig');
    try {
      await within(5_000, 'the git tools on a FIFO include', assertAllRefused(dir, /includes something other than a plain file that can be opened \(a FIFO or device git would wait on.*\(path = \.\.\/settings\.gitconfig\)/));
      // Control: plain git waits on the FIFO until it is killed.
      assert.throws(() => execFileSync('git', ['config', '--get', 'user.name'], { cwd: dir, timeout: 1_000, stdio: 'pipe', env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }), /ETIMEDOUT/, 'plain git waits on the FIFO');
    } finally {
      fs.rmSync(fifo, { force: true });
    }
  });

  for (const what of ['config', 'HEAD', 'config.worktree']) {
    it(`refuses a repository whose .git/${what} is a FIFO at once, where git would wait on it while finding the repository`, async () => {
      const dir = folder(`fifo-${what}`);
      // git reads config.worktree once the repository asks for it.
      if (what === 'config.worktree') git(dir, ['config', 'extensions.worktreeConfig', 'true']);
      const fifo = path.join(dir, '.git', what);
      fs.rmSync(fifo, { force: true });
      execFileSync('mkfifo', [fifo]);
      try {
        await within(5_000, `the git tools on a FIFO .git/${what}`, assertAllRefused(dir, new RegExp(`git would wait on a FIFO or device \\(\\.git/${what.replace('.', '\\.')}\\)`)));
        // Control: plain git waits on it until it is killed.
        assert.throws(() => execFileSync('git', ['log', '-1'], { cwd: dir, timeout: 1_000, stdio: 'pipe', env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }), /ETIMEDOUT/, 'plain git waits on the FIFO');
      } finally {
        fs.rmSync(fifo, { force: true });
      }
    });
  }

  /** Plain git, in `dir`, waits on a FIFO until it is killed. */
  function assertPlainGitWaits(dir: string): void {
    assert.throws(
      () => execFileSync('git', ['log', '-1'], { cwd: dir, timeout: 1_000, stdio: 'pipe', env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }),
      /ETIMEDOUT/,
      'plain git waits on the FIFO',
    );
  }

  // Each plants a FIFO where git's discovery opens a file, and names the folder the tools are asked in and the FIFO.
  const discoveryPlants: Array<[string, (dir: string) => { folder: string; fifo: string }]> = [
    ['a HEAD in a folder that is in no repository, opened as git asks whether it is a bare one', () => {
      const dir = fs.mkdtempSync(path.join(base, 'no-repo-'));
      return { folder: dir, fifo: path.join(dir, 'HEAD') };
    }],
    ['a HEAD in a subfolder of the repository, on the way up', (dir) => ({ folder: path.join(dir, 'sub'), fifo: path.join(dir, 'sub', 'HEAD') })],
    ['the HEAD beside an empty .git, which git passes over', (dir) => {
      fs.mkdirSync(path.join(dir, 'sub', '.git'), { recursive: true });
      return { folder: path.join(dir, 'sub'), fifo: path.join(dir, 'sub', 'HEAD') };
    }],
    ['the commondir beside a HEAD in a subfolder', (dir) => {
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, 'sub', 'HEAD'), 'ref: refs/heads/main\n');
      return { folder: path.join(dir, 'sub'), fifo: path.join(dir, 'sub', 'commondir') };
    }],
    ['the HEAD of a git directory a .git file names with a trailing space, which git keeps', (dir) => {
      const sub = path.join(dir, 'sub');
      fs.mkdirSync(path.join(sub, 'gd '), { recursive: true });
      fs.writeFileSync(path.join(sub, '.git'), 'gitdir: gd \n');
      return { folder: sub, fifo: path.join(sub, 'gd ', 'HEAD') };
    }],
    ['the HEAD of a git directory a .git file names through a link and then ..', (dir) => {
      const sub = path.join(dir, 'sub');
      fs.mkdirSync(path.join(sub, 'deep', 'er'), { recursive: true });
      fs.mkdirSync(path.join(sub, 'deep', 'gd'));
      fs.mkdirSync(path.join(sub, 'gd'));
      fs.writeFileSync(path.join(sub, 'gd', 'HEAD'), 'ref: refs/heads/main\n');
      fs.symlinkSync(path.join('deep', 'er'), path.join(sub, 'lnk'));
      fs.writeFileSync(path.join(sub, '.git'), 'gitdir: lnk/../gd\n');
      return { folder: sub, fifo: path.join(sub, 'deep', 'gd', 'HEAD') };
    }],
    ['the config of a common directory named with a trailing space', (dir) => {
      // A common directory git takes: objects and refs in it.
      for (const part of ['objects', 'refs']) fs.mkdirSync(path.join(dir, 'cd ', part), { recursive: true });
      fs.writeFileSync(path.join(dir, '.git', 'commondir'), '../cd \n');
      return { folder: dir, fifo: path.join(dir, 'cd ', 'config') };
    }],
    ['the config of a common directory named through a link and then ..', (dir) => {
      fs.mkdirSync(path.join(dir, 'deep', 'er'), { recursive: true });
      for (const part of ['objects', 'refs']) fs.mkdirSync(path.join(dir, 'deep', 'cd', part), { recursive: true });
      fs.symlinkSync(path.join('..', 'deep', 'er'), path.join(dir, '.git', 'lnk'));
      fs.writeFileSync(path.join(dir, '.git', 'commondir'), 'lnk/../cd\n');
      return { folder: dir, fifo: path.join(dir, 'deep', 'cd', 'config') };
    }],
    ['.git/shallow, which rev-parse --is-shallow-repository opens', (dir) => ({ folder: dir, fifo: path.join(dir, '.git', 'shallow') })],
    ['the HEAD of a git directory a .git file names before a NUL, where git stops reading', (dir) => {
      const sub = path.join(dir, 'sub');
      fs.mkdirSync(path.join(sub, 'gd'), { recursive: true });
      fs.writeFileSync(path.join(sub, '.git'), 'gitdir: gd\0junk\n');
      return { folder: sub, fifo: path.join(sub, 'gd', 'HEAD') };
    }],
    ['the config of a common directory commondir names before a NUL', (dir) => {
      for (const part of ['objects', 'refs']) fs.mkdirSync(path.join(dir, '.git', 'cd', part), { recursive: true });
      fs.writeFileSync(path.join(dir, '.git', 'commondir'), 'cd\0junk\n');
      return { folder: dir, fifo: path.join(dir, '.git', 'cd', 'config') };
    }],
    ['the config of a git directory whose objects is an executable file, which git takes as a directory', (dir) => {
      fs.rmSync(path.join(dir, '.git', 'objects'), { recursive: true, force: true });
      fs.writeFileSync(path.join(dir, '.git', 'objects'), '', { mode: 0o755 });
      return { folder: dir, fifo: path.join(dir, '.git', 'config') };
    }],
    ['the config of a git directory whose HEAD is a dangling link to a branch, which git takes by its name', (dir) => {
      fs.rmSync(path.join(dir, '.git', 'HEAD'));
      fs.symlinkSync('refs/heads/gone', path.join(dir, '.git', 'HEAD'));
      return { folder: dir, fifo: path.join(dir, '.git', 'config') };
    }],
    ['the config of the repository above a subfolder whose own .git git passes over (its HEAD is not a ref)', (dir) => {
      for (const part of ['objects', 'refs']) fs.mkdirSync(path.join(dir, 'sub', '.git', part), { recursive: true });
      fs.writeFileSync(path.join(dir, 'sub', '.git', 'HEAD'), 'garbage\n');
      return { folder: path.join(dir, 'sub'), fifo: path.join(dir, '.git', 'config') };
    }],
    ['the branch HEAD names, which an includeIf on the branch has git resolve while it reads the config', (dir) => {
      fs.writeFileSync(path.join(dir, '.git', 'config'), fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8') + '[includeIf "onbranch:main"]\n\tpath = ../inc.gitconfig\n');
      fs.rmSync(path.join(dir, '.git', 'refs', 'heads', 'main'));
      return { folder: dir, fifo: path.join(dir, '.git', 'refs', 'heads', 'main') };
    }],
  ];
  for (const [where, plant] of discoveryPlants) {
    it(`refuses at once a FIFO git would wait on while finding the repository: ${where}`, async () => {
      const dir = folder(`discovery-${discoveryPlants.findIndex(([name]) => name === where)}`);
      const { folder: asked, fifo } = plant(dir);
      fs.mkdirSync(asked, { recursive: true });
      fs.rmSync(fifo, { force: true });
      execFileSync('mkfifo', [fifo]);
      try {
        assertPlainGitWaits(asked);
        await within(5_000, `the git tools on ${where}`, assertAllRefused(asked, /git would wait on a FIFO or device \(.+\)/));
        const outcome = await gitLog(await ReadBoundary.create(asked), {});
        assert.ok(outcome.output.includes(path.basename(fifo)), outcome.output);
      } finally {
        fs.rmSync(fifo, { force: true });
      }
    });
  }

  it('refuses a FIFO as the .git file of a folder below the repository, and a .git file whose git directory has a FIFO commondir', async () => {
    const dir = folder('fifo-dotgit');
    const sub = path.join(dir, 'sub');
    fs.mkdirSync(sub);
    execFileSync('mkfifo', [path.join(sub, '.git')]);
    try {
      await within(5_000, 'the git tools on a FIFO .git', assertAllRefused(sub, /git would wait on a FIFO or device \(\.git\)/));
    } finally {
      fs.rmSync(path.join(sub, '.git'), { force: true });
    }
    const linked = path.join(dir, 'linked');
    const elsewhere = path.join(dir, 'gitdirs', 'linked');
    fs.mkdirSync(linked);
    fs.mkdirSync(elsewhere, { recursive: true });
    fs.writeFileSync(path.join(linked, '.git'), `gitdir: ${elsewhere}\n`);
    execFileSync('mkfifo', [path.join(elsewhere, 'commondir')]);
    try {
      await within(5_000, 'the git tools on a FIFO commondir', assertAllRefused(linked, /git would wait on a FIFO or device \(.*gitdirs\/linked\/commondir\)/));
    } finally {
      fs.rmSync(path.join(elsewhere, 'commondir'), { force: true });
    }
  });

  it("shows nothing of an outside config that .git/config or commondir leads to, though git quotes its values when it finds the repository", async () => {
    const linked = folder('config-linked-out');
    fs.rmSync(path.join(linked, '.git', 'config'));
    fs.symlinkSync(secretConfig, path.join(linked, '.git', 'config'));
    const common = path.join(base, 'common-outside');
    for (const part of ['objects', 'refs']) fs.mkdirSync(path.join(common, part), { recursive: true });
    fs.copyFileSync(secretConfig, path.join(common, 'config'));
    const pointed = folder('commondir-out');
    fs.writeFileSync(path.join(pointed, '.git', 'commondir'), `${common}\n`);
    for (const dir of [linked, pointed]) {
      assert.throws(() => git(dir, ['log']), (error: { stderr?: string }) => String(error.stderr).includes(SENTINEL), 'plain git quotes the outside value in an error');
      await assertAllRefused(dir, /git could not read the repository here/);
    }
  });

  it("shows nothing of .env linked as .git/shallow, or as packed-refs under an includeIf on the branch, though git prints its first line", async () => {
    const shallow = folder('shallow-env');
    fs.writeFileSync(path.join(shallow, '.env'), `API_KEY=${SENTINEL}\n`);
    fs.symlinkSync('../.env', path.join(shallow, '.git', 'shallow'));
    assert.throws(() => git(shallow, ['rev-parse', '--is-shallow-repository']), (error: { stderr?: string }) => String(error.stderr).includes(SENTINEL), 'plain git prints the line');
    await assertAllRefused(shallow, /git could not read the repository here/);

    const packed = folder('packed-refs-env');
    fs.writeFileSync(path.join(packed, '.env'), `API_KEY=${SENTINEL}\n`);
    fs.rmSync(path.join(packed, '.git', 'refs', 'heads', 'main'));
    fs.symlinkSync('../.env', path.join(packed, '.git', 'packed-refs'));
    configure(packed, '[includeIf "onbranch:main"]', '\tpath = ../inc.gitconfig');
    assert.throws(() => git(packed, ['rev-parse', '--show-toplevel']), (error: { stderr?: string }) => String(error.stderr).includes(SENTINEL), 'plain git prints the line');
    await assertAllRefused(packed, /git could not read the repository here/);
  });

  it('still answers for a relative include in a folder whose path holds a backslash or a U+2028, which git escapes or keeps in its trace', async () => {
    for (const name of ['back\\slash', 'line\u2028sep']) {
      const dir = folder(name);
      fs.writeFileSync(path.join(dir, 'project.gitconfig'), '[log]\n\tdate = iso\n');
      configure(dir, '[include]', '\tpath = ../project.gitconfig');
      assert.equal(git(dir, ['config', '--get', 'log.date']).trim(), 'iso', 'plain git reads the include');
      const outcome = await gitLog(await ReadBoundary.create(dir), {});
      assert.equal(outcome.ok, true, outcome.output);
      assert.match(outcome.output, /Inside commit/);
    }
  });

  /** git_log and git_show answer with the folder's own commit. */
  async function assertLogAndShowAnswer(dir: string): Promise<void> {
    const b = await ReadBoundary.create(dir);
    for (const outcome of await Promise.all([gitLog(b, {}), gitShow(b, { commit: 'HEAD' })])) {
      assert.equal(outcome.ok, true, outcome.output);
      assert.match(outcome.output, /Inside commit/);
    }
  }

  it('still answers for a config that includes a readable file inside the folder (and that file a missing one beside it)', async () => {
    const dir = folder('include-benign');
    fs.writeFileSync(path.join(dir, 'project.gitconfig'), '[log]\n\tdate = iso\n[include]\n\tpath = local.gitconfig\n');
    configure(dir, '[include]', '\tpath = ../project.gitconfig', `[includeIf "gitdir:${dir}/"]`, '\tpath = ../project.gitconfig');
    assert.equal(git(dir, ['config', '--get', 'log.date']).trim(), 'iso', 'plain git reads the include');
    await assertLogAndShowAnswer(dir);
  });

  it("still answers for a config that includes a file in its own .git, as git's relative include from .git/config names one", async () => {
    const dir = folder('include-git-dir');
    fs.writeFileSync(path.join(dir, '.git', 'config.local'), '[log]\n\tdate = iso\n');
    configure(dir, '[include]', '\tpath = config.local');
    assert.equal(git(dir, ['config', '--get', 'log.date']).trim(), 'iso', 'plain git reads the include from .git');
    await assertLogAndShowAnswer(dir);
  });

  it('refuses an include in its own .git that leads outside in turn, or is a FIFO, as anywhere else', async () => {
    const nested = folder('include-git-dir-nested');
    fs.writeFileSync(path.join(nested, '.git', 'config.local'), '[include]\n\tpath = ../../secret.gitconfig\n');
    configure(nested, '[include]', '\tpath = config.local');
    assertPlainGitReadsSecret(nested);
    await assertAllRefused(nested, /its config \(\.git\/config\.local\) includes a file outside this folder.*\(path = \.\.\/\.\.\/secret\.gitconfig\)/);

    const waiting = folder('include-git-dir-fifo');
    execFileSync('mkfifo', [path.join(waiting, '.git', 'config.local')]);
    configure(waiting, '[include]', '\tpath = config.local');
    await within(5_000, 'the git tools on a FIFO include in .git', assertAllRefused(waiting, /includes something other than a plain file that can be opened \(a FIFO or device git would wait on.*\(path = config\.local\)/));
    assertPlainGitWaits(waiting);
  });

  it('shows nothing of what git prints while finding the repository, a config value with a bidi override or markup in it neither', async () => {
    const dir = folder('bidi-config');
    fs.appendFileSync(path.join(dir, '.git', 'config'), '[core]\n\tbare = \u202eeurt\u2066 <img src=x onerror=alert(1)>\n');
    assert.throws(() => git(dir, ['log']), (error: { stderr?: string }) => String(error.stderr).includes('<img'), 'plain git quotes the value');
    const outcome = await gitLog(await ReadBoundary.create(dir), {});
    assert.equal(outcome.ok, false, outcome.output);
    assert.match(outcome.output, /git could not read the repository here \(run `git status` in the folder to see why\)/, 'the answer says where to see why, without git\'s words');
    assert.ok(!/[\u202a-\u202e\u2066-\u2069\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(outcome.output), `a raw control or bidi character reached the answer: ${JSON.stringify(outcome.output)}`);
    assert.ok(!/eurt|<img/.test(outcome.output), outcome.output);
  });
});

describe('adversarial: a .gitattributes in the work tree that git would wait on', function () {
  this.timeout(60_000);
  let base: string;
  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-adv-gitattributes-')));
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  const PLAIN_GIT_ENV = (home: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });

  /** Two commits touching `sub/f.txt` and an unstaged change to it, then a FIFO at `fifoAt`. */
  function repository(name: string, fifoAt: string): string {
    const dir = path.join(base, name);
    fs.mkdirSync(path.join(dir, 'sub', 'deeper'), { recursive: true });
    git(dir, ['init', '-q', '-b', 'main']);
    fs.writeFileSync(path.join(dir, 'top.txt'), 'top\n');
    fs.writeFileSync(path.join(dir, 'sub', 'f.txt'), 'one\n');
    fs.writeFileSync(path.join(dir, 'sub', 'deeper', 'g.txt'), 'deep\n');
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'First']);
    fs.appendFileSync(path.join(dir, 'sub', 'f.txt'), 'two\n');
    git(dir, ['commit', '-q', '-am', 'Second']);
    fs.appendFileSync(path.join(dir, 'sub', 'f.txt'), 'three, unstaged\n');
    execFileSync('mkfifo', [path.join(dir, fifoAt)]);
    return dir;
  }

  /** Every tool that reads file contents, each asked where it would open the FIFO. */
  function contentTools(b: ReadBoundary, file: string): Array<[string, Promise<ToolOutcome>]> {
    return [
      ['git_diff, all uncommitted changes', gitDiff(b, {})],
      ['git_diff, working', gitDiff(b, { scope: 'working' })],
      ['git_diff, branch against the first commit', gitDiff(b, { scope: 'branch', base: 'HEAD~1' })],
      ['git_show', gitShow(b, { commit: 'HEAD' })],
      ['git_blame', gitBlame(b, { path: file, start_line: 1, end_line: 1 })],
    ];
  }

  for (const fifoAt of ['sub/.gitattributes', '.gitattributes']) {
    it(`refuses at once every diff, show and blame git would hold on a FIFO ${fifoAt}, naming it, and git_log still answers`, async () => {
      const dir = repository(fifoAt.replace(/[/.]/g, '-'), fifoAt);
      const b = await ReadBoundary.create(dir);
      for (const [what, pending] of contentTools(b, 'sub/f.txt')) {
        const outcome = await within(5_000, what, pending);
        assert.equal(outcome.ok, false, `${what}: expected a refusal, got:\n${outcome.output}`);
        assert.match(outcome.output, new RegExp(`^${fifoAt.replace(/[.]/g, '\\.')} is not a regular file \\(a FIFO or a device\\): git would wait on it`), what);
      }
      const log = await within(5_000, 'git_log', gitLog(b, {}));
      assert.equal(log.ok, true, log.output);
      assert.match(log.output, /Second/);
      // Control: plain git waits on the FIFO until it is killed.
      assert.throws(() => execFileSync('git', ['diff', 'HEAD~1', 'HEAD'], { cwd: dir, timeout: 1_000, stdio: 'pipe', env: PLAIN_GIT_ENV(dir) }), /ETIMEDOUT/, 'plain git waits on the FIFO');
    });
  }

  it('refuses a FIFO .gitattributes above the folder, in the work tree the folder is in, by its full path', async () => {
    const dir = repository('above', '.gitattributes');
    const b = await ReadBoundary.create(path.join(dir, 'sub'));
    const outcome = await within(5_000, 'git_show', gitShow(b, { commit: 'HEAD' }));
    assert.equal(outcome.ok, false, outcome.output);
    assert.ok(outcome.output.startsWith(`${path.join(dir, '.gitattributes')} is not a regular file`), outcome.output);
  });

  it('refuses a .gitattributes linked to a FIFO, which an older git would follow', async () => {
    const dir = repository('linked', 'pipe');
    fs.symlinkSync('../pipe', path.join(dir, 'sub', '.gitattributes'));
    const outcome = await within(5_000, 'git_blame', gitBlame(await ReadBoundary.create(dir), { path: 'sub/f.txt', start_line: 1, end_line: 1 }));
    assert.equal(outcome.ok, false, outcome.output);
    assert.match(outcome.output, /^sub\/\.gitattributes is not a regular file/);
  });

  it('answers as usual beside a FIFO .gitattributes in a folder none of the compared files is in', async () => {
    const dir = repository('elsewhere', 'untracked-dir-fifo');
    fs.rmSync(path.join(dir, 'untracked-dir-fifo'));
    fs.mkdirSync(path.join(dir, 'untracked'));
    execFileSync('mkfifo', [path.join(dir, 'untracked', '.gitattributes')]);
    const b = await ReadBoundary.create(dir);
    for (const [what, pending] of contentTools(b, 'sub/f.txt')) {
      const outcome = await within(20_000, what, pending);
      assert.equal(outcome.ok, true, `${what}: ${outcome.output}`);
    }
    // Plain `.gitattributes` files are read as usual.
    fs.writeFileSync(path.join(dir, 'sub', '.gitattributes'), '*.txt text\n');
    const shown = await gitShow(b, { commit: 'HEAD' });
    assert.equal(shown.ok, true, shown.output);
    assert.match(shown.output, /\+two/);
  });
});

describe('adversarial: a git run before the checks that does not end', function () {
  this.timeout(60_000);
  let base: string;
  let repo: string;
  let bin: string;
  const savedPath = process.env.PATH;
  const savedLimit = GIT_RUN_LIMITS.beforeChecksTimeoutMs;
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-adv-git-slow-')));
    repo = path.join(base, 'repo');
    fs.mkdirSync(repo);
    git(repo, ['init', '-q', '-b', 'main']);
    fs.writeFileSync(path.join(repo, 'a.txt'), 'inside\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '-m', 'Inside commit']);
    bin = path.join(base, 'bin');
    fs.mkdirSync(bin);
  });
  afterEach(() => {
    process.env.PATH = savedPath;
    GIT_RUN_LIMITS.beforeChecksTimeoutMs = savedLimit;
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  // A git that, asked with `argument` among its arguments, prints the sentinel and never ends (as a FIFO the checks
  // did not foresee would hold it); any other call is the real git's.
  for (const [what, argument] of [
    ['the lookup of the repository (rev-parse)', '--is-inside-work-tree'],
    ['the listing of the config includes', '--show-origin'],
  ]) {
    it(`stops ${what} at its own short limit and says so, with none of what git printed`, async () => {
      const script = `#!/bin/sh\nfor a in "$@"; do if [ "$a" = "${argument}" ]; then echo "${SENTINEL}" >&2; exec sleep 30; fi; done\nexec "${realGit}" "$@"\n`;
      fs.writeFileSync(path.join(bin, 'git'), script, { mode: 0o755 });
      process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
      GIT_RUN_LIMITS.beforeChecksTimeoutMs = 300;
      const outcome = await within(10_000, 'git_log', gitLog(await ReadBoundary.create(repo), {}));
      assert.equal(outcome.ok, false, outcome.output);
      assert.match(outcome.output, /git did not finish finding the repository within 0\.3 s \(run `git status` in the folder to see why\)/);
      assert.ok(!outcome.output.includes(SENTINEL), outcome.output);
      // The same call with the real git answers.
      process.env.PATH = savedPath;
      const answered = await gitLog(await ReadBoundary.create(repo), {});
      assert.equal(answered.ok, true, answered.output);
    });
  }
});

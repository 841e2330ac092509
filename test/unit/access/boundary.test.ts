import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import {
  isSameOrInside,
  CAN_OPEN_INSIDE_OPEN_DIRECTORY,
  listVerifiedDirectorySync,
  lstatVerifiedEntrySync,
  openChildFileSync,
  openListedDirectorySync,
  openVerified,
  openVerifiedSync,
  readHead,
  readHeadSync,
  ReadBoundary,
  RefusedPath,
} from '../../../server/src/access/boundary';
import { boundIgnoreRules, IGNORE_FILE_LIMITS } from '../../../server/src/search/ignoreRules';
import { ReadDenyRules } from '../../../server/src/access/secrets';
import { loadPolicy, mergePolicies, parsePolicy, PolicyError, POLICY_FILE } from '../../../server/src/access/policy';
import { writeTree } from '../../support/toolFixture';

/**
 * A sandbox with the folder under test (`repo`), a directory outside it, and
 * a sibling whose name starts with the folder's name.
 */
interface Sandbox {
  base: string;
  repo: string;
  outside: string;
  sibling: string;
}

function makeSandbox(): Sandbox {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-boundary-')));
  const sandbox = { base, repo: path.join(base, 'repo'), outside: path.join(base, 'outside'), sibling: path.join(base, 'repo-other') };
  writeTree(sandbox.repo, {
    'README.md': 'hello\n',
    'src/index.ts': 'export const x = 1;\n',
    'a b.txt': 'with a space\n',
    'a%20b.txt': 'literal percent\n',
    'notes.md': 'notes\n',
    '.env': 'TOKEN=inside-secret\n',
    '.env.example': 'TOKEN=\n',
    'config/.env.production': 'TOKEN=prod\n',
  });
  writeTree(sandbox.outside, { 'secret.txt': 'OUTSIDE-CONTENT\n', 'dir/inner.txt': 'OUTSIDE-INNER\n' });
  writeTree(sandbox.sibling, { 'secret.txt': 'SIBLING-CONTENT\n' });
  return sandbox;
}

function expectRefused(resolution: Awaited<ReturnType<ReadBoundary['resolve']>>, kind?: RefusedPath['kind']): RefusedPath {
  assert.equal(resolution.ok, false, `expected a refusal, got ${JSON.stringify(resolution)}`);
  const refused = resolution as RefusedPath;
  if (kind) assert.equal(refused.kind, kind, refused.message);
  return refused;
}

describe('read boundary', () => {
  let sandbox: Sandbox;
  let boundary: ReadBoundary;

  beforeEach(async () => {
    sandbox = makeSandbox();
    boundary = await ReadBoundary.create(sandbox.repo);
  });
  afterEach(() => {
    fs.rmSync(sandbox.base, { recursive: true, force: true });
  });

  it('resolves a relative path to its real path inside the folder', async () => {
    const resolved = await boundary.resolve('src/index.ts');
    assert.ok(resolved.ok);
    assert.equal(resolved.realPath, path.join(sandbox.repo, 'src', 'index.ts'));
    assert.equal(resolved.relativePath, 'src/index.ts');
    assert.equal(resolved.kind, 'file');
  });

  it('resolves an empty path and "." to the folder root', async () => {
    for (const requested of ['', '.', './']) {
      const resolved = await boundary.resolve(requested);
      assert.ok(resolved.ok);
      assert.equal(resolved.realPath, sandbox.repo);
      assert.equal(resolved.relativePath, '.');
      assert.equal(resolved.kind, 'directory');
    }
  });

  it('accepts an absolute path inside the folder', async () => {
    const resolved = await boundary.resolve(path.join(sandbox.repo, 'README.md'));
    assert.ok(resolved.ok);
    assert.equal(resolved.relativePath, 'README.md');
  });

  it('accepts a file: URI inside the folder and decodes its percent-escapes', async () => {
    const resolved = await boundary.resolve(pathToFileURL(path.join(sandbox.repo, 'a b.txt')).href);
    assert.ok(resolved.ok);
    assert.equal(resolved.relativePath, 'a b.txt');
  });

  it('treats percent-escapes in a plain path literally', async () => {
    const resolved = await boundary.resolve('a%20b.txt');
    assert.ok(resolved.ok);
    assert.equal(resolved.relativePath, 'a%20b.txt');
    expectRefused(await boundary.resolve('src%2Findex.ts'), 'not_found');
  });

  it('does not expand ~ to the home directory', async () => {
    expectRefused(await boundary.resolve('~/.bashrc'), 'not_found');
  });

  it('refuses a file: URI outside the folder and a URI naming a remote host', async () => {
    expectRefused(await boundary.resolve(pathToFileURL(path.join(sandbox.outside, 'secret.txt')).href), 'outside');
    expectRefused(await boundary.resolve('file://remote-host/share/x.txt'), 'invalid');
  });

  it('refuses .. chains that leave the folder and accepts ones that stay inside', async () => {
    expectRefused(await boundary.resolve('src/../../outside/secret.txt'), 'outside');
    expectRefused(await boundary.resolve('..'), 'outside');
    expectRefused(await boundary.resolve('src/../../../../../../etc/passwd'), 'outside');
    const inside = await boundary.resolve('src/../README.md');
    assert.ok(inside.ok);
    assert.equal(inside.relativePath, 'README.md');
  });

  it('does not treat a sibling folder that shares the name prefix as inside', async () => {
    expectRefused(await boundary.resolve(path.join(sandbox.sibling, 'secret.txt')), 'outside');
    expectRefused(await boundary.resolve('../repo-other/secret.txt'), 'outside');
    assert.equal(isSameOrInside('/x/repo', '/x/repo-other/a'), false);
    assert.equal(isSameOrInside('/x/repo', '/x/repo/..other'), true);
    assert.equal(isSameOrInside('/x/repo', '/x/repo'), true);
    assert.equal(isSameOrInside('/x/repo', '/x'), false);
  });

  it('refuses a committed symlink that points outside the folder', async () => {
    fs.symlinkSync(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.repo, 'docs.txt'));
    expectRefused(await boundary.resolve('docs.txt'), 'outside');
  });

  it('refuses a relative symlink that climbs out of the folder', async () => {
    fs.symlinkSync('../../outside/secret.txt', path.join(sandbox.repo, 'src', 'up.txt'));
    expectRefused(await boundary.resolve('src/up.txt'), 'outside');
  });

  it('refuses a path through a symlinked directory that points outside', async () => {
    fs.symlinkSync(sandbox.outside, path.join(sandbox.repo, 'vendor'));
    expectRefused(await boundary.resolve('vendor/dir/inner.txt'), 'outside');
    expectRefused(await boundary.resolve('vendor'), 'outside');
  });

  it('refuses a chain of symlinks that ends outside the folder', async () => {
    fs.symlinkSync(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.repo, 'hop2'));
    fs.symlinkSync('hop2', path.join(sandbox.repo, 'hop1'));
    expectRefused(await boundary.resolve('hop1'), 'outside');
  });

  it('follows a chain of symlinks that stays inside the folder', async () => {
    fs.symlinkSync('src/index.ts', path.join(sandbox.repo, 'hop2'));
    fs.symlinkSync('hop2', path.join(sandbox.repo, 'hop1'));
    fs.symlinkSync('src', path.join(sandbox.repo, 'srclink'));
    const resolved = await boundary.resolve('hop1');
    assert.ok(resolved.ok);
    assert.equal(resolved.relativePath, 'src/index.ts');
    const throughDirectory = await boundary.resolve('srclink/index.ts');
    assert.ok(throughDirectory.ok);
    assert.equal(throughDirectory.relativePath, 'src/index.ts');
  });

  it('refuses a symlink loop without hanging', async () => {
    fs.symlinkSync('loop-b', path.join(sandbox.repo, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(sandbox.repo, 'loop-b'));
    expectRefused(await boundary.resolve('loop-a'), 'loop');
    fs.symlinkSync('.', path.join(sandbox.repo, 'self'));
    const deep = await boundary.resolve('self/self/self/README.md');
    assert.ok(deep.ok, 'a self-link resolves to the real file');
    assert.equal(deep.relativePath, 'README.md');
  });

  it('answers the same for existing and missing paths outside the folder', async () => {
    const existing = expectRefused(await boundary.resolve(path.join(sandbox.outside, 'secret.txt')), 'outside');
    const missing = expectRefused(await boundary.resolve(path.join(sandbox.outside, 'nothing.txt')), 'outside');
    assert.equal(existing.message.replace('secret.txt', 'X'), missing.message.replace('nothing.txt', 'X'));
  });

  it('answers a dangling symlink that points out exactly like a symlink to an existing outside file', async () => {
    fs.symlinkSync(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.repo, 'link-existing'));
    fs.symlinkSync(path.join(sandbox.outside, 'missing.txt'), path.join(sandbox.repo, 'link-missing'));
    const existing = expectRefused(await boundary.resolve('link-existing'), 'outside');
    const missing = expectRefused(await boundary.resolve('link-missing'), 'outside');
    assert.equal(existing.message.replace('link-existing', 'X'), missing.message.replace('link-missing', 'X'));
  });

  it('says not found for a missing path inside the folder', async () => {
    expectRefused(await boundary.resolve('src/nope.ts'), 'not_found');
    expectRefused(await boundary.resolve('README.md/child'), 'not_found');
  });

  it('refuses a path containing a NUL byte', async () => {
    expectRefused(await boundary.resolve('README.md\0.png'), 'invalid');
    expectRefused(await boundary.resolve(`${pathToFileURL(path.join(sandbox.repo, 'README.md')).href}%00.png`), 'invalid');
  });

  it('refuses a very long path without throwing', async () => {
    expectRefused(await boundary.resolve('a/'.repeat(3000)), 'invalid');
    expectRefused(await boundary.resolve('x'.repeat(1000)), 'not_found');
  });

  it('uses the real path of a folder reached through a symlink and accepts absolute paths under either name', async () => {
    const alias = path.join(sandbox.base, 'alias');
    fs.symlinkSync(sandbox.repo, alias);
    const aliased = await ReadBoundary.create(alias);
    assert.equal(aliased.root, sandbox.repo);
    const viaAlias = await aliased.resolve(path.join(alias, 'README.md'));
    assert.ok(viaAlias.ok);
    assert.equal(viaAlias.realPath, path.join(sandbox.repo, 'README.md'));
    expectRefused(await aliased.resolve(path.join(alias, '..', 'outside', 'secret.txt')), 'outside');
  });

  it('refuses to be created for a path that is not a folder', async () => {
    await assert.rejects(ReadBoundary.create(path.join(sandbox.repo, 'README.md')));
    await assert.rejects(ReadBoundary.create(path.join(sandbox.base, 'missing')));
  });

  it('answers every path with blocking calls (resolveSync, for search threads) exactly as with awaited ones', async () => {
    fs.symlinkSync(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.repo, 'docs.txt'));
    fs.symlinkSync('../../outside/secret.txt', path.join(sandbox.repo, 'src', 'up.txt'));
    fs.symlinkSync(sandbox.outside, path.join(sandbox.repo, 'vendor'));
    fs.symlinkSync(path.join(sandbox.outside, 'missing.txt'), path.join(sandbox.repo, 'dangling-out'));
    fs.symlinkSync('src/index.ts', path.join(sandbox.repo, 'hop2'));
    fs.symlinkSync('hop2', path.join(sandbox.repo, 'hop1'));
    fs.symlinkSync('loop-b', path.join(sandbox.repo, 'loop-a'));
    fs.symlinkSync('loop-a', path.join(sandbox.repo, 'loop-b'));
    fs.symlinkSync('.env', path.join(sandbox.repo, 'env-link'));
    fs.symlinkSync('README.md', path.join(sandbox.repo, '.env.local'));
    fs.writeFileSync(path.join(sandbox.repo, '"quoted".txt'), 'quoted\n');
    const requests = [
      'src/index.ts', '', '.', 'src', path.join(sandbox.repo, 'README.md'), pathToFileURL(path.join(sandbox.repo, 'a b.txt')).href, 'a%20b.txt',
      '../outside/secret.txt', path.join(sandbox.outside, 'nothing.txt'), path.join(sandbox.sibling, 'secret.txt'), 'docs.txt', 'src/up.txt',
      'vendor/dir/inner.txt', 'vendor', 'dangling-out', 'hop1', 'loop-a', 'src/nope.ts', 'README.md/child', 'nul\0byte', 'x'.repeat(5000),
      '.env', 'env-link', '.env.local', 'config/.env.production', '.env.example', '"quoted".txt', '"src/index.ts"', '.git/config',
    ];
    for (const requested of requests) {
      assert.deepEqual(boundary.resolveSync(requested), await boundary.resolve(requested), requested.slice(0, 80));
    }
    // Not vacuous: some resolve and some are refused, for each reason.
    const kinds = new Set(requests.map((requested) => {
      const resolution = boundary.resolveSync(requested);
      return resolution.ok ? 'ok' : resolution.kind;
    }));
    assert.deepEqual([...kinds].sort(), ['denied', 'invalid', 'loop', 'not_found', 'ok', 'outside']);
  });

  describe('secrets', () => {
    it('refuses .env files at any depth but allows template-style ones', async () => {
      expectRefused(await boundary.resolve('.env'), 'denied');
      expectRefused(await boundary.resolve('config/.env.production'), 'denied');
      const example = await boundary.resolve('.env.example');
      assert.ok(example.ok);
    });

    it('refuses a symlink whose target is a secret', async () => {
      fs.symlinkSync('.env', path.join(sandbox.repo, 'notes.txt'));
      const refused = expectRefused(await boundary.resolve('notes.txt'), 'denied');
      assert.doesNotMatch(refused.message, /inside-secret/);
    });

    it('refuses a secret name even when it is a symlink to an ordinary file', async () => {
      fs.rmSync(path.join(sandbox.repo, '.env'));
      fs.symlinkSync('notes.md', path.join(sandbox.repo, '.env'));
      expectRefused(await boundary.resolve('.env'), 'denied');
    });

    it('refuses anything under .git, including through a symlink', async () => {
      writeTree(sandbox.repo, { '.git/config': '[remote "origin"]\n url = https://token@example.com\n' });
      expectRefused(await boundary.resolve('.git'), 'denied');
      expectRefused(await boundary.resolve('.git/config'), 'denied');
      fs.symlinkSync('.git', path.join(sandbox.repo, 'gitdir'));
      expectRefused(await boundary.resolve('gitdir/config'), 'denied');
    });

    it('lists the default secret names and leaves look-alikes and public keys readable', () => {
      const rules = new ReadDenyRules();
      const denied = [
        '.env', '.env.local', 'a/b/.env.development', '.ENV', 'certs/server.pem', 'tls.key', 'home/.ssh/id_rsa',
        'id_ed25519', '.npmrc', 'pkg/.netrc', '.pypirc', '.git', '.git/HEAD', 'sub/.git/config',
      ];
      const allowed = [
        '.env.example', 'app/.env.sample', '.env.template', '.env.dist', '.env.defaults', '.env.production.example',
        '.gitignore', '.github/workflows/ci.yml', 'environment.ts', 'keys.ts', 'monkey.keyboard', 'src/env.ts', 'pem.md',
        'id_rsa.pub', 'keys/id_ed25519.pub',
      ];
      for (const candidate of denied) assert.ok(rules.denialOf(candidate), `${candidate} should be denied`);
      for (const candidate of allowed) assert.equal(rules.denialOf(candidate), undefined, `${candidate} should be readable`);
    });

    it('adds policy globs to the defaults: directory forms, any-depth names, never re-allowing a secret', () => {
      const rules = new ReadDenyRules(['secrets/', '/private/**', '*.sqlite', '!.env']);
      assert.equal(rules.denialOf('secrets/a/b.txt')?.kind, 'policy');
      assert.equal(rules.denialOf('secrets')?.kind, 'policy');
      assert.equal(rules.denialOf('private/x.md')?.kind, 'policy');
      assert.equal(rules.denialOf('data/app.sqlite')?.kind, 'policy');
      assert.equal(rules.denialOf('.env')?.kind, 'secret');
      assert.equal(rules.denialOf('src/app.ts'), undefined);
    });

    it('applies policy denyRead globs to the real path and the requested path', async () => {
      writeTree(sandbox.repo, { 'internal/plan.md': 'PLAN\n' });
      fs.symlinkSync('internal/plan.md', path.join(sandbox.repo, 'plan-link.md'));
      const narrowed = await ReadBoundary.create(sandbox.repo, ['internal/**']);
      expectRefused(await narrowed.resolve('internal/plan.md'), 'denied');
      expectRefused(await narrowed.resolve('plan-link.md'), 'denied');
      expectRefused(await narrowed.resolve('internal'), 'denied');
    });
  });
});

describe('bounded reads of an opened file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-head-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function heads(file: string, maxBytes: number): Promise<[string, string]> {
    const handle = await fs.promises.open(file, 'r');
    const fd = fs.openSync(file, 'r');
    try {
      return [(await readHead(handle, maxBytes)).toString('latin1'), readHeadSync(fd, maxBytes).toString('latin1')];
    } finally {
      await handle.close();
      fs.closeSync(fd);
    }
  }

  it('reads a file shorter than the bound whole, and an empty one as nothing, synchronously or not', async () => {
    fs.writeFileSync(path.join(dir, 'short'), 'hello');
    fs.writeFileSync(path.join(dir, 'empty'), '');
    assert.deepEqual(await heads(path.join(dir, 'short'), 6), ['hello', 'hello']);
    assert.deepEqual(await heads(path.join(dir, 'empty'), 6), ['', '']);
  });

  it('stops at the bound however large the file is, so one byte over a limit tells a larger file from one at it', async () => {
    const huge = path.join(dir, 'sparse');
    fs.writeFileSync(huge, 'abcdef');
    fs.truncateSync(huge, 2 ** 32);
    assert.deepEqual(await heads(huge, 4), ['abcd', 'abcd']);
    fs.writeFileSync(path.join(dir, 'at-limit'), 'abcd');
    assert.deepEqual(await heads(path.join(dir, 'at-limit'), 4 + 1), ['abcd', 'abcd']);
  });
});

describe('read policy', () => {
  let base: string;
  let repo: string;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-policy-')));
    repo = path.join(base, 'repo');
    fs.mkdirSync(repo);
  });
  afterEach(() => {
    fs.rmSync(base, { recursive: true, force: true });
  });

  function writePolicy(text: string): void {
    writeTree(repo, { [POLICY_FILE]: text });
  }

  it('is empty without a policy file, plus the user extras', async () => {
    assert.deepEqual(await loadPolicy(repo), { denyTools: [], denyRead: [] });
    assert.deepEqual(await loadPolicy(repo, { denyRead: ['*.log'] }), { denyTools: [], denyRead: ['*.log'] });
  });

  it('merges the project file with the user extras without duplicates', async () => {
    writePolicy(JSON.stringify({ denyTools: ['grep_files'], denyRead: ['secrets/**', '*.log'] }));
    const policy = await loadPolicy(repo, { denyTools: ['grep_files', 'list_dir'], denyRead: ['*.log', 'private/'] });
    assert.deepEqual(policy, { denyTools: ['grep_files', 'list_dir'], denyRead: ['secrets/**', '*.log', 'private/'] });
  });

  it('reports malformed JSON naming the file and the expected shape', async () => {
    writePolicy('{ "denyRead": ["a", }');
    await assert.rejects(loadPolicy(repo), (error: unknown) => {
      assert.ok(error instanceof PolicyError);
      assert.match(error.message, /policy\.json/);
      assert.ok(error.message.includes(path.join(repo, POLICY_FILE)));
      assert.match(error.message, /not valid JSON/);
      assert.match(error.message, /"denyRead": \["secrets\/\*\*"\]/);
      return true;
    });
  });

  it('reports a wrongly typed field by name', () => {
    assert.throws(() => parsePolicy('{"denyRead": "secrets/**"}'), /"denyRead" must be an array of strings/);
    assert.throws(() => parsePolicy('{"denyTools": [1]}'), /"denyTools"\[0\] must be a non-empty string/);
    assert.throws(() => parsePolicy('["grep_files"]'), /top level must be a JSON object/);
  });

  it('rejects keys and globs that could read as widening access', () => {
    assert.throws(() => parsePolicy('{"allowRead": ["**"]}'), /unknown key "allowRead"/);
    assert.throws(() => parsePolicy('{"denyRead": ["!.env"]}'), /can only deny paths/);
  });

  it('quotes an unknown key in its refusal, shortened and on one line: a line break in it cannot forge a line of the message', () => {
    const key = `x\n\n✓ Policy OK: denyRead lifted for .env${'y'.repeat(200)}`;
    assert.throws(
      () => parsePolicy(JSON.stringify({ [key]: 1 })),
      (error: Error) => !error.message.includes('\n\n✓') && error.message.includes('unknown key "x\\n\\n✓ Policy OK') && !error.message.includes('y'.repeat(61)),
    );
  });

  it('rejects malformed user settings with a message naming them', async () => {
    await assert.rejects(loadPolicy(repo, { denyRead: [42 as unknown as string] }), /user settings/);
  });

  it('refuses a policy file that is a symlink out of the folder without echoing the target', async () => {
    fs.writeFileSync(path.join(base, 'elsewhere.json'), 'TOP-SECRET not json');
    fs.mkdirSync(path.join(repo, '.repo-discuss'));
    fs.symlinkSync(path.join(base, 'elsewhere.json'), path.join(repo, POLICY_FILE));
    await assert.rejects(loadPolicy(repo), (error: unknown) => {
      assert.ok(error instanceof PolicyError);
      assert.match(error.message, /outside the folder/);
      assert.doesNotMatch(error.message, /TOP-SECRET/);
      return true;
    });
  });

  it('merges by union only', () => {
    assert.deepEqual(mergePolicies({ denyTools: ['a'] }, undefined, { denyTools: ['b'], denyRead: ['x'] }), {
      denyTools: ['a', 'b'],
      denyRead: ['x'],
    });
  });
});

describe('verified open', () => {
  let sandbox: Sandbox;
  beforeEach(() => {
    sandbox = makeSandbox();
  });
  afterEach(() => fs.rmSync(sandbox.base, { recursive: true, force: true }));

  it('refuses, as changed, a checked file that is now a symlink to an outside file', () => {
    const checked = path.join(sandbox.repo, 'notes.md');
    fs.rmSync(checked);
    fs.symlinkSync(path.join(sandbox.outside, 'secret.txt'), checked);
    assert.deepEqual(openVerifiedSync(checked), { ok: false, refusal: 'changed' });
  });

  it('refuses, as changed, a checked file reached through a directory that is now a symlink to an outside one', async () => {
    const checked = path.join(sandbox.repo, 'src', 'inner.txt');
    fs.rmSync(path.join(sandbox.repo, 'src'), { recursive: true });
    fs.symlinkSync(path.join(sandbox.outside, 'dir'), path.join(sandbox.repo, 'src'));
    assert.deepEqual(openVerifiedSync(checked), { ok: false, refusal: 'changed' });
    const handle = await openVerified(checked);
    assert.deepEqual(handle, { ok: false, refusal: 'changed' });
  });

  it('answers at once that a FIFO is not a regular file, instead of waiting in open for a writer', () => {
    const fifo = path.join(sandbox.repo, 'pipe');
    execFileSync('mkfifo', [fifo]);
    assert.deepEqual(openVerifiedSync(fifo), { ok: false, refusal: 'not_regular' });
  });

  it('lists a checked directory, and refuses, as changed, one that is now a symlink to an outside directory', () => {
    assert.deepEqual(
      (listVerifiedDirectorySync(path.join(sandbox.repo, 'config')) as { entries: fs.Dirent[] }).entries.map((e) => e.name),
      ['.env.production'],
    );
    fs.rmSync(path.join(sandbox.repo, 'config'), { recursive: true });
    fs.symlinkSync(sandbox.outside, path.join(sandbox.repo, 'config'));
    assert.deepEqual(listVerifiedDirectorySync(path.join(sandbox.repo, 'config')), { ok: false, refusal: 'changed' });
  });

  it('states an entry of a checked directory, and refuses, as changed, an entry of one that is now a symlink to an outside directory', () => {
    const config = path.join(sandbox.repo, 'config');
    const found = lstatVerifiedEntrySync(config, '.env.production');
    assert.ok(found.ok && found.stats.isFile());
    assert.deepEqual(lstatVerifiedEntrySync(config, 'absent'), { ok: false, refusal: 'missing' });
    fs.rmSync(config, { recursive: true });
    fs.symlinkSync(sandbox.outside, config);
    assert.deepEqual(lstatVerifiedEntrySync(config, 'secret.txt'), { ok: false, refusal: 'changed' });
  });

  describe('a file opened inside its open directory', () => {
    /** Runs `use` with `repo/src` held open as a verified directory, as the walk holds it. */
    function insideSrc<T>(use: (fd: number) => T): T {
      const listed = openListedDirectorySync(path.join(sandbox.repo, 'src'));
      assert.ok(listed.ok);
      try {
        return use(listed.fd);
      } finally {
        fs.closeSync(listed.fd);
      }
    }
    beforeEach(function () {
      if (!CAN_OPEN_INSIDE_OPEN_DIRECTORY) this.skip();
      // The same name as a file of the outside directory (`outside/dir/inner.txt`).
      fs.writeFileSync(path.join(sandbox.repo, 'src', 'inner.txt'), 'INSIDE-INNER\n');
    });

    it('opens a regular file there, with its stats', () => {
      insideSrc((fd) => {
        const opened = openChildFileSync(fd, 'inner.txt');
        assert.ok(opened.ok && opened.stats.isFile());
        try {
          assert.equal(readHeadSync(opened.fd, 100).toString(), fs.readFileSync(path.join(sandbox.repo, 'src', 'inner.txt'), 'utf8'));
        } finally {
          fs.closeSync(opened.fd);
        }
      });
    });

    it('refuses, as changed, a name that is now a symlink to an outside file', () => {
      insideSrc((fd) => {
        fs.rmSync(path.join(sandbox.repo, 'src', 'inner.txt'));
        fs.symlinkSync(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.repo, 'src', 'inner.txt'));
        assert.deepEqual(openChildFileSync(fd, 'inner.txt'), { ok: false, refusal: 'changed' });
      });
    });

    it('reads from the directory it holds, not from an outside one swapped in at its path since', () => {
      insideSrc((fd) => {
        const src = path.join(sandbox.repo, 'src');
        fs.renameSync(src, path.join(sandbox.repo, 'moved'));
        fs.symlinkSync(path.join(sandbox.outside, 'dir'), src);
        // The swapped-in link leads to a directory holding a file of the same name.
        assert.ok(fs.existsSync(path.join(src, 'inner.txt')));
        const opened = openChildFileSync(fd, 'inner.txt');
        assert.ok(opened.ok);
        try {
          assert.equal(readHeadSync(opened.fd, 100).toString(), fs.readFileSync(path.join(sandbox.repo, 'moved', 'inner.txt'), 'utf8'));
        } finally {
          fs.closeSync(opened.fd);
        }
      });
    });

    it('answers at once that a FIFO is not a regular file', () => {
      execFileSync('mkfifo', [path.join(sandbox.repo, 'src', 'pipe')]);
      insideSrc((fd) => assert.deepEqual(openChildFileSync(fd, 'pipe'), { ok: false, refusal: 'not_regular' }));
    });
  });

  it('keeps the first rules of an oversized ignore file and says it was cut', () => {
    const text = Array.from({ length: IGNORE_FILE_LIMITS.maxRules + 5 }, (_, i) => `# note\nrule-${i}`).join('\n');
    const bounded = boundIgnoreRules(text);
    assert.equal(bounded.cut, true);
    assert.equal(bounded.text.split('\n').filter((line) => line.startsWith('rule-')).length, IGNORE_FILE_LIMITS.maxRules);
    assert.deepEqual(boundIgnoreRules('a\nb\n'), { text: 'a\nb\n', cut: false });
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { folderRelativePath, pathInFolder } from '../../../client/src/common/pathInFolder';

/**
 * Where a path a reply links to leads (client/src/common/pathInFolder.ts),
 * which decides what a click in the chat may open in the editor: only what
 * is inside the discussion's folder once links are followed.
 */
describe('a path a reply links to', () => {
  let base: string;
  let repo: string;
  let outside: string;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-open-')));
    repo = path.join(base, 'repo');
    outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), 'export {};\n');
    fs.writeFileSync(path.join(outside, 'id_ed25519'), 'PRIVATE KEY\n');
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('leads to a file inside the folder, and to a link inside that points inside, at its real path', async () => {
    fs.symlinkSync('app.ts', path.join(repo, 'src', 'alias.ts'));
    assert.deepEqual(await pathInFolder(repo, 'src/app.ts'), { ok: true, realPath: path.join(repo, 'src', 'app.ts') });
    assert.deepEqual(await pathInFolder(repo, 'src/alias.ts'), { ok: true, realPath: path.join(repo, 'src', 'app.ts') });
    assert.deepEqual(await pathInFolder(repo, 'src/../src/app.ts'), { ok: true, realPath: path.join(repo, 'src', 'app.ts') });
  });

  it('leads nowhere through a link in the folder to a directory or file outside it, though the name looks inside', async () => {
    fs.symlinkSync(outside, path.join(repo, 'docs'));
    fs.symlinkSync(path.join(outside, 'id_ed25519'), path.join(repo, 'key.txt'));
    assert.deepEqual(await pathInFolder(repo, 'docs/id_ed25519'), { ok: false, why: 'outside' });
    assert.deepEqual(await pathInFolder(repo, 'key.txt'), { ok: false, why: 'outside' });
  });

  it('leads nowhere for a name outside by itself, absolute or climbing, and says a missing one is missing', async () => {
    assert.deepEqual(await pathInFolder(repo, '../outside/id_ed25519'), { ok: false, why: 'outside' });
    assert.deepEqual(await pathInFolder(repo, path.join(outside, 'id_ed25519')), { ok: false, why: 'outside' });
    assert.deepEqual(await pathInFolder(repo, 'src/gone.ts'), { ok: false, why: 'missing' });
  });

  it('takes a name that only starts with two dots as a name inside', async () => {
    fs.writeFileSync(path.join(repo, '..notes'), 'x\n');
    assert.deepEqual(await pathInFolder(repo, '..notes'), { ok: true, realPath: path.join(repo, '..notes') });
  });
});

/** The chip an editor file or a code action's selection becomes (folderRelativePath): only a file inside the folder gets one. */
describe("an editor file's path in the discussion's folder", () => {
  const repo = path.join(path.sep, 'work', 'app');

  it('is folder-relative with / separators for a file inside, a name starting with two dots included', () => {
    assert.equal(folderRelativePath(repo, path.join(repo, 'src', 'cart.ts')), 'src/cart.ts');
    assert.equal(folderRelativePath(repo, path.join(repo, '..notes')), '..notes');
    assert.equal(folderRelativePath(repo, path.join(repo, '..', 'app', 'docs', 'a.md')), 'docs/a.md');
  });

  it('is none for the folder itself, its parent, a sibling folder sharing its prefix, or anything outside', () => {
    assert.equal(folderRelativePath(repo, repo), undefined);
    assert.equal(folderRelativePath(repo, path.dirname(repo)), undefined);
    assert.equal(folderRelativePath(repo, path.join(path.dirname(repo), 'app-other', 'a.ts')), undefined);
    assert.equal(folderRelativePath(repo, path.join(path.sep, 'etc', 'passwd')), undefined);
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { VERDICTS_ON_PATH_ITSELF } from '../../../server/src/search/ignoreRules';
import { walkVerdict } from '../../../server/src/search/walk';
import { writeTree } from '../../support/toolFixture';

/** The fs module the server's code calls through, whose functions a test may wrap. */
const nodeFs = createRequire(__filename)('node:fs') as Record<string, unknown>;

describe("the walk's verdict on one file, which the warm index takes for a file that appeared", () => {
  let base: string;
  let repo: string;
  let outside: string;
  const realLstat = fs.lstatSync;
  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-verdict-')));
    repo = path.join(base, 'repo');
    outside = path.join(base, 'outside');
    writeTree(repo, { 'swap/d/inside.txt': 'inside\n', 'swap/d/secret.txt': 'inside, same name\n' });
    writeTree(outside, { 'secret.txt': 'OUTSIDE\n', 'only-outside.txt': 'OUTSIDE\n' });
  });
  afterEach(() => {
    nodeFs.lstatSync = realLstat;
    fs.rmSync(base, { recursive: true, force: true });
  });

  /** Swaps `swap/d` for a link to the outside directory right after the verdict has checked it is a directory. */
  function swapAfterItsCheck(): void {
    const directory = path.join(repo, 'swap/d');
    let swapped = false;
    nodeFs.lstatSync = function (this: unknown, ...args: Parameters<typeof fs.lstatSync>) {
      const stats = (realLstat as (...a: unknown[]) => unknown).apply(fs, args);
      if (!swapped && args[0] === directory) {
        swapped = true;
        fs.renameSync(directory, path.join(base, 'parked'));
        fs.symlinkSync(outside, directory);
      }
      return stats;
    };
  }

  it('takes a file inside a directory the walk enters', async () => {
    const boundary = await ReadBoundary.create(repo, []);
    assert.equal((await walkVerdict(boundary, 'swap/d/inside.txt'))?.relativePath, 'swap/d/inside.txt');
  });

  it('leaves out an outside file reached through a directory swapped for a link after the directory was checked', async () => {
    const boundary = await ReadBoundary.create(repo, []);
    swapAfterItsCheck();
    assert.equal(await walkVerdict(boundary, 'swap/d/only-outside.txt'), undefined, 'a name only the outside directory holds');
    fs.unlinkSync(path.join(repo, 'swap/d'));
    fs.renameSync(path.join(base, 'parked'), path.join(repo, 'swap/d'));
    swapAfterItsCheck();
    assert.equal(await walkVerdict(boundary, 'swap/d/secret.txt'), undefined, 'a name both directories hold');
    assert.ok(fs.lstatSync(path.join(repo, 'swap/d')).isSymbolicLink(), 'the swap happened');
  });
});

describe("the walk's ignore verdicts on a directory a rule above leaves out and a deeper rule lets back in", () => {
  let repo: string;
  before(() => {
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-letback-')));
    writeTree(repo, { '.gitignore': 'target/\n*.log\n', 'keep/.gitignore': '!target/\n', 'keep/target/a.ts': '', 'keep/target/b.log': '', 'other/target/c.ts': '' });
  });
  after(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('judges each path itself with the ignore package installed, not through the old parent-first verdicts', () => {
    assert.equal(VERDICTS_ON_PATH_ITSELF, true);
  });

  it('takes a file appearing in the let-back-in directory, and still leaves out one a rule names and one in a directory left out', async () => {
    const boundary = await ReadBoundary.create(repo);
    assert.equal((await walkVerdict(boundary, 'keep/target/a.ts'))?.relativePath, 'keep/target/a.ts');
    assert.equal(await walkVerdict(boundary, 'keep/target/b.log'), undefined);
    assert.equal(await walkVerdict(boundary, 'other/target/c.ts'), undefined);
  });
});

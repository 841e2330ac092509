import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { discoveryReadFault } from '../../../server/src/git/discoveryReads';

describe('the files git opens while it finds the repository', () => {
  let base: string;
  beforeEach(function () {
    if (process.platform === 'win32') this.skip();
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-discovery-')));
  });
  afterEach(() => {
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  it('names the nearest FIFO or device when directories at several levels hold one, all of them looked at together', async () => {
    const inner = path.join(base, 'outer', 'inner');
    const folder = path.join(inner, 'src', 'deep');
    fs.mkdirSync(folder, { recursive: true });
    fs.mkdirSync(path.join(inner, '.git'));
    // Above: the outer directory as a bare repository, its HEAD a FIFO; nearer: the inner repository's config.
    execFileSync('mkfifo', [path.join(base, 'outer', 'HEAD')]);
    execFileSync('mkfifo', [path.join(inner, '.git', 'config')]);
    assert.equal(await discoveryReadFault(folder), path.join(inner, '.git', 'config'));
    fs.rmSync(path.join(inner, '.git', 'config'));
    assert.equal(await discoveryReadFault(folder), path.join(base, 'outer', 'HEAD'), 'with the nearer one gone, the one above');
    fs.rmSync(path.join(base, 'outer', 'HEAD'));
    assert.equal(await discoveryReadFault(folder), undefined);
  });

  it("names, of two in one directory, the one through its .git before the one of the directory taken as a bare repository", async () => {
    fs.mkdirSync(path.join(base, 'repo', '.git'), { recursive: true });
    execFileSync('mkfifo', [path.join(base, 'repo', 'HEAD')]);
    execFileSync('mkfifo', [path.join(base, 'repo', '.git', 'config')]);
    assert.equal(await discoveryReadFault(path.join(base, 'repo')), path.join(base, 'repo', '.git', 'config'));
  });

  it('names a device from its stat, through a link, and what a .git file leads to', async () => {
    const folder = path.join(base, 'work');
    const gitDirectory = path.join(base, 'elsewhere.git');
    fs.mkdirSync(folder);
    fs.mkdirSync(gitDirectory);
    fs.writeFileSync(path.join(folder, '.git'), `gitdir: ${gitDirectory}\n`);
    fs.symlinkSync('/dev/zero', path.join(gitDirectory, 'HEAD'));
    assert.equal(await discoveryReadFault(folder), path.join(gitDirectory, 'HEAD'));
  });
});

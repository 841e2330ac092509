import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { probeRipgrep } from '../../../server/src/search/ripgrep';

/**
 * A stand-in ripgrep: a shell script that notes every run in `runs.log` and
 * answers `--version` and the probe's debug listing as ripgrep 13 does, or
 * without the symlink line when `logsSymlinks` is false.
 */
function writeFakeRipgrep(dir: string, options: { logsSymlinks?: boolean; version?: string } = {}): { binary: string; runs: () => number } {
  const binary = path.join(dir, 'rg');
  const log = path.join(dir, 'runs.log');
  const symlinkLine = 'DEBUG|rg::subject|crates/core/subject.rs:74: ignoring ./link.txt: failed to pass subject filter: file type: symlink';
  fs.writeFileSync(
    binary,
    [
      '#!/bin/sh',
      `echo run >> '${log}'`,
      `if [ "$1" = "--version" ]; then echo '${options.version ?? 'ripgrep 13.0.0'}'; exit 0; fi`,
      options.logsSymlinks === false ? '' : `echo '${symlinkLine}' >&2`,
      'echo ./target.txt',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { binary, runs: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

describe("ripgrep's check, kept for the next process", function () {
  if (process.platform === 'win32') return;
  let dir: string;
  let probeDir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-fake-rg-')));
    probeDir = path.join(dir, 'probe');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a binary checked once is not run again by a later check: the kept verdict answers, with its version', async () => {
    const fake = writeFakeRipgrep(dir);
    assert.deepEqual(await probeRipgrep(fake.binary, probeDir), { path: fake.binary, version: 'ripgrep 13.0.0' });
    const ranFirst = fake.runs();
    assert.equal(ranFirst, 2, 'the first check runs --version and the debug listing');
    assert.deepEqual(await probeRipgrep(fake.binary, probeDir), { path: fake.binary, version: 'ripgrep 13.0.0' });
    assert.equal(fake.runs(), ranFirst, 'the second check ran nothing');
  });

  it('a binary rewritten since its verdict is checked again, and what it says now is what counts', async () => {
    const fake = writeFakeRipgrep(dir);
    assert.ok(await probeRipgrep(fake.binary, probeDir));
    const ranFirst = fake.runs();
    writeFakeRipgrep(dir, { logsSymlinks: false, version: 'ripgrep 14.1.0' });
    assert.equal(await probeRipgrep(fake.binary, probeDir), undefined, 'a ripgrep that no longer logs symlinks is refused');
    assert.ok(fake.runs() > ranFirst, 'the rewritten binary was run');
  });

  it('a refusal is kept as well: a ripgrep without the symlink log line stays refused without being run', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    assert.equal(await probeRipgrep(fake.binary, probeDir), undefined);
    const ranFirst = fake.runs();
    assert.equal(await probeRipgrep(fake.binary, probeDir), undefined);
    assert.equal(fake.runs(), ranFirst);
  });

  it('a garbled or forged verdicts file is no verdict: the binary is checked again and the file mended', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    fs.mkdirSync(probeDir, { mode: 0o700 });
    fs.writeFileSync(path.join(probeDir, 'verdicts.json'), '[{"binary": 1}, "{not json');
    assert.equal(await probeRipgrep(fake.binary, probeDir), undefined);
    assert.equal(fake.runs(), 2);
    // A verdict that names the binary but not this very file (another inode) holds nothing either.
    const stats = fs.statSync(fake.binary);
    const forged = [{ binary: fake.binary, dev: stats.dev, ino: stats.ino + 1, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, version: 'ripgrep 13.0.0', usable: true }];
    fs.writeFileSync(path.join(probeDir, 'verdicts.json'), JSON.stringify(forged));
    assert.equal(await probeRipgrep(fake.binary, probeDir), undefined, 'the forged verdict did not make a refused ripgrep usable');
    assert.equal(fake.runs(), 4);
    const kept = JSON.parse(fs.readFileSync(path.join(probeDir, 'verdicts.json'), 'utf8')) as Array<{ usable: boolean; ino: number }>;
    assert.equal(kept[0].ino, stats.ino);
    assert.equal(kept[0].usable, false);
  });

  it("a probe directory that is not this user's own is neither read nor written", async function () {
    if (typeof process.getuid !== 'function' || process.getuid() !== 0) this.skip(); // only root can hand a directory to another user
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    fs.mkdirSync(probeDir, { mode: 0o777 });
    const stats = fs.statSync(fake.binary);
    const planted = [{ binary: fake.binary, dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, version: 'ripgrep 13.0.0', usable: true }];
    fs.writeFileSync(path.join(probeDir, 'verdicts.json'), JSON.stringify(planted));
    fs.chownSync(probeDir, 65534, 65534);
    // Without a directory of its own the check trusts the log line (as on Windows) but reads no planted verdict: --version runs.
    assert.ok(await probeRipgrep(fake.binary, probeDir));
    assert.equal(fake.runs(), 1);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(probeDir, 'verdicts.json'), 'utf8')), planted, 'nothing was written there');
  });

  it('a binary that changed while it was checked is not vouched for: its verdict is not kept', async () => {
    const fake = writeFakeRipgrep(dir);
    // The stand-in rewrites itself on every run, as an update landing mid-check would.
    fs.appendFileSync(fake.binary, `echo '# touched' >> "$0"\n`);
    assert.ok(await probeRipgrep(fake.binary, probeDir));
    const ranFirst = fake.runs();
    assert.ok(await probeRipgrep(fake.binary, probeDir));
    assert.equal(fake.runs(), ranFirst * 2, 'checked again');
  });

  it('a check that did not finish (a ripgrep that fails) is not kept', async () => {
    const binary = path.join(dir, 'rg');
    fs.writeFileSync(binary, `#!/bin/sh\necho run >> '${path.join(dir, 'runs.log')}'\nexit 2\n`, { mode: 0o755 });
    assert.equal(await probeRipgrep(binary, probeDir), undefined);
    assert.equal(await probeRipgrep(binary, probeDir), undefined);
    assert.equal(fs.readFileSync(path.join(dir, 'runs.log'), 'utf8').split('\n').filter(Boolean).length, 2, 'run again each time');
  });
});

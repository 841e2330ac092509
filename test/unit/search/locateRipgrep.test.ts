import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findOnPath, isNativeExecutable, isRipgrepItself, probeRipgrep, type ProbeOptions } from '../../../server/src/search/locateRipgrep';
import { VERDICTS_FILE } from '../../../server/src/search/probeVerdicts';

const SYMLINK_LINE = 'DEBUG|rg::subject|crates/core/subject.rs:74: ignoring ./link.txt: failed to pass subject filter: file type: symlink';

/**
 * A stand-in ripgrep: a shell script that notes every run in `runs.log` and
 * answers `--version` and the probe's debug listing as ripgrep 13 does, or
 * without the symlink line when `logsSymlinks` is false, or with it only
 * under `--no-ignore` (as ripgrep does when an ignore file above names the link).
 */
function writeFakeRipgrep(dir: string, options: { logsSymlinks?: boolean | 'without ignore rules'; version?: string } = {}): { binary: string; runs: () => number } {
  const logLine =
    options.logsSymlinks === false ? '' : options.logsSymlinks === 'without ignore rules' ? `case " $* " in *" --no-ignore "*) echo '${SYMLINK_LINE}' >&2;; esac` : `echo '${SYMLINK_LINE}' >&2`;
  const binary = path.join(dir, 'rg');
  const log = path.join(dir, 'runs.log');
  fs.writeFileSync(
    binary,
    [
      '#!/bin/sh',
      `echo run >> '${log}'`,
      `if [ "$1" = "--version" ]; then echo '${options.version ?? 'ripgrep 13.0.0'}'; exit 0; fi`,
      logLine,
      'echo ./target.txt',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { binary, runs: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

/** A verdict naming `binary` as it is now, as a planted or forged file would. */
function verdictOn(binary: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const stats = fs.statSync(binary);
  return { binary, dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, version: 'ripgrep 13.0.0', usable: true, ...fields };
}

describe("ripgrep's check, kept for the next process", function () {
  if (process.platform === 'win32') return;
  let dir: string;
  let probeDir: string;
  /** The stand-ins are scripts: these tests let their verdicts be kept, as a native ripgrep's are. */
  let options: ProbeOptions;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-fake-rg-')));
    probeDir = path.join(dir, 'probe');
    options = { directory: probeDir, keepsVerdictOf: async () => true };
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a binary checked once is not run again by a later check: the kept verdict answers, with its version', async () => {
    const fake = writeFakeRipgrep(dir);
    assert.deepEqual(await probeRipgrep(fake.binary, options), { path: fake.binary, version: 'ripgrep 13.0.0' });
    const ranFirst = fake.runs();
    assert.equal(ranFirst, 2, 'the first check runs --version and the debug listing');
    assert.deepEqual(await probeRipgrep(fake.binary, options), { path: fake.binary, version: 'ripgrep 13.0.0' });
    assert.equal(fake.runs(), ranFirst, 'the second check ran nothing');
  });

  it('a binary rewritten since its verdict is checked again, and what it says now is what counts', async () => {
    const fake = writeFakeRipgrep(dir);
    assert.ok(await probeRipgrep(fake.binary, options));
    const ranFirst = fake.runs();
    writeFakeRipgrep(dir, { logsSymlinks: false, version: 'ripgrep 14.1.0' });
    assert.equal(await probeRipgrep(fake.binary, options), undefined, 'a ripgrep that no longer logs symlinks is refused');
    assert.ok(fake.runs() > ranFirst, 'the rewritten binary was run');
  });

  it('a refusal is kept as well: a ripgrep without the symlink log line stays refused without being run', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    assert.equal(await probeRipgrep(fake.binary, options), undefined);
    const ranFirst = fake.runs();
    assert.equal(await probeRipgrep(fake.binary, options), undefined);
    assert.equal(fake.runs(), ranFirst);
  });

  it('a garbled or forged verdicts file is no verdict: the binary is checked again and the file mended', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    fs.mkdirSync(probeDir, { mode: 0o700 });
    const verdicts = path.join(probeDir, VERDICTS_FILE);
    fs.writeFileSync(verdicts, '[{"binary": 1}, "{not json');
    assert.equal(await probeRipgrep(fake.binary, options), undefined);
    assert.equal(fake.runs(), 2);
    // JSON, but not a list of verdicts.
    fs.writeFileSync(verdicts, JSON.stringify({ [fake.binary]: verdictOn(fake.binary) }));
    assert.equal(await probeRipgrep(fake.binary, options), undefined);
    assert.equal(fake.runs(), 4);
    // Well-formed, naming this binary, but a field of the wrong type: no verdict.
    fs.writeFileSync(verdicts, JSON.stringify([verdictOn(fake.binary, { usable: 'yes' })]));
    assert.equal(await probeRipgrep(fake.binary, options), undefined);
    assert.equal(fake.runs(), 6);
    // A verdict that names the binary but not this very file (another inode) holds nothing either.
    const forged = verdictOn(fake.binary);
    fs.writeFileSync(verdicts, JSON.stringify([{ ...forged, ino: (forged.ino as number) + 1 }]));
    assert.equal(await probeRipgrep(fake.binary, options), undefined, 'the forged verdict did not make a refused ripgrep usable');
    assert.equal(fake.runs(), 8);
    const kept = JSON.parse(fs.readFileSync(verdicts, 'utf8')) as Array<{ usable: boolean; ino: number }>;
    assert.equal(kept[0].ino, forged.ino);
    assert.equal(kept[0].usable, false);
  });

  it('a verdicts file that is a link is not followed: a verdict planted elsewhere does not count', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    fs.mkdirSync(probeDir, { mode: 0o700 });
    const planted = path.join(dir, 'planted.json');
    fs.writeFileSync(planted, JSON.stringify([verdictOn(fake.binary)]));
    fs.symlinkSync(planted, path.join(probeDir, VERDICTS_FILE));
    assert.equal(await probeRipgrep(fake.binary, options), undefined, 'checked, and refused');
    assert.equal(fake.runs(), 2);
  });

  it('a probe directory that is a link, even to a directory of ours, is not used: nothing is read from it or kept in it', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    const real = path.join(dir, 'real');
    fs.mkdirSync(real, { mode: 0o700 });
    fs.writeFileSync(path.join(real, VERDICTS_FILE), JSON.stringify([verdictOn(fake.binary)]));
    fs.symlinkSync(real, probeDir);
    assert.equal(await probeRipgrep(fake.binary, options), undefined, 'checked, and refused');
    assert.equal(fake.runs(), 2, 'the check still ran both runs, in a directory of its own');
    assert.deepEqual(fs.readdirSync(real), [VERDICTS_FILE], 'nothing was written there');
  });

  it('a probe directory others may write to is not used for verdicts, and the check is still made', async () => {
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    fs.mkdirSync(probeDir);
    fs.chmodSync(probeDir, 0o777);
    fs.writeFileSync(path.join(probeDir, VERDICTS_FILE), JSON.stringify([verdictOn(fake.binary)]));
    assert.equal(await probeRipgrep(fake.binary, options), undefined, 'the planted verdict did not make it usable');
    assert.equal(fake.runs(), 2);
  });

  it("a probe directory made first by another user is neither read nor written, and the ripgrep is still checked in a fresh one", async function () {
    if (typeof process.getuid !== 'function' || process.getuid() !== 0) this.skip(); // only root can hand a directory to another user
    const fake = writeFakeRipgrep(dir, { logsSymlinks: false });
    fs.mkdirSync(probeDir, { mode: 0o700 });
    const planted = [verdictOn(fake.binary)];
    fs.writeFileSync(path.join(probeDir, VERDICTS_FILE), JSON.stringify(planted));
    fs.chownSync(probeDir, 65534, 65534);
    assert.equal(await probeRipgrep(fake.binary, options), undefined, 'a ripgrep that does not log symlinks is refused, not taken on trust');
    assert.equal(fake.runs(), 2);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(probeDir, VERDICTS_FILE), 'utf8')), planted, 'nothing was written there');
  });

  it("an ignore file above the probe's directory does not hide the link from the check, nor make a good ripgrep refused for good", async () => {
    // Anyone may write /tmp/.ignore; ripgrep reads ignore files of the folders above the one it lists.
    const fake = writeFakeRipgrep(dir, { logsSymlinks: 'without ignore rules' }).binary;
    assert.ok(await probeRipgrep(fake, options));
  });

  it('a listing that does not show the file beside the link is not kept: the next process checks again', async () => {
    const fake = path.join(dir, 'rg');
    const log = path.join(dir, 'runs.log');
    fs.writeFileSync(fake, `#!/bin/sh\necho run >> '${log}'\nif [ "$1" = "--version" ]; then echo 'ripgrep 13.0.0'; fi\nexit 0\n`, { mode: 0o755 });
    assert.equal(await probeRipgrep(fake, options), undefined);
    assert.equal(await probeRipgrep(fake, options), undefined);
    assert.equal(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length, 4, 'both checks ran both runs');
  });

  it('a binary that changed while it was checked is checked again by the next process: its verdict is not kept', async () => {
    const fake = writeFakeRipgrep(dir);
    // The stand-in rewrites itself on every run, as an update landing mid-check would.
    fs.appendFileSync(fake.binary, `echo '# touched' >> "$0"\n`);
    assert.ok(await probeRipgrep(fake.binary, options));
    const ranFirst = fake.runs();
    assert.ok(await probeRipgrep(fake.binary, options));
    assert.equal(fake.runs(), ranFirst * 2, 'checked again');
  });

  it('a check that did not finish (a ripgrep that fails) is not kept', async () => {
    const binary = path.join(dir, 'rg');
    fs.writeFileSync(binary, `#!/bin/sh\necho run >> '${path.join(dir, 'runs.log')}'\nexit 2\n`, { mode: 0o755 });
    assert.equal(await probeRipgrep(binary, options), undefined);
    assert.equal(await probeRipgrep(binary, options), undefined);
    assert.equal(fs.readFileSync(path.join(dir, 'runs.log'), 'utf8').split('\n').filter(Boolean).length, 2, 'run again each time');
  });

  it('something else where the probe link belongs (a plain file, a link elsewhere) is replaced by the link, so checks can be made again', async () => {
    const fake = writeFakeRipgrep(dir);
    fs.mkdirSync(probeDir, { mode: 0o700 });
    fs.writeFileSync(path.join(probeDir, 'link.txt'), 'not a link\n');
    assert.ok(await probeRipgrep(fake.binary, options));
    assert.equal(fs.readlinkSync(path.join(probeDir, 'link.txt')), 'target.txt');
    fs.rmSync(path.join(probeDir, 'link.txt'));
    fs.symlinkSync('/', path.join(probeDir, 'link.txt'));
    fs.rmSync(path.join(probeDir, VERDICTS_FILE));
    assert.ok(await probeRipgrep(fake.binary, options));
    assert.equal(fs.readlinkSync(path.join(probeDir, 'link.txt')), 'target.txt', 'a link to / is not what ripgrep is shown');
  });

  it('a FIFO where the binary was is not a native binary, and judging it does not wait for a writer', async () => {
    const fifo = path.join(dir, 'rg-fifo');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    assert.equal(await isNativeExecutable(fifo), false);
  });

  it('by default a launcher script is checked every time: the ripgrep it starts may change while it stays the same file', async () => {
    const fake = writeFakeRipgrep(dir);
    assert.ok(await probeRipgrep(fake.binary, { directory: probeDir }));
    assert.ok(await probeRipgrep(fake.binary, { directory: probeDir }));
    assert.equal(fake.runs(), 4);
    assert.equal(await isNativeExecutable(fake.binary), false);
    assert.equal(await isNativeExecutable(process.execPath), true, 'node itself is a native binary');
  });

  it('by default a native launcher is checked every time as well: only a native binary named rg, its links followed, keeps a verdict', async () => {
    const elf = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]);
    fs.mkdirSync(path.join(dir, 'ripgrep'));
    fs.writeFileSync(path.join(dir, 'ripgrep', 'rg'), elf, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'mise'), elf, { mode: 0o755 });
    fs.mkdirSync(path.join(dir, 'shims'));
    fs.symlinkSync('../mise', path.join(dir, 'shims', 'rg'));
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.symlinkSync('../ripgrep/rg', path.join(dir, 'bin', 'rg'));
    assert.equal(await isRipgrepItself(path.join(dir, 'shims', 'rg')), false, "mise's shim: a link named rg to another program");
    assert.equal(await isRipgrepItself(path.join(dir, 'mise')), false);
    assert.equal(await isRipgrepItself(path.join(dir, 'bin', 'rg')), true, 'a link to ripgrep itself, as Homebrew makes');
    assert.equal(await isRipgrepItself(path.join(dir, 'ripgrep', 'rg')), true);
    assert.equal(await isRipgrepItself(writeFakeRipgrep(dir).binary), false, 'a script named rg');
    assert.equal(await isRipgrepItself(path.join(dir, 'missing', 'rg')), false);
  });

  it('many verdicts keep the newest eight, and two checks at once leave a file that reads', async () => {
    const binaries = Array.from({ length: 10 }, (_, i) => {
      const sub = path.join(dir, `rg${i}`);
      fs.mkdirSync(sub);
      return writeFakeRipgrep(sub).binary;
    });
    await Promise.all(binaries.slice(0, 2).map((binary) => probeRipgrep(binary, options)));
    assert.ok(Array.isArray(JSON.parse(fs.readFileSync(path.join(probeDir, VERDICTS_FILE), 'utf8'))), 'two writers at once left a whole file');
    for (const binary of binaries.slice(2)) await probeRipgrep(binary, options);
    const kept = JSON.parse(fs.readFileSync(path.join(probeDir, VERDICTS_FILE), 'utf8')) as Array<{ binary: string }>;
    assert.deepEqual(kept.map((v) => v.binary), binaries.slice(2).reverse());
    assert.deepEqual(fs.readdirSync(probeDir).filter((name) => name.startsWith(`${VERDICTS_FILE}.`)), [], 'no temporary file left');
  });
});

describe('rg on PATH', () => {
  it('a relative PATH entry is never searched: an rg in the working directory (which may be the repository) does not run', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-path-rg-')));
    const cwd = process.cwd();
    try {
      const fake = writeFakeRipgrep(dir);
      process.chdir(dir);
      assert.equal(await findOnPath({ PATH: `.${path.delimiter}bin${path.delimiter}` }), undefined);
      assert.equal(await findOnPath({ PATH: dir }), fake.binary, 'the same folder named absolutely is searched');
    } finally {
      process.chdir(cwd);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The second mocha pass of `npm test`: the suites that search with the
 * server's default engine (ripgrep when `rg` is on PATH) run again with `rg`
 * off the PATH, so the pure-Node walk answers every one of their searches.
 * With ripgrep installed the walk was only reached by the tests that ask for
 * it, and a gap in it hid behind ripgrep: it echoed a megabyte pattern back
 * to the model, which ripgrep, unable to start with such an argument, never did.
 *
 * The suites that pick each engine themselves (escapes, expensive) already
 * run both in the first pass and are left out; in this pass their ripgrep
 * variants, and those of search.test, are skipped (NO_RIPGREP_ENV).
 *
 *   node out/test/support/withoutRipgrep.js                 (after `npm run build`)
 *   node out/test/support/withoutRipgrep.js out/test/unit/search/search.test.js   (only these)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NO_RIPGREP_ENV } from './toolFixture';

const REPO_ROOT = path.resolve(__dirname, '../../..');

const SPECS = [
  'unit/search/search.test.js',
  'unit/read/tools.test.js',
  'unit/access/boundary.test.js',
  'integration/server.test.js',
  'adversarial/mutations.test.js',
  'adversarial/injection.test.js',
  'adversarial/crashes.test.js',
  'adversarial/faultyModels.test.js',
  'adversarial/soak.test.js',
].map((spec) => path.join(REPO_ROOT, 'out', 'test', spec));

const RIPGREP_NAMES = new Set(['rg', 'rg.exe']);

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A directory of links to every program on PATH but ripgrep, first one of a
 * name winning as in a PATH lookup. rg shares /usr/bin with the node, git and
 * sh the suites start, so dropping its directory from PATH would not do.
 */
function pathWithoutRipgrep(): string {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-no-rg-'));
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const link = path.join(bin, name);
      if (RIPGREP_NAMES.has(name) || fs.existsSync(link)) continue;
      const target = path.join(dir, name);
      if (isExecutableFile(target)) fs.symlinkSync(target, link);
    }
  }
  return bin;
}

function main(): number {
  const specs = process.argv.length > 2 ? process.argv.slice(2) : SPECS;
  const bin = pathWithoutRipgrep();
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: bin,
      [NO_RIPGREP_ENV]: '1',
      // The first pass's figures stay where docs/reliability.md reads them.
      ADVERSARIAL_FIGURES: path.join(REPO_ROOT, 'out', 'adversarial-figures-no-ripgrep.json'),
    };
    console.log(`\nmocha without ripgrep: rg hidden from PATH, every search on the pure-Node walk (${specs.length} suites)\n`);
    const mocha = require.resolve('mocha/bin/mocha.js');
    const args = [
      mocha,
      '--no-config',
      // A search or symbol thread left idle by a suite must not keep the run from ending.
      '--exit',
      '--enable-source-maps',
      '--timeout', '20000',
      '--reporter', path.join(__dirname, 'summaryReporter.js'),
      '--reporter-option', 'label=mocha without ripgrep',
      ...specs,
    ];
    const result = spawnSync(process.execPath, args, { cwd: REPO_ROOT, env, stdio: 'inherit' });
    return result.status ?? 1;
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
}

process.exitCode = main();

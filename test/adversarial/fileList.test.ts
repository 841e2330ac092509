/**
 * `discuss/files`, the panel's `@` completion: a query typed by a person (or
 * sent by any client) walks the folder. The answer is a list of names, and a
 * name is already a leak: whatever the query (`..`, absolute paths, globs,
 * 10 KB strings, control characters), it must never name a secret, a
 * policy-denied or gitignored file, or anything reached through a link out of
 * the folder, and it must stay bounded.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FilesRequest } from '../../shared/protocol';
import { SECRET_SAMPLES } from '../support/secretSamples';
import { Lab, SEARCH_ENGINES, SENTINEL, SENTINEL_CORE, assertNoLeak, recordFigures, scanForLeaks } from './lab';

/** The most names one answer may hold (server/src/read/fileList.ts). */
const MAX_NAMES = 50;

/** Planted hidden files whose names carry the sentinel, one per way of being hidden. */
function plantHiddenNames(lab: Lab): void {
  lab.write('.gitignore', 'ignored/\n*.generated.ts\n');
  lab.write(`ignored/${SENTINEL}-ignored.ts`, 'ignored\n');
  lab.write(`src/${SENTINEL}.generated.ts`, 'ignored by a pattern\n');
  lab.write(`private/${SENTINEL}-denied.ts`, 'denied by the policy\n');
  lab.write(`certs/${SENTINEL}.pem`, 'a secret by its name\n');
  lab.write(`config/.env.${SENTINEL}`, 'a secret by its name\n');
  lab.write(`.git/${SENTINEL}-inside-git.ts`, 'the git directory\n');
  // Enough ordinary files that a broad query meets the cap on names.
  for (let i = 0; i < 120; i++) lab.write(`bulk/module${i}.ts`, `export const m${i} = ${i};\n`);
}

/** Where a listed name may not lead: the secrets, the denied and ignored files, the git directory. */
function hiddenReason(realRelative: string): string | undefined {
  const secrets = new Set([
    ...SECRET_SAMPLES.map((s) => s.path),
    '.env', '.env.local', 'config/.env.production', '.npmrc', '.netrc', '.pypirc', 'id_rsa', 'keys/id_ed25519', 'certs/server.pem', 'certs/private.key',
  ]);
  if (secrets.has(realRelative) || realRelative.startsWith('certs/') || realRelative.startsWith('config/.env')) return 'a secret';
  if (realRelative.startsWith('private/')) return 'denied by the policy';
  if (realRelative.startsWith('ignored/') || realRelative.endsWith('.generated.ts')) return 'gitignored';
  if (realRelative === '.git' || realRelative.startsWith('.git/')) return 'in .git';
  return undefined;
}

function hostileQueries(lab: Lab): Array<[string, string]> {
  const long = (unit: string) => unit.repeat(Math.ceil(10_240 / unit.length)).slice(0, 10_240);
  return [
    ['empty', ''],
    ['dot-dot', '..'],
    ['dot-dot slash', '../'],
    ['up to the outside', '../outside/secret'],
    ['far up', '../../../../etc/passwd'],
    ['absolute outside', path.join(lab.outside, 'secret.txt')],
    ['absolute outside dir', `${lab.outside}/`],
    ['absolute root', '/'],
    ['absolute etc', '/etc/hostname'],
    ['home', '~/.ssh/id_rsa'],
    ['file URI', `file://${lab.outside}/secret.txt`],
    ['backslashes up', '..\\outside\\secret.txt'],
    ['drive letter', 'C:\\Windows\\win.ini'],
    ['through a link dir', 'link-dir/secret'],
    ['through a chained link', 'chain-dir-1/'],
    ['through link-up', 'link-up/outside/'],
    ['through link-root', 'link-root/etc/passwd'],
    ['through proc', 'link-proc-root/etc/'],
    ['outside name', 'sentinel-name'],
    ['outside name, fuzzy', 'snt'],
    ['secret word', 'env'],
    ['secret file', '.env'],
    ['pem', 'pem'],
    ['key', 'key'],
    ['id_rsa', 'id_rsa'],
    ['git config', '.git/config'],
    ['git', 'git'],
    ['policy-denied', 'private/'],
    ['denied name', 'denied'],
    ['gitignored dir', 'ignored/'],
    ['gitignored name', 'generated'],
    ['globstar', '**'],
    ['glob all', '**/*'],
    ['star', '*'],
    ['braces', '{.env,private/*,../outside/*}'],
    ['extglob', '+(a|b|c)*'],
    ['negation', '!(x)'],
    ['class', '[a-z]'],
    ['open class', '['],
    ['question marks', '????'],
    ['10 KB of letters', long('a')],
    ['10 KB of dot-dot', long('../')],
    ['10 KB of stars', long('*')],
    ['10 KB of braces', long('{a,b}')],
    ['10 KB mixed', long('../**/[!x]{a,b}\\\u0000')],
    ['NUL', '\u0000'],
    ['NUL in a name', 'env\u0000.ts'],
    ['escape sequence', '\u001b[31menv\u001b[0m'],
    ['newlines', 'app\r\n../outside'],
    ['bidi override', '\u202eenv'],
    ['control run', Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('')],
    ['lone surrogate', '\ud800env'],
  ];
}

describe('adversarial: discuss/files never names what is hidden, whatever the query', function () {
  this.timeout(120_000);

  for (const config of SEARCH_ENGINES) {
    (config.available ? it : it.skip)(`no secret, denied, ignored, .git or linked-out name in any answer, each bounded, and the server still answers (${config.name})`, async () => {
      const lab = await Lab.create({ build: plantHiddenNames });
      try {
        const s = await lab.server(config.init, config.env(lab));
        const id = await lab.open(s);
        const queries = hostileQueries(lab);
        const answers: Array<[string, string]> = [];
        const problems: string[] = [];
        let names = 0;
        let largest = 0;
        let refused = 0;
        for (const [label, query] of queries) {
          let files: string[];
          try {
            files = (await s.request<FilesRequest.Result>('discuss/files', { discussionId: id, query })).files;
          } catch (error) {
            // A refusal is a fine answer; it must not carry a name either.
            refused += 1;
            answers.push([`refusal to ${label}`, String((error as Error).message)]);
            continue;
          }
          answers.push([`answer to ${label}`, JSON.stringify(files)]);
          names += files.length;
          largest = Math.max(largest, files.length);
          if (!Array.isArray(files) || files.length > MAX_NAMES) problems.push(`${label}: ${files.length} names`);
          for (const file of files) {
            if (typeof file !== 'string' || file.length > 4096) {
              problems.push(`${label}: a name that is not a bounded string`);
              continue;
            }
            if (file.includes(SENTINEL_CORE)) problems.push(`${label}: names ${JSON.stringify(file)}`);
            const absolute = path.resolve(lab.repo, file);
            if (path.isAbsolute(file) || !absolute.startsWith(`${lab.repo}${path.sep}`)) {
              problems.push(`${label}: ${JSON.stringify(file)} is not inside the folder`);
              continue;
            }
            let real: string;
            try {
              real = fs.realpathSync(absolute);
            } catch {
              problems.push(`${label}: ${JSON.stringify(file)} leads nowhere (a dangling or looping link)`);
              continue;
            }
            if (!real.startsWith(`${lab.repo}${path.sep}`)) {
              problems.push(`${label}: ${JSON.stringify(file)} leads out of the folder, to ${real}`);
              continue;
            }
            const why = hiddenReason(path.relative(lab.repo, real).split(path.sep).join('/'));
            if (why) problems.push(`${label}: ${JSON.stringify(file)} leads to a file that is ${why}`);
          }
        }
        assert.deepEqual(problems, []);
        assert.equal(largest, MAX_NAMES, 'a broad query meets the cap, and goes no further');
        assertNoLeak(scanForLeaks(lab, [s], answers));

        // A control: the list does list the folder's ordinary files, and the server still answers.
        const control = (await s.request<FilesRequest.Result>('discuss/files', { discussionId: id, query: 'app' })).files;
        assert.ok(control.includes('src/app.ts'), control.join(', '));
        recordFigures(`fileList-${config.tag}`, {
          engine: config.name,
          hostileQueries: queries.length,
          refused,
          namesReturned: names,
          largestAnswer: largest,
          maxNamesAllowed: MAX_NAMES,
          problems: problems.length,
          leakedBytes: 0,
        });
      } finally {
        await lab.dispose();
      }
    });
  }
});

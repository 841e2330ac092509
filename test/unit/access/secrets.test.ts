import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Minimatch } from 'minimatch';
import { DEFAULT_SECRET_RULES, ReadDenyRules, SECRET_NAME_GLOBS } from '../../../server/src/access/secrets';
import { SearchEngine, SearchOptions } from '../../../server/src/search/searchEngine';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { READABLE_LOOK_ALIKES, SECRET_SAMPLES } from '../../support/secretSamples';
import { expectFailure, expectOk, NO_POLICY, ripgrepOnPath, SECRET_MARKER, writeTree } from '../../support/toolFixture';

const shownRule = (rule: (typeof DEFAULT_SECRET_RULES)[number]) => (rule.parent ? `${rule.parent}/${rule.rule}` : rule.rule);
const DOC = path.join(__dirname, '..', '..', '..', '..', 'docs', 'secrets.md');

describe('default secret rules', () => {
  it('are listed in docs/secrets.md, rule for rule and reason for reason, in the same order', () => {
    const rows = fs
      .readFileSync(DOC, 'utf8')
      .split('\n')
      .map((line) => /^\| `([^`]+)` \| (.+) \|$/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => ({ rule: match[1], reason: match[2] }));
    assert.deepEqual(rows, DEFAULT_SECRET_RULES.map((rule) => ({ rule: shownRule(rule), reason: rule.reason })));
  });

  it('each have a planted sample, and refuse it by that rule', () => {
    const rules = new ReadDenyRules();
    assert.deepEqual(new Set(SECRET_SAMPLES.map((sample) => sample.rule)), new Set(DEFAULT_SECRET_RULES.map(shownRule)));
    for (const sample of SECRET_SAMPLES) {
      assert.deepEqual(rules.denialOf(sample.path), { kind: 'secret', rule: sample.rule }, sample.path);
      assert.deepEqual(rules.entryDenialOf(sample.path), { kind: 'secret', rule: sample.rule }, `${sample.path} met in a walk`);
      // Case-insensitive, at any depth, and a directory so named hides what is under it.
      assert.ok(rules.denialOf(`deep/er/${sample.path.toUpperCase()}`), `${sample.path} upper-cased and nested`);
      assert.ok(rules.denialOf(`${sample.path}/inside.txt`), `under ${sample.path}`);
    }
  });

  it('leave templates, public keys and look-alikes in other directories readable', () => {
    const rules = new ReadDenyRules();
    for (const name of READABLE_LOOK_ALIKES) {
      assert.equal(rules.denialOf(name), undefined, name);
      assert.equal(rules.entryDenialOf(name), undefined, `${name} met in a walk`);
    }
  });

  it('hand ripgrep only globs that match no readable name, so both engines show the same files', () => {
    const globs = SECRET_NAME_GLOBS.map((glob) => new Minimatch(glob, { dot: true, nocase: true, matchBase: true }));
    for (const name of READABLE_LOOK_ALIKES) {
      assert.equal(globs.find((glob) => glob.match(name))?.pattern, undefined, name);
    }
  });
});

const RIPGREP = ripgrepOnPath();
const ENGINES: Array<{ name: string; options: SearchOptions; available: boolean }> = [
  { name: 'ripgrep', options: { ripgrepPath: RIPGREP }, available: RIPGREP !== undefined },
  { name: 'the pure-Node walk', options: { ripgrepPath: null }, available: true },
];

for (const engine of ENGINES) {
  describe(`read tools over every default secret (search through ${engine.name})`, function () {
    let base: string;
    let repo: string;
    let toolbox: Toolbox;

    before(async function () {
      if (!engine.available) this.skip();
      base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-secrets-')));
      repo = path.join(base, 'repo');
      const files: Record<string, string> = { 'README.md': '# Demo\n' };
      for (const sample of SECRET_SAMPLES) files[sample.path] = `TOKEN=${SECRET_MARKER}\n`;
      for (const name of READABLE_LOOK_ALIKES) files[name] = `TEMPLATE=${name}\n`;
      writeTree(repo, files);
      toolbox = await createToolbox(repo, NO_POLICY, { search: new SearchEngine(engine.options) });
    });
    after(() => {
      if (base) fs.rmSync(base, { recursive: true, force: true });
    });

    it('read_file refuses each one, naming its rule and not its contents', async () => {
      for (const sample of SECRET_SAMPLES) {
        const output = await expectFailure(toolbox, 'read_file', { path: sample.path });
        assert.ok(output.includes(`default rule "${sample.rule}"`), `${sample.path}: ${output}`);
        assert.doesNotMatch(output, new RegExp(SECRET_MARKER));
      }
    });

    it('grep_files never searches one, over the folder or named as the path', async () => {
      const output = await expectOk(toolbox, 'grep_files', { pattern: 'TOKEN' });
      assert.match(output, /^No matches for "TOKEN"/);
      assert.doesNotMatch(output, new RegExp(SECRET_MARKER));
      for (const sample of SECRET_SAMPLES) {
        assert.doesNotMatch(await expectFailure(toolbox, 'grep_files', { pattern: 'TOKEN', path: sample.path }), new RegExp(SECRET_MARKER), sample.path);
      }
    });

    it('find_files and list_dir name each one, marked not readable', async () => {
      const found = (await expectOk(toolbox, 'find_files', { pattern: '**' })).split('\n');
      for (const sample of SECRET_SAMPLES) {
        assert.ok(found.includes(`${sample.path}  (contents not readable)`), `find_files: ${sample.path}`);
        const directory = path.posix.dirname(sample.path);
        const listed = (await expectOk(toolbox, 'list_dir', { path: directory })).split('\n');
        assert.ok(listed.includes(`${path.posix.basename(sample.path)}  (contents not readable)`), `list_dir ${directory}: ${sample.path}`);
      }
    });

    it('reads and searches the templates and public keys as usual', async () => {
      const grep = await expectOk(toolbox, 'grep_files', { pattern: 'TEMPLATE=' });
      for (const name of READABLE_LOOK_ALIKES) {
        assert.equal(await expectOk(toolbox, 'read_file', { path: name }), `1: TEMPLATE=${name}`);
        assert.ok(grep.split('\n').includes(`${name}:1: TEMPLATE=${name}`), `grep_files: ${name}`);
      }
    });
  });
}

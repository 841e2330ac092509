import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../server/src/read/toolbox';
import type { Toolbox } from '../../server/src/read/types';
import { noteFileChanges, resetSymbolIndexes, setSymbolIndexClock, SYMBOL_INDEX_LIMITS, watchFolders } from '../../server/src/symbols/symbolIndex';
import { closeSymbolIndexes, stopWatching } from '../support/watchedFolder';
import { expectOk, NO_POLICY, OUTSIDE_MARKER, SECRET_MARKER, writeTree } from '../support/toolFixture';

/**
 * File-change reports are client input, and a client may report anything: a
 * path outside the folder, one climbing out with `..`, a secret, a file just
 * swapped for a link out, thousands of paths at once. A report is a hint of
 * what to look at again; none of these may put outside or secret bytes into
 * an answer, or leave the index believing something the disk does not say.
 */
describe('adversarial: file-change reports for the symbol index', function () {
  this.timeout(60_000);
  let base: string;
  let repo: string;
  let outside: string;
  let toolbox: Toolbox;
  let now = 0;

  const everything = async (): Promise<string> =>
    [
      await expectOk(toolbox, 'find_symbol', { query: 'outsideSecret' }),
      await expectOk(toolbox, 'find_symbol', { query: 'secretThing' }),
      await expectOk(toolbox, 'find_references', { symbol: 'outsideSecret' }),
      // A name the swapped file's index entry holds, so the search opens it.
      await expectOk(toolbox, 'find_references', { symbol: 'coreThing' }),
      await expectOk(toolbox, 'list_symbols', { path: 'src/core.ts' }).catch((err: unknown) => String(err)),
    ].join('\n');

  beforeEach(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-reports-')));
    repo = path.join(base, 'repo');
    outside = path.join(base, 'outside');
    writeTree(outside, { 'stolen.ts': `export function outsideSecret() {\n  return '${OUTSIDE_MARKER}';\n}\n` });
    writeTree(repo, {
      'src/core.ts': 'export function coreThing() {}\n',
      '.env.ts': `export function secretThing() { return '${SECRET_MARKER}'; }\n`,
    });
    await resetSymbolIndexes();
    now = 0;
    setSymbolIndexClock(() => now);
    watchFolders([{ path: repo, realPath: repo, complete: true }]);
    toolbox = await createToolbox(repo, NO_POLICY);
    await expectOk(toolbox, 'find_symbol', { query: 'coreThing' });
  });
  afterEach(() => stopWatching(base));
  after(closeSymbolIndexes);

  it('reads nothing outside the folder or secret for reports naming outside paths, climbing paths and secrets', async () => {
    noteFileChanges([
      { path: path.join(outside, 'stolen.ts'), kind: 'created' },
      { path: `${repo}/../outside/stolen.ts`, kind: 'changed' },
      { path: '/etc/passwd', kind: 'changed' },
      { path: path.join(repo, '.env.ts'), kind: 'changed' },
      { path: path.join(repo, '.env.ts'), kind: 'created' },
      { path: 'relative/src/core.ts', kind: 'changed' },
      { path: '', kind: 'deleted' },
    ]);
    now += SYMBOL_INDEX_LIMITS.freshForMs * 10;
    const answers = await everything();
    assert.doesNotMatch(answers, new RegExp(`${OUTSIDE_MARKER}|${SECRET_MARKER}`));
    assert.match(answers, /No symbols match "outsideSecret"/);
    assert.match(answers, /No symbols match "secretThing"/);
  });

  it('never reads a file swapped for a link out of the folder, whether or not the swap is reported', async () => {
    fs.rmSync(path.join(repo, 'src', 'core.ts'));
    fs.symlinkSync(path.join(outside, 'stolen.ts'), path.join(repo, 'src', 'core.ts'));
    now += SYMBOL_INDEX_LIMITS.freshForMs * 10;
    // Unreported: the index still holds the old entry, and answers from it without reading the link.
    assert.doesNotMatch(await everything(), new RegExp(OUTSIDE_MARKER));
    noteFileChanges([{ path: path.join(repo, 'src', 'core.ts'), kind: 'changed' }]);
    const answers = await everything();
    assert.doesNotMatch(answers, new RegExp(OUTSIDE_MARKER));
    assert.match(answers, /No symbols match "outsideSecret"/);
  });

  it('walks instead of looking at each path when a flood of reports arrives, and answers from the disk', async () => {
    writeTree(repo, { 'src/late.ts': 'export function lateThing() {}\n' });
    const flood = Array.from({ length: SYMBOL_INDEX_LIMITS.maxReportedPaths + 10 }, (_, i) => ({ path: path.join(repo, 'src', `ghost${i}.ts`), kind: 'changed' as const }));
    noteFileChanges(flood);
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'lateThing' }), /src\/late\.ts:1: function lateThing/);
  });
});

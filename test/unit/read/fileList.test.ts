import { strict as assert } from 'node:assert';
import { compileGlobTest } from '../../../server/src/access/globs';
import { fuzzyScore, narrowingGlobs } from '../../../server/src/read/fileList';

describe('the @ completion’s candidate globs', () => {
  const candidate = (query: string, path: string): boolean => narrowingGlobs(query).some((glob) => compileGlobTest(glob)(path));

  it('a directory typed by name makes every file under it a candidate, as the ranking would accept it', () => {
    assert.ok(fuzzyScore('src/billing/ledger.ts', 'bill') >= 0);
    assert.ok(candidate('bill', 'src/billing/ledger.ts'));
    assert.ok(candidate('BILLING', 'src/billing/deep/refunds.ts'));
  });

  it('a base name still matches as a case-free subsequence, and a path matching neither is left out', () => {
    assert.ok(candidate('htcl', 'src/httpClient.ts'));
    assert.ok(!candidate('bill', 'src/http.ts'));
  });

  it('a query without a letter, digit or name character walks everything, leaving glob syntax to the ranking', () => {
    assert.deepEqual(narrowingGlobs(''), ['**']);
    assert.deepEqual(narrowingGlobs('**/{*}'), ['**']);
  });
});

/**
 * The workers as the .vsix ships them (dist/, which `npm run test:e2e`
 * builds with `npm run package` before this suite): the grammars are
 * brotli-compressed there (client/bundle.mjs), and a worker that could not
 * read its data would only show as a tool failing in a user's hands.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { countTextTokens } from '../../server/src/model/tokenizer';
import { ModelThread } from '../../server/src/model/threaded/threadedModel';
import { startFakeOpenAI } from '../support/fakeOpenAI';
import { SearchPool } from '../../server/src/search/searchPool';
import { noRecords } from '../../server/src/search/packedRecords';
import type { SearchJob } from '../../server/src/search/searchJobs';
import type { IndexJob, IndexJobResult } from '../../server/src/symbols/indexer';
import { GRAMMAR_FILES } from '../../server/src/symbols/languages';

const DIST = path.resolve(__dirname, '..', '..', '..', 'dist');

describe('the packaged workers read the data files the .vsix ships', function () {
  this.timeout(60_000);

  it('the .vsix build holds every grammar the symbol index uses, compressed, and the tree-sitter runtime and the ranks plain', () => {
    assert.ok(fs.existsSync(path.join(DIST, 'o200k_base.ranks')), 'dist/o200k_base.ranks');
    const shipped = fs.readdirSync(path.join(DIST, 'tree-sitter')).sort();
    assert.deepEqual(shipped, ['tree-sitter.wasm', ...GRAMMAR_FILES.map((grammar) => `${grammar}.br`)].sort());
  });

  it('the packaged model thread counts as the development build\'s tokenizer does, and streams a reply', async () => {
    const texts = ['export function total(lines: Line[]): number {', 'naïve café — 東京 🚀', '\uFEFFa BOM first', ' '.repeat(5000)];
    const thread = new ModelThread({ script: path.join(DIST, 'modelWorker.js') });
    const fake = await startFakeOpenAI({ steps: [{ kind: 'text', deltas: ['from the ', 'package'] }] });
    try {
      assert.deepEqual(await thread.count(texts), texts.map(countTextTokens));
      const deltas: string[] = [];
      const model = thread.model(() => ({ baseUrl: fake.baseUrl, apiKey: 'k', model: 'm' }));
      const reply = await model.complete({ messages: [{ role: 'user', content: 'hi' }], signal: new AbortController().signal }, (text) => deltas.push(text));
      assert.equal(reply.content, 'from the package');
      assert.deepEqual(deltas, ['from the ', 'package']);
    } finally {
      await thread.close();
      await fake.close();
    }
  });

  it('the packaged symbol worker finds definitions in TypeScript, Python, C++ and C#', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'packaged-symbols-'));
    fs.writeFileSync(path.join(root, 'invoice.ts'), 'export function totalOf(lines: number[]): number {\n  return lines.length;\n}\n');
    fs.writeFileSync(path.join(root, 'tax.py'), 'def tax_for(amount):\n    return amount\n');
    fs.writeFileSync(path.join(root, 'ledger.cpp'), 'int balance_of(int x) {\n  return x;\n}\n');
    fs.writeFileSync(path.join(root, 'Refund.cs'), 'class Refund {\n  int AmountOf() { return 0; }\n}\n');
    const pool = new SearchPool({ maxWorkers: 1, script: path.join(DIST, 'symbolWorker.js') });
    try {
      const job: IndexJob = { kind: 'index', root, denyRead: [], known: noRecords(2), timeMs: 30_000 };
      const outcome = await pool.run(job as unknown as SearchJob, 30_000);
      assert.ok(outcome.ok, outcome.ok ? '' : JSON.stringify(outcome));
      const result = outcome.result as unknown as IndexJobResult;
      const names = new Map(result.updated.map((file) => [file.relativePath, file.symbols.map((symbol) => symbol.name)]));
      assert.ok(names.get('invoice.ts')?.includes('totalOf'), `invoice.ts: ${names.get('invoice.ts')}`);
      assert.ok(names.get('tax.py')?.includes('tax_for'), `tax.py: ${names.get('tax.py')}`);
      assert.ok(names.get('ledger.cpp')?.includes('balance_of'), `ledger.cpp: ${names.get('ledger.cpp')}`);
      assert.ok(names.get('Refund.cs')?.includes('AmountOf'), `Refund.cs: ${names.get('Refund.cs')}`);
    } finally {
      await pool.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

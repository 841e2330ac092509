import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { readPackagedFile } from '../../../server/src/symbols/packagedFile';

describe('packaged data files (the symbol worker\'s grammars)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packaged-file-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 251));

  it('reads a plain file as it is', () => {
    fs.writeFileSync(path.join(dir, 'grammar.wasm'), bytes);
    assert.deepEqual(readPackagedFile(path.join(dir, 'grammar.wasm')), bytes);
  });

  it('reads the compressed form, NAME.br, when only it is there, as the bytes that were compressed', () => {
    fs.writeFileSync(path.join(dir, 'grammar.wasm.br'), brotliCompressSync(bytes));
    assert.deepEqual(readPackagedFile(path.join(dir, 'grammar.wasm')), bytes);
  });

  it('prefers the plain file when both are there (a development build beside a stale packaged one)', () => {
    fs.writeFileSync(path.join(dir, 'grammar.wasm'), bytes);
    fs.writeFileSync(path.join(dir, 'grammar.wasm.br'), brotliCompressSync(Buffer.from('stale')));
    assert.deepEqual(readPackagedFile(path.join(dir, 'grammar.wasm')), bytes);
  });

  it('names both forms it looked for when neither is there', () => {
    assert.throws(() => readPackagedFile(path.join(dir, 'grammar.wasm')), (err: NodeJS.ErrnoException) => err.code === 'ENOENT' && /grammar\.wasm nor .*grammar\.wasm\.br/.test(err.message));
  });

  it('fails on a compressed file that is not brotli, rather than handing on garbage', () => {
    fs.writeFileSync(path.join(dir, 'grammar.wasm.br'), Buffer.from('not brotli at all'));
    assert.throws(() => readPackagedFile(path.join(dir, 'grammar.wasm')));
  });
});

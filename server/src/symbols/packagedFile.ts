import * as fs from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';

/**
 * The tree-sitter grammars ship brotli-compressed in the .vsix, as `NAME.br`
 * beside where `NAME` would be: the .vsix is a zip, whose deflate left them
 * at half the package (client/bundle.mjs writes them, and says why the
 * tokenizer's ranks stay plain). The development build keeps them plain.
 */
const PACKED_SUFFIX = '.br';

/**
 * The bytes of `file`: the file itself when it is there, else `file.br`
 * decompressed. Synchronous: only the symbol worker calls it, once per grammar.
 */
export function readPackagedFile(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let packed: Buffer;
  try {
    packed = fs.readFileSync(file + PACKED_SUFFIX);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw Object.assign(new Error(`neither ${file} nor ${file}${PACKED_SUFFIX} exists`), { code: 'ENOENT' });
  }
  return brotliDecompressSync(packed);
}

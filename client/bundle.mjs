// Bundles the extension's runtime into dist/: the extension host entry
// (dist/extension.js, package.json "main"), the language client it loads when
// it starts the server (dist/languageClient.js, kept out of extension.js so
// activation does not load it), the server process (dist/server.js, which the
// client prefers when present) and the server's search worker
// (dist/searchWorker.js) and symbol worker (dist/symbolWorker.js, with the
// tree-sitter runtime and grammars it loads copied to dist/tree-sitter/).
// Self-contained files, so the .vsix needs no node_modules and holds no sources.
//
//   node client/bundle.mjs                development build, with source maps
//   node client/bundle.mjs --production   minified, no maps, grammars compressed (for the .vsix)
//   node client/bundle.mjs --watch        rebuild on change
//   node client/bundle.mjs --outdir=DIR   into DIR instead of dist/ (the activation
//                                         benchmark builds the shipped bundle aside)
//
// esbuild only strips types: `tsc -p .` (in `npm run build`) does the checking.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import * as esbuild from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const args = new Set(argv);
const production = process.env.NODE_ENV === 'production' || args.has('--production');
const watch = args.has('--watch');
const outDirArg = argv.find((arg) => arg.startsWith('--outdir='));
const outDir = outDirArg ? resolve(outDirArg.slice('--outdir='.length)) : join(root, 'dist');

/** @type {import('esbuild').BuildOptions} */
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  // The oldest Node a supported VS Code (engines.vscode ^1.100) runs extensions on.
  target: 'node20',
  minify: production,
  sourcemap: production ? false : 'linked',
  // Libraries pick their lean paths on it; the bundle has no dev-only code paths to keep.
  define: { 'process.env.NODE_ENV': JSON.stringify(production ? 'production' : 'development') },
  logLevel: 'info',
  legalComments: production ? 'none' : 'inline',
};

const builds = [
  // `vscode` exists only inside the extension host, provided by VS Code itself.
  // `./languageClient` stays a require() of dist/languageClient.js, run on the server's first start.
  { ...common, entryPoints: [join(root, 'client', 'src', 'vscode', 'extension.ts')], outfile: join(outDir, 'extension.js'), external: ['vscode', './languageClient'] },
  { ...common, entryPoints: [join(root, 'client', 'src', 'vscode', 'languageClient.ts')], outfile: join(outDir, 'languageClient.js'), external: ['vscode'] },
  { ...common, entryPoints: [join(root, 'server', 'src', 'main.ts')], outfile: join(outDir, 'server.js') },
  // The server's searches run in worker threads loaded from `__dirname/searchWorker.js`
  // (server/src/search/searchPool.ts): the bundle needs that file beside it.
  { ...common, entryPoints: [join(root, 'server', 'src', 'search', 'searchWorker.ts')], outfile: join(outDir, 'searchWorker.js') },
  // The model's requests and token counts run in a thread loaded from `__dirname/modelWorker.js`
  // (server/src/model/threaded/threadedModel.ts); the openai SDK and the tokenizer's ranks live only there, not in server.js.
  { ...common, entryPoints: [join(root, 'server', 'src', 'model', 'threaded', 'modelWorker.ts')], outfile: join(outDir, 'modelWorker.js') },
  // The symbol index parses in its own thread, loaded from `__dirname/symbolWorker.js` (server/src/symbols/symbolIndex.ts).
  { ...common, entryPoints: [join(root, 'server', 'src', 'symbols', 'symbolWorker.ts')], outfile: join(outDir, 'symbolWorker.js') },
];

// The symbol worker finds its .wasm files in `__dirname/tree-sitter/` when bundled (server/src/symbols/indexer.ts
// grammarDirectory): only the runtime and the grammars languages.ts uses, not the package's others.
const GRAMMARS = ['tree-sitter.wasm', 'tree-sitter-typescript.wasm', 'tree-sitter-tsx.wasm', 'tree-sitter-javascript.wasm', 'tree-sitter-python.wasm',
  'tree-sitter-go.wasm', 'tree-sitter-rust.wasm', 'tree-sitter-java.wasm', 'tree-sitter-cpp.wasm', 'tree-sitter-c-sharp.wasm', 'tree-sitter-ruby.wasm'];
const grammarSource = dirname(createRequire(import.meta.url).resolve('@vscode/tree-sitter-wasm/wasm/tree-sitter.wasm'));
const grammarTarget = join(outDir, 'tree-sitter');
rmSync(grammarTarget, { recursive: true, force: true });
mkdirSync(grammarTarget, { recursive: true });

// A production build compresses the grammars with brotli as `NAME.br` (the symbol worker reads either form:
// server/src/symbols/packagedFile.ts): the .vsix went from 3.2 MB to 2.6 MB. The runtime, tree-sitter.wasm, stays plain: its
// loader opens it by name. So do the tokenizer's ranks, which every server loads: compressed they saved 0.2 MB
// more, but decompressing held about 0.7 MB more in the thread that counts and delayed its first count. Compressing at the
// highest quality takes about 20 s, so each result is kept by the hash of its input, for the builds after the first.
const PACKED_SUFFIX = '.br';
const packCache = join(root, 'node_modules', '.cache', 'repo-discuss-packed');
function packed(bytes) {
  const cached = join(packCache, `${createHash('sha256').update(bytes).digest('hex')}${PACKED_SUFFIX}`);
  if (existsSync(cached)) return readFileSync(cached);
  const result = brotliCompressSync(bytes, {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_LGWIN]: 24, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
  mkdirSync(packCache, { recursive: true });
  writeFileSync(cached, result);
  return result;
}
for (const file of GRAMMARS) {
  const source = join(grammarSource, file);
  if (production && file !== 'tree-sitter.wasm') writeFileSync(join(grammarTarget, file + PACKED_SUFFIX), packed(readFileSync(source)));
  else copyFileSync(source, join(grammarTarget, file));
}

// The model thread reads the o200k ranks from a compact file next to it (server/src/model/bpeRanks.ts describes
// it, tokenizer.ts RANKS_FILE): the `BPE1` header, the token count (u32 LE), each token's length in one byte, then
// the tokens' bytes in rank order. The tsc build's tokenizer (out/, which tests run) reads them the same way, so
// they go there too, even before tsc has written out/ (`npm run watch` starts both).
const ranks = createRequire(import.meta.url)('gpt-tokenizer/bpeRanks/o200k_base').default;
const tokens = ranks.map((token, rank) => {
  const bytes = typeof token === 'string' ? Buffer.from(token, 'utf8') : Buffer.from(token ?? []);
  if (bytes.length === 0 || bytes.length > 255) throw new Error(`o200k rank ${rank} has ${bytes.length} bytes: the ranks file holds 1 to 255`);
  return bytes;
});
const header = Buffer.alloc(8);
header.write('BPE1', 0, 'latin1');
header.writeUInt32LE(tokens.length, 4);
const ranksFile = Buffer.concat([header, Buffer.from(tokens.map((bytes) => bytes.length)), ...tokens]);
for (const dir of [outDir, join(root, 'out', 'server', 'src', 'model')]) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'o200k_base.ranks'), ranksFile);
  // The JSON an earlier build wrote: not to be packaged.
  rmSync(join(dir, 'o200k_base.json'), { force: true });
}

// No native modules are bundled: an earlier build's are not packaged.
rmSync(join(outDir, 'node_modules'), { recursive: true, force: true });

// A production build has no maps: leave none from an earlier build to be packaged.
for (const stale of builds.flatMap((b) => [b.outfile, `${b.outfile}.map`])) rmSync(stale, { force: true });

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}

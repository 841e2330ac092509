// Builds the chat webview: bundles client/src/webview/main.ts into
// media/dist/chat.js (one IIFE script, as the CSP allows exactly one) and
// copies the codicon font next to it. Offline: only local packages.
//
//   node client/esbuild.mjs                 development build with source map
//   node client/esbuild.mjs --production    minified (also NODE_ENV=production)
//   node client/esbuild.mjs --watch         rebuild on change
//   node client/esbuild.mjs --no-typecheck  skip `tsc -p client/src/webview`
//
// esbuild strips types without checking them, so the build runs tsc against
// the webview's own tsconfig first (DOM typings, unlike the root project).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const args = new Set(process.argv.slice(2));
const production = process.env.NODE_ENV === 'production' || args.has('--production');
const watch = args.has('--watch');
const outDir = join(root, 'media', 'dist');
const webviewTsconfig = join(root, 'client', 'src', 'webview', 'tsconfig.json');

function typeCheck() {
  const tsc = require.resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', webviewTsconfig], { cwd: root, stdio: 'inherit' });
  return result.status === 0;
}

function copyCodicons() {
  const codiconsDir = dirname(require.resolve('@vscode/codicons/dist/codicon.css'));
  for (const file of ['codicon.css', 'codicon.ttf']) copyFileSync(join(codiconsDir, file), join(outDir, file));
}

/** @type {import('esbuild').BuildOptions} */
const options = {
  absWorkingDir: root,
  entryPoints: [join(root, 'client', 'src', 'webview', 'main.ts')],
  outfile: join(outDir, 'chat.js'),
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2022', 'chrome120'],
  tsconfig: webviewTsconfig,
  minify: production,
  sourcemap: production ? false : 'linked',
  // Libraries branch on it; the webview has no `process`.
  define: { 'process.env.NODE_ENV': JSON.stringify(production ? 'production' : 'development') },
  logLevel: 'info',
};

mkdirSync(outDir, { recursive: true });
// A production build has no map: leave none from an earlier build to mislead.
for (const stale of ['chat.js', 'chat.js.map', 'chat.js.LEGAL.txt']) rmSync(join(outDir, stale), { force: true });
copyCodicons();

if (!args.has('--no-typecheck') && !watch && !typeCheck()) {
  console.error('Webview type check failed (tsc -p client/src/webview).');
  process.exit(1);
}

if (watch) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * The import rules the layout stands on, checked over every TypeScript file so
 * the structure holds as code is added: what may import `vscode`, what the
 * clients may take from the server, and what the discussion core, the shared
 * protocol and the webview may depend on.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');

interface SourceImport {
  /** Importing file, relative to the repository root, `/`-separated. */
  file: string;
  /** The specifier as written. */
  specifier: string;
  /** For a relative specifier, the imported path relative to the root; otherwise the specifier. */
  target: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(relative));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(relative);
  }
  return out;
}

function importsOf(file: string): SourceImport[] {
  const info = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles.map(({ fileName: specifier }) => ({
    file,
    specifier,
    target: specifier.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)) : specifier,
  }));
}

const ALL = ['shared', 'server/src', 'client/src', 'test'].flatMap(sourceFiles).flatMap(importsOf);
const from = (prefix: string) => ALL.filter((i) => i.file.startsWith(prefix));
const show = (found: SourceImport[]) => found.map((i) => `${i.file} imports '${i.specifier}'`);

describe('the layout', () => {
  it('reads the imports of the whole tree (so an empty scan cannot pass the rules below)', () => {
    assert.ok(from('server/src/').length > 50 && from('client/src/').length > 50 && from('shared/').length > 0);
  });

  it('imports vscode only under client/src/vscode/ (and in tests that run inside an extension host)', () => {
    const extensionHostTests = ['test/vscode/', 'test/bench/activationProbe.ts'];
    const offenders = ALL.filter(
      (i) => (i.specifier === 'vscode' || i.specifier.startsWith('vscode/')) && !i.file.startsWith('client/src/vscode/') && !extensionHostTests.some((p) => i.file.startsWith(p)),
    );
    assert.deepEqual(show(offenders), []);
  });

  it('keeps the clients off the server: client code imports shared/ and its own modules, never server/', () => {
    assert.deepEqual(show(from('client/src/').filter((i) => i.target.startsWith('server/'))), []);
  });

  it('keeps the server off the clients', () => {
    assert.deepEqual(show(from('server/src/').filter((i) => i.target.startsWith('client/'))), []);
  });

  it('keeps the discussion core free of any transport: no JSON-RPC, language server or vscode, and not the binding layer', () => {
    const transport = /^(vscode|vscode-languageserver|vscode-languageclient|vscode-jsonrpc)(\/|$)/;
    const binding = ['server/src/server', 'server/src/main', 'server/src/bindRequest', 'server/src/settings', 'server/src/locationCommand'];
    const offenders = from('server/src/core/').filter((i) => transport.test(i.specifier) || binding.includes(i.target));
    assert.deepEqual(show(offenders), []);
  });

  it('keeps the protocol free of dependencies, so the webview bundle can import it: only its own files', () => {
    const offenders = from('shared/protocol/').filter((i) => !i.target.startsWith('shared/protocol/'));
    assert.deepEqual(show(offenders), []);
  });

  it('keeps the webview a browser bundle: no Node modules, nothing of the extension host or the terminal, and only the shared modules that need no Node', () => {
    const needsNode = (target: string) => from(target).some((i) => i.specifier.startsWith('node:'));
    const offenders = from('client/src/webview/').filter(
      (i) => i.specifier.startsWith('node:') || /^client\/src\/(vscode|terminal)\//.test(i.target) || (i.target.startsWith('shared/') && needsNode(`${i.target}.ts`)),
    );
    assert.deepEqual(show(offenders), []);
  });

  it('starts the server with the shared Node flags and environment wherever it is started (shared/serverNodeFlags.ts)', () => {
    // Every line that starts the server: a `--stdio` spawn or a language client's ipc transport.
    const starts = [...sourceFiles('client'), ...sourceFiles('test')]
      .filter((file) => !file.startsWith('test/architecture/'))
      .flatMap((file) =>
        fs
          .readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => /spawn\(process\.execPath, \[.*'--stdio'\]|transport: TransportKind\.ipc/.test(line))
          .map((line) => ({ file, line: line.trim() })),
      );
    assert.deepEqual([...new Set(starts.map((start) => start.file))].sort(), ['client/src/terminal/serverConnection.ts', 'client/src/vscode/serverClient.ts', 'test/support/serverProcess.ts']);
    assert.deepEqual(starts.filter((start) => !start.line.includes('...SERVER_NODE_FLAGS')), [], 'a start without the shared flags');
    // The environment may be on a line of its own: at least one in a file for each start in it.
    const environments = (file: string) =>
      fs
        .readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(\/\/|\*)/.test(line))
        .join('\n')
        .split('...SERVER_ENVIRONMENT').length - 1;
    assert.deepEqual(
      [...new Set(starts.map((start) => start.file))].filter((file) => environments(file) < starts.filter((start) => start.file === file).length),
      [],
      'a start without the shared environment',
    );
  });

  it('starts every worker thread of the server with its own young generation (heapTuning.ts WORKER_YOUNG_GENERATION_MB)', () => {
    // Once the server has tuned its heap, a worker without resourceLimits gets V8's default of up to 16 MB per semi-space.
    const starts = sourceFiles('server/src').flatMap((file) =>
      fs
        .readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .filter((line) => /new Worker\(/.test(line))
        .map((line) => ({ file, line: line.trim() })),
    );
    assert.deepEqual([...new Set(starts.map((start) => start.file))].sort(), ['server/src/model/threaded/threadedModel.ts', 'server/src/search/searchPool.ts']);
    assert.deepEqual(starts.filter((start) => !/resourceLimits: \{ maxYoungGenerationSizeMb: /.test(start.line)), [], 'a worker without its own young generation');
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IndexJobResult, ReferenceJob, ReferenceJobResult, runSymbolJob } from '../../../server/src/symbols/indexer';
import { FolderIndex } from '../../../server/src/symbols/symbolIndex';
import { OUTSIDE_MARKER, writeTree } from '../../support/toolFixture';

/**
 * The reference search answers a file from the index's identifier counts
 * instead of parsing it when that gives the answer a parse would: the file is
 * unchanged since the index counted it, and every whole-word match of the
 * name is one of the identifiers counted. These tests run the symbol
 * thread's jobs in process.
 */
describe('find_references from the index', () => {
  let base: string;
  let repo: string;
  const neverStop = { shouldStop: () => false };

  const FILES = {
    'src/uses.ts': "import { loadConfig } from './config';\nconst first = loadConfig();\nexport const second = loadConfig() ?? first;\n",
    'src/mentions.ts': "// loadConfig is called once here\nimport { loadConfig } from './config';\nconsole.log('loadConfig');\nexport const third = loadConfig();\n",
    'src/config.ts': 'export function loadConfig(): number {\n  return 1;\n}\n',
    'src/unrelated.ts': 'export const loadConfigured = 2;\n',
  };

  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-refs-'));
    repo = path.join(base, 'repo');
    writeTree(repo, FILES);
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  async function indexed(): Promise<FolderIndex> {
    const index = new FolderIndex(repo, []);
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: {}, timeMs: 30_000 }, neverStop)) as IndexJobResult);
    assert.ok(index.status.complete);
    return index;
  }

  async function search(index: FolderIndex, symbol: string, fromIndex: boolean): Promise<ReferenceJobResult> {
    const files = index.referenceCandidates(symbol).sort();
    const job: ReferenceJob = { kind: 'references', root: repo, denyRead: [], symbol, files, timeMs: 30_000, maxReferences: 100, ...(fromIndex ? { indexed: index.usesOf(symbol, files) } : {}) };
    return (await runSymbolJob(job, neverStop)) as ReferenceJobResult;
  }

  it('answers exactly as a parse would, parsing only the file where the name is also in a comment or a string', async () => {
    const index = await indexed();
    const fromIndex = await search(index, 'loadConfig', true);
    const parsed = await search(index, 'loadConfig', false);
    assert.deepEqual(fromIndex.references, parsed.references);
    assert.equal(fromIndex.total, 6);
    assert.deepEqual(
      fromIndex.references.filter((reference) => reference.relativePath === 'src/mentions.ts').map((reference) => reference.line),
      [2, 4],
      'the comment (line 1) and the string (line 3) are not references',
    );
    assert.equal(parsed.filesParsed, 3);
    assert.equal(fromIndex.filesParsed, 1, 'only src/mentions.ts, where matches outnumber the identifiers counted');
  });

  it('does not count an identifier the pattern cannot match, so a match in a comment still makes the file parsed', async () => {
    // Broken code: the parser reads `12loadConfig` as a number and the identifier loadConfig, which is no whole word.
    fs.writeFileSync(path.join(repo, 'src', 'glued.ts'), 'export const n = 12loadConfig;\n// loadConfig, mentioned\nexport const m = loadConfig();\n');
    const index = await indexed();
    const result = await search(index, 'loadConfig', true);
    assert.deepEqual(
      result.references.filter((reference) => reference.relativePath === 'src/glued.ts').map((reference) => reference.line),
      [3],
    );
  });

  it('parses a file edited since the index counted it, even when its matches number the same', async () => {
    const index = await indexed();
    const file = path.join(repo, 'src', 'uses.ts');
    // Same size, same number of matches; but the use on line 2 is now a comment.
    const edited = "import { loadConfig } from './config';\n//nst first = loadConfig();\nexport const second = loadConfig() ?? first;\n";
    assert.equal(edited.length, FILES['src/uses.ts'].length);
    const before = fs.statSync(file);
    fs.writeFileSync(file, edited);
    fs.utimesSync(file, before.atime, new Date(before.mtimeMs + 5_000));
    const result = await search(index, 'loadConfig', true);
    assert.deepEqual(
      result.references.filter((reference) => reference.relativePath === 'src/uses.ts').map((reference) => reference.line),
      [1, 3],
    );
    assert.equal(result.filesParsed, 2);
  });

  it('never answers from the index for a file that became a link out of the folder since it was indexed', async () => {
    const index = await indexed();
    const outside = path.join(base, 'outside.ts');
    fs.writeFileSync(outside, `${FILES['src/uses.ts'].trimEnd()} // ${OUTSIDE_MARKER}\n`);
    fs.rmSync(path.join(repo, 'src', 'uses.ts'));
    fs.symlinkSync(outside, path.join(repo, 'src', 'uses.ts'));
    const result = await search(index, 'loadConfig', true);
    assert.equal(result.references.filter((reference) => reference.relativePath === 'src/uses.ts').length, 0);
    assert.equal(result.leftOut, 1);
    assert.doesNotMatch(JSON.stringify(result), new RegExp(OUTSIDE_MARKER));
  });

  it('searches every candidate when there are more than it resolves ahead, in order, and stops at the time limit', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`src/many/user${String(i).padStart(2, '0')}.ts`, `export const use${i} = loadConfig();\n`])));
    const index = await indexed();
    const result = await search(index, 'loadConfig', true);
    const many = result.references.filter((reference) => reference.relativePath.startsWith('src/many/')).map((reference) => reference.relativePath);
    assert.deepEqual(many, Array.from({ length: 40 }, (_, i) => `src/many/user${String(i).padStart(2, '0')}.ts`));
    const files = index.referenceCandidates('loadConfig');
    const stopped = (await runSymbolJob({ kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files, timeMs: -1, maxReferences: 100 }, neverStop)) as ReferenceJobResult;
    assert.equal(stopped.complete, false);
    assert.equal(stopped.filesSearched, 0);
  });
});

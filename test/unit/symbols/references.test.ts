import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IndexJobResult, nothingKnown, ReferenceJob, ReferenceJobResult, runSymbolJob, setIndexerWallClock } from '../../../server/src/symbols/indexer';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { closeSymbolPool, findReferences, FolderIndex, type ReferenceJobRunner, usesInSlices } from '../../../server/src/symbols/symbolIndex';
import { turnsWhile } from '../../support/eventLoopTurns';
import { AS_UPKEEP } from '../../../server/src/nextSlice';
import { packInSlices } from '../../../server/src/search/packedRecords';
import { OUTSIDE_MARKER, SECRET_MARKER, writeTree } from '../../support/toolFixture';
import { INDEX_LIMITS } from '../../../server/src/symbols/limits';

/**
 * The reference search answers a file from the index's identifier counts
 * instead of parsing it when that gives the answer a parse would: the file is
 * unchanged since the index counted it, and every whole-word match of the
 * name is one of the identifiers counted. These tests run the symbol
 * thread's jobs in process, indexing as if a minute after the files were
 * written (a file read just after it changed is never answered from the
 * index, see FileIndex.racy), except where a test says otherwise.
 */
/** The name `target` in the code, comments, strings and markup of each language the scan reads; two files hold a form it leaves to the parser. */
const MIXED_LANGUAGES: Record<string, string> = {
  'mixed/a.ts': [
    '// target, in a comment, with <b>markup</b>',
    'const target = 1;',
    'const label = `target ${target + `${ { target }.target }`} target`;',
    "const found = /target['/]/.test('target') && target / 2 > 0;",
    '',
  ].join('\n'),
  'mixed/b.js': ['#!/usr/bin/env target', 'function f() { return /target/.exec(target); } /* target */', ''].join('\n'),
  'mixed/c.py': [
    '# target',
    'target = rb"target\\" target"',
    '"""target',
    'target"""',
    "print(f'target', target, f'{target!r:>{target}} {{target}} {d[\"target\"]}')",
    '',
  ].join('\n'),
  'mixed/d.rs': [
    "fn pick<'a>(c: char) -> bool { c == '\\'' || c == 't' } // target",
    '/* outer /* target */ target */ fn target() -> &\'static [u8] { b"target" }',
    'const S: &str = "multi',
    'line target";',
    '',
  ].join('\n'),
  'mixed/e.go': ['package main', '', '// target', 'var target = `target', "target` + string('\"') + target", ''].join('\n'),
  'mixed/f.java': ['class F {', '  // target', "  char q = '\"'; String target = \"target\";", '  int g() { return target.length(); }', '}', ''].join('\n'),
  'mixed/g.cs': ['class G {', '  // target', '  string target = @"target";', '  int H() => target.Length;', '}', ''].join('\n'),
  'mixed/h.cpp': ['// target', 'auto target = R"(target)";', "char q = '\"'; int g() { return target[0]; }", ''].join('\n'),
  'mixed/i.tsx': [
    'export const Pick = <T extends object>(target: T) => (',
    '  // the target panel',
    '  <Panel<T> title="target" target={target} data-target="x">',
    "    it's the target {target.name} <Row.Cell key={`target ${target}`} />",
    '  </Panel>',
    ');',
    '',
  ].join('\n'),
  'mixed/j.js': 'import{a as target}from"target";export default target?"target":null;\n',
};

/**
 * Words the index counted in a file of `root` that also stand in that file's
 * comments or strings: the files a reference search must tell apart.
 */
function wordsAlsoOutsideCode(root: string, index: FolderIndex): string[] {
  const words = new Set<string>();
  for (const relativePath of index.files.keys()) {
    const text = fs.readFileSync(path.join(root, relativePath), 'utf8');
    for (const word of new Set(text.match(/[A-Za-z_][A-Za-z0-9_]{3,}/g) ?? [])) {
      const uses = index.usesOf(word, [relativePath])[0]?.uses ?? 0;
      const matches = text.match(new RegExp(`(?<![\\p{L}\\p{N}_$])${word}(?![\\p{L}\\p{N}_$])`, 'gu'))?.length ?? 0;
      if (uses > 0 && matches > uses) words.add(word);
    }
  }
  // Spread over the alphabet, the same words every run.
  const sorted = [...words].sort();
  return sorted.filter((_, position) => position % Math.max(1, Math.floor(sorted.length / 40)) === 0);
}

describe('find_references from the index', () => {
  let base: string;
  let repo: string;
  const neverStop = { shouldStop: () => false };

  const FILES = {
    'src/uses.ts': "import { loadConfig } from './config';\nconst first = loadConfig();\nexport const second = loadConfig() ?? first;\nexport const both = loadConfig() + loadConfig();\n",
    'src/crlf.ts': "import { loadConfig } from './config';\r\n\r\nexport const fourth = loadConfig();\r\n",
    'src/mentions.ts': "// loadConfig is called once here\nimport { loadConfig } from './config';\nconsole.log('loadConfig');\nexport const third = loadConfig();\n",
    'src/config.ts': 'export function loadConfig(): number {\n  return 1;\n}\n',
    'src/unrelated.ts': 'export const loadConfigured = 2;\n',
  };

  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-refs-'));
    repo = path.join(base, 'repo');
    writeTree(repo, FILES);
    setIndexerWallClock(() => Date.now() + 60_000);
  });
  afterEach(() => {
    setIndexerWallClock();
    fs.rmSync(base, { recursive: true, force: true });
  });
  after(() => closeSymbolPool());

  async function indexed(): Promise<FolderIndex> {
    const index = new FolderIndex(repo, []);
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: nothingKnown(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    assert.ok(index.status.complete);
    return index;
  }

  async function search(index: FolderIndex, symbol: string, fromIndex: boolean, maxReferences = 100): Promise<ReferenceJobResult> {
    const files = index.referenceCandidates(symbol).sort();
    const job: ReferenceJob = { kind: 'references', root: repo, denyRead: [], symbol, files, timeMs: 30_000, maxReferences, ...(fromIndex ? { indexed: index.usesOf(symbol, files) } : {}) };
    return (await runSymbolJob(job, neverStop)) as ReferenceJobResult;
  }

  it('answers exactly as a parse would, and parses none of the files: the comment and the string of src/mentions.ts are set aside by a scan', async () => {
    const index = await indexed();
    const fromIndex = await search(index, 'loadConfig', true);
    const parsed = await search(index, 'loadConfig', false);
    assert.deepEqual(fromIndex.references, parsed.references);
    assert.equal(fromIndex.total, 9, 'one entry per line: the two uses on one line of src/uses.ts are one');
    assert.deepEqual(
      fromIndex.references.filter((reference) => reference.relativePath === 'src/crlf.ts'),
      [
        { relativePath: 'src/crlf.ts', line: 1, text: "import { loadConfig } from './config';" },
        { relativePath: 'src/crlf.ts', line: 3, text: 'export const fourth = loadConfig();' },
      ],
    );
    assert.deepEqual(
      fromIndex.references.filter((reference) => reference.relativePath === 'src/mentions.ts').map((reference) => reference.line),
      [2, 4],
      'the comment (line 1) and the string (line 3) are not references',
    );
    assert.equal(parsed.filesParsed, 4);
    assert.equal(fromIndex.filesParsed, 0, 'src/mentions.ts, where matches outnumber the identifiers counted, has its two in code');
  });

  it('parses a file whose comments and strings the scan cannot tell from its code, and answers as a parse would', async () => {
    // A slash after a closing brace may start a regular expression or a division: only the parser knows.
    fs.writeFileSync(path.join(repo, 'src', 'unsure.ts'), 'if (ready) {} /loadConfig/.test(name);\nexport const fifth = loadConfig();\n');
    const index = await indexed();
    const fromIndex = await search(index, 'loadConfig', true);
    assert.deepEqual(fromIndex.references, (await search(index, 'loadConfig', false)).references);
    assert.deepEqual(
      fromIndex.references.filter((reference) => reference.relativePath === 'src/unsure.ts').map((reference) => reference.line),
      [2],
    );
    assert.equal(fromIndex.filesParsed, 1);
  });

  it('answers as a parse would in every language it scans, across the forms of comment and string each one has', async () => {
    writeTree(repo, MIXED_LANGUAGES);
    const index = await indexed();
    const fromIndex = await search(index, 'target', true);
    const parsed = await search(index, 'target', false);
    assert.deepEqual(fromIndex.references, parsed.references);
    assert.equal(parsed.filesParsed, Object.keys(MIXED_LANGUAGES).length);
    assert.equal(fromIndex.filesParsed, 2, 'the C# verbatim string and the C++ raw string are left to the parser');
  });

  it('answers as a parse would for the words of the project\'s own sources that are also in their comments and strings', async function () {
    this.timeout(120_000);
    const root = path.resolve(__dirname, '..', '..', '..', '..', 'server', 'src', 'symbols');
    const index = new FolderIndex(root, []);
    index.apply((await runSymbolJob({ kind: 'index', root, denyRead: [], known: nothingKnown(), timeMs: 60_000 }, neverStop)) as IndexJobResult);
    const words = wordsAlsoOutsideCode(root, index).slice(0, 40);
    assert.ok(words.length >= 20, `enough words to go by (${words.length})`);
    let answeredWithoutParse = 0;
    for (const word of words) {
      const files = index.referenceCandidates(word).sort();
      const run = (indexed: boolean): Promise<ReferenceJobResult> =>
        runSymbolJob({ kind: 'references', root, denyRead: [], symbol: word, files, timeMs: 60_000, maxReferences: 10_000, ...(indexed ? { indexed: index.usesOf(word, files) } : {}) }, neverStop) as Promise<ReferenceJobResult>;
      const fromIndex = await run(true);
      const parsed = await run(false);
      assert.deepEqual(fromIndex.references, parsed.references, word);
      answeredWithoutParse += parsed.filesParsed - fromIndex.filesParsed;
    }
    assert.ok(answeredWithoutParse > words.length, 'the scan answered for many files');
  });

  it('does not count an identifier the pattern cannot match, so a match in a comment still makes the file parsed', async () => {
    // Broken code: the parser reads `12loadConfig` as a number and the identifier loadConfig, which is no whole word.
    fs.writeFileSync(path.join(repo, 'src', 'glued.ts'), 'export const n = 12loadConfig;\n// loadConfig, mentioned\nexport const m = loadConfig();\n');
    const index = await indexed();
    assert.deepEqual(index.usesOf('loadConfig', ['src/glued.ts']), [{ stamp: index.files.get('src/glued.ts')?.stamp, uses: 1 }]);
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
    const edited = "import { loadConfig } from './config';\n//nst first = loadConfig();\nexport const second = loadConfig() ?? first;\nexport const both = loadConfig() + loadConfig();\n";
    assert.equal(edited.length, FILES['src/uses.ts'].length);
    const before = fs.statSync(file);
    fs.writeFileSync(file, edited);
    fs.utimesSync(file, before.atime, new Date(before.mtimeMs + 5_000));
    const result = await search(index, 'loadConfig', true);
    assert.deepEqual(
      result.references.filter((reference) => reference.relativePath === 'src/uses.ts').map((reference) => reference.line),
      [1, 3, 4],
    );
    assert.equal(result.filesParsed, 1, 'src/uses.ts, whose stamp moved');
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

  it('reads nothing from outside for candidates under a directory swapped for a link to an outside one', async () => {
    const index = await indexed();
    const elsewhere = path.join(base, 'elsewhere');
    writeTree(elsewhere, { 'uses.ts': `export const x = loadConfig(); // ${OUTSIDE_MARKER}\n`, 'config.ts': `export function loadConfig() { return '${OUTSIDE_MARKER}'; }\n` });
    fs.renameSync(path.join(repo, 'src'), path.join(base, 'src-moved'));
    fs.symlinkSync(elsewhere, path.join(repo, 'src'));
    const result = await search(index, 'loadConfig', true);
    assert.deepEqual(result.references, []);
    assert.equal(result.leftOut, 4, 'each candidate under the link leads outside, and is counted as left out');
    assert.doesNotMatch(JSON.stringify(result), new RegExp(OUTSIDE_MARKER));
  });

  it('reads a candidate the index holds through a link inside the folder, at its target', async () => {
    writeTree(repo, { 'lib/real.ts': 'export const viaLink = loadConfig();\n' });
    fs.symlinkSync('../lib/real.ts', path.join(repo, 'src', 'alias.ts'));
    const index = await indexed();
    const result = await search(index, 'loadConfig', true);
    assert.deepEqual(
      result.references.filter((reference) => reference.relativePath === 'src/alias.ts'),
      [{ relativePath: 'src/alias.ts', line: 1, text: 'export const viaLink = loadConfig();' }],
    );
  });

  it('opens no candidate the read rules deny, whoever names it', async () => {
    writeTree(repo, { '.env.ts': `export const token = loadConfig(); // ${SECRET_MARKER}\n` });
    const job: ReferenceJob = { kind: 'references', root: repo, denyRead: ['src/mentions.ts'], symbol: 'loadConfig', files: ['.env.ts', 'src/mentions.ts', 'src/uses.ts'], timeMs: 30_000, maxReferences: 100 };
    const result = (await runSymbolJob(job, neverStop)) as ReferenceJobResult;
    assert.equal(result.leftOut, 2);
    assert.deepEqual([...new Set(result.references.map((reference) => reference.relativePath))], ['src/uses.ts']);
    assert.doesNotMatch(JSON.stringify(result), new RegExp(SECRET_MARKER));
  });

  it('keeps to the order of its candidates, and a search stopped midway answers with what it found', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`src/many/user${String(i).padStart(2, '0')}.ts`, `export const use${i} = loadConfig();\n`])));
    const index = await indexed();
    const result = await search(index, 'loadConfig', true);
    const many = result.references.filter((reference) => reference.relativePath.startsWith('src/many/')).map((reference) => reference.relativePath);
    assert.deepEqual(many, Array.from({ length: 40 }, (_, i) => `src/many/user${String(i).padStart(2, '0')}.ts`));
    // Stopped after ten files.
    let polls = 0;
    const files = index.referenceCandidates('loadConfig').sort();
    const job: ReferenceJob = { kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files, timeMs: 30_000, maxReferences: 100 };
    const stopped = (await runSymbolJob(job, { shouldStop: () => ++polls > 10 })) as ReferenceJobResult;
    assert.equal(stopped.complete, false);
    assert.equal(stopped.filesSearched, 10);
    assert.deepEqual(
      stopped.references.map((reference) => reference.relativePath),
      result.references.map((reference) => reference.relativePath).filter((relativePath) => files.indexOf(relativePath) < 10),
    );
  });

  it('parses every file it read just after the file changed, whose stamp a second change in that tick could leave as it was', async () => {
    setIndexerWallClock();
    const index = await indexed();
    const result = await search(index, 'loadConfig', true);
    assert.equal(result.filesSearched, 4);
    assert.equal(result.filesParsed, 4);
  });

  it('parses a file read just after it changed again at the next walk, though its stamp has not moved, and keeps it from then on', async () => {
    setIndexerWallClock();
    const index = await indexed();
    assert.ok(index.files.get('src/uses.ts')?.racy, 'read within the racy window of its write');
    setIndexerWallClock(() => Date.now() + 60_000);
    const refreshed = (await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult;
    assert.deepEqual(refreshed.updated.map((file) => file.relativePath).sort(), Object.keys(FILES).sort(), 'every racy entry parsed again');
    index.apply(refreshed);
    assert.equal([...index.files.values()].filter((file) => file.racy).length, 0);
    const again = (await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult;
    assert.deepEqual(again.updated, [], 'an entry no longer racy is kept while its stamp holds');
    const result = await search(index, 'loadConfig', true);
    assert.equal(result.filesParsed, 0, 'now answered from the counts, the comment and the string set aside by the scan');
  });

  it('once it has collected enough, takes each further file\'s uses from the index\'s count and opens none of them', async () => {
    const index = await indexed();
    // Gone since it was indexed: opened, it would count nothing.
    fs.rmSync(path.join(repo, 'src', 'uses.ts'));
    const result = await search(index, 'loadConfig', true, 1);
    assert.deepEqual(result.references, [{ relativePath: 'src/config.ts', line: 1, text: 'export function loadConfig(): number {' }]);
    assert.equal(result.filesSearched, 1);
    assert.deepEqual(result.counted, { from: 1, files: 3, uses: 2 + 2 + 5 }, 'src/crlf.ts, src/mentions.ts (the identifiers only) and src/uses.ts (two on one line)');
    assert.equal(result.total, 1 + 9);
    assert.equal(result.complete, true);
  });

  it('still reads every file the index holds no count for once it has collected enough, so the total leaves none out', async () => {
    setIndexerWallClock(); // every file read within the racy window: none has a count to go by
    const index = await indexed();
    const result = await search(index, 'loadConfig', true, 1);
    assert.equal(result.counted, undefined);
    assert.equal(result.filesSearched, 4);
    assert.equal(result.total, 9);
    assert.equal(result.references.length, 1);
  });

  it('takes the counts of the files past the first ones while the thread reads, and answers as a job handed every count does', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`src/many/user${String(i).padStart(3, '0')}.ts`, `export const use${i} = loadConfig();\nexport const again${i} = loadConfig();\n`])));
    const index = await indexed();
    const files = index.referenceCandidates('loadConfig');
    // Gone since it was indexed: a file the thread counts without reading still counts.
    fs.rmSync(path.join(repo, files[files.length - 1]));
    const handedEveryCount = (await runSymbolJob(
      { kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files, timeMs: 30_000, maxReferences: 10, indexed: index.usesOf('loadConfig', files) },
      neverStop,
    )) as ReferenceJobResult;
    const outcome = await findReferences(await ReadBoundary.create(repo, []), index, 'loadConfig', files, 10);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.result, handedEveryCount);
    assert.ok((handedEveryCount.counted?.files ?? 0) > 100, 'most files counted, not read');
  });

  /** Runs each reference job in process, as the thread would, and keeps what it was handed. */
  function recordingRunner(jobs: ReferenceJob[]): ReferenceJobRunner {
    return async (job) => {
      jobs.push(structuredClone(job));
      return { ok: true, result: (await runSymbolJob(job, neverStop)) as ReferenceJobResult };
    };
  }

  it('hands the thread only the first files when they hold enough, then only the later files the index holds no count for, and answers as a job handed every count does', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`src/many/user${String(i).padStart(3, '0')}.ts`, `export const use${i} = loadConfig();\nexport const again${i} = loadConfig();\n`])));
    const index = await indexed();
    // Written and indexed just now: read within the racy window, these hold no count to go by.
    const late = ['src/zz/late0.ts', 'src/zz/late1.ts'];
    writeTree(repo, Object.fromEntries(late.map((file) => [file, 'export const late = loadConfig();\n'])));
    setIndexerWallClock();
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    const files = index.referenceCandidates('loadConfig');
    assert.deepEqual(files.slice(-2), late);

    const handedEveryCount = (await runSymbolJob(
      { kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files, timeMs: 30_000, maxReferences: 10, indexed: index.usesOf('loadConfig', files) },
      neverStop,
    )) as ReferenceJobResult;
    // Counted in one sum (every candidate) or file by file (a list of some of them).
    for (const everyCandidate of [true, false]) {
      const jobs: ReferenceJob[] = [];
      const outcome = await findReferences(await ReadBoundary.create(repo, []), index, 'loadConfig', files, 10, { everyCandidate, runReferenceJob: recordingRunner(jobs) });
      assert.ok(outcome.ok);
      assert.deepEqual(outcome.result, handedEveryCount, `everyCandidate: ${everyCandidate}`);
      const headLength = jobs[0].collectBefore as number;
      assert.ok(headLength < files.length / 2, `the first job collects from ${headLength} of ${files.length} files`);
      if (everyCandidate) {
        // The files without a count go with the first ones, to be read for the total.
        assert.equal(jobs.length, 1);
        assert.deepEqual(jobs[0].files, [...files.slice(0, headLength), ...late]);
      } else {
        assert.equal(jobs.length, 2);
        assert.deepEqual(jobs[0].files, files.slice(0, headLength));
        assert.deepEqual({ files: jobs[1].files, maxReferences: jobs[1].maxReferences }, { files: late, maxReferences: 0 }, 'only the files without a count, to be read for the total');
      }
    }
  });

  it('keeps the sums it counts every candidate by equal to the files\' own counts through edits, removals and files read just after a change', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`src/many/user${String(i).padStart(2, '0')}.ts`, `export const use${i} = loadConfig(loadConfig());\n`])));
    // Lists cut at the cap: candidates for every name, whether or not what was kept names this one.
    const manyNames = (count: number): string => Array.from({ length: count }, (_, i) => `export const name${i} = ${i};`).join('\n');
    writeTree(repo, {
      'src/capped/uses.ts': `export const first = loadConfig();\n${manyNames(INDEX_LIMITS.maxReferenceNamesPerFile + 10)}\n`,
      'src/capped/other.ts': `${manyNames(INDEX_LIMITS.maxReferenceNamesPerFile + 10)}\n`,
    });
    const index = await indexed();
    assert.ok(index.referenceCandidates('loadConfig').includes('src/capped/other.ts'));
    const bySum = (): { files: number; uses: number; uncounted: string[] } => {
      const sums = index.countsOfEveryCandidate('loadConfig')!;
      return { files: sums.files, uses: sums.uses, uncounted: [...sums.uncounted].sort() };
    };
    const fileByFile = (): { files: number; uses: number; uncounted: string[] } => {
      const candidates = index.referenceCandidates('loadConfig');
      const uses = index.usesOf('loadConfig', candidates);
      return {
        files: uses.filter(Boolean).length,
        uses: uses.reduce((sum, counted) => sum + (counted?.uses ?? 0), 0),
        uncounted: candidates.filter((_, position) => !uses[position]).sort(),
      };
    };
    assert.deepEqual(bySum(), fileByFile());
    assert.ok(bySum().uses > 40);

    writeTree(repo, { 'src/many/user00.ts': 'export const none = 0;\n', 'src/many/user01.ts': 'export const more = loadConfig() + loadConfig() + loadConfig();\n', 'src/late.ts': 'loadConfig();\n' });
    fs.rmSync(path.join(repo, 'src/many/user02.ts'));
    setIndexerWallClock(); // the edits and the new file are read just after they were written
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    assert.deepEqual(bySum().uncounted, ['src/capped/other.ts', 'src/late.ts', 'src/many/user01.ts']);
    assert.deepEqual(bySum(), fileByFile());

    setIndexerWallClock(() => Date.now() + 60_000);
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    assert.deepEqual(bySum().uncounted, ['src/capped/other.ts'], 'a cut list that does not name it');
    assert.deepEqual(bySum(), fileByFile());
    assert.equal(index.countsOfEveryCandidate('x'.repeat(1000)), undefined, 'a name longer than the lists hold has no counts to sum');
  });

  it('hands the thread the later files in order, with their counts, when the first files did not hold enough, and answers as a job handed every count does', async () => {
    // Three uses on one line: the first files' counts promise more references than their lines hold.
    writeTree(repo, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`src/many/user${String(i).padStart(3, '0')}.ts`, `export const use${i} = loadConfig(loadConfig(loadConfig()));\n`])));
    const index = await indexed();
    // Enough files without a count, past the others, to make up what the first files lack: still shown only in their turn.
    writeTree(repo, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`src/zz/late${String(i).padStart(2, '0')}.ts`, 'export const late = loadConfig();\n'])));
    setIndexerWallClock();
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    const files = index.referenceCandidates('loadConfig');
    assert.equal(files.filter((file) => file.startsWith('src/zz/')).length, 20);
    const handedEveryCount = (await runSymbolJob(
      { kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files, timeMs: 30_000, maxReferences: 200, indexed: index.usesOf('loadConfig', files) },
      neverStop,
    )) as ReferenceJobResult;
    assert.ok((handedEveryCount.counted?.files ?? 0) > 50, 'past the first files, most counted, not read');
    for (const everyCandidate of [true, false]) {
      const jobs: ReferenceJob[] = [];
      const outcome = await findReferences(await ReadBoundary.create(repo, []), index, 'loadConfig', files, 200, { everyCandidate, runReferenceJob: recordingRunner(jobs) });
      assert.ok(outcome.ok);
      assert.deepEqual(outcome.result, handedEveryCount, `everyCandidate: ${everyCandidate}`);
      assert.equal(jobs.length, 2);
      const headLength = jobs[0].collectBefore as number;
      assert.ok(jobs[0].maxReferences === 200 && headLength < files.length);
      // With every candidate, the files without a count went with the first ones, and are read again in their turn.
      assert.equal(jobs[0].files.length, everyCandidate ? headLength + 20 : headLength);
      assert.deepEqual(jobs[1].files, files.slice(headLength), 'the rest, in order');
      assert.deepEqual(jobs[1].indexed, index.usesOf('loadConfig', files.slice(headLength)), 'with their counts');
      assert.equal(jobs[1].maxReferences, 200 - outcome.result.references.filter((reference) => files.indexOf(reference.relativePath) < headLength).length);
    }
  });

  it('counts from the first later file with a count when the first files held exactly enough, and answers as a job handed every count does', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`src/many/user${String(i).padStart(3, '0')}.ts`, `export const use${i} = loadConfig(loadConfig(loadConfig()));\n`])));
    const index = await indexed();
    const files = index.referenceCandidates('loadConfig');
    // As many as the first 64 files hold (the first job's files, for so few): the last of them gives the last one collected.
    const first64 = (await runSymbolJob({ kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files: files.slice(0, 64), timeMs: 30_000, maxReferences: 1_000 }, neverStop)) as ReferenceJobResult;
    const maxReferences = first64.references.length;
    const handedEveryCount = (await runSymbolJob(
      { kind: 'references', root: repo, denyRead: [], symbol: 'loadConfig', files, timeMs: 30_000, maxReferences, indexed: index.usesOf('loadConfig', files) },
      neverStop,
    )) as ReferenceJobResult;
    assert.equal(handedEveryCount.counted?.from, 64, 'counting starts right after the first 64 files');
    const jobs: ReferenceJob[] = [];
    const outcome = await findReferences(await ReadBoundary.create(repo, []), index, 'loadConfig', files, maxReferences, { everyCandidate: true, runReferenceJob: recordingRunner(jobs) });
    assert.ok(outcome.ok);
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0].collectBefore, 64);
    assert.deepEqual(outcome.result, handedEveryCount);
  });

  it('adds a newly applied index\'s identifier lists a slice at a time, letting the event loop run between slices, and answers as lists added at once do', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`src/many/user${String(i).padStart(3, '0')}.ts`, `export const use${i} = loadConfig(${i});\n`])));
    const result = (await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: nothingKnown(), timeMs: 30_000 }, neverStop)) as IndexJobResult;
    const sliced = new FolderIndex(repo, []);
    sliced.apply(result);
    assert.equal(sliced.listsPending, sliced.files.size, 'no list added with the files');
    // No time at all for a slice: the fewest files a slice adds, every slice.
    const adding = turnsWhile(sliced.listsAdded('background', 0));
    assert.equal(sliced.listsPending, sliced.files.size, 'none added in the turn that asked: it may be the one that applied the files');
    const { turns } = await adding;
    assert.ok(turns > 2, `the event loop ran ${turns} time(s) while the lists were added`);
    assert.equal(sliced.listsPending, 0);
    const atOnce = new FolderIndex(repo, []);
    atOnce.apply(result);
    const files = atOnce.referenceCandidates('loadConfig');
    assert.equal(files.length, 104);
    assert.deepEqual(sliced.referenceCandidates('loadConfig'), files);
    assert.deepEqual(sliced.usesOf('loadConfig', files), atOnce.usesOf('loadConfig', files));
  });

  it('adds the lists ahead of a map\'s packing once find_references waits for them, as it does not for upkeep alone', async () => {
    writeTree(repo, Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`src/many/user${String(i).padStart(3, '0')}.ts`, `export const use${i} = loadConfig(${i});\n`])));
    const result = (await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: nothingKnown(), timeMs: 30_000 }, neverStop)) as IndexJobResult;
    const recordsPackedWhileAdding = async (ask: (index: FolderIndex) => Promise<unknown>): Promise<number> => {
      const index = new FolderIndex(repo, []);
      index.apply(result);
      let packed = 0;
      const packing = packInSlices(Array.from({ length: 32 * 1_000 }, (_, i) => `f${i}`), 1, (item) => ((packed += 1), [item]), -1, AS_UPKEEP);
      // The walk's own, then a second asker: find_references, or more upkeep.
      await Promise.all([index.listsAdded('background', 0), ask(index)]);
      const during = packed;
      await packing;
      return during;
    };
    const forUpkeep = await recordsPackedWhileAdding((index) => index.listsAdded('background', 0));
    const forACall = await recordsPackedWhileAdding((index) => usesInSlices(index, 'loadConfig', []));
    assert.ok(forACall * 2 <= forUpkeep, `${forACall} records packed while the lists were added for a call, ${forUpkeep} for upkeep alone`);
  });

  it('keeps its sums as a fresh index\'s when a file is changed or removed before its list was added', async () => {
    const index = new FolderIndex(repo, []);
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: nothingKnown(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    writeTree(repo, { 'src/uses.ts': 'export const once = loadConfig();\n' });
    fs.rmSync(path.join(repo, 'src/crlf.ts'));
    index.apply((await runSymbolJob({ kind: 'index', root: repo, denyRead: [], known: await index.known(), timeMs: 30_000 }, neverStop)) as IndexJobResult);
    await index.listsAdded('background');
    const fresh = await indexed();
    const files = fresh.referenceCandidates('loadConfig');
    assert.deepEqual(index.referenceCandidates('loadConfig'), files);
    assert.deepEqual(index.usesOf('loadConfig', files), fresh.usesOf('loadConfig', files));
    assert.deepEqual(index.countsOfEveryCandidate('loadConfig'), fresh.countsOfEveryCandidate('loadConfig'));
  });

  it('looks the counts up a slice at a time, letting the event loop run between slices, and gives what one look-up gives', async () => {
    const index = await indexed();
    const files = index.referenceCandidates('loadConfig').sort();
    assert.equal(files.length, 4);
    let ranBetween = false;
    setImmediate(() => (ranBetween = true));
    const sliced = await usesInSlices(index, 'loadConfig', files, 3);
    assert.equal(ranBetween, true);
    assert.deepEqual(sliced, index.usesOf('loadConfig', files));
    assert.equal(sliced.length, 4);
  });

  it('finds a C# name that is also a contextual keyword, from the index and by a parse', async () => {
    fs.writeFileSync(path.join(repo, 'src', 'Groups.cs'), 'class Groups {\n  void Take(int group) {\n    Use(group);\n  }\n}\n');
    fs.writeFileSync(path.join(repo, 'src', 'Mentions.cs'), '// group\nclass Mentions {\n  int Count(int group) => group;\n}\n');
    const index = await indexed();
    const fromIndex = await search(index, 'group', true);
    const parsed = await search(index, 'group', false);
    assert.deepEqual(fromIndex.references, parsed.references);
    assert.deepEqual(
      parsed.references.map((reference) => `${reference.relativePath}:${reference.line}`),
      ['src/Groups.cs:2', 'src/Groups.cs:3', 'src/Mentions.cs:3'],
    );
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoMapTokensFor } from '../../../server/src/model/budget';
import type { FileIndex, IndexedSymbol } from '../../../server/src/symbols/indexer';
import { mapInputsFrom, rankFiles } from '../../../server/src/symbols/mapRanking';
import { BuiltMap, estimateTokens, formatRepoMap, mapInputs, RepoMaps } from '../../../server/src/symbols/repoMap';
import { closeSymbolPool, FolderIndex } from '../../../server/src/symbols/symbolIndex';
import { turnsWhile } from '../../support/eventLoopTurns';
import { definingFile } from '../../support/indexedFiles';
import { writeTree } from '../../support/toolFixture';

/** The file names of a map, in the order it lists them. */
function listedFiles(map: string): string[] {
  return map.split('\n').filter((line) => !line.startsWith(' ')).map((line) => line.replace(/:$/, ''));
}

/**
 * core.ts is used by every other file; util.ts by two; helpers.ts defines
 * only private helpers, which every file calls (so only the weighting, not a
 * lack of use, can put it low); lonely.ts is used by no one; internal/ is
 * denied by the folder's deny list.
 */
function writeProject(root: string): void {
  const caller = (name: string, extra: string): string =>
    [
      "import { createWidgetStore, WidgetOptions } from './core';",
      "import { _pad, _trim } from './helpers';",
      extra,
      `export function ${name}(options: WidgetOptions): string {`,
      '  const store = createWidgetStore(options);',
      '  return _pad(_trim(String(store)));',
      '}',
      '',
    ].join('\n');
  writeTree(root, {
    'core.ts': 'export interface WidgetOptions {\n  size: number;\n}\nexport function createWidgetStore(options: WidgetOptions): object {\n  return { options };\n}\n',
    'util.ts': 'export function shout(text: string): string {\n  return text.toUpperCase();\n}\n',
    'helpers.ts': 'export function _pad(text: string): string {\n  return ` ${text} `;\n}\nexport function _trim(text: string): string {\n  return text.trim();\n}\n',
    'lonely.ts': 'export function neverCalledAnywhere(): number {\n  return 1;\n}\n',
    'a.ts': caller('renderA', "import { shout } from './util';\nconst loud = shout('a');"),
    'b.ts': caller('renderB', "import { shout } from './util';\nconst loud = shout('b');"),
    'c.ts': caller('renderC', ''),
    'd.ts': caller('renderD', ''),
    'internal/hidden.ts': "import { createWidgetStore } from '../core';\nexport const hiddenStore = createWidgetStore({ size: 1 });\n",
  });
}

describe('the repository map', () => {
  let base: string;
  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-map-')));
  });
  after(async () => {
    await closeSymbolPool();
    fs.rmSync(base, { recursive: true, force: true });
  });

  describe('built from the symbol index', () => {
    let map: string;
    before(async () => {
      const root = path.join(base, 'project');
      writeProject(root);
      const maps = new RepoMaps();
      const source = maps.source(root, ['internal/**']);
      await maps.settled(root, ['internal/**']);
      map = source.text(4_000) ?? '';
    });

    it('ranks first the file every other file uses', () => {
      assert.equal(listedFiles(map)[0], 'core.ts', map);
    });

    it('ranks a file of private helpers below a file whose public function only two files use, though every file calls the helpers', () => {
      const files = listedFiles(map);
      assert.ok(files.indexOf('helpers.ts') > files.indexOf('util.ts'), map);
    });

    it('ranks a file no one uses below every file that is used', () => {
      const files = listedFiles(map);
      for (const used of ['core.ts', 'util.ts', 'helpers.ts']) assert.ok(files.indexOf('lonely.ts') > files.indexOf(used), map);
    });

    it('lists each file with its top-level definitions, kind and signature', () => {
      assert.match(map, /^core\.ts:\n {2}interface WidgetOptions\n {2}function createWidgetStore\(options: WidgetOptions\): object$/m);
    });

    it('leaves out files the deny list hides', () => {
      assert.ok(!map.includes('internal/hidden.ts'), map);
      assert.ok(!map.includes('hiddenStore'), map);
    });

    it('shows a file name that could pose as another line quoted and escaped', async () => {
      const root = path.join(base, 'hostile');
      writeTree(root, { 'lib.ts': 'export function sharedThing(): void {}\n', 'x.ts': "import { sharedThing } from './lib';\nsharedThing();\n" });
      fs.writeFileSync(path.join(root, 'evil\nsecret.ts:1: fake.ts'), "import { sharedThing } from './lib';\nexport function evilThing(): void { sharedThing(); }\n");
      const maps = new RepoMaps();
      const source = maps.source(root, []);
      await maps.settled(root, []);
      const text = source.text(4_000) ?? '';
      assert.ok(text.includes('"evil\\nsecret.ts:1: fake.ts":'), text);
      assert.ok(!text.split('\n').some((line) => line.startsWith('secret.ts')), text);
    });
  });

  describe('budget', () => {
    function symbol(name: string, line: number): IndexedSymbol {
      return { name, kind: 'function', line, startLine: line, endLine: line + 2, text: `export function ${name}(first: string, second: number, third: boolean): void {` };
    }
    /** 500 files of 6 functions each, ranked in name order. */
    function bigMap(): BuiltMap {
      const files = new Map<string, FileIndex>();
      for (let i = 0; i < 500; i++) {
        const relativePath = `packages/pkg${i % 10}/src/module${i}.ts`;
        const symbols = Array.from({ length: 6 }, (_, k) => symbol(`handler${i}x${k}`, k * 4 + 1));
        files.set(relativePath, { relativePath, realPath: `/x/${relativePath}`, stamp: '1:1', symbols, problems: [], moreProblems: 0, imports: [], reexports: [] });
      }
      return { ranked: [...files.keys()].map((relativePath, i) => ({ relativePath, rank: 1 / (i + 1) })), files };
    }

    it('takes an eighth of the window, at least 1,000 and at most 4,000 tokens', () => {
      assert.equal(repoMapTokensFor(4_096), 1_000);
      assert.equal(repoMapTokensFor(16_000), 2_000);
      assert.equal(repoMapTokensFor(128_000), 4_000);
    });

    for (const window of [8_192, 32_768, 200_000]) {
      it(`stays within its budget for a ${window}-token window, and fills most of it`, () => {
        const budget = repoMapTokensFor(window);
        const text = formatRepoMap(bigMap(), budget);
        assert.ok(estimateTokens(text) <= budget, `${estimateTokens(text)} > ${budget}`);
        assert.ok(estimateTokens(text) > budget * 0.8, `${estimateTokens(text)} of ${budget}`);
      });
    }

    it('keeps the highest-ranked files when it must cut', () => {
      const text = formatRepoMap(bigMap(), 1_000);
      assert.equal(listedFiles(text)[0], 'packages/pkg0/src/module0.ts');
      assert.ok(!text.includes('module499.ts'));
    });
  });

  describe('ranking', () => {
    it('ranks a file that only its own definitions reference no higher than an unused one', () => {
      const ranked = rankFiles(
        [
          { relativePath: 'self.ts', defines: 'selfContainedThing', references: 'selfContainedThing\t40' },
          { relativePath: 'used.ts', defines: 'usefulThing', references: '' },
          { relativePath: 'user.ts', defines: '', references: 'usefulThing\t1' },
        ],
        { maxResults: 10 },
      );
      assert.deepEqual(ranked.map((file) => file.relativePath).slice(0, 1), ['used.ts']);
      const rankOf = (name: string): number => ranked.find((file) => file.relativePath === name)?.rank ?? 0;
      assert.ok(Math.abs(rankOf('self.ts') - rankOf('user.ts')) < 1e-9);
    });

    it('gives no edges to a name defined in many files, so it cannot lift them', () => {
      const files = [
        ...Array.from({ length: 30 }, (_, i) => ({ relativePath: `common${String(i).padStart(2, '0')}.ts`, defines: 'initialize', references: '' })),
        { relativePath: 'rare.ts', defines: 'parseManifest', references: '' },
        ...Array.from({ length: 5 }, (_, i) => ({ relativePath: `caller${i}.ts`, defines: '', references: 'initialize\t3\nparseManifest\t1' })),
      ];
      const ranked = rankFiles(files, { maxResults: 50 });
      assert.equal(ranked[0].relativePath, 'rare.ts');
      const common = ranked.find((file) => file.relativePath === 'common00.ts');
      const caller = ranked.find((file) => file.relativePath === 'caller0.ts');
      assert.ok(common && caller && Math.abs(common.rank - caller.rank) < 1e-9);
    });
  });

  it('gathers the ranking\'s inputs a slice at a time, letting the event loop run, and from the files as they were when asked', async () => {
    const index = new FolderIndex('/r', []);
    index.apply({ kind: 'index', updated: Array.from({ length: 500 }, (_, i) => definingFile(`f${i}.ts`, [`a${i}`, `b${i}`, `a${i}`])), removed: [], sourceFiles: 500, indexedFiles: 500, leftOut: 0, tooLarge: 0, walkComplete: true, fileCapReached: false });
    const inOnePiece = mapInputsFrom(await mapInputs(index, Infinity));
    assert.deepEqual(inOnePiece[7], { relativePath: 'f7.ts', defines: 'a7\nb7', references: 'a7\t1\nb7\t1\na7\t1' });
    // No time at all for a slice: the fewest files a slice gathers, every slice.
    const gathering = turnsWhile(mapInputs(index, 0));
    index.apply({ kind: 'index', updated: [definingFile('late.ts', ['late'])], removed: ['f0.ts'], sourceFiles: 500, indexedFiles: 500, leftOut: 0, tooLarge: 0, walkComplete: true, fileCapReached: false });
    const { value: packed, turns } = await gathering;
    assert.deepEqual(mapInputsFrom(packed), inOnePiece);
    assert.ok(turns > 5, `the event loop ran ${turns} time(s) while the inputs were gathered`);
  });
});

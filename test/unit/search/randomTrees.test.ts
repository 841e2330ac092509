import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { SearchEngine } from '../../../server/src/search/searchEngine';
import { NO_POLICY, OUTSIDE_MARKER, ripgrepOnPath, runTool } from '../../support/toolFixture';

/**
 * Trees no one would write by hand: nested `.gitignore`, `.ignore` and
 * `.rgignore` files full of negations, nested repositories, and links to
 * files inside, to directories and out of the folder. Built from fixed seeds,
 * so a failure names a tree that can be built again. Such trees found that
 * ripgrep, searching below the root, ranked the rules from above the search
 * below those inside it (ripgrepListing.ts rankingFault).
 */

const RIPGREP = ripgrepOnPath();
const SEEDS = [3, 5, 8, 13, 21, 34, 55, 89];
const TREES_PER_SEED = 2;

const DIRECTORY_NAMES = ['a', 'b', 'target', 'build', 'keep', 'src', 'node_modules', 'x'];
const FILE_NAMES = ['f.ts', 'g.log', 'h.md', 'keep.log'];
const RULES = ['target/', 'target', '/target', 'build/', '*.log', '!keep.log', '!target/', '!build/', 'a/', '!a/', 'b/*.ts', '**/x/', '!**/x/', 'src/**', '!src/f.ts', '*.md', '!*.md', 'x'];
const GLOBS = [undefined, '*.ts', '*.log', '**/*.ts', 'a/**', '*.{ts,md}', '**/target/**', 'b/*.ts'];

/** A small linear congruential generator: the same seed, the same tree. */
function randomFrom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

/** Writes one random tree under `root`, with a file outside it that links may lead to; the directories made. */
function writeRandomTree(root: string, outside: string, random: () => number): string[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const directories = [''];
  for (let i = 0; i < 14; i++) {
    const parent = pick(directories);
    if (parent.split('/').length > 3) continue;
    const directory = parent ? `${parent}/${pick(DIRECTORY_NAMES)}` : pick(DIRECTORY_NAMES);
    if (!directories.includes(directory)) directories.push(directory);
  }
  const made: string[] = [];
  for (const directory of directories) {
    const absolute = path.join(root, directory);
    try {
      fs.mkdirSync(absolute, { recursive: true });
    } catch {
      continue; // a file took the name
    }
    made.push(directory);
    for (let i = 0; i < 3; i++) {
      const file = path.join(absolute, pick(FILE_NAMES));
      if (!fs.existsSync(file)) fs.writeFileSync(file, 'needle\n');
    }
    if (directory && random() < 0.12) writeRepositoryMarker(absolute);
    for (const [name, chance] of [['.gitignore', 0.45], ['.ignore', 0.15], ['.rgignore', 0.08]] as const) {
      if (random() < chance) fs.writeFileSync(path.join(absolute, name), `${Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(RULES)).join('\n')}\n`);
    }
  }
  for (let i = 0; i < 4; i++) {
    const directory = pick(made);
    const target = pick(['f.ts', '../f.ts', 'h.md', path.join(outside, 'secret.ts'), '..', path.relative(path.join(root, directory), path.join(root, pick(made))) || '.']);
    try {
      fs.symlinkSync(target, path.join(root, directory, pick(['l.ts', 'link.md', 'ld', 'out.ts'])));
    } catch {
      // the name was taken
    }
  }
  return made;
}

/** A `.git` of a repository's shape, enough for git's rules to start afresh there. */
function writeRepositoryMarker(directory: string): void {
  fs.mkdirSync(path.join(directory, '.git'), { recursive: true });
  fs.writeFileSync(path.join(directory, '.git', 'HEAD'), 'ref: refs/heads/main\n');
}

async function answer(toolbox: Toolbox, tool: string, args: object): Promise<string> {
  const outcome = await runTool(toolbox, tool, args);
  return outcome.ok ? outcome.output : `refused: ${outcome.output}`;
}

describe('ripgrep, the walk and the warm index on random trees of nested ignore files and links', function () {
  this.timeout(120_000);
  let base: string;

  before(function () {
    if (!RIPGREP) this.skip();
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-random-')));
  });
  after(() => {
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    it(`answer every grep and find alike, from the root and below it, and the root's files as \`rg --files\` lists them (seed ${seed})`, async () => {
      const random = randomFrom(seed);
      const outside = path.join(base, `outside-${seed}`);
      fs.mkdirSync(outside, { recursive: true });
      fs.writeFileSync(path.join(outside, 'secret.ts'), `needle ${OUTSIDE_MARKER}\n`);
      for (let tree = 0; tree < TREES_PER_SEED; tree++) {
        const root = path.join(base, `tree-${seed}-${tree}`);
        writeRepositoryMarker(root);
        const directories = writeRandomTree(root, outside, random);
        const viaRipgrep = await createToolbox(root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: RIPGREP, orderedHeadStartMs: 0 }) });
        const viaWalk = await createToolbox(root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: null }) });
        const warm = new SearchEngine({ ripgrepPath: RIPGREP, fileIndex: true });
        const viaIndex = await createToolbox(root, NO_POLICY, { search: warm });
        assert.equal(await warm.prepareIndex(root, []), true);
        for (const scope of ['.', ...directories.filter(Boolean).slice(0, 4)]) {
          for (const glob of GLOBS) {
            const where = `${root} ${scope} ${glob ?? ''}`;
            const grep = { pattern: 'needle', path: scope, ...(glob ? { glob } : {}) };
            const expected = await answer(viaWalk, 'grep_files', grep);
            assert.equal(await answer(viaRipgrep, 'grep_files', grep), expected, `grep through ripgrep, ${where}`);
            assert.equal(await answer(viaIndex, 'grep_files', grep), expected, `grep on the warm index, ${where}`);
            assert.doesNotMatch(expected, new RegExp(OUTSIDE_MARKER), where);
            const find = { pattern: glob ?? '**', path: scope };
            const found = await answer(viaWalk, 'find_files', find);
            assert.equal(await answer(viaIndex, 'find_files', find), found, `find on the warm index, ${where}`);
            if (scope === '.' && glob === undefined) {
              // Ours lists the links to files inside as well; ripgrep lists no link.
              const listed = execFileSync(RIPGREP as string, ['--no-config', '--no-ignore-global', '--files', '--hidden', '-g', '!.git', '-g', '!node_modules/'], { cwd: root, encoding: 'utf8' })
                .split('\n')
                .filter((file) => file !== '' && !/(^|\/)\.(gitignore|ignore|rgignore)$/.test(file))
                .sort();
              const ours = expected.startsWith('No matches') ? [] : [...new Set(expected.split('\n').map((line) => line.slice(0, line.indexOf(':'))))];
              assert.deepEqual(ours.filter((file) => !fs.lstatSync(path.join(root, file)).isSymbolicLink()).sort(), listed, `the files rg --files lists, ${root}`);
            }
          }
        }
      }
    });
  }
});

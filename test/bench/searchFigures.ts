import * as path from 'node:path';
import * as fs from 'node:fs';
import { findRipgrep } from '../../server/src/search/locateRipgrep';
import { SearchEngine } from '../../server/src/search/searchEngine';
import { SearchPool } from '../../server/src/search/searchPool';
import { createToolbox } from '../../server/src/read/toolbox';
import type { Toolbox } from '../../server/src/read/types';
import { NO_POLICY } from '../support/toolFixture';
import { generateRepo, GeneratedRepo } from './generateRepo';
import { formatMs, formatRatio, median, Row, timed } from './measure';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/**
 * The search figures of `npm run bench` (issue 17): grep_files and
 * find_files against the fair ripgrep reference for each kind of search —
 * `rg` for a full scan, `rg --sort path | head -N` for a capped one (we
 * return the first N in path order), `rg --files -g GLOB` for a selective
 * glob — on a generated 20,000- and 100,000-file tree, and on vite when
 * BENCH_VITE=<folder> is set. Cold: no warm index (a fresh engine with the
 * index off). Warm: the folder's index built and watched. Each figure is the
 * median of the runs with min and max; ours and the reference interleave.
 * Beside them, on the 20,000-file tree and vite, a grep without ripgrep split
 * across two search threads against the same on one (no goal of its own).
 */

interface Tree {
  name: string;
  root: string;
  /** A literal in a few files: every search reads the whole tree. */
  rare: string;
  /** A word in most files: the cap ends the search. */
  common: string;
  /** A glob matching a handful of files. */
  selective: string;
  /** A glob matching more than the cap. */
  broad: string;
}

const GREP_CAP = 200;
const FIND_CAP = 500;
const BASE = ['--no-config', '--hidden', '--glob', '!.git'];

function spreadOf(values: number[]): string {
  return `${formatMs(median(values))} (${formatMs(Math.min(...values))}–${formatMs(Math.max(...values))})`;
}

/** Runs `rg ARGS | head -N` as a shell would: ripgrep ends when head has its lines. */
function timePipeline(rg: string, args: string[], cwd: string, lines?: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(rg, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    let seen = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      if (lines === undefined) return;
      for (const byte of chunk) if (byte === 10) seen += 1;
      if (seen >= lines) child.kill();
    });
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - started));
  });
}

function row(figure: string, ours: number[], reference: number[], referenceName: string, goal: number): Row {
  const ratios = ours.map((ms, i) => ms / reference[i]);
  const ratio = median(ratios);
  return {
    figure,
    ours: spreadOf(ours),
    reference: `${referenceName}: ${spreadOf(reference)}`,
    ratio: `${formatRatio(ratio)} (${formatRatio(Math.min(...ratios))}–${formatRatio(Math.max(...ratios))})`,
    goal: `<= ${goal}x`,
    verdict: ratio <= goal ? 'yes' : 'NO',
  };
}

/** A side-by-side figure with no goal of its own: ours against another way of ours. */
function comparison(figure: string, ours: number[], reference: number[], referenceName: string): Row {
  return { ...row(figure, ours, reference, referenceName, Number.POSITIVE_INFINITY), goal: '—', verdict: '-' };
}

/** Warm-up rounds of the split rows: each search thread compiles the walk on its first searches. */
const SPLIT_WARMUP = 3;

/**
 * A grep ripgrep will not search, split across two search threads
 * (grepShards.ts), against the same grep on one thread: ripgrep off and no
 * index, alternated, rare and common words.
 */
async function splitFigures(tree: Tree, rows: Row[], runs: number): Promise<void> {
  const splitPool = new SearchPool({ maxWorkers: 2 });
  const singlePool = new SearchPool({ maxWorkers: 1 });
  try {
    const split = await createToolbox(tree.root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: null, pool: splitPool, timeoutMs: 120_000 }) });
    const single = await createToolbox(tree.root, NO_POLICY, { search: new SearchEngine({ ripgrepPath: null, pool: singlePool, timeoutMs: 120_000 }) });
    for (const [what, pattern] of [['rare', tree.rare], [`common (capped at ${GREP_CAP})`, tree.common]]) {
      const splitMs: number[] = [];
      const singleMs: number[] = [];
      for (let i = 0; i < SPLIT_WARMUP + runs; i++) {
        const a = await timed(() => split.run('grep_files', JSON.stringify({ pattern })));
        const b = await timed(() => single.run('grep_files', JSON.stringify({ pattern })));
        if (a.value.output !== b.value.output) throw new Error(`grep_files "${pattern}" on ${tree.name}: the split and one thread answer differently`);
        if (i >= SPLIT_WARMUP) {
          splitMs.push(a.ms);
          singleMs.push(b.ms);
        }
      }
      rows.push(comparison(`${tree.name}: grep ${what} "${pattern}" without ripgrep, split across two search threads`, splitMs, singleMs, 'one search thread'));
    }
  } finally {
    await splitPool.close();
    await singlePool.close();
  }
}

export async function searchFigures(work: string, small: GeneratedRepo, rows: Row[], iterations: number, log: (message: string) => void): Promise<void> {
  const ripgrep = await findRipgrep(undefined);
  if (!ripgrep) {
    rows.push({ figure: 'search (all figures)', ours: 'n/a: no rg on PATH', reference: '-', ratio: '-', goal: '-', verdict: '-' });
    return;
  }
  const runs = Math.max(3, Math.min(iterations, 7));
  log(`search: ${ripgrep.version}, ${runs} runs per figure`);
  const trees: Tree[] = [{ name: '20k', root: small.root, rare: small.literal, common: 'const', selective: '**/value1234*.ts', broad: '**/*.ts' }];
  log('search: generating a 100,000-file tree…');
  const large = generateRepo(path.join(work, 'search-100k'), 100_000, { tiny: true });
  trees.push({ name: '100k', root: large.root, rare: 'value99999 =', common: 'export', selective: '**/value1234*.ts', broad: '**/*.ts' });
  const vite = process.env.BENCH_VITE;
  if (vite && fs.existsSync(vite)) trees.push({ name: 'vite', root: fs.realpathSync(vite), rare: 'resolveWidgetConfig', common: 'import', selective: '**/vite.config.ts', broad: '**/*.ts' });

  for (const tree of trees) {
    const coldPool = new SearchPool();
    const warmPool = new SearchPool();
    const cold = new SearchEngine({ ripgrepPath: ripgrep.path, pool: coldPool, timeoutMs: 120_000 });
    const warm = new SearchEngine({ ripgrepPath: ripgrep.path, pool: warmPool, timeoutMs: 120_000, fileIndex: true });
    try {
      const coldBox = await createToolbox(tree.root, NO_POLICY, { search: cold });
      const warmBox = await createToolbox(tree.root, NO_POLICY, { search: warm });
      // Settled: the index built and the small files kept, as in a discussion past its first searches.
      const indexed = await warm.prepareIndex(tree.root, [], { waitForContents: true });
      if (!indexed) log(`search: no warm index on ${tree.name} (past the walk's entry cap)`);
      const cases: Array<{ figure: string; tool: string; args: object; reference: string[]; head?: number; goal: number; warmGoal: number; refName: string }> = [
        { figure: `grep rare "${tree.rare}"`, tool: 'grep_files', args: { pattern: tree.rare }, reference: [...BASE, '--fixed-strings', '--regexp', tree.rare, './'], goal: 1.2, warmGoal: 1.2, refName: 'rg' },
        { figure: `grep common "${tree.common}" (capped at ${GREP_CAP})`, tool: 'grep_files', args: { pattern: tree.common }, reference: [...BASE, '--sort', 'path', '--regexp', tree.common, './'], head: GREP_CAP, goal: 1.2, warmGoal: 1.2, refName: `rg --sort path | head -${GREP_CAP}` },
        { figure: `find "${tree.selective}"`, tool: 'find_files', args: { pattern: tree.selective }, reference: [...BASE, '--files', '--glob', tree.selective, './'], goal: 1.2, warmGoal: 0.5, refName: 'rg --files -g' },
        { figure: `find "${tree.broad}" (capped at ${FIND_CAP})`, tool: 'find_files', args: { pattern: tree.broad }, reference: [...BASE, '--sort', 'path', '--files', '--glob', tree.broad, './'], head: FIND_CAP, goal: 1.2, warmGoal: 0.5, refName: `rg --files -g --sort path | head -${FIND_CAP}` },
      ];
      for (const testCase of cases) {
        const coldMs: number[] = [];
        const warmMs: number[] = [];
        const reference: number[] = [];
        let answer: string | undefined;
        const runTool = async (toolbox: Toolbox): Promise<number> => {
          const { ms, value } = await timed(() => toolbox.run(testCase.tool, JSON.stringify(testCase.args)));
          if (!value.ok) throw new Error(`${testCase.tool} failed: ${value.output}`);
          if (answer === undefined) answer = value.output;
          else if (value.output !== answer) throw new Error(`${testCase.tool} ${JSON.stringify(testCase.args)} on ${tree.name}: cold and warm answers differ`);
          return ms;
        };
        for (let i = 0; i < runs + 1; i++) {
          const steps = [
            async () => reference.push(await timePipeline(ripgrep.path, testCase.reference, tree.root, testCase.head)),
            async () => coldMs.push(await runTool(coldBox)),
            async () => warmMs.push(await runTool(warmBox)),
          ];
          for (let k = 0; k < steps.length; k++) await steps[(i + k) % steps.length]();
          if (i === 0) {
            // One warm-up round: the page cache and the search threads.
            coldMs.length = 0;
            warmMs.length = 0;
            reference.length = 0;
          }
        }
        rows.push(row(`${tree.name}: ${testCase.figure}, cold`, coldMs, reference, testCase.refName, testCase.goal));
        if (indexed) rows.push(row(`${tree.name}: ${testCase.figure}, warm index`, warmMs, reference, testCase.refName, testCase.warmGoal));
      }
      // Not on the 100,000-file tree: a walk of it on one thread takes seconds a round.
      if (tree.name !== '100k') await splitFigures(tree, rows, runs);
      log(`search ${tree.name}: cold ${JSON.stringify({ ...cold.counts, fallbackReasons: [...new Set(cold.counts.fallbackReasons)] })}, warm ${JSON.stringify({ ...warm.counts, fallbackReasons: [...new Set(warm.counts.fallbackReasons)] })}`);
    } finally {
      await coldPool.close();
      await warmPool.close();
    }
  }
  fs.rmSync(large.root, { recursive: true, force: true });
}

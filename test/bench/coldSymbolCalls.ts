import { spawn } from 'node:child_process';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS } from '../../shared/serverNodeFlags';
import { tuneHeap } from '../../server/src/heapTuning';
import { createToolbox } from '../../server/src/read/toolbox';
import { resetSymbolIndexes } from '../../server/src/symbols/symbolIndex';
import { NO_POLICY } from '../support/toolFixture';
import { longestStallDuring, timed } from './measure';

/**
 * Cold symbol calls, each on a new index, in a process started with the
 * server's own Node flags and heap settings. The index a walk brings is copied into the main
 * thread and applied there, and what that costs depends on the main thread's
 * young generation: with the bench's default (up to 16 MB semi-spaces, where
 * the server has 2 MB) each collection copied the parsed files received so far,
 * and stalls were up to 37 ms that the server does not have.
 */

export interface ColdCase {
  tool: string;
  args: Record<string, unknown>;
}

export interface ColdCalls {
  /** Per case, each call's time in ms. */
  ms: number[][];
  /** Per case, whether every call answered from a complete index. */
  complete: boolean[];
  /** The longest main-thread stall during each call, in ms, every case's calls in turn. */
  stalls: number[];
}

/** Runs `runs` cold calls of each case on `root` in a child process with the server's flags. */
export function coldSymbolCalls(root: string, cases: readonly ColdCase[], runs: number): Promise<ColdCalls> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...SERVER_ENVIRONMENT, BENCH_COLD_SYMBOLS: JSON.stringify({ root, cases, runs }) };
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, __filename], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the cold symbol calls' process exited with ${code}`));
      else resolve(JSON.parse(output) as ColdCalls);
    });
  });
}

async function runColdCalls(root: string, cases: readonly ColdCase[], runs: number): Promise<ColdCalls> {
  const toolbox = await createToolbox(root, NO_POLICY);
  const calls: ColdCalls = { ms: [], complete: [], stalls: [] };
  for (const testCase of cases) {
    const ms: number[] = [];
    let complete = true;
    for (let i = 0; i < runs; i++) {
      await resetSymbolIndexes();
      const { stallMs, value: call } = await longestStallDuring(() => timed(() => toolbox.run(testCase.tool, JSON.stringify(testCase.args))));
      const outcome = call.value;
      ms.push(call.ms);
      calls.stalls.push(stallMs);
      if (!outcome.ok) throw new Error(`${testCase.tool} failed: ${outcome.output}`);
      complete &&= !outcome.output.includes('[index incomplete');
    }
    calls.ms.push(ms);
    calls.complete.push(complete);
  }
  await resetSymbolIndexes();
  return calls;
}

if (require.main === module) {
  // As the server's entry does first: the flags alone would also size the symbol thread's young generation.
  tuneHeap();
  const { root, cases, runs } = JSON.parse(process.env.BENCH_COLD_SYMBOLS as string) as { root: string; cases: ColdCase[]; runs: number };
  runColdCalls(root, cases, runs).then(
    (calls) => {
      process.stdout.write(JSON.stringify(calls));
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}

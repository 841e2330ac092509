import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** Small helpers for the benchmark: timing, medians, a reference process. */

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/**
 * The longest the event loop was held while `work` ran, by
 * monitorEventLoopDelay at 1 ms. Read once the histogram's timer has fired
 * after the work: a stall that ends the work is recorded only then.
 */
export async function longestStallDuring<T>(work: () => Promise<T>): Promise<{ stallMs: number; value: T }> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  try {
    const value = await work();
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
    return { stallMs: loop.max / 1e6, value };
  } finally {
    loop.disable();
  }
}

/** Runs a command to completion, reading (and dropping) its output as a caller of it would. Returns the wall time. */
export function timeProcess(command: string, args: string[], cwd: string): Promise<{ ms: number; stdoutBytes: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let stdoutBytes = 0;
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk: Buffer) => (stdoutBytes += chunk.length));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - started, stdoutBytes, code }));
  });
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}

export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : 'n/a';
}

export interface Row {
  figure: string;
  ours: string;
  reference: string;
  ratio: string;
  goal: string;
  verdict: string;
}

export function printTable(rows: Row[]): void {
  const header: Row = { figure: 'Figure', ours: 'Ours', reference: 'Reference point', ratio: 'Ratio', goal: 'Goal', verdict: 'Met' };
  const all = [header, ...rows];
  const keys = Object.keys(header) as Array<keyof Row>;
  const widths = keys.map((key) => Math.max(...all.map((row) => row[key].length)));
  const line = (row: Row): string => `| ${keys.map((key, i) => row[key].padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { median } from './measure';

/**
 * Two readings of the machine itself, printed beside its description so that
 * runs on different machines can be told apart by more than their CPU names:
 * machines of one kind have differed twofold in what the figures time, most
 * of it work that goes through the kernel. Not figures: nothing is compared
 * with them.
 *
 * - How long `spawn()` holds the calling thread. Starting a program copies
 *   the process that starts it, at a cost that grows with that process (the
 *   server's census and every search start ripgrep this way), and the thread
 *   waits for the copy.
 * - A small append to a file, as each saved event is written.
 */
export interface MachineReadings {
  /** Median time `spawn()` of Node's own binary took to return, in this process. */
  spawnMs: number;
  /** This process's resident size while it was measured. */
  residentMb: number;
  /** Median time of one 300-byte `appendFileSync`. */
  appendUs: number;
}

const SPAWNS = 15;
const APPENDS = 2_000;

export async function readMachine(scratchDir: string): Promise<MachineReadings> {
  const spawnTimes: number[] = [];
  for (let i = 0; i < SPAWNS; i++) {
    spawnTimes.push(
      await new Promise<number>((resolve, reject) => {
        const started = performance.now();
        const child = spawn(process.execPath, ['--version'], { stdio: 'ignore' });
        const held = performance.now() - started;
        child.on('error', reject);
        child.on('close', () => resolve(held));
      }),
    );
  }
  const file = path.join(scratchDir, 'append-reading.jsonl');
  const line = `${JSON.stringify({ type: 'tool_result', seq: 1, text: 'x'.repeat(260) })}\n`;
  const appendTimes: number[] = [];
  try {
    for (let i = 0; i < APPENDS; i++) {
      const started = performance.now();
      fs.appendFileSync(file, line);
      appendTimes.push((performance.now() - started) * 1000);
    }
  } finally {
    fs.rmSync(file, { force: true });
  }
  return { spawnMs: median(spawnTimes), residentMb: process.memoryUsage().rss / 2 ** 20, appendUs: median(appendTimes) };
}

export function describeReadings(readings: MachineReadings): string {
  return `spawn() held its thread ${readings.spawnMs.toFixed(1)} ms (median of ${SPAWNS}, this process at ${readings.residentMb.toFixed(0)} MB resident); a 300-byte append to a file took ${readings.appendUs.toFixed(1)} µs (median of ${APPENDS})`;
}

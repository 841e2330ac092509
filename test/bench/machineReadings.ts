import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { median } from './measure';

/**
 * Two readings of the machine itself, printed beside its description so that
 * runs on different machines can be told apart by more than their CPU names:
 * two machines of one kind have differed twofold in what the figures time.
 * Not figures: nothing is compared with them.
 *
 * - How long `spawn()` holds the calling thread. On Linux, starting a
 *   program copies the process that starts it, at a cost that grows with
 *   that process, and the thread waits for the copy: the server's census
 *   starts ripgrep this way on its main thread, and a grep that goes to
 *   ripgrep from a search thread.
 * - A small append to a file, as each saved event is written.
 */
export interface MachineReadings {
  /** Median time `spawn()` of Node's own binary took to return, in this process. */
  spawnMs: number;
  /** This process's resident size just before the spawns. */
  residentMb: number;
  /** Median time of one `appendFileSync` of APPENDED_BYTES. */
  appendUs: number;
}

const SPAWNS = 15;
const APPENDS = 2_000;
/** A saved event's size, about: a JSON line of 300 bytes with its newline. */
const APPENDED_LINE = `${JSON.stringify({ type: 'tool_result', seq: 1, text: 'x'.repeat(259) })}\n`;
export const APPENDED_BYTES = Buffer.byteLength(APPENDED_LINE);

export async function readMachine(scratchDir: string): Promise<MachineReadings> {
  const residentMb = process.memoryUsage().rss / 2 ** 20;
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
  const appendTimes: number[] = [];
  try {
    for (let i = 0; i < APPENDS; i++) {
      const started = performance.now();
      fs.appendFileSync(file, APPENDED_LINE);
      appendTimes.push((performance.now() - started) * 1000);
    }
  } finally {
    fs.rmSync(file, { force: true, maxRetries: 3 });
  }
  return { spawnMs: median(spawnTimes), residentMb, appendUs: median(appendTimes) };
}

export function describeReadings(readings: MachineReadings): string {
  return `spawn() held its thread ${readings.spawnMs.toFixed(1)} ms (median of ${SPAWNS}, this process at ${readings.residentMb.toFixed(0)} MB resident); a ${APPENDED_BYTES}-byte append to a file took ${readings.appendUs.toFixed(1)} µs (median of ${APPENDS})`;
}

import { performance } from 'node:perf_hooks';

/**
 * Work a bench section leaves running in the bench's own process. The
 * discuss/start section once left a repository map indexing here, which
 * held one of the two CPUs through the streaming section after it: the
 * fresh servers' first turns measured twice as slow, and the raw `openai`
 * client, which runs in this process, slowed more than the server, which
 * flattered the whole reply. Every section must leave the process idle.
 */

/** A section that leaves more than this share of one CPU busy is reported. */
export const LEFTOVER_BUSY_SHARE = 0.25;

/** How long the process is watched after each section. */
export const LEFTOVER_WINDOW_MS = 300;

/**
 * The share of one CPU the whole process (every thread: workers and V8's
 * own as well as the main one) spends while the caller waits `windowMs`.
 */
export async function busyShare(windowMs = LEFTOVER_WINDOW_MS): Promise<number> {
  const before = process.cpuUsage();
  const started = performance.now();
  await new Promise<void>((resolve) => setTimeout(resolve, windowMs));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (performance.now() - started);
}

/** The report line for a section that left work running, or undefined when it left the process idle. */
export function leftoverNote(section: string, share: number): string | undefined {
  if (!(share > LEFTOVER_BUSY_SHARE)) return undefined;
  return `after the ${section} section the bench's own process kept ${(share * 100).toFixed(0)}% of a CPU busy for ${LEFTOVER_WINDOW_MS} ms: the figures after it ran beside that work`;
}

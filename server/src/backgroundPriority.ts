import * as os from 'node:os';

/**
 * How much lower than the main thread the background worker threads run
 * (the symbol index): the main thread streams every discussion.
 */
export const BACKGROUND_NICE = 10;

/** The lowest priority Linux has. */
const LOWEST_PRIORITY = 19;

/**
 * Lowers the calling worker thread's scheduling priority, so that on a busy
 * machine its work waits for the main thread rather than the other way round:
 * the token counts, in a thread of their own then, loading their ranks (over
 * 100 ms of CPU) had the main thread queued for a CPU in the stalls over 20
 * ms while eight discussions streamed. They now share the model's thread,
 * which every reply waits on and so keeps the main thread's priority; the
 * ranks load there ahead of need (main.ts). Relative to the thread's own (inherited) priority, so a server
 * started under `nice` keeps its workers below it. Linux keeps a nice value
 * per thread; elsewhere the call would lower the whole process, main thread
 * included, so it is made on Linux only.
 *
 * Not for the search threads: they answer the model's tool calls, which the
 * user waits for, and at nice 10 a build running beside them would leave
 * them (and the ripgrep they start, which inherits it) a tenth of a CPU.
 */
export function lowerThreadPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    os.setPriority(Math.min(LOWEST_PRIORITY, os.getPriority() + BACKGROUND_NICE));
  } catch {
    // Not permitted here: the thread keeps the priority it has.
  }
}

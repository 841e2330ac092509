import * as os from 'node:os';

/**
 * The nice value of the server's worker threads (token counts, searches,
 * the symbol index): below the main thread, which streams every discussion.
 */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling worker thread's scheduling priority, so that on a busy
 * machine its work waits for the main thread rather than the other way round.
 * On two cores, the token worker loading its ranks and a search thread
 * starting kept the main thread off a CPU for about 20 ms at a time while
 * eight discussions streamed. Linux keeps a nice value per thread; elsewhere
 * the call would lower the whole process, main thread included, so it is made
 * on Linux only. A child the thread starts (ripgrep) inherits it.
 */
export function runInBackground(): void {
  if (process.platform !== 'linux') return;
  try {
    os.setPriority(BACKGROUND_NICE);
  } catch {
    // Not permitted here: the thread keeps the normal priority.
  }
}

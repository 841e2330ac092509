import { setFlagsFromString } from 'node:v8';

/**
 * Lets the main thread's heap grow by 30% past what survived the last full
 * collection instead of V8's adaptive factor (up to 4x for a process that
 * allocates fast, as streaming does): over 1,000 turns across 8 discussions,
 * about 23 MB stayed live while the old space held 75 MB, so the resident
 * size was mostly garbage waiting to be collected. Read by V8 each time it
 * sets the next collection's limit, so it takes effect when set at startup.
 */
export const HEAP_GROWING_PERCENT = 30;

/**
 * The young generation of each kind of worker thread, in MB, as a Worker's
 * `resourceLimits.maxYoungGenerationSizeMb` (V8 makes it three times a
 * semi-space).
 */
export const WORKER_YOUNG_GENERATION_MB = {
  /**
   * The search threads: 2 MB semi-spaces, as the main thread's
   * (serverNodeFlags.ts). With 1 MB, warm searches of 100,000 files took up
   * to 1.4x as long in two bench runs of four.
   */
  search: 6,
  /**
   * The symbol threads: 1 MB semi-spaces. They work in the background, on
   * trees that live a moment, and each keeps about 2 MB less for as long as
   * it lives.
   */
  background: 3,
  /**
   * The model thread: 1 MB semi-spaces. Each chunk of a reply and each text
   * counted lives a moment; with 2 MB, 1,000 turns across 8 discussions
   * ended about 3 MB higher (one section of three runs).
   */
  model: 3,
} as const;

export function tuneHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  // The command line's --max-semi-space-size sized the main thread's heap,
  // already created. Left set, it would size every worker's as well: V8 lets
  // the flag override a Worker's resourceLimits, and the token counts' thread's 4 MB
  // young generation had silently been 6 MB. Each worker is started with its
  // own (WORKER_YOUNG_GENERATION_MB); one without would get V8's default of
  // up to 16 MB per semi-space.
  setFlagsFromString('--max-semi-space-size=0');
}

import * as os from 'node:os';

/**
 * Node flags the discussion server is started with, by every client that
 * starts it (the VS Code extension, the terminal client, the tests), so they
 * run the same server.
 *
 * `--max-semi-space-size=2`: a 2 MB young generation instead of V8's default
 * of up to 16 MB per semi-space. Streaming allocates many short-lived strings;
 * the larger nursery kept ~28 MB more resident after 1,000 turns across 8
 * discussions without making the turns faster. A startup flag: V8 sizes the
 * young generation when the heap is created, so it cannot be set at runtime
 * as heapTuning.ts does for the growing factor.
 *
 * `--v8-pool-size`: V8's background threads (concurrent garbage collection
 * and compiling, for the main thread and the worker threads alike), one per
 * CPU and at most four, where Node always starts four. (Electron's Node, in
 * desktop VS Code, makes its own pool and, by its source, does not read the
 * flag; a worker given `execArgv: process.execArgv` would be refused it.) On
 * two CPUs those four each kept what they had freed in an allocator arena
 * of their own: after 1,000 turns the server's resident size went over
 * 150 MB in some runs, about 8 MB more at the median
 * (docs/performance-history.md, "The round of the tables at c52199a").
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', `--v8-pool-size=${v8PoolSize(os.availableParallelism())}`];

/**
 * Environment variables the discussion server is started with, by every
 * client that starts it, over whatever environment it would inherit or be
 * given (as vscode-languageclient puts a server's `env` over its own).
 *
 * `MALLOC_TRIM_THRESHOLD_` and `MALLOC_MMAP_THRESHOLD_` fix glibc's two
 * thresholds at their defaults (128 KiB). Left alone, glibc raises both each
 * time a large block it had mapped for itself is freed, up to 32 MiB, so
 * that later large blocks come from a thread's allocator arena, and what is
 * freed at the arena's top is no longer given back. After 1,000 turns across
 * 8 discussions the server then kept one arena 9 MB resident in some runs
 * and 3 MB in others, and its resident size went over 150 MB in about half
 * the runs; with the thresholds fixed it stayed about 10 MB lower
 * (docs/performance.md). Read by glibc as the process starts, so not
 * something the server can set for itself; other C libraries ignore them.
 */
export const SERVER_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '131072' };

/** V8's background threads for a machine with `cpus` CPUs: as many, from one to Node's four. */
export function v8PoolSize(cpus: number): number {
  return Math.min(4, Math.max(1, Math.floor(cpus)));
}

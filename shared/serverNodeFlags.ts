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
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * The environment the server is started with: the caller's, plus
 * `MALLOC_ARENA_MAX=2` unless the caller set it. glibc gives each thread that
 * allocates (the search, symbol and token workers, libuv's file threads) an
 * arena of its own, up to eight per core, and memory freed in one stays
 * resident: after 1,000 turns across 8 discussions the server held about
 * 14 MB less with two arenas, its turns no slower (docs/performance.md).
 * Other C libraries ignore the variable.
 */
export function serverEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  return { ...env, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? '2' };
}

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

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Connection } from 'vscode-languageserver/node';

/**
 * What `npm run bench` reads from inside the server: the main thread's
 * longest stall (event-loop delay) and the process's memory. Only with
 * REPO_DISCUSS_BENCH_PROBE=1 in the environment; a normal server has no
 * such request.
 */
export const BENCH_PROBE_METHOD = 'bench/probe';

export interface BenchProbeResult {
  /** Longest event-loop delay since the last reset, in ms. */
  stallMaxMs: number;
  stallP99Ms: number;
  rssBytes: number;
  heapUsedBytes: number;
}

export function installBenchProbe(connection: Connection, env: Record<string, string | undefined>): void {
  if (env.REPO_DISCUSS_BENCH_PROBE !== '1') return;
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  connection.onRequest(BENCH_PROBE_METHOD, (params: { reset?: boolean } | undefined): BenchProbeResult => {
    const memory = process.memoryUsage();
    const result = {
      stallMaxMs: delay.max / 1e6,
      stallP99Ms: delay.percentile(99) / 1e6,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
    };
    if (params?.reset) delay.reset();
    return result;
  });
}

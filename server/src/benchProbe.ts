import { openSync, readSync, writeFileSync } from 'node:fs';
import type { Session } from 'node:inspector';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import type { Connection } from 'vscode-languageserver/node';

/**
 * What `npm run bench` reads from inside the server: the main thread's
 * longest stall (event-loop delay) and the process's memory. Only with
 * REPO_DISCUSS_BENCH_PROBE=1 in the environment; a normal server has no
 * such request.
 */
export const BENCH_PROBE_METHOD = 'bench/probe';

export interface BenchProbeParams {
  reset?: boolean;
  /** Write a heap snapshot of the main thread to this file first (to find what holds memory). */
  heapSnapshot?: string;
  /** Start a CPU profile of the main thread (sampling every `cpuProfileIntervalUs`). */
  cpuProfileStart?: boolean;
  cpuProfileIntervalUs?: number;
  /** Stop the CPU profile and write it (a .cpuprofile, as `node --cpu-prof` writes) to this file. */
  cpuProfileStop?: string;
  /** Answer only once the ahead-of-need loading after a discussion opens (main.ts, DiscussionService.prepareAhead) has finished. */
  awaitModelPrepared?: boolean;
}

export interface BenchProbeResult {
  /** Longest event-loop delay since the last reset, in ms. */
  stallMaxMs: number;
  stallP99Ms: number;
  /**
   * The most time the main thread spent on a CPU during any one stall of 20
   * ms or more since the last reset (0 if none): the part of a stall our own
   * code caused, apart from waiting for a core the machine's other processes
   * held. It covers the whole time between the two ticks around the stall.
   */
  stallMaxOnCpuMs: number;
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  /** Memory of C++ objects bound to JS ones (Buffers among them), and of ArrayBuffers alone. */
  externalBytes: number;
  arrayBuffersBytes: number;
  /**
   * The longest stalls since the last reset, each as when it ended (µs on the
   * monotonic clock a .cpuprofile's timestamps use) and how long it lasted:
   * to find in a profile what ran then.
   */
  longStalls: Array<{ endedAtUs: number; ms: number; onCpuMs?: number; waitingForCpuMs?: number }>;
  /** The main thread's V8 heap spaces: space name → committed bytes (what counts toward resident memory). */
  heapSpacesCommitted: Record<string, number>;
  /** When this answer was made, on the same clock. */
  nowUs: number;
}

/** A stall this long is logged (with `longStalls`). */
const LONG_STALL_MS = 20;
/**
 * As fine as the histogram's: ticked every 5 ms and logged when 20 ms late,
 * a block of 20 to 25 ms went unlogged, so the two stalls over the goal in
 * one round's tables had no record of where their time went.
 */
const TICK_MS = 1;
/** The event-loop delay histogram's sampling interval, the least Node takes. */
const DELAY_RESOLUTION_MS = 1;

export interface ProbedState {
  /** The model's ahead-of-need loading, once started. */
  modelPrepared(): Promise<void> | undefined;
}

export function installBenchProbe(connection: Connection, env: Record<string, string | undefined>, state?: ProbedState): void {
  if (env.REPO_DISCUSS_BENCH_PROBE !== '1') return;
  // Each sample is the whole time between two runs of a timer this often, so
  // the max reads up to this much over the block itself: at 5 ms, a 15 ms
  // block read as a 19.2 ms stall.
  const delay = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS });
  delay.enable();
  let longStalls: BenchProbeResult['longStalls'] = [];
  let lastTick = process.hrtime.bigint();
  let lastSched = mainThreadSchedule();
  let stallMaxOnCpuMs = 0;
  setInterval(() => {
    const now = process.hrtime.bigint();
    const sched = mainThreadSchedule();
    // The whole time between two ticks, as the histogram samples it.
    const late = Number(now - lastTick) / 1e6;
    if (late >= LONG_STALL_MS) {
      const split = sched && lastSched ? { onCpuMs: (sched.onCpuNs - lastSched.onCpuNs) / 1e6, waitingForCpuMs: (sched.waitingNs - lastSched.waitingNs) / 1e6 } : {};
      stallMaxOnCpuMs = Math.max(stallMaxOnCpuMs, split.onCpuMs ?? 0);
      if (longStalls.length < 1000) longStalls.push({ endedAtUs: Number(now / 1000n), ms: late, ...split });
    }
    lastTick = now;
    lastSched = sched;
  }, TICK_MS).unref();
  let session: Session | undefined;
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => (session as Session).post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  connection.onRequest(BENCH_PROBE_METHOD, async (params: BenchProbeParams | undefined): Promise<BenchProbeResult> => {
    if (params?.awaitModelPrepared) await state?.modelPrepared();
    if (params?.cpuProfileStop && session) {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      writeFileSync(params.cpuProfileStop, JSON.stringify(profile));
      session.disconnect();
      session = undefined;
    }
    const memory = process.memoryUsage();
    const result = {
      stallMaxMs: delay.max / 1e6,
      stallP99Ms: delay.percentile(99) / 1e6,
      stallMaxOnCpuMs,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      externalBytes: memory.external,
      arrayBuffersBytes: memory.arrayBuffers,
      heapSpacesCommitted: Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size])),
      nowUs: Number(process.hrtime.bigint() / 1000n),
      longStalls: [...longStalls].sort((a, b) => b.ms - a.ms).slice(0, 20),
    };
    if (params?.heapSnapshot) writeHeapSnapshot(params.heapSnapshot);
    if (params?.reset) {
      delay.reset();
      longStalls = [];
      stallMaxOnCpuMs = 0;
    }
    if (params?.cpuProfileStart && !session) {
      // Loaded only to profile: the idle figure is read from this same process.
      const { Session: InspectorSession } = require('node:inspector') as typeof import('node:inspector');
      session = new InspectorSession();
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: params.cpuProfileIntervalUs ?? 1000 });
      await post('Profiler.start');
    }
    return result;
  });
}

/**
 * The main thread's time on a CPU and waiting for one (Linux
 * /proc/<pid>/task/<pid>/schedstat), to tell a stall our code caused from
 * one where the machine's other processes held both cores. Read every
 * millisecond, so the file is opened once and read in place.
 */
let schedstat: { fd: number; buffer: Buffer } | null | undefined;
function mainThreadSchedule(): { onCpuNs: number; waitingNs: number } | undefined {
  try {
    if (schedstat === null) return undefined; // not Linux, or not readable: asked once
    schedstat ??= { fd: openSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'r'), buffer: Buffer.alloc(128) };
    const length = readSync(schedstat.fd, schedstat.buffer, 0, schedstat.buffer.length, 0);
    const [onCpu, waiting] = schedstat.buffer.toString('latin1', 0, length).split(' ').map(Number);
    return { onCpuNs: onCpu, waitingNs: waiting };
  } catch {
    schedstat = null;
    return undefined;
  }
}

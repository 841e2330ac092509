import { setImmediate as nextTick } from 'node:timers/promises';
import { settledWithin } from '../settledWithin';

/**
 * Holds a fresh server's first questions until the model's code has run once
 * (model/openai/warmup.ts), then lets them go one per tick. Eight
 * discussions asking at once ran eight first requests through cold code in
 * one tick: about 50 ms on a CPU, most of it undici and the openai SDK
 * compiling as they ran, then on the main thread (the server's longest
 * stall), now in the model's thread, where each first delta waited for it.
 * The warm-up runs that code once, in the ticks its own I/O makes.
 */
export class WarmGate {
  private warming: Promise<void> | undefined;
  private warm = false;
  private turns: Promise<void> = Promise.resolve();

  /**
   * A `warmUp` that fails only means the questions go cold; `maxWaitMs` bounds how long a question waits for it, so a slow
   * loopback does not hold a question.
   */
  constructor(
    private readonly warmUp: () => Promise<void>,
    private readonly maxWaitMs: number,
  ) {}

  /** Starts the warm-up if it has not started (ahead of need); settles when it ends. */
  start(): Promise<void> {
    return (this.warming ??= this.warmUp()
      .catch(() => undefined)
      .finally(() => {
        this.warm = true;
      }));
  }

  /** Settles when a question may go: at once when warm; else after the warm-up (or the wait's bound) and the questions before it, one per tick. */
  async pass(): Promise<void> {
    if (this.warm) return;
    await settledWithin(this.start(), this.maxWaitMs);
    const turn = this.turns.then(() => nextTick());
    this.turns = turn;
    await turn;
  }
}

import { matchScore, mayMatch } from './matching';
import { nextSlice } from '../nextSlice';

/**
 * The pass over every indexed name that find_symbol and `@` completion make,
 * on the server's thread. A folder of many long names (a generated file
 * holds thousands) kept the thread for the whole pass, and sorting every
 * match to show the best hundred added as much again.
 */

/** The longest the pass holds the thread before letting other work run (tests set it lower, so it breaks on any machine). */
export const NAME_PASS = { sliceMs: 8 };

/**
 * Calls `found` with each of `names` that matches `query`, and its score,
 * giving the thread back every NAME_PASS.sliceMs. Stops early, returning false, when
 * `signal` aborts.
 */
export async function forEachMatchingName(
  names: ReadonlyArray<readonly [name: string, lower: string]>,
  query: string,
  found: (name: string, score: number) => void,
  signal?: AbortSignal,
): Promise<boolean> {
  const lowerQuery = query.toLowerCase();
  let sliceEnd = performance.now() + NAME_PASS.sliceMs;
  for (let i = 0; i < names.length; i++) {
    if ((i & 255) === 255 && performance.now() > sliceEnd) {
      await nextSlice('foreground');
      if (signal?.aborted) return false;
      sliceEnd = performance.now() + NAME_PASS.sliceMs;
    }
    const [name, lower] = names[i];
    if (!mayMatch(lowerQuery, lower)) continue;
    const score = matchScore(query, name);
    if (score !== undefined) found(name, score);
  }
  return true;
}

/** The first `limit` of what it is offered in `compare`'s order, and how many were offered, without sorting them all. */
export class BestOf<T> {
  private readonly kept: T[] = [];
  private offered = 0;

  constructor(
    private readonly limit: number,
    private readonly compare: (a: T, b: T) => number,
  ) {}

  offer(item: T): void {
    this.offered += 1;
    const kept = this.kept;
    if (kept.length === this.limit && (this.limit === 0 || this.compare(item, kept[kept.length - 1]) >= 0)) return;
    // After every equal one already kept: among equals, the first offered stays first, as a stable sort keeps them.
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compare(kept[middle], item) <= 0) low = middle + 1;
      else high = middle;
    }
    kept.splice(low, 0, item);
    if (kept.length > this.limit) kept.pop();
  }

  /** How many were offered. */
  get count(): number {
    return this.offered;
  }

  /** The best, in order. */
  best(): readonly T[] {
    return this.kept;
  }
}

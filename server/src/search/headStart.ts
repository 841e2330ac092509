import { performance } from 'node:perf_hooks';
import type { WalkOptions } from './walk';

/**
 * How long the ordered search (the warm index, or the walk) goes first,
 * before ripgrep is started, and when it is kept going past that: a capped
 * search of a common word ends there, a rare word hands over to ripgrep soon.
 */

/**
 * Before ripgrep starts, the ordered search (the warm index, or the walk)
 * gets this long: a capped grep (a common word) is done in a
 * few milliseconds that way, where ripgrep must list everything before the
 * first results in path order are known. A full scan loses at most this;
 * a cold one that matched nothing by its first look (FIRST_LOOK_MS), that
 * long.
 */
export const ORDERED_HEAD_START_MS = 10;

/** The cold head start's deadlines (walkOnUntil), on the clock of the walk it extends. */
export function keepWalking(headStartMs: number, capShare: () => number): WalkOptions['extendDeadline'] {
  const started = performance.now();
  return ({ fractionDone }) => {
    const until = walkOnUntil(performance.now() - started, fractionDone, capShare(), headStartMs);
    return until === undefined ? undefined : started + until;
  };
}

/**
 * A cold head start is first looked at this soon: with no match by then,
 * ripgrep starts at once. A rare word spent the whole head start walking,
 * which ripgrep then walked again: on vite 10 ms of the 47 its grep took,
 * where ripgrep alone took 29. The walk's estimate of its share done is no
 * guide this early (vite's small first directories put it at 0.38 after
 * 2.6 ms of a 46 ms walk), so it is not asked whether the walk would finish.
 */
export const FIRST_LOOK_MS = 2;

/**
 * When the cold head start's deadline passes, how long from its start the
 * walk should go on (undefined: hand over to ripgrep). At the cap's rate
 * (`worthWalkingOn`), another head start; else, at the first look, to the
 * end of the head start if anything matched: a capped search's matches may
 * start slowly, and ripgrep would list the whole tree before its first ones.
 */
export function walkOnUntil(elapsedMs: number, fractionDone: number, capShare: number, headStartMs: number): number | undefined {
  if (worthWalkingOn(elapsedMs, fractionDone, capShare)) return elapsedMs + headStartMs;
  return elapsedMs < headStartMs && capShare > 0 ? headStartMs : undefined;
}

/**
 * Whether the ordered walk, past a deadline, should go on from where it is
 * instead of handing over to ripgrep (which, for a capped search,
 * lists the whole tree before the first results in path order are known,
 * and for a common word is then stopped past searchJobs.ts SWITCH_TO_WALK for the walk to
 * start over): only when, at the rate it has found results, it reaches the
 * cap within MAX_KEEP_WALKING_MS of its start, and within the tree by the
 * estimate of the share walked (walk.ts WalkProgress, from the walk's
 * position in its first directory levels). A full scan never qualifies: the
 * walk is two to three times slower per entry than ripgrep on two cores
 * (measured on vite and on generated 20k and 100k trees), so keeping it going
 * on a guess of the tree's size lost more than it won. The rule was "within
 * double the time walked so far": on a day the machine ran at half speed the
 * first 10 ms found too few matches for that, and a capped grep of a common
 * word on 100,000 files took 12x as long as ripgrep piped to head. A wrong
 * estimate only costs time: either way the answer is the same.
 */
export function worthWalkingOn(elapsedMs: number, fractionDone: number, capShare: number): boolean {
  // A bound on what a wrong estimate can cost.
  if (fractionDone <= 0 || capShare <= 0 || elapsedMs > MAX_KEEP_WALKING_MS) return false;
  return fractionDone / capShare < 1 && elapsedMs / capShare <= MAX_KEEP_WALKING_MS;
}

/**
 * Whether a warm grep's head start should go on reading: for its first two
 * milliseconds; then while the rate so far says the last candidate will be
 * read within the head start, or the cap reached within MAX_KEEP_WALKING_MS
 * (as for the cold walk above: at half the machine's speed a common word's
 * 200 matches took longer than the head start, and the search went to
 * ripgrep, was stopped past searchJobs.ts SWITCH_TO_WALK and read again: 5x ripgrep piped
 * to head). A rare word in a few thousand files spent the whole head start
 * reading, where ripgrep would have been nearly done (vite: 36 ms against
 * ripgrep's 25).
 */
export function worthReadingOn(elapsedMs: number, headStartMs: number, shareRead: number, capShare: number): boolean {
  if (headStartMs <= 0) return false;
  if (elapsedMs < Math.min(2, headStartMs)) return true;
  if (capShare > 0 && elapsedMs <= MAX_KEEP_WALKING_MS && elapsedMs / capShare <= MAX_KEEP_WALKING_MS) return true;
  return elapsedMs <= headStartMs && shareRead > 0 && elapsedMs / shareRead <= headStartMs;
}

/** The ordered search is never kept going past its head start for longer than this from its start. */
const MAX_KEEP_WALKING_MS = 100;

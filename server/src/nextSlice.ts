/**
 * The turn of the event loop in which a slice of main-thread work may run.
 * Work split into slices (a walk's answer applied, identifier lists added, a
 * map's inputs packed, a name search) yielded each with a setImmediate of its
 * own, so every slice waiting ran in the same turn: the first map build after
 * a folder was indexed, its identifier lists still being added, held the main
 * thread about 14 ms at a time, a slice of each job in one turn. Slices that
 * wait here run one a turn.
 *
 * In plain order of asking, a tool call's own slices (its name pass, its
 * references counted) took turns with upkeep (a map's inputs packed, a walk's
 * answer applied), so a find_symbol during a map build took two turns per
 * slice of its own. Foreground slices now go first. Upkeep still gets one turn
 * in every FOREGROUND_RUN + 1 while foreground slices wait: a call that waits
 * for a walk's answer would otherwise wait on the calls behind it.
 */

/**
 * Foreground: a slice of the answer to one call, which someone waits for.
 * Background: upkeep of an index or a map, which calls may wait for too.
 */
export type SliceKind = 'foreground' | 'background';

/** Foreground slices run in a row, at most, while a background slice waits. */
export const FOREGROUND_RUN = 3;

const waiting: Record<SliceKind, Array<() => void>> = { foreground: [], background: [] };
let foregroundInARow = 0;
let scheduled = false;

/** Resolves in a later turn of the event loop, in which no other slice that asked here runs. */
export function nextSlice(kind: SliceKind): Promise<void> {
  return new Promise((resolve) => {
    waiting[kind].push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeNext);
    }
  });
}

function resumeNext(): void {
  const resume = takeNext();
  // Scheduled before resuming: a slice that asks again goes behind those already waiting.
  if (waiting.foreground.length + waiting.background.length > 0) setImmediate(resumeNext);
  else scheduled = false;
  resume?.();
}

function takeNext(): (() => void) | undefined {
  const upkeepDue = foregroundInARow >= FOREGROUND_RUN && waiting.background.length > 0;
  if (waiting.foreground.length > 0 && !upkeepDue) {
    // Counted only while upkeep waits: one that asks later is not owed a turn for the run before it.
    foregroundInARow = waiting.background.length > 0 ? foregroundInARow + 1 : 0;
    return waiting.foreground.shift();
  }
  foregroundInARow = 0;
  return waiting.background.shift();
}

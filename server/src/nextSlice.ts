/**
 * The turn of the event loop in which a slice of main-thread work may run.
 * Work split into slices (a walk's answer applied, identifier lists added, a
 * map's inputs packed, a name search) yielded each with a setImmediate of its
 * own, so every slice waiting ran in the same turn: the first map build after
 * a folder was indexed, its identifier lists still being added, held the main
 * thread about 14 ms at a time, a slice of each job in one turn. Slices that
 * wait here run one a turn.
 *
 * A call's own slices (its name pass, its references counted) go ahead of
 * upkeep (a map's inputs packed, identifier lists added): taking turns with
 * it, they cost the call a turn more each. Upkeep still gets one turn in
 * every FOREGROUND_RUN + 1 while foreground slices wait, so that no stream of
 * calls holds it back for good.
 */

/**
 * Foreground: a slice of the answer to one call, which someone waits for,
 * or of upkeep a call waits for. Background: upkeep no call waits for.
 */
export type SliceKind = 'foreground' | 'background';

/** The kind a job's slices run as, read each time one may run: upkeep that a call starts waiting for midway is foreground from then on. */
export type SliceKindNow = () => SliceKind;

/** Upkeep that no call waits for. */
export const AS_UPKEEP: SliceKindNow = () => 'background';

/**
 * The calls waiting for one piece of upkeep (a folder's refresh, its
 * identifier lists), which runs as foreground while any does: as
 * background, a call waiting for a walk's answer would wait for the calls
 * that came after it too.
 */
export class WaitingCalls {
  private calls = 0;
  readonly kind: SliceKindNow = () => (this.calls > 0 ? 'foreground' : 'background');

  /** A caller of `kind` starts waiting, until it calls the function returned (calling it again does nothing). */
  start(kind: SliceKind): () => void {
    if (kind === 'background') return () => undefined;
    this.calls += 1;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.calls -= 1;
    };
  }
}

/** At most this many foreground slices run in a row while a background slice waits. */
export const FOREGROUND_RUN = 3;

/** Slices waiting, in the order they asked; each one's kind is read as a turn picks the next, not when it asked. */
const waiting: Array<{ kind: SliceKindNow; resume: () => void }> = [];
let foregroundInARow = 0;
let scheduled = false;

/**
 * Resolves in a later turn of the event loop, in which no other slice that asked here runs. A kind given as a function is
 * read when the slice may run: a refresh's first slice asks before the call that started it has joined.
 */
export function nextSlice(kind: SliceKind | SliceKindNow): Promise<void> {
  return new Promise((resume) => {
    waiting.push({ kind: typeof kind === 'function' ? kind : () => kind, resume });
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeNext);
    }
  });
}

function resumeNext(): void {
  const resume = takeNext();
  // Scheduled before resuming: a slice that asks again goes behind those of its kind already waiting.
  if (waiting.length > 0) setImmediate(resumeNext);
  else scheduled = false;
  resume?.();
}

function takeNext(): (() => void) | undefined {
  const kinds = waiting.map((slice) => slice.kind());
  const foreground = kinds.indexOf('foreground');
  const background = kinds.indexOf('background');
  const upkeepDue = foregroundInARow >= FOREGROUND_RUN && background >= 0;
  const next = foreground >= 0 && !upkeepDue ? foreground : background;
  // Counted only while upkeep waits: one that asks later is not owed a turn for the run before it.
  foregroundInARow = next === foreground && background >= 0 ? foregroundInARow + 1 : 0;
  return next >= 0 ? waiting.splice(next, 1)[0].resume : undefined;
}

/**
 * The turn of the event loop in which a slice of main-thread work may run.
 * Work split into slices (a walk's answer applied, identifier lists added, a
 * map's inputs packed, a name search) yielded each with a setImmediate of its
 * own, so every slice waiting ran in the same turn: the first map build after
 * a folder was indexed, its identifier lists still being added, held the main
 * thread about 14 ms at a time, a slice of each job in one turn. Slices that
 * wait here run one a turn, in the order they asked; a foreground slice (a
 * name pass) waits a turn for each background job ahead of it.
 */

const waiting: Array<() => void> = [];
let scheduled = false;

/** Resolves in a later turn of the event loop, in which no other slice that asked here runs. */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeNext);
    }
  });
}

function resumeNext(): void {
  const resume = waiting.shift();
  // Scheduled before resuming: a slice that asks again goes behind those already waiting.
  if (waiting.length > 0) setImmediate(resumeNext);
  else scheduled = false;
  resume?.();
}

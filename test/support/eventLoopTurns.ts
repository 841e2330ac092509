/** Counts turns of the event loop, one setImmediate each, from now until stopped: `turn()` is the current one. */
export function countTurns(): { turn: () => number; stop: () => void } {
  let turn = 0;
  let running = true;
  const tick = (): void => {
    turn += 1;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { turn: () => turn, stop: () => (running = false) };
}

/**
 * How many turns of the event loop ran while `work` was pending: a job split
 * into slices lets it run between them, one done in a single piece does not.
 * Call it in the turn that starts the work.
 */
export async function turnsWhile<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  const counter = countTurns();
  try {
    const value = await work;
    return { value, turns: counter.turn() };
  } finally {
    counter.stop();
  }
}

/**
 * How many turns of the event loop ran while `work` was pending: a job split
 * into slices lets it run between them, one done in a single piece does not.
 * Call it in the turn that starts the work.
 */
export async function turnsWhile<T>(work: Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let settled = false;
  const tick = (): void => {
    turns += 1;
    if (!settled) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { value: await work, turns };
  } finally {
    settled = true;
  }
}

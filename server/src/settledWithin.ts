/**
 * Waits for `work` at most `ms`: resolves with its value when it settles
 * first, undefined once the bound has passed; a rejection that comes first
 * passes through. The bound's timer is cleared when the work wins, and
 * never keeps the process alive.
 */
export async function settledWithin<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

import * as fs from 'node:fs';

/**
 * Removes the FIFO at `fifo`, first releasing an open of it that blocked
 * (`blocked`: a reader waiting for a writer, or the other way round). A
 * thread held in open(2) is held for good, and node waits for it at exit:
 * an open of the other side releases it, and the removal turns away the
 * opens still to come.
 */
export function removeFifo(fifo: string, blocked: 'reader' | 'writer'): void {
  let otherSide: number | undefined;
  try {
    otherSide = fs.openSync(fifo, (blocked === 'reader' ? fs.constants.O_WRONLY : fs.constants.O_RDONLY) | fs.constants.O_NONBLOCK);
  } catch {
    // nothing waits on it, or it is gone
  }
  fs.rmSync(fifo, { force: true });
  if (otherSide !== undefined) fs.closeSync(otherSide);
}

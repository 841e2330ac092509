import * as fs from 'node:fs';
import { nowNs, RACY_WINDOW_NS } from '../../server/src/search/directoryStamps';

/**
 * Resolves once every path's last change is older than the racy window
 * (directoryStamps.ts), so that an index trusts their stamps and a later
 * write is sure to move them. A test that writes files and then asserts what
 * an index kept would otherwise depend on how fast the machine reached the
 * assertion: one fast enough saw the files as racy, read again every time.
 */
export async function untilPastRacyWindow(paths: readonly string[]): Promise<void> {
  let newest = 0n;
  for (const file of paths) {
    const stats = fs.lstatSync(file, { bigint: true });
    for (const time of [stats.mtimeNs, stats.ctimeNs]) if (time > newest) newest = time;
  }
  const settledAt = newest + RACY_WINDOW_NS;
  while (nowNs() <= settledAt) await new Promise((resolve) => setTimeout(resolve, 5));
}

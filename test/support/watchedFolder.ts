import * as fs from 'node:fs';
import { closeSymbolPool, resetSymbolIndexes, setSymbolIndexClock, watchFolders } from '../../server/src/symbols/symbolIndex';

/** Undoes what a watched-folder test set up: no folder watched, the real freshness clock, its tree gone. */
export function stopWatching(base: string): void {
  watchFolders([]);
  setSymbolIndexClock();
  fs.rmSync(base, { recursive: true, force: true });
}

/** Forgets every symbol index and stops the symbol thread, so that mocha can exit. */
export async function closeSymbolIndexes(): Promise<void> {
  await resetSymbolIndexes();
  await closeSymbolPool();
}

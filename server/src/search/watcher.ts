import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Loads the file watcher the warm file index is fed by (`@parcel/watcher`,
 * which VS Code uses). It is a native module: on a platform without its
 * prebuilt binary, or if it fails in any way, searches take the cold path.
 * In the bundle it is loaded from dist/node_modules (client/bundle.mjs).
 */

export interface WatchEvent {
  path: string;
  type: 'create' | 'update' | 'delete';
}

export interface WatchSubscription {
  unsubscribe(): Promise<void>;
}

export interface Watcher {
  subscribe(directory: string, onEvents: (error: Error | null, events: WatchEvent[]) => void, options: { ignore: string[] }): Promise<WatchSubscription>;
}

/** `none` turns watching off; any other value names the module to load (tests load a failing one). */
export const DEFAULT_WATCHER_MODULE = '@parcel/watcher';

const loaded = new Map<string, Watcher | undefined>();

/** The bundled copy beside dist/server.js (client/bundle.mjs), else the installed package. */
function resolveModule(moduleId: string): string {
  if (moduleId !== DEFAULT_WATCHER_MODULE) return moduleId;
  const bundled = path.join(__dirname, 'parcelWatcher.js');
  return fs.existsSync(bundled) ? bundled : moduleId;
}

export function loadWatcher(moduleId: string = DEFAULT_WATCHER_MODULE): Watcher | undefined {
  if (moduleId === 'none') return undefined;
  if (!loaded.has(moduleId)) {
    let watcher: Watcher | undefined;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const candidate = require(resolveModule(moduleId)) as Partial<Watcher>;
      watcher = typeof candidate.subscribe === 'function' ? (candidate as Watcher) : undefined;
    } catch {
      watcher = undefined; // no binary for this platform, or a broken install
    }
    loaded.set(moduleId, watcher);
  }
  return loaded.get(moduleId);
}

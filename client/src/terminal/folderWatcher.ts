import * as fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import type * as ParcelWatcher from '@parcel/watcher';

/**
 * The terminal's file watcher: what VS Code's watcher is to the extension.
 * The server asks a client that can watch files for every change in its
 * folders, and a watched folder's symbol index is then kept fresh by those
 * reports instead of walking the folder before each query (about 300 ms at
 * 20,000 files). Without a watcher (a platform with no prebuilt one, a
 * failed start, a watch limit reached) the server walks, as before.
 */

/** LSP's FileChangeType: created, changed, deleted. */
export type FileChangeType = 1 | 2 | 3;

/** One change as `workspace/didChangeWatchedFiles` carries it. */
export interface FileEvent {
  uri: string;
  type: FileChangeType;
}

const TYPES: Record<ParcelWatcher.EventType, FileChangeType> = { create: 1, update: 2, delete: 3 };

/**
 * The platform's own backend, never watchman: the library prefers it when a
 * `watchman` is on PATH, and it would then run a program configured by a
 * `.watchmanconfig` in the repository. Elsewhere nothing is watched.
 */
const BACKENDS: Partial<Record<NodeJS.Platform, ParcelWatcher.BackendType>> = { linux: 'inotify', darwin: 'fs-events', win32: 'windows' };

/**
 * What the server's walk never visits (search/walk.ts ALWAYS_SKIPPED_DIRECTORIES
 * and `.git`'s objects): not watched, so a large `node_modules` costs no
 * watches. The server is told the watcher reports everything else.
 */
const NOT_WATCHED = ['**/node_modules', '**/.git/objects'];

/**
 * inotify drops every event past a full queue and leaves one notice, which
 * the library passes over, so a lost change would go unreported. What filled
 * the queue is still delivered: a batch of at least a quarter of it (a file
 * created and written is three inotify events and one of the library's) may
 * be what was left of an overflow. The queue is the process's, shared by
 * every folder watched, so each of them is then reported changed, and the
 * server walks them again before their next query. An overflow that leaves a
 * smaller batch (the same few files written over and over) still waits for
 * the server's once-a-minute re-walk.
 */
export function overflowSuspectedAt(inotifyQueueSize: number): number {
  return Math.max(1, Math.min(1000, Math.floor(inotifyQueueSize / 4)));
}

/** The kernel's limit on a new inotify instance's unread events (16,384 unless changed). */
function inotifyQueueSize(): number {
  try {
    const size = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    return Number.isInteger(size) && size > 0 ? size : 16_384;
  } catch {
    return 16_384;
  }
}

/** The watcher library, or undefined where it cannot load (no prebuilt binary for this platform). */
export function loadFileWatcher(): typeof ParcelWatcher | undefined {
  if (BACKENDS[process.platform] === undefined) return undefined;
  try {
    return require('@parcel/watcher') as typeof ParcelWatcher;
  } catch {
    return undefined;
  }
}

export interface FolderWatchesOptions {
  /** Changes seen, in the order seen, a batch at a time. */
  report(events: FileEvent[]): void;
  /** A watch could not start, or ended on its own (the watcher failed): the folder's changes are not reported. */
  lost(folder: string, reason: string): void;
  /** inotify's queue size, where the platform watches with inotify (default: the kernel's setting). */
  inotifyQueueSize?: number;
}

/** The folders watched, by real path; each is watched once, however many discussions it has. */
export class FolderWatches {
  private readonly watches = new Map<string, Promise<ParcelWatcher.AsyncSubscription | undefined>>();
  private readonly live = new Set<string>();
  private closed = false;
  /** Batches this large may have lost events (overflowSuspectedAt); none on platforms that report a full queue. */
  private readonly overflowBatch: number;

  constructor(
    private readonly watcher: typeof ParcelWatcher,
    private readonly options: FolderWatchesOptions,
  ) {
    this.overflowBatch = BACKENDS[process.platform] === 'inotify' ? overflowSuspectedAt(options.inotifyQueueSize ?? inotifyQueueSize()) : Infinity;
  }

  /** Whether changes in `folder` are being reported. */
  watching(folder: string): boolean {
    return this.live.has(folder);
  }

  /**
   * Starts watching `folder` (a real path) unless it is already: true once
   * its changes are reported, false when it cannot be watched. A change made
   * before this resolves may not be reported; the server walks a folder once
   * more when it is told the folder is watched, which sees it.
   */
  watch(folder: string): Promise<boolean> {
    let started = this.watches.get(folder);
    if (!started) {
      const attempt: Promise<ParcelWatcher.AsyncSubscription | undefined> = this.subscribe(folder, () => this.watches.get(folder) === attempt);
      started = attempt;
      this.watches.set(folder, started);
    }
    return started.then((subscription) => subscription !== undefined && this.live.has(folder));
  }

  /**
   * Stops watching `folder`, once nothing here discusses it: a watch kept
   * after that held the platform's watches (inotify's are counted per user)
   * and sent the server reports it has no use for.
   */
  async unwatch(folder: string): Promise<void> {
    const started = this.watches.get(folder);
    if (!started) return;
    this.watches.delete(folder);
    this.live.delete(folder);
    const subscription = await started;
    await subscription?.unsubscribe().catch(() => undefined);
  }

  /** `current`: whether this attempt is still the folder's watch (neither closed nor unwatched while it started). */
  private async subscribe(folder: string, current: () => boolean): Promise<ParcelWatcher.AsyncSubscription | undefined> {
    const backend = BACKENDS[process.platform];
    if (this.closed || backend === undefined) return undefined;
    try {
      // An unwatched attempt's late error must not end a newer watch of the same folder.
      const subscription = await this.watcher.subscribe(folder, (err, events) => current() && this.received(folder, err, events), { backend, ignore: NOT_WATCHED });
      if (this.closed || !current()) {
        await subscription.unsubscribe().catch(() => undefined);
        return undefined;
      }
      this.live.add(folder);
      return subscription;
    } catch (err) {
      // Another discussion of the folder tries again.
      if (current()) this.watches.delete(folder);
      this.options.lost(folder, err instanceof Error ? err.message : String(err));
      return undefined;
    }
  }

  private received(folder: string, err: Error | null, events: ParcelWatcher.Event[]): void {
    if (!this.live.has(folder)) return;
    if (err) {
      // Events may have been dropped (FSEvents and Windows report a full queue; inotify's is guessed at below):
      // reporting on would let the server trust an index that missed them.
      this.live.delete(folder);
      const ended = this.watches.get(folder);
      // A later discussion of the folder tries again.
      this.watches.delete(folder);
      void ended?.then((subscription) => subscription?.unsubscribe()).catch(() => undefined);
      this.options.lost(folder, err.message);
      return;
    }
    const changes: FileEvent[] = [];
    for (const event of events) {
      const type = TYPES[event.type];
      if (type !== undefined) changes.push({ uri: pathToFileURL(event.path).href, type });
    }
    if (events.length >= this.overflowBatch) for (const watched of this.live) changes.push({ uri: pathToFileURL(watched).href, type: 2 });
    if (changes.length > 0) this.options.report(changes);
  }

  /** Stops every watch; nothing is reported after this resolves. */
  async close(): Promise<void> {
    this.closed = true;
    this.live.clear();
    const subscriptions = await Promise.all(this.watches.values());
    await Promise.all(subscriptions.map((subscription) => subscription?.unsubscribe().catch(() => undefined)));
  }
}

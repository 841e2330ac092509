import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscussionEvent, DiscussionSummary } from '../protocol';
import type { DiscussionSnapshot } from '../core/discussion';
import { DiscussError } from '../core/errors';
import type { DiscussionStore, Lease, LoadedDiscussion } from './types';

/**
 * The platform's per-user data folder for discussions, shared by the VS Code
 * extension and the terminal client so either can resume the other's.
 */
export function defaultStorageDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'win32') {
    return path.join(env.LOCALAPPDATA || env.APPDATA || path.join(home, 'AppData', 'Local'), 'repo-discuss');
  }
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'repo-discuss');
  return path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'repo-discuss');
}

const ID_PATTERN = /^disc-[A-Za-z0-9_-]{1,64}$/;
const RECORD_FILE = 'record.json';
const EVENTS_FILE = 'events.jsonl';
const LEASE_FILE = 'lease.json';
const RECORD_VERSION = 1;

/**
 * Streaming deltas are not written: a finished reply is kept whole in its
 * `assistant_message`, and writing every token would multiply the disk work
 * of a turn by its length.
 */
const UNSAVED_EVENTS = new Set<DiscussionEvent['type']>(['assistant_delta']);

interface LeaseRecord {
  pid: number;
  host: string;
  acquiredAt: number;
}

/**
 * Discussions on disk, one folder each: `record.json` (the model history,
 * transcript, task and title; replaced atomically, so a crash mid-write leaves
 * the previous whole version) and `events.jsonl` (the event log, appended;
 * a torn last line from a crash is skipped on load).
 */
export class FileStore implements DiscussionStore {
  readonly persistent = true;
  /** Per-discussion write chain: writes land in the order they were asked for. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly pendingEvents = new Map<string, string[]>();
  private readonly pendingRecords = new Map<string, DiscussionSnapshot>();

  private constructor(
    readonly root: string,
    private readonly onError: (message: string) => void,
  ) {}

  static async open(root: string, onError: (message: string) => void = () => undefined): Promise<FileStore> {
    const dir = path.join(root, 'discussions');
    try {
      await fs.mkdir(dir, { recursive: true });
      await fs.access(dir, fs.constants.W_OK);
    } catch (err) {
      throw new Error(
        `Cannot use ${root} to save discussions (${(err as Error).message}). ` +
          'Choose a writable folder with the storage setting (initializationOptions.storageDir).',
      );
    }
    return new FileStore(root, onError);
  }

  private dir(id: string): string {
    if (!ID_PATTERN.test(id)) {
      // Ids name folders: one with a separator or `..` would escape the store.
      throw new DiscussError('InvalidParams', `"${id}" is not a discussion id — ids look like disc-0123abcd….`);
    }
    return path.join(this.root, 'discussions', id);
  }

  async load(id: string): Promise<LoadedDiscussion | undefined> {
    const dir = this.dir(id);
    await this.flushOne(id);
    let raw: string;
    try {
      raw = await fs.readFile(path.join(dir, RECORD_FILE), 'utf8');
    } catch {
      return undefined;
    }
    let snapshot: DiscussionSnapshot;
    try {
      const parsed = JSON.parse(raw) as { version: number; snapshot: DiscussionSnapshot };
      snapshot = parsed.snapshot;
      if (!snapshot || snapshot.id !== id || !Array.isArray(snapshot.history)) throw new Error('missing fields');
    } catch (err) {
      throw new DiscussError(
        'StorageFailed',
        `The saved discussion ${id} is unreadable (${(err as Error).message}); its files are in ${dir}. Start a new discussion.`,
      );
    }
    const events = await readEventLog(path.join(dir, EVENTS_FILE));
    return { snapshot, events };
  }

  save(snapshot: DiscussionSnapshot): void {
    const id = snapshot.id;
    this.dir(id);
    // Only the newest snapshot matters: coalesce saves queued behind a write.
    const queued = this.pendingRecords.has(id);
    this.pendingRecords.set(id, snapshot);
    if (!queued) this.enqueue(id, () => this.writeRecord(id));
  }

  appendEvent(id: string, event: DiscussionEvent): void {
    if (UNSAVED_EVENTS.has(event.type)) return;
    let lines = this.pendingEvents.get(id);
    const first = !lines;
    if (!lines) this.pendingEvents.set(id, (lines = []));
    lines.push(JSON.stringify(event) + '\n');
    if (first) this.enqueue(id, () => this.writeEvents(id));
  }

  async list(): Promise<DiscussionSummary[]> {
    await this.flush();
    const base = path.join(this.root, 'discussions');
    let names: string[];
    try {
      names = await fs.readdir(base);
    } catch {
      return [];
    }
    const rows: DiscussionSummary[] = [];
    for (const name of names) {
      if (!ID_PATTERN.test(name)) continue;
      try {
        const raw = await fs.readFile(path.join(base, name, RECORD_FILE), 'utf8');
        const s = (JSON.parse(raw) as { snapshot: DiscussionSnapshot }).snapshot;
        rows.push({
          discussionId: s.id,
          repo: s.repo,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
          title: s.title || '(untitled)',
          turns: s.turns,
          model: s.model,
        });
      } catch {
        // An unreadable record is skipped here; resuming it says why.
      }
    }
    return rows;
  }

  /**
   * Marks the discussion as open in this process. Another live process
   * holding it (a second VS Code window on the same storage) is refused; a
   * lease left by a process that died is taken over, not a permanent lock.
   */
  async acquire(id: string): Promise<Lease> {
    const dir = this.dir(id);
    await fs.mkdir(dir, { recursive: true });
    const file = path.join(dir, LEASE_FILE);
    const mine: LeaseRecord = { pid: process.pid, host: os.hostname(), acquiredAt: Date.now() };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await fs.writeFile(file, JSON.stringify(mine), { flag: 'wx' });
        return { release: () => releaseLease(file) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = await readLease(file);
      if (holder && holderIsAlive(holder)) {
        throw new DiscussError(
          'Conflict',
          `Discussion ${id} is already open in another window (process ${holder.pid}) — close it there, or continue it there.`,
        );
      }
      await fs.rm(file, { force: true });
    }
    throw new DiscussError('Conflict', `Discussion ${id} is already open elsewhere — try again in a moment.`);
  }

  async flush(): Promise<void> {
    await Promise.all([...this.chains.keys()].map((id) => this.flushOne(id)));
  }

  private async flushOne(id: string): Promise<void> {
    while (this.chains.has(id)) await this.chains.get(id);
  }

  private enqueue(id: string, work: () => Promise<void>): void {
    const previous = this.chains.get(id) ?? Promise.resolve();
    const next = previous
      .then(work)
      .catch((err: Error) => this.onError(`saving discussion ${id} failed: ${err.message}`))
      .finally(() => {
        if (this.chains.get(id) === next) this.chains.delete(id);
      });
    this.chains.set(id, next);
  }

  private async writeRecord(id: string): Promise<void> {
    const snapshot = this.pendingRecords.get(id);
    this.pendingRecords.delete(id);
    if (!snapshot) return;
    const dir = this.dir(id);
    await fs.mkdir(dir, { recursive: true });
    const target = path.join(dir, RECORD_FILE);
    const temp = `${target}.${process.pid}.tmp`;
    await fs.writeFile(temp, JSON.stringify({ version: RECORD_VERSION, snapshot }));
    await fs.rename(temp, target);
  }

  private async writeEvents(id: string): Promise<void> {
    const lines = this.pendingEvents.get(id);
    this.pendingEvents.delete(id);
    if (!lines?.length) return;
    const dir = this.dir(id);
    await fs.mkdir(dir, { recursive: true });
    await fs.appendFile(path.join(dir, EVENTS_FILE), lines.join(''));
  }
}

async function readEventLog(file: string): Promise<DiscussionEvent[]> {
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch {
    return [];
  }
  const events: DiscussionEvent[] = [];
  let lastSeq = -1;
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue;
    try {
      const event = JSON.parse(line) as DiscussionEvent;
      // A torn or repeated line never breaks the seq order a client relies on.
      if (typeof event.seq === 'number' && event.seq > lastSeq) {
        events.push(event);
        lastSeq = event.seq;
      }
    } catch {
      // A crash mid-append leaves a partial last line: skip it.
    }
  }
  return events;
}

async function readLease(file: string): Promise<LeaseRecord | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as LeaseRecord;
  } catch {
    return undefined;
  }
}

function holderIsAlive(holder: LeaseRecord): boolean {
  if (holder.host !== os.hostname()) return true; // cannot tell; do not steal across machines
  if (holder.pid === process.pid) return false; // our own stale lease (e.g. a reused pid)
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function releaseLease(file: string): Promise<void> {
  const holder = await readLease(file);
  if (holder && holder.pid === process.pid && holder.host === os.hostname()) await fs.rm(file, { force: true });
}

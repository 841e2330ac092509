import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  promises as fs,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscussionEvent, DiscussionSummary } from '../../../shared/protocol';
import type { DiscussionSnapshot } from '../core/discussion';
import type { ChatMessage } from '../model/types';
import { DiscussError } from '../core/errors';
import type { DiscussionStore, Lease, LoadedDiscussion } from './types';
import { EVENT_BUFFER_MAX } from '../core/limits';
import { processRuns } from './processRuns';

const ID_PATTERN = /^disc-[A-Za-z0-9_-]{1,64}$/;
const RECORD_FILE = 'record.json';
const EVENTS_FILE = 'events.jsonl';
const HISTORY_FILE = 'history.jsonl';
const LEASE_FILE = 'lease.json';
const JOURNAL_FILE = 'record.jsonl';
/** The logs saves and events append to: made, where missing, when a discussion is acquired (see `acquire`). */
const APPEND_ONLY_FILES = [HISTORY_FILE, EVENTS_FILE, JOURNAL_FILE];
/**
 * Bumped on an incompatible change; a reader accepts every version up to its own.
 * 1: `record.json` alone. 2: `record.json` plus the changes in `record.jsonl`
 * that carry its `journal` id (an older reader would miss those, so it must refuse).
 */
const RECORD_VERSION = 2;
/** A record folded with nothing in its journal: readable by version-1 readers. */
const WHOLE_RECORD_VERSION = 1;
/** Past this many journal lines or bytes, the record is folded into a new `record.json`. */
const JOURNAL_MAX_LINES = 500;
const JOURNAL_MAX_BYTES = 2 * 2 ** 20;

/** `record.json`'s payload: the snapshot minus its history, which has its own file. */
type SavedRecord = Omit<DiscussionSnapshot, 'history'> & { historyLength: number };

/** A line of `record.jsonl`: the record fields a save changed, and the transcript entries it added. */
interface JournalLine {
  /** The journal this line belongs to (`record.json`'s `journal`); lines of an older journal are ignored. */
  j: string;
  set?: Partial<SavedRecord>;
  /** Transcript entries added at its end; then only the last `transcriptLength` are kept. */
  transcriptAdded?: SavedRecord['transcript'];
  transcriptLength?: number;
}

/** What this process last wrote of a discussion's record, to journal only what changed. */
interface WrittenRecord {
  journal: string;
  /** Each field's JSON as last written (transcript aside). */
  fields: Map<string, string>;
  transcript: SavedRecord['transcript'];
  record: SavedRecord;
  lines: number;
  bytes: number;
}

/**
 * The event log is rewritten down to the newest EVENT_BUFFER_MAX events once
 * it holds twice that: a resume replays no more than the live buffer holds,
 * so older lines are dead weight that would grow without bound.
 */
const COMPACT_AT = EVENT_BUFFER_MAX * 2;

/**
 * Streaming deltas are not written: a finished reply is kept whole in its
 * `assistant_message`, and writing every token would multiply the disk work
 * of a turn by its length.
 */
const UNSAVED_EVENTS = new Set<DiscussionEvent['type']>(['assistant_delta', 'reasoning_delta']);

interface LeaseRecord {
  pid: number;
  host: string;
  acquiredAt: number;
}

/**
 * Discussions on disk, one folder each:
 * - `history.jsonl`: the model history, one message per line, append-only;
 * - `events.jsonl`: the event log, append-only (deltas left out);
 * - `record.json`: everything else (title, model, transcript, task, hand-offs),
 *   replaced atomically by write-then-rename, but not on every save: a save
 *   appends the fields it changed to `record.jsonl` (two renames per turn
 *   were 39% of the main thread's time over 1,000 turns). The journal is
 *   folded back into `record.json` when it grows and when the discussion is
 *   released.
 *
 * Writes are synchronous and small. An async write queue lagged behind the
 * turn, so a process killed right after `turn_complete` reached the client
 * could lose that turn; now an event is on disk before any client sees it.
 * A crash can tear only the last line of an append-only file, and the reader
 * skips a torn line, so no crash makes a discussion unreadable.
 */
export class FileStore implements DiscussionStore {
  readonly persistent = true;
  /** History messages already on disk per discussion: saves append only the tail. */
  private readonly historyWritten = new Map<string, number>();
  /** Lines in each event log this process knows of, to decide when to compact. */
  private readonly eventCounts = new Map<string, number>();
  /** The record as last written, per discussion saved by this process. */
  private readonly written = new Map<string, WrittenRecord>();

  private constructor(
    readonly root: string,
    private readonly onError: (message: string) => void,
  ) {}

  get stateDirectory(): string {
    return this.root;
  }

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
    let raw: string;
    try {
      raw = await fs.readFile(path.join(dir, RECORD_FILE), 'utf8');
    } catch {
      return undefined;
    }
    let record: SavedRecord;
    try {
      record = withJournal(parseRecord(raw), await readJournal(dir));
      if (!record || record.id !== id || typeof record.repo !== 'string') throw new Error('missing fields');
    } catch (err) {
      throw new DiscussError(
        'StorageFailed',
        `The saved discussion ${id} is unreadable (${(err as Error).message}); its files are in ${dir}. Start a new discussion.`,
      );
    }
    const history = await readJsonLines<ChatMessage>(path.join(dir, HISTORY_FILE), isMessage);
    const events: DiscussionEvent[] = [];
    for (const event of await readJsonLines<DiscussionEvent>(path.join(dir, EVENTS_FILE), isEvent)) {
      // A repeated or out-of-order line never breaks the seq order a client relies on.
      if (events.length === 0 || event.seq > events[events.length - 1].seq) events.push(fromSavedEvent(event));
    }
    this.historyWritten.set(id, history.length);
    this.eventCounts.set(id, events.length);
    return { snapshot: { ...record, history }, events: events.slice(-EVENT_BUFFER_MAX) };
  }

  save(snapshot: DiscussionSnapshot): void {
    const id = snapshot.id;
    try {
      const dir = this.dir(id);
      mkdirSync(dir, { recursive: true });
      const written = this.historyWritten.get(id) ?? 0;
      if (snapshot.history.length > written) {
        const tail = snapshot.history.slice(written).map((m) => JSON.stringify(m) + '\n').join('');
        appendFileSync(path.join(dir, HISTORY_FILE), tail);
        this.historyWritten.set(id, snapshot.history.length);
      }
      const { history, ...rest } = snapshot;
      this.saveRecord(id, dir, { ...rest, historyLength: history.length });
    } catch (err) {
      // Whatever the journal now holds, the next save starts over from a whole record.
      this.written.delete(id);
      this.onError(`saving discussion ${id} failed: ${(err as Error).message}`);
    }
  }

  /**
   * Appends to the journal the fields that changed since the last write, or
   * writes the whole record (a new journal) when this process has not
   * written it yet or the journal has grown past its bounds.
   */
  private saveRecord(id: string, dir: string, record: SavedRecord): void {
    const last = this.written.get(id);
    if (!last || last.lines >= JOURNAL_MAX_LINES || last.bytes >= JOURNAL_MAX_BYTES) {
      this.writeWholeRecord(id, dir, record, RECORD_VERSION);
      return;
    }
    const line: JournalLine = { j: last.journal };
    const set: Partial<SavedRecord> = {};
    let changed = false;
    const fields = new Map<string, string>();
    for (const [key, value] of Object.entries(record) as Array<[keyof SavedRecord, unknown]>) {
      if (key === 'transcript') continue;
      const json = JSON.stringify(value);
      fields.set(key, json);
      if (last.fields.get(key) !== json) {
        (set as Record<string, unknown>)[key] = value;
        changed = true;
      }
    }
    // A field the record no longer has (an optional one cleared) cannot be journaled as a change: write it whole.
    for (const key of last.fields.keys()) if (!fields.has(key)) return this.writeWholeRecord(id, dir, record, RECORD_VERSION);
    if (changed) line.set = set;
    const added = transcriptAdded(last.transcript, record.transcript);
    if (added === undefined) {
      line.set = { ...set, transcript: record.transcript };
      changed = true;
    } else if (added.length > 0) {
      line.transcriptAdded = added;
      line.transcriptLength = record.transcript.length;
      changed = true;
    }
    if (!changed) return;
    const text = JSON.stringify(line) + '\n';
    appendFileSync(path.join(dir, JOURNAL_FILE), text);
    this.written.set(id, { ...last, fields, transcript: record.transcript.slice(), record, lines: last.lines + 1, bytes: last.bytes + text.length });
  }

  /**
   * Replaces `record.json` (write, then rename) and starts a new journal. The
   * new id goes into `record.json` before the old journal is emptied, so a
   * crash in between leaves old lines that the new id makes a reader skip.
   */
  private writeWholeRecord(id: string, dir: string, record: SavedRecord, version: number): void {
    const journal = version === WHOLE_RECORD_VERSION ? undefined : randomBytes(6).toString('hex');
    const target = path.join(dir, RECORD_FILE);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ version, record, ...(journal ? { journal } : {}) }));
    renameSync(temp, target);
    const journalFile = path.join(dir, JOURNAL_FILE);
    if (existsSync(journalFile)) writeFileSync(journalFile, '');
    if (!journal) {
      this.written.delete(id);
      return;
    }
    const fields = new Map<string, string>();
    for (const [key, value] of Object.entries(record)) if (key !== 'transcript') fields.set(key, JSON.stringify(value));
    this.written.set(id, { journal, fields, transcript: record.transcript.slice(), record, lines: 0, bytes: 0 });
  }

  /** Folds the journal into a whole version-1 record, as a version-1 reader can read it. */
  private fold(id: string): void {
    const last = this.written.get(id);
    if (!last) return;
    try {
      this.writeWholeRecord(id, this.dir(id), last.record, WHOLE_RECORD_VERSION);
    } catch (err) {
      this.written.delete(id);
      this.onError(`saving discussion ${id} failed: ${(err as Error).message}`);
    }
  }

  appendEvent(id: string, event: DiscussionEvent): void {
    if (UNSAVED_EVENTS.has(event.type)) return;
    try {
      const dir = this.dir(id);
      const file = path.join(dir, EVENTS_FILE);
      appendFileSync(file, JSON.stringify(event) + '\n');
      const count = (this.eventCounts.get(id) ?? 0) + 1;
      this.eventCounts.set(id, count);
      if (count >= COMPACT_AT) this.compactEvents(id, file);
    } catch (err) {
      this.onError(`saving an event of discussion ${id} failed: ${(err as Error).message}`);
    }
  }

  private compactEvents(id: string, file: string): void {
    const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line.trim());
    const kept = lines.slice(-EVENT_BUFFER_MAX);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, kept.join('\n') + '\n');
    renameSync(temp, file);
    this.eventCounts.set(id, kept.length);
  }

  async list(): Promise<DiscussionSummary[]> {
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
        // A record this version cannot resume (parseRecord throws) is not offered.
        const s = withJournal(parseRecord(raw), await readJournal(path.join(base, name)));
        rows.push({
          discussionId: s.id,
          repo: s.repo,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
          title: s.title,
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
   * The holder then makes the logs ready to append to: a torn last line
   * ended, and a log that is missing made, empty.
   */
  async acquire(id: string): Promise<Lease> {
    const dir = this.dir(id);
    await fs.mkdir(dir, { recursive: true });
    const file = path.join(dir, LEASE_FILE);
    await takeLease(id, file);
    try {
      // Only the holder may touch the logs: end a torn last line now, or the
      // next append would be glued to it and lost along with it.
      for (const name of APPEND_ONLY_FILES) terminateTornLine(path.join(dir, name));
      // A new discussion's logs are made here, while its folder is bound, so that its first message only appends:
      // making a file took about 0.24 ms on an ext4 disk, and the three made by that message came before its
      // request was on its way to the model. Only made where missing: a log already there is not opened for
      // writing here, so one that cannot be written to (or a FIFO, which would hold the open for good) stops
      // neither a resume nor a delete.
      const made = await Promise.allSettled(APPEND_ONLY_FILES.map((name) => makeIfMissing(path.join(dir, name))));
      const failed = made.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
    } catch (err) {
      // Kept, the lease would refuse every other window this discussion for as long as this process runs. All the
      // writes above are settled first: a new discussion's folder is removed next, and a write still going could
      // make a file in it again.
      await releaseLease(file).catch(() => undefined);
      throw err;
    }
    return {
      release: () => {
        this.fold(id);
        return releaseLease(file);
      },
    };
  }

  async delete(id: string): Promise<boolean> {
    const dir = this.dir(id);
    try {
      await fs.access(path.join(dir, RECORD_FILE));
    } catch {
      return false;
    }
    // Taking the lease first is what refuses a delete under another window's feet.
    const lease = await this.acquire(id);
    await lease.release();
    await fs.rm(dir, { recursive: true, force: true });
    this.historyWritten.delete(id);
    this.eventCounts.delete(id);
    this.written.delete(id);
    return true;
  }

  async discard(id: string): Promise<void> {
    const dir = this.dir(id);
    try {
      await fs.access(path.join(dir, RECORD_FILE));
      return; // a saved discussion is never discarded this way
    } catch {
      this.written.delete(id);
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  async flush(): Promise<void> {
    // Writes are synchronous: there is never anything queued.
  }
}

/** `record.json`'s record and the journal it names (none for a version-1 record). Throws when unreadable or too new. */
function parseRecord(raw: string): { record: SavedRecord; journal?: string } {
  const parsed = JSON.parse(raw) as { version: number; record: SavedRecord; journal?: unknown };
  if (typeof parsed.version !== 'number') throw new Error('it has no format version');
  if (parsed.version > RECORD_VERSION) {
    throw new Error(`format version ${parsed.version} is newer than this version reads; update the extension`);
  }
  const journal = parsed.version >= 2 && typeof parsed.journal === 'string' ? parsed.journal : undefined;
  return { record: parsed.record, ...(journal ? { journal } : {}) };
}

function readJournal(dir: string): Promise<JournalLine[]> {
  return readJsonLines<JournalLine>(path.join(dir, JOURNAL_FILE), isJournalLine);
}

/** The record with its journal's changes applied in order; lines of another journal (one folded since) are skipped. */
function withJournal(saved: { record: SavedRecord; journal?: string }, lines: JournalLine[]): SavedRecord {
  if (!saved.journal || !saved.record) return saved.record;
  let record = saved.record;
  for (const line of lines) {
    if (line.j !== saved.journal) continue;
    if (line.set) record = { ...record, ...line.set };
    if (Array.isArray(line.transcriptAdded)) {
      const transcript = [...(record.transcript ?? []), ...line.transcriptAdded];
      const keep = typeof line.transcriptLength === 'number' ? line.transcriptLength : transcript.length;
      record = { ...record, transcript: transcript.slice(Math.max(0, transcript.length - keep)) };
    }
  }
  return record;
}

function isJournalLine(value: unknown): value is JournalLine {
  return typeof (value as { j?: unknown } | null)?.j === 'string';
}

/**
 * The entries `next` added at the end of `previous` (which may have lost
 * entries at its start to the transcript's cap); undefined when `next` is not
 * such a continuation. Entries are compared by identity: the discussion
 * keeps its transcript's entry objects.
 */
function transcriptAdded(previous: SavedRecord['transcript'], next: SavedRecord['transcript']): SavedRecord['transcript'] | undefined {
  if (previous.length === 0) return next.slice();
  if (next.length === 0) return undefined;
  const start = previous.indexOf(next[0]);
  if (start < 0) return undefined;
  const kept = previous.length - start;
  if (kept > next.length) return undefined;
  for (let i = 0; i < kept; i++) if (previous[start + i] !== next[i]) return undefined;
  return next.slice(kept);
}

/**
 * The valid lines of an append-only JSON-lines file. A crash mid-append
 * leaves a torn last line; it is skipped, never a reason to refuse the rest.
 */
async function readJsonLines<T>(file: string, valid: (value: unknown) => value is T): Promise<T[]> {
  let raw: string;
  try {
    raw = await fs.readFile(file, 'utf8');
  } catch {
    return [];
  }
  const out: T[] = [];
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (valid(value)) out.push(value);
    } catch {
      // torn line
    }
  }
  return out;
}

function isMessage(value: unknown): value is ChatMessage {
  const role = (value as { role?: unknown } | null)?.role;
  return role === 'user' || role === 'assistant' || role === 'tool' || role === 'system';
}

/**
 * An event as this version emits it. Logs written before the prepared task
 * had one shape everywhere call its intent `proposedIntent`; without this a
 * resumed discussion's task card came back with no intent.
 */
function fromSavedEvent(event: DiscussionEvent): DiscussionEvent {
  if (event.type !== 'task_prepared' || typeof event.intent === 'string') return event;
  const { proposedIntent, ...rest } = event as DiscussionEvent & { proposedIntent?: unknown };
  return { ...rest, intent: typeof proposedIntent === 'string' ? proposedIntent : '' } as DiscussionEvent;
}

function isEvent(value: unknown): value is DiscussionEvent {
  const v = value as { seq?: unknown; type?: unknown } | null;
  return typeof v?.seq === 'number' && typeof v.type === 'string';
}

function terminateTornLine(file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return;
  }
  if (size === 0) return;
  const fd = openSync(file, 'r');
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] !== 0x0a) appendFileSync(file, '\n');
  } finally {
    closeSync(fd);
  }
}

async function readLease(file: string): Promise<LeaseRecord | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as LeaseRecord;
  } catch {
    return undefined;
  }
}

/** Makes `file` empty unless something is there already. */
async function makeIfMissing(file: string): Promise<void> {
  try {
    await fs.writeFile(file, '', { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

function holderIsAlive(holder: LeaseRecord): boolean {
  if (holder.host !== os.hostname()) return true; // cannot tell; do not steal across machines
  if (holder.pid === process.pid) return false; // our own stale lease (e.g. a reused pid)
  return processRuns(holder.pid);
}

/**
 * Writes this process's lease on discussion `id`, taking over one whose
 * holder has died; refused while a live process holds it.
 */
async function takeLease(id: string, file: string): Promise<void> {
  const mine: LeaseRecord = { pid: process.pid, host: os.hostname(), acquiredAt: Date.now() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.writeFile(file, JSON.stringify(mine), { flag: 'wx' });
      return;
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

async function releaseLease(file: string): Promise<void> {
  const holder = await readLease(file);
  if (holder && holder.pid === process.pid && holder.host === os.hostname()) await fs.rm(file, { force: true });
}

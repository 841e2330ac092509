import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Lines kept per folder; readline's own history holds as many. */
export const HISTORY_SIZE = 200;
/** A line longer than this (a pasted file) is not worth recalling and would bloat the file. */
const MAX_ENTRY_CHARS = 8_000;

/**
 * What was typed at the prompt, per discussed folder, kept across runs in
 * the storage folder (`input-history/`, one file per folder named by a hash
 * of its path), never in the repository: a question may quote what should
 * not be committed. Newest first, as readline keeps it.
 */
export class InputHistory {
  private constructor(
    private readonly file: string,
    private readonly folder: string,
  ) {}

  static of(storageDir: string, folder: string): InputHistory {
    const name = createHash('sha256').update(folder).digest('hex').slice(0, 32);
    return new InputHistory(path.join(storageDir, 'input-history', `${name}.json`), folder);
  }

  /** The saved lines, newest first; none when the file is missing, unreadable or another folder's. */
  load(): string[] {
    try {
      const saved = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { folder?: unknown; entries?: unknown };
      if (saved.folder !== this.folder || !Array.isArray(saved.entries)) return [];
      return saved.entries.filter((entry): entry is string => typeof entry === 'string').slice(0, HISTORY_SIZE);
    } catch {
      return [];
    }
  }

  /** Replaces the saved lines (newest first). A failure to save costs only the recall, so it is not reported. */
  save(entries: readonly string[]): void {
    const kept = entries.filter((entry) => entry.length <= MAX_ENTRY_CHARS).slice(0, HISTORY_SIZE);
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      // Written aside and renamed, so a second client of the same folder never reads half a file.
      const temp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(temp, `${JSON.stringify({ folder: this.folder, entries: kept })}\n`, { mode: 0o600 });
      fs.renameSync(temp, this.file);
    } catch {
      // A read-only storage folder: the session goes on without saved history.
    }
  }
}

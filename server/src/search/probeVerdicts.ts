import type * as fs from 'node:fs';
import * as path from 'node:path';
import { readOwnJson, writeOwnJson } from '../store/ownJsonFile';

/**
 * What an earlier process's check of a ripgrep binary found, kept in the
 * probe's own directory (private to this user) so that a new server does not
 * run ripgrep twice before its first answer: that check was most of a fresh
 * server's first discuss/start, a resume included.
 *
 * A verdict holds only for the very file it was taken of: its device, inode,
 * size, modification and change times. Replacing, rewriting or re-linking the
 * binary changes one of them, and the binary is checked again. Only a
 * conclusive check is kept: a ripgrep that timed out under load, or could
 * not run, is checked again next time rather than refused for good. Only a
 * native binary's verdict is kept (locateRipgrep.ts `isNativeExecutable`): a
 * launcher script stays the same file while the ripgrep it starts changes.
 */

export interface BinaryIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export interface ProbeVerdict {
  /** The first line of `--version`. */
  version: string;
  /** Whether it may be used: it ran as ripgrep and its debug log names the symlinks it passes over (locateRipgrep.ts says why that is required). */
  usable: boolean;
}

interface SavedVerdict extends BinaryIdentity, ProbeVerdict {
  binary: string;
}

/** Named for the check's format: verdicts of a check that asks something else are in a file of their own, never read as these. */
export const VERDICTS_FILE = 'verdicts-v1.json';
/** Binaries remembered: a few ripgreps on one machine (PATH, settings, an editor's own). */
const MAX_VERDICTS = 8;
/** Eight verdicts take about 2 KB; a larger file is not ours to parse. */
const MAX_FILE_BYTES = 64 * 1024;

export function identityOf(stats: fs.Stats): BinaryIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs };
}

function sameIdentity(a: BinaryIdentity, b: BinaryIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function isSavedVerdict(value: unknown): value is SavedVerdict {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.binary === 'string' &&
    typeof v.version === 'string' &&
    typeof v.usable === 'boolean' &&
    ['dev', 'ino', 'size', 'mtimeMs', 'ctimeMs'].every((key) => typeof v[key] === 'number')
  );
}

/** The verdicts kept in `directory`, which the caller has checked is this user's own. */
export class ProbeVerdicts {
  private readonly file: string;

  constructor(directory: string) {
    this.file = path.join(directory, VERDICTS_FILE);
  }

  /** The kept verdict on `binary` if it was taken of this very file; a missing or garbled file is no verdict. */
  async lookup(binary: string, identity: BinaryIdentity): Promise<ProbeVerdict | undefined> {
    const found = (await this.read()).find((saved) => saved.binary === binary && sameIdentity(saved, identity));
    return found ? { version: found.version, usable: found.usable } : undefined;
  }

  /**
   * Keeps a verdict, newest first; written whole and renamed into place, so a
   * reader never sees half of it. Two processes keeping verdicts at once:
   * the last rename wins and the other's verdict is taken again next time.
   */
  async remember(binary: string, identity: BinaryIdentity, verdict: ProbeVerdict): Promise<void> {
    const others = (await this.read()).filter((saved) => saved.binary !== binary);
    const saved: SavedVerdict = { binary, ...identity, ...verdict };
    await writeOwnJson(this.file, [saved, ...others].slice(0, MAX_VERDICTS));
  }

  private async read(): Promise<SavedVerdict[]> {
    // Only a small file of this user's, not through a link: the directory is checked, this is the file itself.
    const parsed = await readOwnJson(this.file, MAX_FILE_BYTES);
    return Array.isArray(parsed) ? parsed.filter(isSavedVerdict) : [];
  }
}

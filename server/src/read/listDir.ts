import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ToolOutcome } from './types';
import { describeOpenRefusal, listVerifiedDirectory, ReadBoundary } from '../access/boundary';
import { printablePath, quotedPath } from '../../../shared/printablePath';
import { NOT_READABLE_NOTE, cancelled, displayPath, failed, ok, withQuotedNamesNote } from './answers';
import { READ_LIMITS } from './limits';

/** list_dir: one directory's entries, listed through the verified descriptor. */

export interface ListDirArgs {
  path?: string;
}

interface ListedEntry {
  name: string;
  label: string;
}

export async function listDir(boundary: ReadBoundary, args: ListDirArgs, signal?: AbortSignal): Promise<ToolOutcome> {
  const resolved = await boundary.resolve(args.path ?? '.');
  if (!resolved.ok) return failed(resolved.message);
  if (resolved.kind !== 'directory') {
    return failed(`${quotedPath(args.path ?? '.')} is not a directory. Use read_file to read a file.`);
  }

  // The listing is proved to be of the checked directory, not of a link swapped in since (see boundary.ts).
  const listing = await listVerifiedDirectory(resolved.realPath);
  if (!listing.ok) {
    return failed(listing.refusal === 'changed' ? describeOpenRefusal(args.path ?? '.', 'changed') : `${quotedPath(args.path ?? '.')} could not be listed.`);
  }
  const entries = listing.entries;
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const base = resolved.relativePath === '.' ? '' : `${resolved.relativePath}/`;
  const listed: ListedEntry[] = [];
  for (const entry of entries.slice(0, READ_LIMITS.listMaxEntries)) {
    if (signal?.aborted) return cancelled();
    listed.push(await describeEntry(boundary, resolved.realPath, base, entry));
  }

  const shownPath = displayPath(args.path, resolved);
  if (entries.length === 0) return ok([`${shownPath}/ is empty.`, ...withQuotedNamesNote([shownPath], [])].join('\n'));
  const lines = listed.map((entry) => entry.label);
  const header = `${shownPath === '.' ? './' : `${shownPath}/`} (${entries.length} entries)`;
  const notes: string[] = [];
  if (entries.length > READ_LIMITS.listMaxEntries) {
    notes.push(`[Showing the first ${READ_LIMITS.listMaxEntries} of ${entries.length} entries. Use find_files with a pattern to narrow.]`);
  }
  return ok([header, ...lines, ...withQuotedNamesNote([header, ...lines], notes)].join('\n'));
}

async function describeEntry(boundary: ReadBoundary, directory: string, base: string, entry: fs.Dirent): Promise<ListedEntry> {
  const name = entry.name;
  const relativePath = `${base}${name}`;
  const shown = printablePath(name);
  if (entry.isSymbolicLink()) {
    // Resolve through the boundary so a link out of the folder is named but never followed.
    const target = await boundary.resolve(path.join(directory, name));
    if (target.ok) {
      return { name, label: target.kind === 'directory' ? `${shown}/  (symbolic link)` : `${shown}  (symbolic link)` };
    }
    if (target.kind === 'outside') return { name, label: `${shown}  (symbolic link leading outside the folder; not readable)` };
    if (target.kind === 'denied') return { name, label: `${shown}${NOT_READABLE_NOTE}` };
    return { name, label: `${shown}  (broken symbolic link)` };
  }
  const isDirectory = entry.isDirectory();
  const denial = boundary.denyRules.entryDenialOf(relativePath);
  if (denial?.kind === 'git') return { name, label: `${shown}${isDirectory ? '/' : ''}  (Git internals; not listable)` };
  if (denial) return { name, label: `${shown}${isDirectory ? '/' : ''}${NOT_READABLE_NOTE}` };
  return { name, label: isDirectory ? `${shown}/` : shown };
}

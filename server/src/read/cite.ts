import type { ReadBoundary } from '../access/boundary';
import { headCommitOf } from '../git/gitTools';
import type { Citation } from './types';
import { readFile } from './readFile';

/**
 * Reads a decision's evidence: the cited line (or whole file, as read_file
 * shows it) through the boundary, so evidence can name nothing a read could
 * not, secrets and paths outside the folder included.
 */
export async function citeLines(boundary: ReadBoundary, requested: string, line: number | undefined, signal?: AbortSignal): Promise<Citation> {
  const resolved = await boundary.resolve(requested);
  if (!resolved.ok) return { ok: false, problem: resolved.message };
  const read = await readFile(boundary, { path: requested, start_line: line, end_line: line }, signal);
  if (!read.ok) return { ok: false, problem: read.output };
  // read_file numbers its lines "N: text"; the evidence is the text itself.
  const text = line === undefined ? read.output : read.output.split('\n')[0].replace(/^\d+: /, '');
  const commit = await headCommitOf(boundary, signal).catch(() => undefined);
  // The name as it is, to cite it again later: whatever prints it quotes it (evidenceLabel, printablePath).
  return { ok: true, path: resolved.relativePath, text, ...(commit ? { commit } : {}) };
}

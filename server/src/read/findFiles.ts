import type { ToolOutcome } from './types';
import { shortenForMessage, ReadBoundary } from '../access/boundary';
import { normalizeGlob } from '../access/globs';
import { SearchEngine } from '../search/searchEngine';
import { printablePath } from '../../../shared/printablePath';
import { NOT_READABLE_NOTE, WALK_EXCLUSIONS, cancelled, compileModelGlob, failed, jobScope, leftOutNotes, listingStopNote, ok, resolveSearchScope, unfinished, withQuotedNamesNote } from './answers';
import { READ_LIMITS } from './limits';

/** find_files: files by glob, through the search engine. */

export interface FindFilesArgs {
  pattern: string;
  path?: string;
}

export async function findFiles(boundary: ReadBoundary, args: FindFilesArgs, signal: AbortSignal | undefined, engine: SearchEngine): Promise<ToolOutcome> {
  if (normalizeGlob(args.pattern) === '') return failed('pattern is empty. Pass a glob such as "**/*.ts" or "package.json".');
  const matches = compileModelGlob('pattern', args.pattern);
  if (typeof matches !== 'function') return matches;
  const scopeResult = await resolveSearchScope(boundary, args.path);
  if (!scopeResult.ok) return scopeResult.outcome;
  const scope = scopeResult.scope;

  if (scope.kind === 'file') {
    const shown = printablePath(scope.relativePath);
    if (!matches(scope.relativePath)) return ok(`No files match "${shortenForMessage(args.pattern)}" at ${shown}.`);
    return ok([shown, ...withQuotedNamesNote([shown], [])].join('\n'));
  }

  const outcome = await engine.run({ kind: 'find', root: boundary.root, denyRead: boundary.denyRules.policyGlobs, scope: jobScope(scope), pattern: args.pattern }, signal);
  if (signal?.aborted) return cancelled();
  if (!outcome.ok) return unfinished('find_files', outcome, engine.timeoutMs);
  const result = outcome.result;
  if (result.kind !== 'find') return failed('The find_files call failed. Try again with other arguments.');

  const where = scope.relativePath === '.' ? 'the folder' : `${printablePath(scope.relativePath)}/`;
  const notes: string[] = [];
  if (result.more) {
    notes.push(`[Showing the first ${READ_LIMITS.findMaxResults} matches; there are more. Use a narrower pattern or pass path.]`);
  }
  const stopNote = listingStopNote(result.listingStopped);
  if (stopNote) notes.push(stopNote);
  notes.push(...leftOutNotes(result));
  if (result.results.length === 0) {
    return ok([`No files match "${shortenForMessage(args.pattern)}" in ${where} (${WALK_EXCLUSIONS}).`, ...notes].join('\n'));
  }
  const lines = result.results.map((file) => `${printablePath(file.relativePath)}${file.denied ? NOT_READABLE_NOTE : ''}`);
  return ok([...lines, ...withQuotedNamesNote(lines, notes)].join('\n'));
}

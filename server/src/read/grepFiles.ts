import type { ToolOutcome } from './types';
import { shortenForMessage, ReadBoundary } from '../access/boundary';
import { compilePattern } from '../search/grepCore';
import { normalizeGlob } from '../access/globs';
import { SearchEngine } from '../search/searchEngine';
import { printableListItem, printablePath, quotedPath } from '../../../shared/printablePath';
import { WALK_EXCLUSIONS, cancelled, compileModelGlob, failed, jobScope, leftOutNotes, listingStopNote, ok, resolveSearchScope, unfinished, withQuotedNamesNote } from './answers';
import { READ_LIMITS } from './limits';

/** grep_files: lines matching a regular expression, through the search engine. */

export interface GrepFilesArgs {
  pattern: string;
  path?: string;
  glob?: string;
}

/**
 * V8's message repeats the whole pattern ("Invalid regular expression: /…/m:
 * Unterminated group"), which made a megabyte pattern a two-megabyte answer;
 * the reason alone is kept, after the (cut) pattern.
 */
function regexpProblem(message: string): string {
  return shortenForMessage(message.replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, ''));
}

export async function grepFiles(boundary: ReadBoundary, args: GrepFilesArgs, signal: AbortSignal | undefined, engine: SearchEngine): Promise<ToolOutcome> {
  if (args.pattern === '') return failed('pattern is empty. Pass a JavaScript regular expression such as "createToolbox\\(".');
  // Compiled here only to answer a bad pattern at once; the worker compiles its own copy.
  const pattern = compilePattern(args.pattern);
  if (typeof pattern === 'string') {
    return failed(`Invalid regular expression ${JSON.stringify(shortenForMessage(args.pattern))}: ${regexpProblem(pattern)}. Pass a JavaScript regular expression; escape special characters such as ( [ { . * + ? with a backslash.`);
  }
  const glob = args.glob !== undefined && normalizeGlob(args.glob) !== '' ? args.glob : undefined;
  // Compiled here only to answer a bad glob at once; the worker compiles its own copy.
  const globTest = glob === undefined ? undefined : compileModelGlob('glob', glob);
  if (globTest !== undefined && typeof globTest !== 'function') return globTest;
  const scopeResult = await resolveSearchScope(boundary, args.path);
  if (!scopeResult.ok) return scopeResult.outcome;
  const scope = scopeResult.scope;

  const outcome = await engine.run(
    { kind: 'grep', root: boundary.root, denyRead: boundary.denyRules.policyGlobs, scope: jobScope(scope), pattern: args.pattern, glob },
    signal,
  );
  if (signal?.aborted) return cancelled();
  if (!outcome.ok) return unfinished('grep_files', outcome, engine.timeoutMs);
  const result = outcome.result;
  if (result.kind !== 'grep') return failed('The grep_files call failed. Try again with other arguments.');
  if (result.namedFileBinary) {
    return failed(`${quotedPath(args.path ?? '.')} looks like a binary file (it contains NUL bytes), so it is not searched.`);
  }

  const notes: string[] = [];
  if (result.more) {
    notes.push(`[Stopped at ${READ_LIMITS.grepMaxMatches} matches; there are more. Use a more specific pattern, or pass path or glob.]`);
  }
  if (result.oversized.length > 0) {
    const listed = result.oversized.slice(0, 5).map(printableListItem).join(', ');
    const rest = result.oversized.length > 5 ? ` and ${result.oversized.length - 5} more` : '';
    notes.push(
      `[Skipped ${result.oversized.length} file(s) larger than ${READ_LIMITS.grepMaxFileBytes / (1024 * 1024)} MiB: ${listed}${rest}. ` +
        'They contain matches; use read_file with start_line/end_line to inspect them.]',
    );
  }
  const stopNote = listingStopNote(result.listingStopped);
  if (stopNote) notes.push(stopNote);
  notes.push(...leftOutNotes(result));

  const shownNames = [...result.lines, ...result.oversized.map(printableListItem)];
  if (result.matchCount === 0) {
    const where = scope.relativePath === '.' ? 'the folder' : printablePath(scope.relativePath);
    const filter = glob !== undefined ? ` matching glob "${shortenForMessage(glob)}"` : '';
    return ok([`No matches for ${JSON.stringify(shortenForMessage(args.pattern))} in ${where}${filter} (${WALK_EXCLUSIONS}; binary files are skipped).`, ...withQuotedNamesNote(shownNames, notes)].join('\n'));
  }
  return ok([...result.lines, ...withQuotedNamesNote(shownNames, notes)].join('\n'));
}

import { braceExpand } from 'minimatch';

/**
 * The one place globs are compiled: the model's (find_files, grep_files),
 * the project policy's and the user settings' deny rules.
 *
 * minimatch turns a glob into a backtracking regular expression and expands
 * braces eagerly: a 31-byte extglob held the event loop for minutes, and a
 * few `{a,b}{a,b}…` rules exhausted memory. Here a glob is first checked
 * against limits computed without expanding it, then matched by a small
 * matcher that never backtracks more than one `*` (or `**`) at a time, so
 * one test costs at most about (pattern length × path length) steps.
 *
 * Syntax, as minimatch with `dot: true`: `*` `?` `[abc]` `[!a-z]`
 * `[[:alpha:]]` `\x` `{a,b}` `{1..3}`, and `**` as a whole segment for any
 * number of directories. Extglobs (`+(a|b)`) are refused, not matched
 * literally: a rule silently meaning something else would be worse.
 */

export const GLOB_LIMITS = Object.freeze({
  /** Characters in one glob. */
  maxLength: 256,
  /** Alternatives one glob's braces may expand to. */
  maxExpansions: 256,
  /** Characters of one glob once its braces are expanded. */
  maxExpandedLength: 8192,
  /** Deny rules in one source (the policy file, the user settings). */
  maxRules: 256,
  /** Characters of one source's deny rules once expanded, which every read check walks. */
  maxRuleSetExpandedLength: 16384,
});

export function normalizeGlob(pattern: string): string {
  let normalized = pattern.trim().replace(/\\/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  while (normalized.startsWith('/')) normalized = normalized.slice(1);
  return normalized;
}

/** A glob over the limits or in unsupported syntax; `message` says what and what to do instead. */
export class GlobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GlobError';
  }
}

export interface GlobOptions {
  /** Letters match either case (deny rules: a case-insensitive disk must not let `.ENV` through). */
  nocase?: boolean;
  /** A leading `!` is a literal character, never "everything but". */
  nonegate?: boolean;
}

export type PathTest = (relativePath: string) => boolean;

export interface CompiledGlob {
  /** Whether a root-relative path (no `.`/`..` segments) matches; a trailing `/` marks a directory. */
  match: PathTest;
  /** Characters of all brace alternatives, what one test walks at most per path character. */
  expandedLength: number;
}

// ------------------------------------------------------------------ limits

const EXTGLOB = /(?:^|[^\\])[@!+*?]\(/;

/** Saturating at `cap + 1`, so a bomb's count never becomes Infinity or loses precision. */
function cappedProduct(a: number, b: number, cap: number): number {
  return Math.min(a * b, cap + 1);
}

/** Index of the `}` closing the `{` at `open`, or -1 when it is unbalanced (then literal). */
function closingBrace(text: string, open: number, end: number): number {
  let depth = 0;
  for (let index = open; index < end; index++) {
    const char = text[index];
    if (char === '\\') index++;
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return index;
  }
  return -1;
}

const SEQUENCE = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/;

function sequenceLength(body: string): number | undefined {
  const parts = SEQUENCE.exec(body);
  if (!parts) return undefined;
  const numeric = /\d/.test(parts[1]) && /\d/.test(parts[2]);
  const from = numeric ? Number(parts[1]) : parts[1].charCodeAt(0);
  const to = numeric ? Number(parts[2]) : parts[2].charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(parts[3] ?? 1)));
  return Math.floor(Math.abs(to - from) / step) + 1;
}

/** Alternatives of one `{…}` body: the sum over its comma parts, a sequence's length, or 1. */
function groupExpansions(text: string, start: number, end: number, cap: number): number {
  const parts: Array<[number, number]> = [];
  let depth = 0;
  let partStart = start;
  for (let index = start; index < end; index++) {
    const char = text[index];
    if (char === '\\') index++;
    else if (char === '{') depth++;
    else if (char === '}') depth--;
    else if (char === ',' && depth === 0) {
      parts.push([partStart, index]);
      partStart = index + 1;
    }
  }
  parts.push([partStart, end]);
  if (parts.length === 1) return sequenceLength(text.slice(start, end)) ?? countExpansions(text, start, end, cap);
  let total = 0;
  for (const [from, to] of parts) total = Math.min(total + countExpansions(text, from, to, cap), cap + 1);
  return total;
}

/**
 * How many alternatives brace expansion would produce, counted without
 * producing them: groups side by side multiply, comma parts add. Stops
 * counting just past `cap`.
 */
export function countExpansions(text: string, start = 0, end = text.length, cap: number = GLOB_LIMITS.maxExpansions): number {
  let total = 1;
  for (let index = start; index < end && total <= cap; index++) {
    const char = text[index];
    if (char === '\\') {
      index++;
    } else if (char === '{') {
      const close = closingBrace(text, index, end);
      if (close < 0) continue;
      total = cappedProduct(total, groupExpansions(text, index + 1, close, cap), cap);
      index = close;
    }
  }
  return total;
}

const SIMPLER = 'Use a simpler glob, or several: e.g. "src/**/*.{ts,tsx}", "**/test/**", "*.min.js".';

/** What makes `pattern` unusable, as a sentence ending in what to do instead; undefined when it is fine. */
export function globProblem(pattern: string): string | undefined {
  if (pattern.length > GLOB_LIMITS.maxLength) {
    return `it is ${pattern.length} characters long, more than the ${GLOB_LIMITS.maxLength} allowed. ${SIMPLER}`;
  }
  const extglob = EXTGLOB.exec(pattern);
  if (extglob) {
    const syntax = extglob[0].slice(-2);
    return (
      `it uses the extglob syntax "${syntax}…)", which is not supported. ` +
      'List the alternatives in braces instead ("*.{ts,tsx}"), or write a literal parenthesis as "[(]".'
    );
  }
  const expansions = countExpansions(pattern);
  if (expansions > GLOB_LIMITS.maxExpansions) {
    return `its braces expand to more than ${GLOB_LIMITS.maxExpansions} alternatives. Use fewer or shorter {a,b} groups, or split it into several globs.`;
  }
  return undefined;
}

// ---------------------------------------------------------------- matching

type Unit = { kind: 'char'; char: string } | { kind: 'any' } | { kind: 'star' } | { kind: 'class'; test: (char: string) => boolean };
/** One `/`-separated part of a pattern: a literal compared whole, units, or `**`. */
type Segment = { kind: 'literal'; text: string } | { kind: 'units'; units: Unit[] } | { kind: 'globstar' };

const POSIX_CLASSES: Record<string, string> = {
  alnum: '\\p{L}\\p{Nl}\\p{Nd}',
  alpha: '\\p{L}\\p{Nl}',
  ascii: '\\x00-\\x7f',
  blank: '\\p{Zs}\\t',
  cntrl: '\\p{Cc}',
  digit: '\\p{Nd}',
  graph: '\\p{Z}\\p{C}',
  lower: '\\p{Ll}',
  print: '\\p{C}',
  punct: '\\p{P}',
  space: '\\p{Z}\\t\\r\\n\\v\\f',
  upper: '\\p{Lu}',
  word: '\\p{L}\\p{Nl}\\p{Nd}\\p{Pc}',
  xdigit: 'A-Fa-f0-9',
};
/** The POSIX classes minimatch matches by their complement. */
const NEGATED_POSIX = new Set(['graph', 'print']);

function escapeForClass(char: string): string {
  return /[\\\]\[^-]/.test(char) ? `\\${char}` : char;
}

/**
 * Parses the bracket expression at `open`; returns the class and the index
 * after its `]`, or undefined when it is not closed (then `[` is literal).
 * The class becomes a one-character regular expression, which cannot backtrack.
 */
function parseClass(pattern: string, open: number, nocase: boolean): { unit: Unit; next: number } | undefined {
  let index = open + 1;
  let negated = false;
  if (pattern[index] === '!' || pattern[index] === '^') {
    negated = true;
    index++;
  }
  const ranges: string[] = [];
  const negatedRanges: string[] = [];
  let first = true;
  while (index < pattern.length) {
    const char = pattern[index];
    if (char === ']' && !first) {
      const include = ranges.length > 0 ? `[${ranges.join('')}]` : '';
      const exclude = negatedRanges.length > 0 ? `[^${negatedRanges.join('')}]` : '';
      const body = include && exclude ? `(?:${include}|${exclude})` : include || exclude || '[]';
      const regex = new RegExp(negated ? `^(?!${body})[^/]$` : `^${body}$`, nocase ? 'iu' : 'u');
      return { unit: { kind: 'class', test: (c) => regex.test(c) }, next: index + 1 };
    }
    first = false;
    const posix = char === '[' && pattern[index + 1] === ':' ? /^\[:([a-z]+):\]/.exec(pattern.slice(index)) : null;
    if (posix && POSIX_CLASSES[posix[1]] !== undefined) {
      (NEGATED_POSIX.has(posix[1]) ? negatedRanges : ranges).push(POSIX_CLASSES[posix[1]]);
      index += posix[0].length;
      continue;
    }
    let low = char;
    if (low === '\\' && index + 1 < pattern.length) low = pattern[++index];
    index++;
    if (pattern[index] === '-' && index + 1 < pattern.length && pattern[index + 1] !== ']') {
      let high = pattern[index + 1];
      index += 2;
      if (high === '\\' && index < pattern.length) high = pattern[index++];
      if (high >= low) ranges.push(`${escapeForClass(low)}-${escapeForClass(high)}`);
      continue;
    }
    ranges.push(escapeForClass(low));
  }
  return undefined;
}

function parseSegment(text: string, nocase: boolean): Segment {
  if (text === '**') return { kind: 'globstar' };
  const units: Unit[] = [];
  let literal = true;
  for (let index = 0; index < text.length; ) {
    const char = text[index];
    if (char === '\\' && index + 1 < text.length) {
      units.push({ kind: 'char', char: text[index + 1] });
      index += 2;
    } else if (char === '*') {
      // Any run of `*` inside a segment is one `*`.
      if (units[units.length - 1]?.kind !== 'star') units.push({ kind: 'star' });
      literal = false;
      index++;
    } else if (char === '?') {
      units.push({ kind: 'any' });
      literal = false;
      index++;
    } else {
      const parsed = char === '[' ? parseClass(text, index, nocase) : undefined;
      if (parsed) {
        units.push(parsed.unit);
        literal = false;
        index = parsed.next;
      } else {
        units.push({ kind: 'char', char });
        index++;
      }
    }
  }
  const fold = (char: string): string => (nocase ? char.toLowerCase() : char);
  if (literal) return { kind: 'literal', text: units.map((unit) => fold((unit as { char: string }).char)).join('') };
  return { kind: 'units', units: units.map((unit) => (unit.kind === 'char' ? { kind: 'char', char: fold(unit.char) } : unit)) };
}

/**
 * `*` `?` and classes against one path segment (already case-folded when
 * nocase). On a mismatch only the latest `*` takes one more character:
 * earlier ones need never be revisited, as the latest can absorb whatever
 * they would have. Linear in segment length times pattern length.
 */
function matchUnits(units: readonly Unit[], text: string): boolean {
  if (text === '') return false;
  let unit = 0;
  let at = 0;
  let starUnit = -1;
  let starAt = 0;
  while (at < text.length) {
    const current = units[unit];
    if (current?.kind === 'star') {
      starUnit = unit++;
      starAt = at;
      continue;
    }
    if (current && (current.kind === 'any' || (current.kind === 'char' ? current.char === text[at] : current.test(text[at])))) {
      unit++;
      at++;
      continue;
    }
    if (starUnit < 0) return false;
    unit = starUnit + 1;
    at = ++starAt;
  }
  while (units[unit]?.kind === 'star') unit++;
  return unit === units.length;
}

function matchSegment(segment: Segment, text: string): boolean {
  if (segment.kind === 'literal') return segment.text === text;
  if (segment.kind === 'units') return matchUnits(segment.units, text);
  return true;
}

/**
 * Pattern segments against path segments, `**` playing the part `*` plays
 * within a segment (zero or more whole segments), with the same single
 * backtrack point. A trailing `**` needs at least one segment (`a/**`
 * matches `a/` and `a/b`, not `a`), as in minimatch.
 */
function matchSegments(pattern: readonly Segment[], path: readonly string[]): boolean {
  let segment = 0;
  let at = 0;
  let starSegment = -1;
  let starAt = 0;
  for (;;) {
    const current = pattern[segment];
    if (current?.kind === 'globstar') {
      if (segment === pattern.length - 1) return at < path.length;
      starSegment = segment++;
      starAt = at;
      continue;
    }
    if (at === path.length && segment === pattern.length) return true;
    if (current && at < path.length && matchSegment(current, path[at])) {
      segment++;
      at++;
      continue;
    }
    if (starSegment < 0 || starAt >= path.length) return false;
    segment = starSegment + 1;
    at = ++starAt;
  }
}

interface Alternative {
  segments: Segment[];
  onBasename: boolean;
}

function compileAlternative(expanded: string, matchBase: boolean, nocase: boolean): Alternative {
  // `a//b` and `a/./b` name the same place as `a/b`.
  const parts = expanded.split('/').filter((part, index, all) => part !== '.' && (part !== '' || index === all.length - 1 || index === 0));
  const segments: Segment[] = [];
  for (const part of parts) {
    const segment = parseSegment(part, nocase);
    if (segment.kind === 'globstar' && segments[segments.length - 1]?.kind === 'globstar') continue;
    segments.push(segment);
  }
  return { segments, onBasename: matchBase && segments.length === 1 };
}

/**
 * Checks `pattern` against the limits and compiles it. A pattern without
 * `/` matches file names at any depth (`*.ts`), like .gitignore and
 * ripgrep's --glob; with `/` it matches the whole relative path.
 * Throws GlobError naming the problem and what to do instead.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): CompiledGlob {
  let normalized = normalizeGlob(pattern);
  const problem = globProblem(normalized);
  if (problem) throw new GlobError(problem);
  let negate = false;
  if (!options.nonegate) {
    while (normalized.startsWith('!')) {
      negate = !negate;
      normalized = normalized.slice(1);
    }
  }
  // The count above bounds this; the cap is a second guard should brace-expansion count differently.
  const expanded = braceExpand(normalized, { braceExpandMax: GLOB_LIMITS.maxExpansions + 1 });
  const expandedLength = expanded.reduce((sum, alternative) => sum + alternative.length, 0);
  if (expanded.length > GLOB_LIMITS.maxExpansions) {
    throw new GlobError(`its braces expand to more than ${GLOB_LIMITS.maxExpansions} alternatives. Use fewer or shorter {a,b} groups, or split it into several globs.`);
  }
  if (expandedLength > GLOB_LIMITS.maxExpandedLength) {
    throw new GlobError(`its braces expand to ${expandedLength} characters, more than the ${GLOB_LIMITS.maxExpandedLength} allowed. Use fewer or shorter {a,b} groups.`);
  }
  const nocase = options.nocase === true;
  const matchBase = !normalized.includes('/');
  const alternatives = expanded.map((alternative) => compileAlternative(alternative, matchBase, nocase));
  const match = (relativePath: string): boolean => {
    const folded = nocase ? relativePath.toLowerCase() : relativePath;
    let segments: string[] | undefined;
    let matched = false;
    for (const alternative of alternatives) {
      if (alternative.onBasename) {
        const trimmed = folded.endsWith('/') ? folded.slice(0, -1) : folded;
        matched = matchSegment(alternative.segments[0], trimmed.slice(trimmed.lastIndexOf('/') + 1));
      } else {
        segments ??= folded.split('/');
        // A trailing `/` (a directory) may be left over once the pattern is used up: `a` matches `a/`.
        matched =
          matchSegments(alternative.segments, segments) ||
          (segments.length > 1 && segments[segments.length - 1] === '' && matchSegments(alternative.segments, segments.slice(0, -1)));
      }
      if (matched) break;
    }
    return matched !== negate;
  };
  return { match, expandedLength };
}

/** `compileGlob(pattern).match`: for the model's globs. Throws GlobError. */
export function compileGlobTest(pattern: string): PathTest {
  return compileGlob(pattern).match;
}

/**
 * A deny glob ripgrep can apply as an exclusion with the meaning it has
 * here (a name at any depth without `/`, a root-relative path with one).
 * Others are left to the check every listed path goes through anyway.
 */
export function isPortableDenyGlob(glob: string): boolean {
  return /^[A-Za-z0-9_.\-/*?]+$/.test(glob) && !glob.includes('..') && !glob.startsWith('/');
}

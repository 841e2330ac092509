/**
 * Symbol-name matching in the manner of VS Code's workspace symbol search:
 * case-insensitive, with a prefix, a camelCase/snake_case "hump" match
 * ("cS" and "crSer" find createServer) and, last, any subsequence ("crser").
 * Higher scores are better matches; undefined is no match.
 */

export const MATCH_SCORES = Object.freeze({ exact: 100, exactIgnoringCase: 90, prefix: 80, humps: 60, substring: 50, subsequence: 20 });

function isLower(char: string): boolean {
  return char !== char.toUpperCase() && char === char.toLowerCase();
}
function isUpper(char: string): boolean {
  return char !== char.toLowerCase() && char === char.toUpperCase();
}
function isWordChar(char: string): boolean {
  return /[\p{L}\p{N}]/u.test(char);
}

/** Where words start in a name: its first letter, an upper case after lower case, after _ - $ . and the last capital of a run before lower case (HTTPServer). */
export function wordStarts(name: string): boolean[] {
  const starts = new Array<boolean>(name.length).fill(false);
  for (let i = 0; i < name.length; i++) {
    const char = name[i];
    if (!isWordChar(char)) continue;
    const previous = i > 0 ? name[i - 1] : '';
    const next = i + 1 < name.length ? name[i + 1] : '';
    starts[i] =
      i === 0 ||
      !isWordChar(previous) ||
      (isUpper(char) && !isUpper(previous)) ||
      (isUpper(char) && isUpper(previous) && isLower(next)) ||
      (/\p{N}/u.test(char) && !/\p{N}/u.test(previous));
  }
  return starts;
}

/** Each query character matches either right after the previous match or at a word start; the first at a word start. */
function matchesHumps(query: string, name: string): boolean {
  const lowerQuery = query.toLowerCase();
  const lowerName = name.toLowerCase();
  const starts = wordStarts(name);
  const failed = new Set<number>();
  const attempt = (queryIndex: number, previous: number): boolean => {
    if (queryIndex === lowerQuery.length) return true;
    const key = queryIndex * (lowerName.length + 1) + (previous + 1);
    if (failed.has(key)) return false;
    for (let at = previous + 1; at < lowerName.length; at++) {
      if (lowerName[at] !== lowerQuery[queryIndex]) continue;
      if ((at === previous + 1 && previous >= 0) || starts[at]) {
        if (attempt(queryIndex + 1, at)) return true;
      }
    }
    failed.add(key);
    return false;
  };
  return attempt(0, -1);
}

function isSubsequence(lowerQuery: string, lowerName: string): boolean {
  let at = 0;
  for (const char of lowerName) {
    if (char === lowerQuery[at]) at += 1;
    if (at === lowerQuery.length) return true;
  }
  return false;
}

/**
 * A cheap test every match passes (each kind matches the query's letters in
 * order, ignoring case), so a query can skip most names before matchScore,
 * whose hump match is the costly part.
 */
export function mayMatch(lowerQuery: string, lowerName: string): boolean {
  if (lowerQuery === '') return false;
  // By UTF-16 unit, not by character: a prefix or substring match of an astral character must pass too.
  let at = 0;
  for (let i = 0; i < lowerName.length && at < lowerQuery.length; i++) if (lowerName.charCodeAt(i) === lowerQuery.charCodeAt(at)) at += 1;
  return at === lowerQuery.length;
}

export function matchScore(query: string, name: string): number | undefined {
  if (query === '') return undefined;
  if (name === query) return MATCH_SCORES.exact;
  const lowerQuery = query.toLowerCase();
  const lowerName = name.toLowerCase();
  if (lowerName === lowerQuery) return MATCH_SCORES.exactIgnoringCase;
  if (lowerName.startsWith(lowerQuery)) return MATCH_SCORES.prefix;
  if (query.length > name.length) return undefined;
  if (matchesHumps(query, name)) return MATCH_SCORES.humps;
  if (lowerName.includes(lowerQuery)) return MATCH_SCORES.substring;
  // A scattered match of a very short query matches almost anything: not worth showing.
  if (query.length >= 3 && isSubsequence(lowerQuery, lowerName)) return MATCH_SCORES.subsequence;
  return undefined;
}

/**
 * Symbol-name matching in the manner of VS Code's workspace symbol search:
 * case-insensitive, with a prefix, a camelCase/snake_case "hump" match
 * ("cS" and "crSer" find createServer) and, last, any subsequence ("crser").
 * Higher scores are better matches; undefined is no match.
 */

export const MATCH_SCORES = Object.freeze({ exact: 100, exactIgnoringCase: 90, prefix: 80, humps: 60, substring: 50, subsequence: 20 });

/** The character classes a word start is judged by (exported for the tests' reference matcher). */
export function isLower(char: string): boolean {
  return char !== char.toUpperCase() && char === char.toLowerCase();
}
export function isUpper(char: string): boolean {
  return char !== char.toLowerCase() && char === char.toUpperCase();
}
export function isWordChar(char: string): boolean {
  return /[\p{L}\p{N}]/u.test(char);
}
function isDigit(char: string): boolean {
  return /\p{N}/u.test(char);
}

/** A character's class bits, for wordStarts. */
const WORD = 1;
const UPPER = 2;
const LOWER = 4;
const DIGIT = 8;

function classOf(name: string, i: number): number {
  const code = name.charCodeAt(i);
  // ASCII by its code, as the four tests above answer it, without their regular expressions and case mappings: a name's starts are read for every name in the index, once per query.
  if (code < 0x80) {
    if (code >= 0x61 && code <= 0x7a) return WORD | LOWER;
    if (code >= 0x41 && code <= 0x5a) return WORD | UPPER;
    if (code >= 0x30 && code <= 0x39) return WORD | DIGIT;
    return 0;
  }
  const char = name[i];
  return (isWordChar(char) ? WORD : 0) | (isUpper(char) ? UPPER : 0) | (isLower(char) ? LOWER : 0) | (isDigit(char) ? DIGIT : 0);
}

/** Where words start in a name: its first letter, an upper case after lower case, after _ - $ . and the last capital of a run before lower case (HTTPServer). */
export function wordStarts(name: string): boolean[] {
  const marks = markWordStarts(name);
  return Array.from({ length: name.length }, (_, i) => marks[i] === 1);
}

/** Reused by every match: a name is read once per query, for every name in the index, and allocating per name was a good part of the cost. */
let startMarks = new Uint8Array(256);

/** wordStarts as 1s in a shared buffer (valid until the next call), its first name.length entries. */
function markWordStarts(name: string): Uint8Array {
  if (startMarks.length < name.length) startMarks = new Uint8Array(Math.max(name.length, 2 * startMarks.length));
  const starts = startMarks;
  let previous = 0;
  let current = name.length > 0 ? classOf(name, 0) : 0;
  for (let i = 0; i < name.length; i++) {
    const next = i + 1 < name.length ? classOf(name, i + 1) : 0;
    starts[i] =
      (current & WORD) !== 0 &&
      (i === 0 ||
        !(previous & WORD) ||
        ((current & UPPER) !== 0 && !(previous & UPPER)) ||
        ((current & UPPER) !== 0 && (previous & UPPER) !== 0 && (next & LOWER) !== 0) ||
        ((current & DIGIT) !== 0 && !(previous & DIGIT)))
        ? 1
        : 0;
    previous = current;
    current = next;
  }
  return starts;
}

/** A query's characters as bit masks: bit k of the mask of a UTF-16 unit is set when the lower-case query's k-th unit is that one. */
interface QueryMasks {
  lowerQuery: string;
  words: number;
  ascii: Array<Uint32Array | undefined>;
  other: Map<number, Uint32Array>;
}

let lastMasks: QueryMasks | undefined;

function masksOf(lowerQuery: string): QueryMasks {
  // find_symbol scores every name in the index against one query: its masks are made once.
  if (lastMasks?.lowerQuery === lowerQuery) return lastMasks;
  const words = (lowerQuery.length + 31) >>> 5;
  const ascii = new Array<Uint32Array | undefined>(128).fill(undefined);
  const other = new Map<number, Uint32Array>();
  for (let k = 0; k < lowerQuery.length; k++) {
    const unit = lowerQuery.charCodeAt(k);
    let mask = unit < 128 ? ascii[unit] : other.get(unit);
    if (!mask) {
      mask = new Uint32Array(words);
      if (unit < 128) ascii[unit] = mask;
      else other.set(unit, mask);
    }
    mask[k >>> 5] |= 1 << (k & 31);
  }
  lastMasks = { lowerQuery, words, ascii, other };
  return lastMasks;
}

/** Word `w` of the mask of bits 0..last. */
function bitsUpTo(last: number, w: number): number {
  const count = last + 1 - 32 * w;
  return count >= 32 ? -1 : count <= 0 ? 0 : (1 << count) - 1;
}

/**
 * Each query character matches either right after the previous match or at a
 * word start; the first at a word start.
 *
 * Read once along the name. `ending` holds, as bits, the query prefixes that
 * can end at the character before (bit k: the first k + 1 characters), and
 * the first `reached` characters can end somewhere before it (a prefix that
 * can end at a place, its shorter prefixes can end before: so `reached` is
 * one number). Here a prefix ends by extending one that ended just before,
 * or, at a word start, one that ended anywhere before. O(name × query / 32).
 * The recursive search this replaces was O(query × name²) even memoized: 23 ms
 * for a 151-character query on each 200-character name, on the main thread,
 * for every indexed name that passed mayMatch (seconds for a file of 200 such).
 */
function matchesHumps(lowerQuery: string, name: string, lowerName: string): boolean {
  const length = lowerQuery.length;
  if (length === 0) return true;
  const { words, ascii, other } = masksOf(lowerQuery);
  const starts = markWordStarts(name);
  // Indexed by the name's own units, as the lower-case name's are read: a name whose lower case is longer has no starts past its end.
  const startsEnd = name.length;
  if (endingBits.length < 2 * words) endingBits = new Uint32Array(2 * words);
  const bits = endingBits;
  bits.fill(0, 0, 2 * words);
  // `ending` is bits[now .. now + words), the next one the other half.
  let now = 0;
  let later = words;
  let reached = 0;
  for (let at = 0; at < lowerName.length; at++) {
    // Each character read extends a prefix by one at most.
    if (reached + lowerName.length - at < length) return false;
    const unit = lowerName.charCodeAt(at);
    const mask = unit < 128 ? ascii[unit] : other.get(unit);
    // Only bits 0..reached can be set here (a prefix grows by one at most), so later words stay empty.
    const top = Math.min(words - 1, reached >>> 5);
    if (mask === undefined) {
      bits.fill(0, now, now + top + 1);
      continue;
    }
    const start = at < startsEnd && starts[at] === 1;
    let carry = 0;
    let highest = -1;
    for (let w = 0; w <= top; w++) {
      const before = bits[now + w];
      let from = (before << 1) | carry;
      carry = before >>> 31;
      if (start) from |= bitsUpTo(reached, w);
      const value = mask[w] & from;
      bits[later + w] = value;
      if (value !== 0) highest = w;
    }
    if (highest >= 0) {
      reached = Math.max(reached, 32 * highest + 32 - Math.clz32(bits[later + highest]));
      if (reached >= length) return true;
    }
    const swap = now;
    now = later;
    later = swap;
  }
  return false;
}

/** Both halves of matchesHumps' `ending`, reused by every match. */
let endingBits = new Uint32Array(16);

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

/** matchScore with `humps` as its hump match: the tests score with a reference one through the same rules. */
export function scoreWith(humps: (lowerQuery: string, name: string, lowerName: string) => boolean): (query: string, name: string) => number | undefined {
  return (query, name) => score(query, name, humps);
}

export function matchScore(query: string, name: string): number | undefined {
  return score(query, name, matchesHumps);
}

function score(query: string, name: string, humps: (lowerQuery: string, name: string, lowerName: string) => boolean): number | undefined {
  if (query === '') return undefined;
  if (name === query) return MATCH_SCORES.exact;
  const lowerQuery = query.toLowerCase();
  const lowerName = name.toLowerCase();
  if (lowerName === lowerQuery) return MATCH_SCORES.exactIgnoringCase;
  if (lowerName.startsWith(lowerQuery)) return MATCH_SCORES.prefix;
  if (query.length > name.length) return undefined;
  if (humps(lowerQuery, name, lowerName)) return MATCH_SCORES.humps;
  if (lowerName.includes(lowerQuery)) return MATCH_SCORES.substring;
  // A scattered match of a very short query matches almost anything: not worth showing.
  if (query.length >= 3 && isSubsequence(lowerQuery, lowerName)) return MATCH_SCORES.subsequence;
  return undefined;
}

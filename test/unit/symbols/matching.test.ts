import * as assert from 'node:assert/strict';
import { isLower, isUpper, isWordChar, matchScore, MATCH_SCORES, scoreWith, wordStarts } from '../../../server/src/symbols/matching';
import { prng } from '../../support/prng';

/**
 * The name matching find_symbol runs on every indexed name, against the
 * recursive hump search it replaced (kept here only as the reference): that
 * search cost O(query × name²) and held the server's thread 23 ms per long
 * name; the one in matching.ts reads a name once. Both must answer alike.
 */

// ---------------------------------------------------------------- reference

function referenceWordStarts(name: string): boolean[] {
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

function referenceHumps(query: string, name: string): boolean {
  const lowerQuery = query.toLowerCase();
  const lowerName = name.toLowerCase();
  const starts = referenceWordStarts(name);
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

/** The scoring rules of matching.ts with the reference hump match: only the hump match and the word starts changed. */
const referenceScore = scoreWith((lowerQuery, name) => referenceHumps(lowerQuery, name));

// ---------------------------------------------------------------- inputs

/** Few letters, so queries hit; both cases, separators, digits, and units whose case changes length or that stand alone (İ, ß, Σ/ς, an astral letter, a lone surrogate). */
const ALPHABET = ['a', 'b', 'c', 'A', 'B', 'C', 'x', 'X', '_', '-', '$', '.', '0', '1', '9', 'İ', 'ß', 'Σ', 'ς', 'é', 'É', '𝒜', '\ud835', '٣'];

function randomName(random: () => number, length: number, alphabet = ALPHABET): string {
  let out = '';
  while (out.length < length) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/** A query taken from a name: some of its characters in order, runs kept together, case flipped at times; so many queries match by humps, and many nearly do. */
function queryFrom(random: () => number, name: string, length: number): string {
  let out = '';
  let at = Math.floor(random() * Math.max(1, name.length / 4));
  while (out.length < length && at < name.length) {
    const char = name[at];
    out += random() < 0.3 ? (random() < 0.5 ? char.toUpperCase() : char.toLowerCase()) : char;
    at += random() < 0.6 ? 1 : 1 + Math.floor(random() * 4);
  }
  return out;
}

describe('symbol name matching', () => {
  it('marks the same word starts as the reference on random names, ASCII and not', () => {
    const random = prng(7);
    for (let i = 0; i < 3000; i++) {
      const name = randomName(random, 1 + Math.floor(random() * 40));
      assert.deepEqual(wordStarts(name), referenceWordStarts(name), JSON.stringify(name));
    }
    for (const name of ['HTTPServer', 'createServer', 'snake_case_name', 'x2y', 'ABC', 'İstanbul', '𝒜lpha', '$scope', 'a.b-c', '']) {
      assert.deepEqual(wordStarts(name), referenceWordStarts(name), name);
    }
  });

  it('scores every pair as the reference does, on random names and queries drawn from them, short and up to 200 characters, and the matches by humps among them are many', () => {
    const random = prng(42);
    const seen = new Map<number | undefined, number>();
    const check = (query: string, name: string): void => {
      const expected = referenceScore(query, name);
      assert.equal(matchScore(query, name), expected, `${JSON.stringify(query)} against ${JSON.stringify(name)}`);
      seen.set(expected, (seen.get(expected) ?? 0) + 1);
    };
    for (let i = 0; i < 6000; i++) {
      const long = random() < 0.15;
      const name = randomName(random, long ? 40 + Math.floor(random() * 160) : 1 + Math.floor(random() * 24), random() < 0.5 ? ALPHABET.slice(0, 8) : ALPHABET);
      const queryLength = 1 + Math.floor(random() * (long ? 70 : 12));
      check(random() < 0.8 ? queryFrom(random, name, queryLength) : randomName(random, queryLength, ALPHABET.slice(0, 12)), name);
    }
    // Each kind of answer came up often enough for a difference to show.
    for (const score of [MATCH_SCORES.prefix, MATCH_SCORES.humps, MATCH_SCORES.substring, MATCH_SCORES.subsequence, undefined]) {
      assert.ok((seen.get(score) ?? 0) >= 50, `only ${seen.get(score) ?? 0} pairs scored ${score}: ${JSON.stringify([...seen])}`);
    }
  });

  it('scores as the reference does the names built to be costly: long runs of humps, a query that nearly matches to its last character, queries over 32 characters', () => {
    const random = prng(3);
    const names = [
      `${'aA'.repeat(97)}b0001z`,
      `${'aA'.repeat(97)}b000az`,
      `${'aA'.repeat(99)}Z`,
      `${'a'.repeat(199)}Z`,
      `${'Ab'.repeat(100)}`,
      `${'a_'.repeat(100)}`,
      `${'aB'.repeat(16)}${'C'.repeat(40)}cD${'e'.repeat(60)}`,
      Array.from({ length: 40 }, (_, i) => `Part${i}`).join(''),
    ];
    const queries = [
      `${'a'.repeat(150)}z`,
      `${'a'.repeat(149)}bz`,
      `${'a'.repeat(31)}b`,
      `${'a'.repeat(32)}b`,
      `${'a'.repeat(33)}z`,
      `${'a'.repeat(64)}`,
      `${'ab'.repeat(40)}`,
      `${'a'.repeat(199)}z`,
      'aaaZ',
      'abababa',
      Array.from({ length: 40 }, (_, i) => `P${i}`).join(''),
      Array.from({ length: 40 }, (_, i) => `pa${i}`).join(''),
    ];
    for (const name of names) {
      for (const query of queries) assert.equal(matchScore(query, name), referenceScore(query, name), `${query} against ${name}`);
      for (let i = 0; i < 20; i++) {
        const query = queryFrom(random, name, 20 + Math.floor(random() * 150));
        assert.equal(matchScore(query, name), referenceScore(query, name), `${query} against ${name}`);
      }
    }
  });
});

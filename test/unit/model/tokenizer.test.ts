import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { utf8Bytes } from '../../../server/src/model/budget';
import { BpeRanks, MergeScratch } from '../../../server/src/model/bpeRanks';
import { countTextTokens, RANKS_FILE } from '../../../server/src/model/tokenizer';

/**
 * OpenAI's own tokenizer, the reference for every count here. Not
 * gpt-tokenizer's encoding, which the ranks come from: its byte decoder drops a
 * leading byte-order mark, so it never merges one and counts "    \ufeff" as 5
 * tokens where o200k has 2.
 */
const reference = (require('tiktoken') as typeof import('tiktoken')).get_encoding('o200k_base');
after(() => reference.free());
const packagedRanks = require('gpt-tokenizer/bpeRanks/o200k_base').default as ReadonlyArray<string | readonly number[]>;

/** The reference count, in the slices countTextTokens counts in (so a long run is cut where ours is). */
function referenceCount(text: string): number {
  let count = 0;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + 2048);
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end++;
    count += reference.encode_ordinary(text.slice(start, end)).length;
    start = end;
  }
  return count;
}

const REPOSITORY = path.resolve(__dirname, '../../../..');

function filesUnder(directory: string, pattern: RegExp): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return filesUnder(full, pattern);
    return pattern.test(entry.name) ? [full] : [];
  });
}

/** Deterministic text drawn from many scripts, digits, punctuation and kinds of white space. */
function mixedText(seed: number, length: number): string {
  const ranges: Array<[number, number]> = [
    [0x20, 0x7e], [0x20, 0x7e], [0x20, 0x7e], [0x09, 0x0d], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff],
    [0x590, 0x5ff], [0x600, 0x6ff], [0x900, 0x97f], [0x3040, 0x30ff], [0x4e00, 0x4fff], [0xac00, 0xad00], [0x2000, 0x206f], [0x1f300, 0x1f64f],
  ];
  let state = seed;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 8;
  };
  let text = '';
  while (text.length < length) {
    const [low, high] = ranges[next() % ranges.length];
    const run = 1 + (next() % 12);
    for (let i = 0; i < run; i++) text += String.fromCodePoint(low + (next() % (high - low + 1)));
  }
  return text;
}

describe('countTextTokens', () => {
  it('counts o200k tokens of ordinary text', () => {
    assert.equal(countTextTokens(''), 0);
    assert.equal(countTextTokens('hello world'), 2);
  });

  it('counts exactly what OpenAI\'s tokenizer counts, byte-level tokens and byte-order marks included (a slice\'s worth of each)', () => {
    const samples = [
      "export function roundRate(rate: number): number {\n  return Math.round(rate * 1000) / 1000; // ≈ 0.1 %\n}\n",
      'Grüße, 東京の天気は晴れです 😀🚀 — naïve café, Ελληνικά, עברית, हिन्दी',
      '\u0000\u0001\t\r\n  \u00a0 \ufeff zero\u200bwidth',
      '    \ufeff',
      '\ufeffexport const x = 1;\n',
    ];
    for (const text of samples) assert.equal(countTextTokens(text), referenceCount(text), text.slice(0, 40));
  });

  it('counts every source file and document of this repository exactly as OpenAI\'s tokenizer does', () => {
    const files = [...filesUnder(path.join(REPOSITORY, 'server', 'src'), /\.ts$/), ...filesUnder(path.join(REPOSITORY, 'docs'), /\.md$/)];
    assert.ok(files.length > 50, 'the corpus is there');
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      assert.equal(countTextTokens(text), referenceCount(text), path.relative(REPOSITORY, file));
    }
  });

  it('counts text drawn from many scripts, marks, emoji and kinds of white space exactly as OpenAI\'s tokenizer does', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const text = mixedText(seed, 3000);
      assert.equal(countTextTokens(text), referenceCount(text), `seed ${seed}`);
    }
  });

  it('counts special-token text like <|endoftext|> as text instead of refusing it', () => {
    assert.ok(countTextTokens('before <|endoftext|> after') > 3);
  });

  it('counts a very long run without breaks (where BPE is quadratic) as a positive number', () => {
    assert.ok(countTextTokens(' '.repeat(200_000)) > 0);
    assert.ok(countTextTokens('A'.repeat(100_000)) > 0);
  });

  it('does not split a surrogate pair between slices', () => {
    const text = `${'a'.repeat(2047)}😀${'b'.repeat(10)}`;
    assert.ok(countTextTokens(text) > 0);
  });

  it('never counts more tokens than UTF-8 bytes, which is what lets a request that fits in bytes skip counting', () => {
    const samples = [
      'hello world',
      'the same words again and again '.repeat(50),
      'A'.repeat(5000),
      ' '.repeat(3000),
      '数据库连接池的配置在这里',
      '😀🎉👩‍👩‍👧‍👦'.repeat(20),
      'aGVsbG8gd29ybGQ='.repeat(100),
      'x\u0000y\r\n\t',
      'before <|endoftext|> after',
      Array.from({ length: 2000 }, (_, i) => String.fromCharCode(32 + ((i * 7919) % 20000))).join(''),
    ];
    for (const text of samples) assert.ok(countTextTokens(text) <= utf8Bytes(text), JSON.stringify(text.slice(0, 30)));
  });

});

describe('o200k ranks (bpeRanks.ts)', () => {
  const ranks = BpeRanks.parse(fs.readFileSync(RANKS_FILE));

  it('holds the package\'s o200k ranks, token for token, and finds each token\'s rank from its bytes', () => {
    assert.equal(ranks.size, packagedRanks.length);
    packagedRanks.forEach((token, rank) => {
      const expected = typeof token === 'string' ? Buffer.from(token, 'utf8') : Buffer.from(token);
      const bytes = ranks.tokenBytes(rank);
      assert.ok(Buffer.from(bytes).equals(expected), `rank ${rank}`);
      assert.equal(ranks.rankOf(bytes, 0, bytes.length), rank);
    });
  });

  it('finds no rank for bytes that are no token', () => {
    const bytes = Buffer.from('zzqxjv-no-such-token-zzqxjv');
    assert.equal(ranks.rankOf(bytes, 0, bytes.length), -1);
  });

  it('merges a piece into as many tokens as OpenAI\'s tokenizer gives it', () => {
    const scratch = new MergeScratch();
    for (const word of ['antidisestablishmentarianism', 'Donaudampfschifffahrtsgesellschaft', 'x'.repeat(300), '\u00e9\u0301\u0327', '\u{1f469}\u200d\u{1f4bb}']) {
      const bytes = Buffer.from(word, 'utf8');
      assert.equal(ranks.countMerged(bytes, bytes.length, scratch), reference.encode_ordinary(word).length, word.slice(0, 20));
    }
  });

  it('refuses a file that is not a ranks file, one cut short, and one naming a token twice, saying which', () => {
    const file = (tokens: string[], count = tokens.length): Buffer => {
      const header = Buffer.alloc(8);
      header.write('BPE1', 0, 'latin1');
      header.writeUInt32LE(count, 4);
      return Buffer.concat([header, Buffer.from(tokens.map((token) => Buffer.byteLength(token))), ...tokens.map((token) => Buffer.from(token))]);
    };
    assert.equal(BpeRanks.parse(file(['a', 'b', 'ab'])).size, 3);
    assert.throws(() => BpeRanks.parse(Buffer.from('[["a"]]')), /no BPE1 header/);
    assert.throws(() => BpeRanks.parse(file(['a', 'b'], 3)), /cut short/);
    assert.throws(() => BpeRanks.parse(file(['a', 'b']).subarray(0, 11)), /cut short/);
    assert.throws(() => BpeRanks.parse(file(['a', 'b', 'a'])), /ranks 0 and 2/);
  });
});

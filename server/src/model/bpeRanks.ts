/**
 * A byte-pair encoding's ranks held in three typed arrays, and the count of
 * tokens a pre-token merges into. gpt-tokenizer holds the same ranks as
 * 200,000 strings, a Map over them and a typed array per byte token: 18 MB of
 * live heap in the thread that counted, which came to about 44 MB of the server's
 * resident size. Here they take about 4 MB: the tokens' bytes end to end, where
 * each starts, and an open-addressing table from a hash of the bytes to the
 * rank.
 *
 * The ranks file (written by client/bundle.mjs from gpt-tokenizer's ranks):
 * the four bytes `BPE1`, the token count as a little-endian u32, one byte per
 * token giving its length (every o200k token is at most 128 bytes), then the
 * tokens' bytes in rank order.
 */

const MAGIC = 'BPE1';
const HEADER_BYTES = 8;

export class BpeRanks {
  private constructor(
    private readonly bytes: Uint8Array,
    private readonly starts: Uint32Array,
    /** rank + 1 at each slot; 0 is empty. */
    private readonly table: Int32Array,
  ) {}

  /** Reads a ranks file; throws on one that is not one, saying what is wrong. */
  static parse(file: Uint8Array): BpeRanks {
    if (file.length < HEADER_BYTES || String.fromCharCode(file[0], file[1], file[2], file[3]) !== MAGIC) throw new Error('not a ranks file (no BPE1 header)');
    const count = new DataView(file.buffer, file.byteOffset, file.byteLength).getUint32(4, true);
    const lengths = file.subarray(HEADER_BYTES, HEADER_BYTES + count);
    const bytes = file.subarray(HEADER_BYTES + count);
    if (lengths.length !== count) throw new Error('the ranks file is cut short');
    const starts = new Uint32Array(count + 1);
    for (let rank = 0; rank < count; rank++) starts[rank + 1] = starts[rank] + lengths[rank];
    if (starts[count] !== bytes.length) throw new Error('the ranks file is cut short or has bytes past its tokens');
    let size = 1;
    while (size < count * 2) size *= 2;
    const table = new Int32Array(size);
    const ranks = new BpeRanks(bytes, starts, table);
    for (let rank = 0; rank < count; rank++) {
      const start = starts[rank];
      const end = starts[rank + 1];
      if (start === end) continue;
      let slot = hash(bytes, start, end) & (size - 1);
      while (table[slot] !== 0) {
        if (ranks.equals(table[slot] - 1, bytes, start, end)) throw new Error(`the ranks file names one token twice (ranks ${table[slot] - 1} and ${rank})`);
        slot = (slot + 1) & (size - 1);
      }
      table[slot] = rank + 1;
    }
    return ranks;
  }

  get size(): number {
    return this.starts.length - 1;
  }

  /** The rank of `piece[start, end)` as one token, or -1. */
  rankOf(piece: Uint8Array, start: number, end: number): number {
    const mask = this.table.length - 1;
    for (let slot = hash(piece, start, end) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.table[slot];
      if (entry === 0) return -1;
      if (this.equals(entry - 1, piece, start, end)) return entry - 1;
    }
  }

  /** The bytes of a token (tests). */
  tokenBytes(rank: number): Uint8Array {
    return this.bytes.subarray(this.starts[rank], this.starts[rank + 1]);
  }

  /**
   * How many tokens `piece[0, length)` encodes to: adjacent parts are merged,
   * the pair of lowest rank first (the leftmost of equals), until no pair is
   * a token. The algorithm of tiktoken and gpt-tokenizer, which it must match
   * exactly (tokenizer.test.ts compares the two).
   */
  countMerged(piece: Uint8Array, length: number, scratch: MergeScratch): number {
    if (length <= 1) return length;
    if (this.rankOf(piece, 0, length) !== -1) return 1;
    const starts = scratch.starts(length + 1);
    const pairRanks = scratch.ranks(length);
    for (let i = 0; i <= length; i++) starts[i] = i;
    for (let i = 0; i < length - 1; i++) pairRanks[i] = this.pairRank(piece, i, i + 2);
    pairRanks[length - 1] = NO_RANK;
    let parts = length;
    while (parts > 1) {
      let lowest = NO_RANK;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if (pairRanks[i] < lowest) {
          lowest = pairRanks[i];
          at = i;
        }
      }
      if (at === -1) break;
      // Merge parts `at` and `at + 1`: drop the start between them and the pair rank that joined them.
      starts.copyWithin(at + 1, at + 2, parts + 1);
      pairRanks.copyWithin(at, at + 1, parts);
      parts -= 1;
      pairRanks[at] = at + 2 <= parts ? this.pairRank(piece, starts[at], starts[at + 2]) : NO_RANK;
      if (at > 0) pairRanks[at - 1] = this.pairRank(piece, starts[at - 1], starts[at + 1]);
    }
    return parts;
  }

  private pairRank(piece: Uint8Array, start: number, end: number): number {
    const rank = this.rankOf(piece, start, end);
    return rank === -1 ? NO_RANK : rank;
  }

  private equals(rank: number, piece: Uint8Array, start: number, end: number): boolean {
    const tokenStart = this.starts[rank];
    if (this.starts[rank + 1] - tokenStart !== end - start) return false;
    for (let i = 0; i < end - start; i++) if (this.bytes[tokenStart + i] !== piece[start + i]) return false;
    return true;
  }
}

const NO_RANK = 0x7fffffff;

/** FNV-1a over the bytes. */
function hash(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/** Arrays reused from one merge to the next, grown as needed. */
export class MergeScratch {
  private startsArray = new Int32Array(256);
  private ranksArray = new Int32Array(256);

  starts(length: number): Int32Array {
    if (this.startsArray.length < length) this.startsArray = new Int32Array(length * 2);
    return this.startsArray;
  }

  ranks(length: number): Int32Array {
    if (this.ranksArray.length < length) this.ranksArray = new Int32Array(length * 2);
    return this.ranksArray;
  }
}

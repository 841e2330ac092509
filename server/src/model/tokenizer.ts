import * as fs from 'node:fs';
import * as path from 'node:path';
import { BpeRanks, MergeScratch } from './bpeRanks';

/**
 * The o200k token count, synchronous. Loading the ranks takes tens of
 * milliseconds and a few MB, so the server never calls this on its main
 * thread: it runs in the model thread (threaded/modelWorker.ts, through
 * threaded/threadedModel.ts). Tests call it directly.
 */
let o200k: BpeRanks | undefined;

/**
 * The o200k ranks (bpeRanks.ts describes the file), written next to this
 * module by the build (client/bundle.mjs) from gpt-tokenizer's.
 */
export const RANKS_FILE = path.join(__dirname, 'o200k_base.ranks');

/**
 * o200k's pre-tokenizer, from gpt-tokenizer: the text is cut into pieces at
 * its matches and each piece is merged on its own. Only this module of the
 * package is loaded at run time.
 */
const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp };
/** Our own copy of it, as its `lastIndex` moves: counting is synchronous, so one serves every call. */
const split = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags);

function loadO200k(): BpeRanks {
  let file: Buffer;
  try {
    file = fs.readFileSync(RANKS_FILE);
  } catch (err) {
    throw new Error(`the tokenizer's ranks could not be read from ${RANKS_FILE} (${(err as Error).message}); \`npm run build\` writes them`);
  }
  try {
    return BpeRanks.parse(file);
  } catch (err) {
    throw new Error(`${RANKS_FILE} does not hold the tokenizer's ranks (${(err as Error).message}); \`npm run build\` writes them`);
  }
}

/**
 * BPE cost grows with the square of a run without pre-token breaks (a long
 * line of spaces or base64): counting in slices keeps it linear, at the price
 * of at most a token or two per slice.
 */
const SLICE_CHARS = 2048;

const encoder = new TextEncoder();
const scratch = new MergeScratch();
/** A piece's UTF-8 bytes: at most three per UTF-16 code unit. */
let pieceBytes = new Uint8Array(3 * SLICE_CHARS + 4);

/**
 * Tokens in `text` by OpenAI's o200k encoding, every special token counted as
 * text (repository text may well contain `<|endoftext|>`). Other families'
 * tokenizers (Llama 3, Qwen, Mistral, Gemma) land within about 10–20 % of it
 * on prose and code; the reply reserve absorbs the difference.
 */
export function countTextTokens(text: string): number {
  if (text === '') return 0;
  const ranks = (o200k ??= loadO200k());
  let count = 0;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + SLICE_CHARS);
    // Never split a surrogate pair.
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end++;
    const slice = text.slice(start, end);
    split.lastIndex = 0;
    for (let match = split.exec(slice); match !== null; match = split.exec(slice)) {
      const piece = match[0];
      // No alternative of the pattern matches nothing; were one to, exec would stay put for ever.
      if (piece === '') {
        split.lastIndex += 1;
        continue;
      }
      if (pieceBytes.length < 3 * piece.length) pieceBytes = new Uint8Array(3 * piece.length);
      const { written } = encoder.encodeInto(piece, pieceBytes);
      count += ranks.countMerged(pieceBytes, written, scratch);
    }
    start = end;
  }
  return count;
}

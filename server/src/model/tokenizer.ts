import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import type { GetMergeableRanksFn } from 'gpt-tokenizer/modelParams';

/**
 * The o200k token count, synchronous. Loading its ranks takes 300–400 ms and
 * tens of MB, so the server never calls this on its main thread: it runs in
 * the token worker (tokenWorker.ts, through tokenCounter.ts). Tests call it
 * directly.
 */
let o200k: GptEncoding | undefined;

/**
 * The ranks as JSON, written next to this module by the build
 * (client/bundle.mjs). The package ships them as a 2.2 MB array literal,
 * whose compiled form V8 keeps beside the array: parsed from JSON the same
 * ranks leave the worker about 14 MB smaller.
 */
export const RANKS_FILE = path.join(__dirname, 'o200k_base.json');

function loadO200k(): GptEncoding {
  const { GptEncoding } = require('gpt-tokenizer/GptEncoding') as typeof import('gpt-tokenizer/GptEncoding');
  let ranks: unknown;
  try {
    ranks = JSON.parse(fs.readFileSync(RANKS_FILE, 'utf8'));
  } catch (err) {
    throw new Error(`the tokenizer's ranks could not be read from ${RANKS_FILE} (${(err as Error).message}); \`npm run build\` writes them`);
  }
  if (!Array.isArray(ranks)) throw new Error(`${RANKS_FILE} does not hold the tokenizer's ranks; \`npm run build\` writes them`);
  const encoding = GptEncoding.getEncodingApi('o200k_base', () => ranks as ReturnType<GetMergeableRanksFn>);
  // Its cache of merged pre-tokens grows to 100,000 entries, 18 MB live after
  // a long discussion, and only halves the time of counting (about 90 ms per
  // MB without it, off the main thread).
  encoding.setMergeCacheSize(0);
  return encoding;
}

/** No special-token check: repository text may well contain `<|endoftext|>`, and it is counted as text. */
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
/**
 * BPE cost grows with the square of a run without pre-token breaks (a long
 * line of spaces or base64): counting in slices keeps it linear, at the price
 * of at most a token or two per slice.
 */
const SLICE_CHARS = 2048;

/**
 * Tokens in `text` by OpenAI's o200k encoding. Other families' tokenizers
 * (Llama 3, Qwen, Mistral, Gemma) land within about 10–20 % of it on prose
 * and code; the reply reserve absorbs the difference.
 */
export function countTextTokens(text: string): number {
  if (text === '') return 0;
  o200k ??= loadO200k();
  let count = 0;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + SLICE_CHARS);
    // Never split a surrogate pair.
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end++;
    count += o200k.countTokens(text.slice(start, end), AS_PLAIN_TEXT);
    start = end;
  }
  return count;
}

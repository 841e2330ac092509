/**
 * The o200k token count, synchronous. Loading its ranks takes 300–400 ms and
 * 56–70 MB, so the server never calls this on its main thread: it runs in
 * the token worker (tokenWorker.ts, through tokenCounter.ts). Tests call it
 * directly.
 */
type O200k = typeof import('gpt-tokenizer/encoding/o200k_base');
let o200k: O200k | undefined;
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
  o200k ??= require('gpt-tokenizer/encoding/o200k_base') as O200k;
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

import { strict as assert } from 'node:assert';
import { TokenCounter } from '../../../server/src/model/tokenCounter';
import { countTextTokens } from '../../../server/src/model/tokenizer';

describe('token counter (worker thread)', () => {
  it('counts in its worker exactly what the o200k tokenizer counts, text by text', async () => {
    const counter = new TokenCounter();
    try {
      const texts = ['', 'hello world', 'the same words again and again '.repeat(500), 'const x = 1;\n'.repeat(300), '<|endoftext|> is plain text'];
      assert.deepEqual(await counter.count(texts), texts.map(countTextTokens));
    } finally {
      await counter.close();
    }
  });

  it('rejects the counts it cannot make when its worker exits instead of answering', async () => {
    const broken = new TokenCounter(require.resolve('../../../server/src/model/tokenizer'));
    await assert.rejects(broken.count(['text']));
    await broken.close();
  });
});

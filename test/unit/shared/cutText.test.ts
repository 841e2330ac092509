import * as assert from 'node:assert/strict';
import { cutText } from '../../../shared/cutText';

/** Text cut to a length with an ellipsis, the ellipsis inside the length or after it, as each caller asks. */
describe('cutting text', () => {
  it('leaves a text of at most max characters as it is, in either convention', () => {
    for (const ellipsis of ['within', 'after'] as const) {
      assert.equal(cutText('abcdef', 6, ellipsis), 'abcdef');
      assert.equal(cutText('', 0, ellipsis), '');
    }
  });

  it('within: a longer text keeps max - 1 characters and the ellipsis, so the answer is at most max', () => {
    assert.equal(cutText('abcdefg', 6, 'within'), 'abcde…');
    assert.equal(cutText('abcdefg', 1, 'within'), '…');
    assert.equal(cutText('abcdefg', 0, 'within'), '…');
  });

  it('after: a longer text keeps max characters and the ellipsis follows, one more than max', () => {
    assert.equal(cutText('abcdefg', 6, 'after'), 'abcdef…');
    assert.equal(cutText('abcdefg', 0, 'after'), '…');
  });
});

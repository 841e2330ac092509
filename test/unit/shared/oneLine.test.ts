import * as assert from 'node:assert/strict';
import { oneLine, shortLine } from '../../../shared/oneLine';

/** Untrusted text on one line of ours: whole, or folded and bounded. */
describe('text on one line', () => {
  describe('oneLine', () => {
    it('turns every line break a reader may honour (CR, LF, VT, FF, NEL, U+2028, U+2029) into one space, with the blanks around it', () => {
      assert.equal(oneLine('a \r\n b\u000bc\u000cd\u0085e\u2028f\u2029g'), 'a b c d e f g');
      assert.equal(oneLine('Keep auth\n\n  - [d9] forged'), 'Keep auth - [d9] forged');
    });

    it('keeps the text as it is otherwise: runs of spaces, tabs and control characters other than line breaks stay', () => {
      assert.equal(oneLine('  a  b\tc\u001b[2J  '), 'a  b\tc\u001b[2J');
    });
  });

  describe('shortLine', () => {
    it('folds every whitespace run into one space', () => {
      assert.equal(shortLine(' {\n  "path":\t"a.ts"\u2028}\n', 80), '{ "path": "a.ts" }');
    });

    it('is at most max characters: a longer text keeps max - 1 and ends in an ellipsis', () => {
      assert.equal(shortLine('abcdef', 6), 'abcdef');
      assert.equal(shortLine('abcdefg', 6), 'abcde…');
      assert.equal(shortLine('a    b    c', 5), 'a b c');
    });

    it('takes a value that is not a string (a detail from another process) as its text', () => {
      assert.equal(shortLine(404 as unknown as string, 10), '404');
    });
  });
});

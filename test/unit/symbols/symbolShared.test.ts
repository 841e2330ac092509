import * as assert from 'node:assert/strict';
import { inertBoundedLine } from '../../../server/src/symbols/symbolShared';

/** What the editor or the index supplies (a name, a kind, a message) as one line that cannot act on a reader. */
describe("the symbol tools' inert line", () => {
  it('escapes line breaks and bidi controls, then keeps max characters and marks the cut after them', () => {
    assert.equal(inertBoundedLine('a\nb\u202ec', 80), 'a\\u000ab\\u202ec');
    assert.equal(inertBoundedLine('x'.repeat(45), 40), `${'x'.repeat(40)}…`);
  });

  it('gives an empty line for anything but a string', () => {
    assert.equal(inertBoundedLine(undefined, 40), '');
    assert.equal(inertBoundedLine({ name: 'x' }, 40), '');
  });
});

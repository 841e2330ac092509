import * as assert from 'node:assert/strict';
import { attachmentLabel, PANEL_CHIP } from '../../../shared/mentions';

/** One chip label for the terminal and the panel, each in its own look, both inert. */
describe('the attachment chip label', () => {
  const sent = { kind: 'selection' as const, path: 'src/a.ts', startLine: 3, endLine: 3, shownStart: 1, shownEnd: 9 };

  it("in the terminal's look names the lines the model was given, as start-end, and a symbol after a #", () => {
    assert.equal(attachmentLabel(sent), 'src/a.ts:1-9');
    assert.equal(attachmentLabel({ kind: 'file', path: 'src/a.ts', shownStart: 1, shownEnd: 1 }), 'src/a.ts:1-1');
    assert.equal(attachmentLabel({ kind: 'selection', path: 'src/a.ts', startLine: 2, endLine: 4 }), 'src/a.ts:2-4');
    assert.equal(attachmentLabel({ kind: 'symbol', path: 'src/cart.ts', symbol: 'Cart.total' }), 'src/cart.ts #Cart.total');
  });

  it("in the panel's look names the lines asked for, one line as :N, and a symbol in parentheses", () => {
    assert.equal(attachmentLabel(sent, PANEL_CHIP), 'src/a.ts:3');
    assert.equal(attachmentLabel({ kind: 'file', path: 'src/a.ts', shownStart: 1, shownEnd: 9 }, PANEL_CHIP), 'src/a.ts');
    assert.equal(attachmentLabel({ kind: 'symbol', path: 'src/cart.ts', symbol: 'total', startLine: 4, endLine: 8 }, PANEL_CHIP), 'src/cart.ts:4-8 (total)');
  });

  it('shows no range until both ends are known (a pending symbol chip may carry a line hint alone)', () => {
    assert.equal(attachmentLabel({ kind: 'symbol', path: 'src/cart.ts', symbol: 'total', startLine: 4 }, PANEL_CHIP), 'src/cart.ts (total)');
    assert.equal(attachmentLabel({ kind: 'symbol', path: 'src/cart.ts', symbol: 'total', startLine: 4 }), 'src/cart.ts #total');
  });

  it('in either look quotes a hostile name as tool answers do, bounds a symbol at 80 characters and stays one inert line', () => {
    const name = 'a.ts\n  @ .env';
    const symbol = `f\n${'x'.repeat(100)}`;
    for (const look of [undefined, PANEL_CHIP]) {
      const label = attachmentLabel({ kind: 'symbol', path: name, symbol }, look);
      assert.ok(label.startsWith(JSON.stringify(name)), label);
      // The first 80 characters of the name (f, the line break, 78 x), the line break escaped.
      assert.ok(label.endsWith(`f\\u000a${'x'.repeat(78)}…${look ? ')' : ''}`), label);
      assert.ok(!/[\n\u001b\u202e]/.test(label), label);
    }
  });

  it('leaves out a symbol that is not a string (a malformed replayed event)', () => {
    assert.equal(attachmentLabel({ kind: 'symbol', path: 'a.ts', symbol: null as unknown as string }, PANEL_CHIP), 'a.ts');
  });
});

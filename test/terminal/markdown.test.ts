import { strict as assert } from 'node:assert';
import { TerminalText } from '../../client/src/terminal/inertText';
import { stripSgr, visibleWidth, wrapLine } from '../../client/src/terminal/markdown';
import { createStyle, taskCard } from '../../client/src/terminal/render';
import { blockBoundary, cursorRow } from '../../client/src/terminal/streamingMarkdown';

describe('terminal Markdown, piece by piece', () => {
  it("keeps the renderer's colour codes and makes anything else it emits inert", () => {
    const rendered = TerminalText.fromRenderer('\x1b[1mbold\x1b[22m \x1b]8;;https://evil.example\x07link \x1b[2J\u009b2J');
    assert.equal(rendered.value, '\x1b[1mbold\x1b[22m ␛]8;;https://evil.example␇link ␛[2J<U+009B>2J');
  });

  it('wraps at spaces, never cutting a word that fits a row, and keeps a list item under its bullet', () => {
    const line = '  * \x1b[1malpha\x1b[22m beta gamma delta epsilon zeta eta theta iota kappa';
    const rows = wrapLine(line, 20);
    assert.ok(rows.length > 1);
    for (const row of rows) assert.ok(visibleWidth(row) <= 20, `"${stripSgr(row)}" fits`);
    assert.deepEqual(rows.map(stripSgr), ['  * alpha beta gamma', '    delta epsilon', '    zeta eta theta', '    iota kappa']);
  });

  it('cuts only a word wider than a row', () => {
    assert.deepEqual(wrapLine('see packages/vite/src/node/server.ts now', 16), ['see', 'packages/vite/sr', 'c/node/server.ts', 'now']);
  });

  it('closes a block at a blank line, a heading or a fence, but never inside a fence or before an indented continuation', () => {
    assert.equal(blockBoundary('para\n\nnext'), 'para\n\n'.length);
    assert.equal(blockBoundary('para\n\n'), 0, 'the next line has not begun: it may continue the block');
    assert.equal(blockBoundary('- item\n\n    more of it'), 0);
    assert.equal(blockBoundary('# Title\n'), '# Title\n'.length);
    assert.equal(blockBoundary('```\ncode\n\nstill code\n'), 0);
    assert.equal(blockBoundary('```\ncode\n```\n'), '```\ncode\n```\n'.length);
    assert.equal(blockBoundary('text\n```js\nx'), 'text\n'.length, 'a fence opening closes the paragraph before it');
  });

  it('counts the rows a streamed text spans, a full row leaving the cursor on it', () => {
    assert.equal(cursorRow('abc', 10), 0);
    assert.equal(cursorRow('abc\n', 10), 1);
    assert.equal(cursorRow('x'.repeat(10), 10), 0);
    assert.equal(cursorRow(`${'x'.repeat(25)}\nend`, 10), 3);
  });

  it("wraps a task card's lines behind its gutter on a terminal", () => {
    const style = createStyle(false);
    const card = taskCard({ intent: 'Make the greeting configurable through an environment variable named GREETING', constraints: ['Keep the default greeting exactly as it is today'] }, style, 40);
    const rows = card.slice(1).map((row) => row.value);
    for (const row of rows) {
      assert.ok(row.startsWith('  │'), `"${row}" keeps the gutter`);
      assert.ok(visibleWidth(row) <= 40, `"${row}" fits`);
    }
    assert.ok(rows.some((row) => row === '  │   as it is today'), 'a constraint continues under its text');
  });
});

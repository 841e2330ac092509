import assert from 'node:assert/strict';
import { ATTACHED, buildWebviewBundle, click, numbered, openPanel, press, type Panel } from '../../support/webviewPanel';

/**
 * The composer of the real webview bundle in jsdom: attachment chips (sent
 * and pending), the active-file chip, `@` completion, drops, recall, Escape
 * and focus.
 */


function type(panel: Panel, text: string): void {
  panel.input.value = text;
  panel.input.setSelectionRange(text.length, text.length);
  panel.input.dispatchEvent(new panel.window.Event('input', { bubbles: true }));
}

function sends(panel: Panel): Array<Record<string, unknown>> {
  return panel.posted.filter((m) => m.type === 'send');
}

function pendingLabels(panel: Panel): string[] {
  return Array.from(panel.document.querySelectorAll('.composer-attachments .attachment-label'), (l) => l.textContent ?? '');
}

describe('the chat panel composer', function () {
  this.timeout(20_000);
  let panel: Panel | undefined;

  before(buildWebviewBundle);

  afterEach(() => panel?.close());

  it('shows a sent message’s attachments as inert chips, a refused one marked with its reason', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    const hostile = 'evil\u202e<img src=x onerror=alert(1)>.ts';
    panel.receive({
      type: 'events',
      events: numbered([
        {
          type: 'user_message',
          text: 'Explain these',
          attachments: [
            { kind: 'selection', path: 'src/http.ts', startLine: 10, endLine: 40, status: 'attached', shownStart: 10, shownEnd: 40 },
            { kind: 'file', path: '.env', status: 'refused', refusal: 'secret', note: 'may hold credentials: never read' },
            { kind: 'file', path: hostile, status: 'attached' },
          ],
        },
      ]),
    });
    const chips = Array.from(panel.document.querySelectorAll('.user-message .attachment-chip'));
    assert.deepEqual(
      chips.map((c) => c.className),
      ['attachment-chip is-attached', 'attachment-chip is-refused', 'attachment-chip is-attached'],
    );
    assert.equal(chips[0].querySelector('.attachment-label')?.textContent, 'src/http.ts:10-40');
    assert.equal(chips[1].querySelector('.attachment-note')?.textContent, 'may hold credentials: never read');
    assert.match(chips[1].getAttribute('title') ?? '', /not attached: may hold credentials/);
    // The bidi override is shown escaped, and the markup stays text.
    assert.equal(chips[2].querySelector('.attachment-label')?.textContent, '"evil\\u202e<img src=x onerror=alert(1)>.ts"');
    assert.equal(panel.document.querySelector('.user-message img'), null);
  });

  it('posts the input’s chips with the message, and a removed chip is not sent', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'addAttachment', attachment: { kind: 'selection', path: 'src/a.ts', startLine: 3, endLine: 9 } });
    panel.receive({ type: 'addAttachment', attachment: { kind: 'file', path: 'src/b.ts' } });
    assert.deepEqual(pendingLabels(panel), ['src/a.ts:3-9', 'src/b.ts']);
    click(panel, panel.document.querySelectorAll('.composer-attachments [data-action="remove-attachment"]')[1]);
    assert.deepEqual(pendingLabels(panel), ['src/a.ts:3-9']);
    type(panel, 'What does this do?');
    press(panel, panel.input, 'Enter');
    assert.deepEqual(sends(panel), [
      { type: 'send', text: 'What does this do?', attachments: [{ kind: 'selection', path: 'src/a.ts', startLine: 3, endLine: 9 }] },
    ]);
    assert.deepEqual(pendingLabels(panel), [], 'the chips were used by that message');
    assert.equal(panel.document.activeElement, panel.input);
  });

  it('attaches the active editor’s file by default, and one click drops it for this message only', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'activeEditor', attachment: { kind: 'file', path: 'src/current.ts' } });
    const implicit = panel.document.querySelector('.attachment-chip.is-implicit');
    assert.equal(implicit?.querySelector('.attachment-label')?.textContent, 'src/current.ts');
    type(panel, 'first');
    press(panel, panel.input, 'Enter');
    click(panel, panel.document.querySelector('[data-action="drop-active-file"]'));
    assert.equal(panel.document.querySelector('.attachment-chip.is-implicit'), null);
    type(panel, 'second');
    press(panel, panel.input, 'Enter');
    type(panel, 'third');
    press(panel, panel.input, 'Enter');
    assert.deepEqual(sends(panel), [
      { type: 'send', text: 'first', attachments: [{ kind: 'file', path: 'src/current.ts' }] },
      { type: 'send', text: 'second' },
      { type: 'send', text: 'third', attachments: [{ kind: 'file', path: 'src/current.ts' }] },
    ]);
    panel.receive({ type: 'activeEditor', attachment: null });
    assert.equal(panel.document.querySelector('.attachment-chip.is-implicit'), null, 'no chip once the setting is off or no file is active');
  });

  it('completes @ by keyboard from the listed files, and the chosen file becomes a chip in place of @query', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    type(panel, 'Look at @htt');
    const request = panel.posted.filter((m) => m.type === 'files').pop();
    assert.deepEqual({ ...request, requestId: undefined }, { type: 'files', query: 'htt', requestId: undefined });
    panel.receive({ type: 'filesResult', requestId: request!.requestId as number, files: ['src/http.ts', 'test/http.test.ts', 'docs/\u202ehttp.md'] });
    const list = panel.document.querySelector('#mention-list') as HTMLElement;
    assert.equal(list.hidden, false);
    assert.equal(panel.input.getAttribute('aria-expanded'), 'true');
    assert.deepEqual(
      Array.from(list.querySelectorAll('[role="option"]'), (o) => o.textContent),
      ['src/http.ts', 'test/http.test.ts', '"docs/\\u202ehttp.md"'],
    );
    press(panel, panel.input, 'ArrowDown');
    assert.equal(panel.input.getAttribute('aria-activedescendant'), 'mention-option-1');
    const enter = press(panel, panel.input, 'Enter');
    assert.equal(enter.defaultPrevented, true);
    assert.equal(sends(panel).length, 0, 'Enter chose the file rather than sending');
    assert.equal(list.hidden, true);
    assert.equal(panel.input.value, 'Look at ');
    assert.deepEqual(pendingLabels(panel), ['test/http.test.ts']);

    type(panel, 'Look at @x');
    press(panel, panel.input, 'Escape');
    assert.equal(list.hidden, true, 'Escape closes the list');
    assert.equal(panel.input.value, 'Look at @x', 'and leaves the text');
  });

  it('keeps the suggestion the arrows picked when a later answer adds rows above it, and Enter chooses that one', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    type(panel, '@cartTotal');
    const files = panel.posted.filter((m) => m.type === 'files').pop()!;
    const symbols = panel.posted.filter((m) => m.type === 'symbols').pop()!;
    panel.receive({ type: 'filesResult', requestId: files.requestId as number, files: ['src/cartTotal.ts', 'test/cartTotal.test.ts'] });
    assert.equal(panel.input.getAttribute('aria-activedescendant'), 'mention-option-0', 'untouched, the first row is selected');
    press(panel, panel.input, 'ArrowDown');
    panel.receive({ type: 'symbolsResult', requestId: symbols.requestId as number, symbols: [{ name: 'cartTotal', kind: 'function', path: 'src/cartTotal.ts', line: 1 }] });
    assert.equal(panel.input.getAttribute('aria-activedescendant'), 'mention-option-2', 'the picked file moved down a row, and the selection with it');
    press(panel, panel.input, 'Enter');
    assert.deepEqual(pendingLabels(panel), ['test/cartTotal.test.ts']);

    type(panel, '@cartTotal');
    const untouched = panel.posted.filter((m) => m.type === 'symbols').pop()!;
    panel.receive({ type: 'filesResult', requestId: panel.posted.filter((m) => m.type === 'files').pop()!.requestId as number, files: ['src/cartTotal.ts'] });
    panel.receive({ type: 'symbolsResult', requestId: untouched.requestId as number, symbols: [{ name: 'cartTotal', kind: 'function', path: 'src/cartTotal.ts', line: 1 }] });
    assert.equal(panel.input.getAttribute('aria-activedescendant'), 'mention-option-0', 'without the arrows, the new first row is selected');
    press(panel, panel.input, 'Enter');
    assert.deepEqual(pendingLabels(panel), ['test/cartTotal.test.ts', 'src/cartTotal.ts (cartTotal)']);
  });

  it('ignores a file list that answers an older query', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    type(panel, '@a');
    type(panel, '@ab');
    const [older, newer] = panel.posted.filter((m) => m.type === 'files');
    panel.receive({ type: 'filesResult', requestId: newer.requestId as number, files: ['ab.ts'] });
    panel.receive({ type: 'filesResult', requestId: older.requestId as number, files: ['a.ts', 'b.ts'] });
    assert.deepEqual(Array.from(panel.document.querySelectorAll('#mention-list [role="option"]'), (o) => o.textContent), ['ab.ts']);
  });

  it('offers symbols after the files for @, by keyboard, and a chosen one becomes a symbol chip that is sent with its name and line', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    type(panel, 'Explain @tot');
    const files = panel.posted.filter((m) => m.type === 'files').pop()!;
    const symbols = panel.posted.filter((m) => m.type === 'symbols').pop()!;
    assert.equal(symbols.query, 'tot');
    panel.receive({ type: 'filesResult', requestId: files.requestId as number, files: ['docs/totals.md'] });
    panel.receive({
      type: 'symbolsResult',
      requestId: symbols.requestId as number,
      symbols: [
        { name: 'total', kind: 'function', path: 'src/cart.ts', line: 4 },
        { name: 'total', kind: 'method', container: 'Cart', path: 'src/cart.ts', line: 12 },
      ],
    });
    const options = Array.from(panel.document.querySelectorAll('#mention-list [role="option"]'), (o) => o.textContent);
    assert.deepEqual(options, ['docs/totals.md', 'total function src/cart.ts:4', 'Cart.total method src/cart.ts:12']);
    press(panel, panel.input, 'ArrowDown');
    press(panel, panel.input, 'ArrowDown');
    assert.equal(panel.input.getAttribute('aria-activedescendant'), 'mention-option-2');
    press(panel, panel.input, 'Enter');
    assert.equal(panel.input.value, 'Explain ');
    assert.deepEqual(pendingLabels(panel), ['src/cart.ts (Cart.total)']);
    assert.ok(panel.document.querySelector('.composer-attachments .attachment-chip.is-symbol .codicon-symbol-method'), 'the chip is marked as a symbol');
    type(panel, 'Explain this');
    press(panel, panel.input, 'Enter');
    assert.deepEqual(sends(panel).pop()?.attachments, [{ kind: 'symbol', path: 'src/cart.ts', symbol: 'Cart.total', startLine: 12 }]);
  });

  it('lists symbols first for a query that reads as one, ignores a stale symbol answer, and drops malformed items while showing hostile names inert', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    type(panel, '@');
    assert.equal(panel.posted.filter((m) => m.type === 'symbols').length, 0, 'an empty query asks for no symbols');
    type(panel, '@create');
    const older = panel.posted.filter((m) => m.type === 'symbols').pop()!;
    type(panel, '@createSrv');
    const newer = panel.posted.filter((m) => m.type === 'symbols').pop()!;
    const files = panel.posted.filter((m) => m.type === 'files').pop()!;
    panel.receive({ type: 'filesResult', requestId: files.requestId as number, files: ['src/createServer.ts'] });
    panel.receive({
      type: 'symbolsResult',
      requestId: newer.requestId as number,
      symbols: [
        { name: 'createServer', kind: 'function', path: 'src/createServer.ts', line: 3 },
        { name: 'x'.repeat(5000), kind: 'function', path: 'a.ts', line: 1 },
        { name: 'noLine', kind: 'function', path: 'a.ts', line: 0 },
        { name: 'create\u202eSrv<img src=x onerror=alert(1)>', kind: 'variable', path: 'b.ts', line: 2 },
      ] as never,
    });
    panel.receive({ type: 'symbolsResult', requestId: older.requestId as number, symbols: [{ name: 'stale', kind: 'function', path: 'old.ts', line: 1 }] });
    assert.deepEqual(Array.from(panel.document.querySelectorAll('#mention-list [role="option"]'), (o) => o.textContent), [
      'createServer function src/createServer.ts:3',
      'create\\u202eSrv<img src=x onerror=alert(1)> variable b.ts:2',
      'src/createServer.ts',
    ]);
    assert.equal(panel.document.querySelector('#mention-list img'), null);
  });

  it('shows a sent symbol chip with the definition’s range and name, and a missing symbol with its reason', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({
      type: 'events',
      events: numbered([
        {
          type: 'user_message',
          text: 'Explain',
          attachments: [
            { kind: 'symbol', path: 'src/cart.ts', symbol: 'total', startLine: 4, endLine: 8, status: 'attached', shownStart: 4, shownEnd: 8 },
            { kind: 'symbol', path: 'src/cart.ts', symbol: 'nope', status: 'refused', refusal: 'no_symbol', note: 'symbol "nope" not found in src/cart.ts' },
          ],
        },
      ]),
    });
    const chips = Array.from(panel.document.querySelectorAll('.user-message .attachment-chip'));
    assert.deepEqual(chips.map((c) => c.querySelector('.attachment-label')?.textContent), ['src/cart.ts:4-8 (total)', 'src/cart.ts (nope)']);
    assert.ok(chips[0].querySelector('.codicon-symbol-method'));
    assert.equal(chips[1].querySelector('.attachment-note')?.textContent, 'symbol "nope" not found in src/cart.ts');
  });

  it('turns files dropped with a uri-list into chips, inside the folder only', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    const event = new panel.window.Event('drop', { bubbles: true, cancelable: true });
    const data: Record<string, string> = {
      'application/vnd.code.uri-list': 'file:///work/repo/src/a%20b.ts\r\nfile:///etc/passwd\r\nfile:///work/repository/x.ts\r\nfile:///work/repo/../secret.ts\r\nhttps://example.com/x',
    };
    Object.defineProperty(event, 'dataTransfer', { value: { types: Object.keys(data), getData: (type: string) => data[type] ?? '' } });
    panel.document.querySelector('.conversation')!.dispatchEvent(event);
    assert.equal(event.defaultPrevented, true);
    assert.deepEqual(pendingLabels(panel), ['src/a b.ts']);
  });

  it('recalls the last question with Up in an empty input, and not when there is text', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered([{ type: 'user_message', text: 'first' }, { type: 'turn_complete' }, { type: 'user_message', text: 'second' }, { type: 'turn_complete' }]) });
    press(panel, panel.input, 'ArrowUp');
    assert.equal(panel.input.value, 'second');
    type(panel, 'draft');
    press(panel, panel.input, 'ArrowUp');
    assert.equal(panel.input.value, 'draft');
  });

  it('stops a reply with Escape from anywhere in the panel and gives the focus back to the input', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered([{ type: 'user_message', text: 'q' }]) });
    panel.receive({ type: 'status', answering: true, model: 'model-a' });
    const conversation = panel.document.querySelector('.conversation') as HTMLElement;
    conversation.focus();
    press(panel, conversation, 'Escape');
    assert.deepEqual(panel.posted.filter((m) => m.type === 'cancel'), [{ type: 'cancel' }]);
    assert.equal(panel.document.activeElement, panel.input);
    // And the Stop button, once clicked, does the same.
    const stop = panel.document.querySelector('.send-button') as HTMLButtonElement;
    stop.focus();
    click(panel, stop);
    assert.equal(panel.posted.filter((m) => m.type === 'cancel').length, 2);
    assert.equal(panel.document.activeElement, panel.input);
  });
});

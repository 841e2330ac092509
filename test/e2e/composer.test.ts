/**
 * The chat's composer in a real VS Code workbench, driven by Playwright:
 * pointing at code while asking (`@` completion, the current file's chip, a
 * drop of files), the input at the sidebar's usual width, and the keys a
 * person expects (Up recalls, Escape stops). Each step builds on the one
 * before, so the suite stops at the first broken step.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Frame } from 'playwright-core';
import { createGate, lastUserMessage } from '../support/fakeOpenAI';
import { FIXTURE_FILES } from '../vscode/fixture';
import { openWorkbench, type Workbench } from './workbench';

const API_KEY = 'sk-e2e-composer-not-a-real-key';
const SIDEBAR_WIDTH = 300;
/** Where the renamed-symbol case's function is defined. */
const RATES_FILE = 'src/rates.ts';

/** 1-based first and last line of the fixture's `Ledger.balance` method: what a symbol attachment of it must carry, no more. */
function balanceLines(): { start: number; end: number; text: string[] } {
  const lines = FIXTURE_FILES['src/billing/ledger.ts'].split('\n');
  const start = lines.indexOf('  balance(): number {') + 1;
  const end = lines.indexOf('  }', start) + 1;
  assert.ok(start > 0 && end > start, 'the fixture defines Ledger.balance');
  return { start, end, text: lines.slice(start - 1, end) };
}

/** `path:1-N` for a whole fixture file, as the server labels an attachment. */
function wholeFileLabel(path: string): string {
  const lines = FIXTURE_FILES[path].replace(/\n$/, '').split('\n').length;
  return `${path}:1-${lines}`;
}

describe('The composer in the browser workbench', function () {
  this.bail(true);
  let wb: Workbench;

  before(async function () {
    this.timeout(180_000);
    wb = await openWorkbench();
    // A file for the symbol cases alone (the shared fixture stays as the other suites know it), there before anything is indexed.
    fs.writeFileSync(path.join(wb.repo, RATES_FILE), 'export function roundRate(rate: number): number {\n  return Math.round(rate * 100) / 100;\n}\n');
    await wb.runCommand('Repo Discuss: Set API key');
    const box = wb.page.locator('.quick-input-widget input[type="password"]');
    await box.waitFor();
    await box.fill(API_KEY);
    await box.press('Enter');
    await wb.page.locator('.notifications-toasts', { hasText: 'API key saved' }).waitFor();
    await wb.runCommand('Repo Discuss: Discuss this repo');
    await wb.chat.locator('#message-input:not([disabled])').waitFor();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && wb) {
      await wb.screenshot(`composer-failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`).catch(() => undefined);
    }
  });

  after(async () => {
    await wb?.close();
  });

  /** Sends what is in the input with Enter and waits for the reply to finish; resolves with the request the model got. */
  async function sendAndWait(text: string, reply: string) {
    wb.fake.push({ kind: 'text', text: reply });
    const requests = wb.fake.completionRequests.length;
    const input = wb.chat.locator('#message-input');
    await input.press('End');
    await input.pressSequentially(text);
    await input.press('Enter');
    const turn = wb.chat.locator('article.turn').last();
    await turn.locator('.reply', { hasText: reply }).waitFor();
    await wb.chat.locator('button.send-button[data-action="send"]').waitFor();
    await wb.fake.waitForCompletionRequests(requests + 1);
    return { turn, request: wb.fake.completionRequests[requests] };
  }

  it('`@`, a few letters, ArrowDown and Enter make the second suggestion a chip; it is sent with its lines labelled path:start-end', async () => {
    const input = wb.chat.locator('#message-input');
    await input.click();
    // Every key's answers first: the list the arrows walk is the last one, not one an answer still on its way replaces.
    await typeMention('bill');
    const options = wb.chat.locator('#mention-list .mention-option');
    await options.nth(1).waitFor();
    const offered = await options.allInnerTexts();
    assert.ok(offered.every((file) => file.trim().startsWith('src/billing/')), offered.join(', '));
    assert.ok(!offered.some((file) => file.includes('audit/')), 'the policy-denied file is not offered');

    await input.press('ArrowDown');
    const selected = wb.chat.locator('#mention-list .mention-option.is-selected');
    assert.equal(await selected.getAttribute('id'), 'mention-option-1', 'ArrowDown moves to the second suggestion');
    const chosen = (await selected.innerText()).trim();
    await input.press('Enter');

    const chip = wb.chat.locator('.composer-attachments .attachment-chip:not(.is-implicit)');
    await chip.waitFor();
    assert.equal((await chip.locator('.attachment-label').innerText()).trim(), chosen);
    assert.equal(await input.inputValue(), '', 'the @query left the text');
    assert.ok(await wb.chat.locator('#mention-list').isHidden(), 'the list closed');
    await wb.screenshot('composer-01-mention-chip');

    const { turn, request } = await sendAndWait('What does this file do?', 'It keeps the ledger.');
    const sent = turn.locator('.attachment-chips .attachment-chip');
    assert.deepEqual((await sent.allInnerTexts()).map((t) => t.trim()), [chosen]);
    assert.match((await sent.getAttribute('class')) ?? '', /is-attached/);
    const asked = lastUserMessage(request);
    assert.ok(asked.startsWith('What does this file do?'), asked);
    assert.ok(asked.includes(`<<<attachment ${wholeFileLabel(chosen)} `), asked);
    const someLine = FIXTURE_FILES[chosen].split('\n').find((line) => line.trim().length > 10)!;
    assert.ok(asked.includes(someLine), `the file's lines reach the model: ${asked}`);
    assert.equal(await wb.chat.locator('.composer-attachments .attachment-chip').count(), 0, 'the chip was used by that message');
  });

  /**
   * Types `@query` key by key and resolves once the extension answered every
   * files and symbols request those keys made (one files request per key, a
   * symbols request per key after the `@`), so no late answer reorders the
   * list or moves its selection under the keys that follow.
   */
  async function typeMention(query: string) {
    const body = wb.chat.locator('body');
    await body.evaluate(() => {
      const w = window as unknown as { mentionAnswers?: Record<string, number> };
      if (!w.mentionAnswers) {
        window.addEventListener('message', (event: MessageEvent<{ type?: string }>) => {
          const type = event.data?.type;
          if (type === 'filesResult' || type === 'symbolsResult') w.mentionAnswers![type] += 1;
        });
      }
      w.mentionAnswers = { filesResult: 0, symbolsResult: 0 };
    });
    const input = wb.chat.locator('#message-input');
    await input.pressSequentially(`@${query}`);
    const frame = (await (await body.elementHandle())!.ownerFrame()) as Frame;
    const keys = query.length + 1;
    await frame
      .waitForFunction((keys) => {
        const answers = (window as unknown as { mentionAnswers: Record<string, number> }).mentionAnswers;
        return answers.filesResult >= keys && answers.symbolsResult >= keys - 1;
      }, keys)
      .catch(async (error: Error) => {
        const answers = await body.evaluate(() => (window as unknown as { mentionAnswers: Record<string, number> }).mentionAnswers);
        throw new Error(`after ${keys} keys the panel got ${answers.filesResult} files and ${answers.symbolsResult} symbols answers (${keys} and ${keys - 1} expected): ${error.message}`);
      });
  }

  /** Moves the list's selection to the first option whose text includes `wanted` with arrow keys; resolves with the option's text. */
  async function arrowTo(wanted: string): Promise<string> {
    const input = wb.chat.locator('#message-input');
    const options = wb.chat.locator('#mention-list .mention-option');
    await options.filter({ hasText: wanted }).first().waitFor();
    const texts = (await options.allInnerTexts()).map((t) => t.trim());
    const target = texts.findIndex((t) => t.includes(wanted));
    const selected = wb.chat.locator('#mention-list .mention-option.is-selected');
    // Around the list and back when the wanted one is first: the arrows are what picks it either way.
    if (target === 0) {
      await input.press('ArrowUp');
      await input.press('ArrowDown');
    } else for (let i = 0; i < target; i++) await input.press('ArrowDown');
    assert.equal(await selected.getAttribute('id'), `mention-option-${target}`, `the arrows select ${wanted} in ${JSON.stringify(texts)}`);
    return texts[target];
  }

  it('`@Ledger.bal`, arrows and Enter make the method a symbol chip; the model gets only its definition\'s lines, labelled path:start-end and the symbol', async () => {
    const input = wb.chat.locator('#message-input');
    await input.click();
    await typeMention('Ledger.bal');
    const offered = await arrowTo('Ledger.balance');
    assert.match(offered, /src\/billing\/ledger\.ts:\d+/, 'the suggestion shows where the symbol is');
    await wb.screenshot('composer-01b-symbol-list');
    await input.press('Enter');

    const chip = wb.chat.locator('.composer-attachments .attachment-chip.is-symbol');
    await chip.waitFor();
    assert.equal((await chip.locator('.attachment-label').innerText()).trim(), 'src/billing/ledger.ts (Ledger.balance)');
    assert.equal(await input.inputValue(), '', 'the @query left the text');
    await wb.screenshot('composer-01c-symbol-chip');

    const { start, end, text } = balanceLines();
    const { turn, request } = await sendAndWait('What does this method add up?', 'Every entry.');
    const sent = turn.locator('.attachment-chips .attachment-chip');
    assert.deepEqual((await sent.allInnerTexts()).map((t) => t.trim()), [`src/billing/ledger.ts:${start}-${end} (Ledger.balance)`]);
    assert.match((await sent.getAttribute('class')) ?? '', /is-attached/);
    const asked = lastUserMessage(request);
    assert.ok(asked.includes(`<<<attachment src/billing/ledger.ts:${start}-${end} (symbol "Ledger.balance"`), asked);
    for (const [i, line] of text.entries()) assert.ok(asked.includes(`${start + i}: ${line}`), `line ${start + i} of the definition reaches the model: ${asked}`);
    for (const outside of ['export class Ledger', 'private readonly entries', 'add(amount: number)', 'this.entries.push']) {
      assert.ok(!asked.includes(outside), `no line outside the definition (${outside}) reaches the model: ${asked}`);
    }
  });

  it('a chosen symbol the file no longer defines when the message goes is refused, its reason on the chip and told to the model, with none of the file\'s lines', async () => {
    // Picked while the file defines the function, renamed on disk before the send.
    const file = RATES_FILE;
    const input = wb.chat.locator('#message-input');
    await input.click();
    await typeMention('roundRate');
    await arrowTo('roundRate');
    await input.press('Enter');
    await wb.chat.locator('.composer-attachments .attachment-chip.is-symbol', { hasText: 'roundRate' }).waitFor();
    fs.writeFileSync(path.join(wb.repo, file), 'export function roundedRate(rate: number): number {\n  return Math.round(rate * 1000) / 1000;\n}\n');

    const { turn, request } = await sendAndWait('Where is it used?', 'Nowhere now.');
    const sent = turn.locator('.attachment-chips .attachment-chip');
    assert.match((await sent.getAttribute('class')) ?? '', /is-refused/);
    assert.equal((await sent.locator('.attachment-note').innerText()).trim(), `symbol "roundRate" not found in ${file}`);
    const asked = lastUserMessage(request);
    assert.ok(asked.includes(`[Attachment ${file} "roundRate" was not attached: symbol "roundRate" not found in "${file}"; `), asked);
    assert.ok(!asked.includes('<<<attachment') && !asked.includes('Math.round'), `no line of the file reaches the model: ${asked}`);
    await wb.screenshot('composer-01d-symbol-refused');
  });

  it('the file open in the editor shows as the current-file chip and goes out with the next message', async () => {
    await wb.page.evaluate(() => (document.activeElement as { blur?: () => void } | null)?.blur?.());
    await wb.page.keyboard.press('Control+P');
    const quickOpen = wb.page.locator('.quick-input-widget .quick-input-box input');
    await quickOpen.waitFor();
    await quickOpen.fill('src/invoice.ts');
    await wb.page.locator('.quick-input-widget .monaco-list-row.focused', { hasText: 'invoice.ts' }).waitFor();
    await wb.page.keyboard.press('Enter');
    await wb.page.locator('.tabs-container .tab.active', { hasText: 'invoice.ts' }).waitFor();

    const implicit = wb.chat.locator('.composer-attachments .attachment-chip.is-implicit');
    await implicit.locator('.attachment-label', { hasText: 'src/invoice.ts' }).waitFor();
    await wb.chat.locator('#message-input').click();
    const { turn, request } = await sendAndWait('Why round per line?', 'Because of the loop.');
    assert.deepEqual((await turn.locator('.attachment-chips .attachment-chip').allInnerTexts()).map((t) => t.trim()), ['src/invoice.ts']);
    assert.ok(lastUserMessage(request).includes(`<<<attachment ${wholeFileLabel('src/invoice.ts')} `), lastUserMessage(request));
    // The chip is context, not a one-off: it is back for the next message.
    await implicit.waitFor();
  });

  it('one click drops the current-file chip for one message only', async () => {
    await wb.chat.locator('.composer-attachments .attachment-chip.is-implicit button[data-action="drop-active-file"]').click();
    assert.equal(await wb.chat.locator('.composer-attachments .attachment-chip').count(), 0);
    assert.ok(await wb.chat.locator('#message-input').evaluate((el) => el === document.activeElement), 'focus is back in the input');
    const { turn, request } = await sendAndWait('And without the file?', 'Still per line.');
    assert.equal(await turn.locator('.attachment-chips .attachment-chip').count(), 0, 'the sent message has no chip');
    assert.ok(!lastUserMessage(request).includes('<<<attachment'), lastUserMessage(request));
    await wb.chat.locator('.composer-attachments .attachment-chip.is-implicit', { hasText: 'src/invoice.ts' }).waitFor();
  });

  it('a drop of Explorer files (a text/uri-list drop inside the webview) becomes chips, and a file outside the folder does not', async () => {
    // VS Code covers a webview with an overlay while a workbench drag is in
    // progress, and Playwright cannot carry a drag from the workbench into
    // the webview's out-of-process frame: the drop the webview would receive
    // is dispatched inside its frame instead, with the URIs the Explorer puts
    // on the DataTransfer.
    const inside = pathToFileURL(`${wb.repo}/src/billing/payments.ts`).href;
    const outside = pathToFileURL('/etc/hostname').href;
    await wb.chat.locator('.composer').evaluate(
      (composer, uris) => {
        const data = new DataTransfer();
        data.setData('text/uri-list', uris.join('\r\n'));
        composer.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: data }));
        composer.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: data }));
      },
      [inside, outside],
    );
    const dropped = wb.chat.locator('.composer-attachments .attachment-chip:not(.is-implicit)');
    await dropped.waitFor();
    assert.deepEqual((await dropped.locator('.attachment-label').allInnerTexts()).map((t) => t.trim()), ['src/billing/payments.ts']);
    await wb.screenshot('composer-02-dropped');
  });

  it(`at a ${SIDEBAR_WIDTH} px sidebar nothing in the input area is cut off`, async () => {
    await wb.chat.locator('#message-input').fill('');
    const sidebar = wb.page.locator('.part.sidebar');
    const box = (await sidebar.boundingBox())!;
    // The sash between the side bar and the editor, where a person drags it.
    const sash = wb.page.locator('.monaco-sash.vertical');
    const sashes = await sash.evaluateAll((nodes, right) =>
      nodes.map((node, index) => ({ index, left: node.getBoundingClientRect().left, width: node.getBoundingClientRect().width })).filter((s) => Math.abs(s.left + s.width / 2 - right) < 6),
      box.x + box.width,
    );
    assert.ok(sashes.length > 0, 'the side bar has a sash at its right edge');
    const handle = sash.nth(sashes[0].index);
    const handleBox = (await handle.boundingBox())!;
    const y = handleBox.y + handleBox.height / 2;
    await wb.page.mouse.move(handleBox.x + handleBox.width / 2, y);
    // Wider first, then back: the width is the drag's doing, not the default's.
    await wb.page.mouse.down();
    await wb.page.mouse.move(box.x + SIDEBAR_WIDTH + 120, y, { steps: 10 });
    await wb.page.waitForFunction((width) => Math.round(document.querySelector('.part.sidebar')!.getBoundingClientRect().width) >= width, SIDEBAR_WIDTH + 100);
    await wb.page.mouse.move(box.x + SIDEBAR_WIDTH, y, { steps: 10 });
    await wb.page.mouse.up();
    await wb.page.waitForFunction((width) => Math.round(document.querySelector('.part.sidebar')!.getBoundingClientRect().width) === width, SIDEBAR_WIDTH);

    const frame = (await (await wb.chat.locator('body').elementHandle())!.ownerFrame()) as Frame;
    // The webview's frame follows the side bar's size on the next layout.
    await frame.waitForFunction((width) => document.documentElement.clientWidth <= width, SIDEBAR_WIDTH);
    const width = await frame.evaluate(() => document.documentElement.clientWidth);
    assert.ok(width > SIDEBAR_WIDTH - 40, `the webview is about as wide as the side bar (${width} px)`);

    const clipped = await wb.chat.locator('.composer').evaluate((composer) => {
      const bounds = composer.getBoundingClientRect();
      const controls = Array.from(
        composer.querySelectorAll<HTMLElement>('#message-input, .composer-hint, .composer-actions, .composer-actions button, .composer-actions .button-label, .attachment-chip, .attachment-label'),
      );
      return controls
        .filter((el) => el.getClientRects().length > 0)
        .map((el) => {
          const rect = el.getBoundingClientRect();
          return { what: el.id || el.className, scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, left: rect.left, right: rect.right };
        })
        .filter((c) => c.scrollWidth > c.clientWidth || c.left < bounds.left - 0.5 || c.right > bounds.right + 0.5)
        .map((c) => `${c.what}: scrollWidth ${c.scrollWidth} > clientWidth ${c.clientWidth}, or [${c.left}, ${c.right}] outside [${bounds.left}, ${bounds.right}]`);
    });
    assert.deepEqual(clipped, []);
    const hint = await wb.chat.locator('.composer-hint').innerText();
    assert.match(hint, /Enter: send/, 'the hint is shown whole');
    const buttons = await wb.chat.locator('.composer-actions button').evaluateAll((nodes) =>
      nodes.map((n) => n.getAttribute('aria-label') || n.getAttribute('title') || (n as HTMLElement).innerText.trim()),
    );
    assert.ok(buttons.every((name) => name && name.length > 0), `every button has an accessible name: ${JSON.stringify(buttons)}`);
    await wb.screenshot('composer-03-sidebar-300px');
  });

  it('Up in the empty input recalls the last message', async () => {
    const input = wb.chat.locator('#message-input');
    await wb.chat.locator('.composer-attachments .attachment-remove[data-action="remove-attachment"]').click();
    await input.fill('');
    await input.press('ArrowUp');
    assert.equal(await input.inputValue(), 'And without the file?');
    await input.fill('');
  });

  it('Escape stops a reply mid-stream, from the conversation too, and the focus returns to the input', async () => {
    const gate = createGate();
    wb.fake.push({ kind: 'gate', deltas: ['Counting the callers one ', 'by one'], gate, then: { kind: 'text', text: ' and never finishing.' } });
    const disconnects = wb.fake.disconnects;
    const input = wb.chat.locator('#message-input');
    await input.fill('Count every caller.');
    await input.press('Enter');
    const turn = wb.chat.locator('article.turn').last();
    await turn.locator('.reply', { hasText: 'by one' }).waitFor();
    await wb.chat.locator('button.send-button[data-action="cancel"]').waitFor();

    // Escape where a person's focus may be while reading: the conversation.
    await wb.chat.locator('main.conversation').focus();
    await wb.chat.locator('main.conversation').press('Escape');
    await wb.chat.locator('button.send-button[data-action="send"]').waitFor();
    await wb.fake.waitForDisconnect(disconnects + 1);
    gate.release();
    assert.ok(await input.evaluate((el) => el === document.activeElement), 'focus is back in the input');
    assert.doesNotMatch(await turn.locator('.reply').innerText(), /never finishing/);
    await wb.screenshot('composer-04-stopped');
  });
});

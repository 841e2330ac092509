/**
 * A person's path through Repo Discuss in a real VS Code workbench, driven by
 * Playwright: each step builds on the one before, so the suite stops at the
 * first broken step. Screenshots of the main states land in test-results/e2e/.
 */
import { strict as assert } from 'node:assert';
import { createGate } from '../support/fakeOpenAI';
import { DISTILLED } from '../vscode/fakeScript';
import { extensionRegistered, openWorkbench, transcript, type Workbench } from './workbench';

const API_KEY = 'sk-e2e-7d2a-not-a-real-key';

describe('Repo Discuss in the browser workbench', function () {
  this.bail(true);
  let wb: Workbench;

  before(async function () {
    this.timeout(180_000);
    wb = await openWorkbench();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && wb) {
      await wb.screenshot(`failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`).catch(() => undefined);
    }
  });

  after(async () => {
    await wb?.close();
  });

  it('"Set API key" from the command palette takes the key in a password box', async () => {
    await wb.runCommand('Repo Discuss: Set API key');
    const box = wb.page.locator('.quick-input-widget input[type="password"]');
    await box.waitFor();
    await box.fill(API_KEY);
    await box.press('Enter');
    await wb.page.locator('.notifications-toasts', { hasText: 'API key saved' }).waitFor();
  });

  it('"Discuss this repo" from the command palette opens the chat on the fixture repository', async () => {
    await wb.runCommand('Repo Discuss: Discuss this repo');
    await wb.chat.locator('.header-repo', { hasText: 'invoice-service' }).waitFor();
    await wb.chat.locator('#message-input:not([disabled])').waitFor();
    await wb.screenshot('01-chat-opened');
  });

  it('a question typed in the chat streams back a Markdown answer, with a chip for the file the model read', async () => {
    const gate = createGate();
    wb.fake.push(
      { kind: 'toolCalls', calls: [{ id: 'call_read_1', name: 'read_file', arguments: JSON.stringify({ path: 'src/invoice.ts' }) }] },
      {
        kind: 'gate',
        deltas: ['## Rounding\n\n', 'Each line is **rounded to cents** ', 'before the sum'],
        gate,
        then: { kind: 'text', deltas: [', so the errors add up:\n\n', '```ts\n', 'Math.round(price * quantity * 100) / 100\n', '```\n'] },
      },
    );
    const input = wb.chat.locator('#message-input');
    await input.fill('How are invoice totals rounded?');
    await input.press('Enter');

    const turn = wb.chat.locator('article.turn').last();
    await turn.locator('.user-text', { hasText: 'How are invoice totals rounded?' }).waitFor();
    // Mid-stream: part of the answer is on screen and the reply can be stopped.
    await turn.locator('.reply', { hasText: 'Each line is' }).waitFor();
    await wb.chat.locator('button.send-button[data-action="cancel"]').waitFor();
    await wb.screenshot('02-streaming');

    gate.release();
    await turn.locator('.reply h2', { hasText: 'Rounding' }).waitFor();
    await turn.locator('.reply strong', { hasText: 'rounded to cents' }).waitFor();
    await turn.locator('.reply pre code', { hasText: 'Math.round(price * quantity * 100) / 100' }).waitFor();
    await wb.chat.locator('button.send-button[data-action="send"]').waitFor();

    const chip = turn.locator('.tool-chip');
    assert.equal(await chip.count(), 1);
    // The chip says in words what was read; the raw call is inside it, one click away.
    assert.match(await chip.locator('.tool-summary').innerText(), /^read src\/invoice\.ts/);
    assert.equal(await chip.locator('.tool-state').innerText(), 'done');
    await chip.locator('summary').click();
    assert.equal(await chip.locator('.tool-name').innerText(), 'read_file');
    assert.match(await chip.locator('.tool-params').innerText(), /src\/invoice\.ts/);
    await chip.locator('summary').click();
    await wb.screenshot('03-answer');

    // The key typed into "Set API key" is what the endpoint received.
    assert.equal(wb.fake.completionRequests[0].headers.authorization, `Bearer ${API_KEY}`);
  });

  it('Stop ends a reply mid-stream and keeps what had arrived', async () => {
    wb.fake.push({ kind: 'hang', deltas: ['I would start by reading ', 'every caller of total()'] });
    const disconnects = wb.fake.disconnects;
    const input = wb.chat.locator('#message-input');
    await input.fill('Walk me through every caller.');
    await input.press('Enter');
    const turn = wb.chat.locator('article.turn').last();
    await turn.locator('.reply', { hasText: 'every caller of total()' }).waitFor();

    await wb.chat.locator('button.send-button[data-action="cancel"]').click();
    await wb.chat.locator('button.send-button[data-action="send"]').waitFor();
    await wb.fake.waitForDisconnect(disconnects + 1);
    assert.match(await turn.locator('.reply').innerText(), /I would start by reading every caller of total\(\)/);
    await wb.screenshot('04-stopped');
  });

  it('"Prepare coding task" shows the distilled task as an editable card', async () => {
    await wb.chat.locator('button[data-action="promote"]:not([disabled])').click();
    const card = wb.chat.locator('.task-card');
    await card.waitFor();
    assert.equal(await card.locator('#task-intent').inputValue(), DISTILLED.intent);
    const constraints = card.locator('textarea.constraint-input');
    assert.deepEqual(await constraints.evaluateAll((fields) => fields.map((f) => (f as HTMLTextAreaElement).value)), DISTILLED.constraints);
    await wb.screenshot('05-task');
  });

  it('an edited constraint goes out with Hand off, into a Markdown document', async () => {
    const card = wb.chat.locator('.task-card');
    await card.locator('textarea.constraint-input').nth(1).fill('Round half away from zero');
    await card.locator('button[data-action="hand-off"]').click();

    await wb.page.locator('.tabs-container .tab.active', { hasText: 'Untitled' }).waitFor();
    // Monaco renders spaces as no-break spaces.
    await wb.page.waitForFunction(
      (expected) =>
        document
          .querySelector('.editor-group-container.active .monaco-editor .view-lines')
          ?.textContent?.replace(/\u00a0/g, ' ')
          .includes(expected),
      'Round half away from zero',
    );
    const text = await wb.activeEditorText();
    assert.match(text, /Round invoice totals to cents once, after summing every line\./);
    assert.match(text, /Keep the signature of total\(\) unchanged/);
    assert.match(text, /Round half away from zero/);
    assert.doesNotMatch(text, /three lines of 0\.333/, 'the constraint as it was before the edit stays out');
    await wb.screenshot('06-handed-off');
  });

  it('after a page reload the discussion is back, without a gap or a duplicate', async () => {
    const before = await transcript(wb.chat);
    assert.equal(before.length, 2);
    await wb.page.reload();
    await extensionRegistered(wb.page);
    const lastReply = before[before.length - 1].reply;
    await wb.chat.locator('article.turn').last().locator('.reply', { hasText: lastReply.slice(0, 40) }).waitFor();
    await wb.chat.locator('#message-input:not([disabled])').waitFor();
    assert.deepEqual(await transcript(wb.chat), before);
    await wb.screenshot('07-restored');
  });

  it('a hostile reply renders inert: no script, no event handler, no javascript: link', async () => {
    const hostile = [
      'Here is the fix <script>window.top.__repoDiscussPwned = "script"</script>',
      '',
      '<img src="x" onerror="window.top.__repoDiscussPwned = \'onerror\'">',
      '',
      '<div onclick="window.top.__repoDiscussPwned = \'onclick\'" onmouseover="window.top.__repoDiscussPwned = \'hover\'">hover me</div>',
      '',
      '[click me](javascript:window.top.__repoDiscussPwned=%22link%22)',
      '',
      '<a href="javascript:window.top.__repoDiscussPwned = \'raw link\'">raw link</a>',
      '',
      '<iframe src="javascript:window.top.__repoDiscussPwned = \'iframe\'"></iframe>',
      '',
      '<svg><script>window.top.__repoDiscussPwned = "svg"</script></svg> end of reply',
    ].join('\n');
    wb.fake.push({ kind: 'text', text: hostile });
    const input = wb.chat.locator('#message-input');
    await input.fill('Show me something dangerous.');
    await input.press('Enter');
    const reply = wb.chat.locator('article.turn').last().locator('.reply');
    await reply.filter({ hasText: 'end of reply' }).waitFor();
    await wb.chat.locator('button.send-button[data-action="send"]').waitFor();

    const found = await reply.evaluate((root) => ({
      scripts: root.querySelectorAll('script').length,
      frames: root.querySelectorAll('iframe, object, embed').length,
      handlers: Array.from(root.querySelectorAll('*')).flatMap((el) => el.getAttributeNames().filter((name) => name.startsWith('on'))),
      scriptLinks: Array.from(root.querySelectorAll('[href], [src], [action], [formaction]'))
        .flatMap((el) => ['href', 'src', 'action', 'formaction'].map((a) => el.getAttribute(a) ?? ''))
        .filter((value) => /^\s*javascript:/i.test(value)),
    }));
    assert.deepEqual(found, { scripts: 0, frames: 0, handlers: [], scriptLinks: [] });

    // Hover and click everything a person could: still nothing runs, nothing navigates.
    const frameUrl = await reply.evaluate(() => location.href);
    await reply.locator('text=hover me').hover().catch(() => undefined);
    for (const link of await reply.locator('a').all()) await link.click();
    assert.equal(await reply.evaluate(() => location.href), frameUrl);
    assert.equal(await wb.page.evaluate(() => (window as unknown as { __repoDiscussPwned?: string }).__repoDiscussPwned), undefined);
    assert.equal(
      await reply.evaluate(() => (window.top as unknown as { __repoDiscussPwned?: string } | null)?.__repoDiscussPwned),
      undefined,
    );
    await wb.screenshot('08-hostile-reply-inert');
  });
});

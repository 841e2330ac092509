/**
 * What the discussion decided, kept and checked, in a real VS Code workbench
 * driven by Playwright: the Decisions section shows what the model recorded
 * and the user's edit reaches the next request; the task card marks a
 * constraint whose cited code changed since it was agreed; after a hand-off,
 * "Review implementation" shows the checklist from the model's answer. Each
 * step builds on the one before, so the suite stops at the first broken step.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { testGit } from '../support/testGit';
import * as path from 'node:path';
import { FIXTURE_FILES } from '../vscode/fixture';
import { openWorkbench, type Workbench } from './workbench';

const API_KEY = 'sk-e2e-decisions-not-a-real-key';
const AGREED = 'Keep the signature of total() unchanged';
const EDITED = 'Keep the signature total(lines: Line[]): number unchanged';

/** The fixture's git: the shared one, with the user's and the system's config kept out. */
const git = (cwd: string, args: string[]): string => testGit(cwd, ...args);

describe('Decisions, stale evidence and review in the browser workbench', function () {
  this.bail(true);
  let wb: Workbench;

  before(async function () {
    this.timeout(180_000);
    wb = await openWorkbench();
    // The review diffs from the commit recorded at hand-off: the fixture becomes a repository first.
    git(wb.repo, ['init', '-q', '-b', 'main']);
    git(wb.repo, ['add', '-A']);
    git(wb.repo, ['commit', '-q', '-m', 'start']);
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
      await wb.screenshot(`decisions-failed-${this.currentTest.title.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`).catch(() => undefined);
    }
  });

  after(async () => {
    await wb?.close();
  });

  async function ask(text: string, reply: string): Promise<void> {
    const input = wb.chat.locator('#message-input');
    await input.fill(text);
    await input.press('Enter');
    await wb.chat.locator('article.turn').last().locator('.reply', { hasText: reply }).waitFor();
    await wb.chat.locator('button.send-button[data-action="send"]').waitFor();
  }

  it('the Decisions section shows what the model recorded, and the user\'s edit is what the next request carries', async () => {
    wb.fake.push(
      {
        kind: 'toolCalls',
        calls: [
          {
            id: 'call_decide_1',
            name: 'record_decision',
            arguments: JSON.stringify({ kind: 'constraint', text: AGREED, evidence: [{ path: 'src/invoice.ts', line: 6 }] }),
          },
        ],
      },
      { kind: 'text', text: 'Recorded: the signature stays.' },
    );
    await ask('We keep the signature of total(), agreed?', 'Recorded: the signature stays.');

    const section = wb.chat.locator('details.decisions');
    await section.locator('summary', { hasText: 'Decisions (1)' }).click();
    const entry = section.locator('.decision-group[data-kind="constraint"] .decision');
    assert.equal(await entry.locator('.decision-text').innerText(), AGREED);
    assert.equal(await entry.locator('.decision-evidence').innerText(), 'src/invoice.ts:6');
    await wb.screenshot('decisions-01-recorded');

    await entry.locator('button[data-action="edit-decision"]').click();
    await section.locator('textarea.decision-input').fill(EDITED);
    await section.locator('button[data-action="save-decision"]').click();
    await section.locator('.decision-text', { hasText: EDITED }).waitFor();

    wb.fake.push({ kind: 'text', text: 'Understood.' });
    const requests = wb.fake.completionRequests.length;
    await ask('Anything else to settle?', 'Understood.');
    const next = wb.fake.completionRequests[requests];
    const system = String(next.body?.messages?.[0]?.content);
    assert.ok(system.includes(EDITED), 'the next request carries the edited entry');
    assert.ok(!system.includes(AGREED), 'and not the text it replaced');
  });

  it('the task card marks the constraint whose cited line changed since it was agreed', async () => {
    const file = path.join(wb.repo, 'src', 'invoice.ts');
    fs.writeFileSync(file, FIXTURE_FILES['src/invoice.ts'].replace('export function total(lines: Line[]): number {', "export function total(lines: Line[], currency = 'EUR'): number {"));

    await wb.chat.locator('button[data-action="promote"]:not([disabled])').click();
    const card = wb.chat.locator('.task-card');
    await card.waitFor();
    const constraint = card.locator('li.constraint').filter({ has: wb.chat.locator('.constraint-stale') });
    await constraint.first().waitFor();
    assert.equal(await constraint.count(), 1, 'only the constraint citing the edited line is marked');
    assert.equal(await constraint.locator('textarea.constraint-input').inputValue(), EDITED);
    assert.match(await constraint.locator('.constraint-stale').innerText(), /changed since it was agreed/);
    await wb.screenshot('decisions-02-stale');
  });

  it('after the hand-off, "Review implementation" shows the checklist: met and not met from the model\'s answer', async () => {
    const card = wb.chat.locator('.task-card');
    const constraints = await card.locator('textarea.constraint-input').evaluateAll((fields) => fields.map((f) => (f as HTMLTextAreaElement).value));
    await card.locator('button[data-action="hand-off"]').click();
    await wb.page.locator('.tabs-container .tab.active', { hasText: 'Untitled' }).waitFor();
    const review = wb.chat.locator('button.review-button');
    await review.waitFor();

    // The implementation after the hand-off: rounding moves to the end.
    const file = path.join(wb.repo, 'src', 'invoice.ts');
    fs.writeFileSync(
      file,
      fs
        .readFileSync(file, 'utf8')
        .replace('sum + Math.round(line.price * line.quantity * 100) / 100, 0);', 'sum + line.price * line.quantity, 0);\n  // rounded once below'),
    );
    wb.fake.push({
      kind: 'text',
      text: JSON.stringify({
        constraints: [
          { index: 1, status: 'not met', evidence: ['src/invoice.ts:6'], note: 'total() gained a currency parameter.' },
          { index: 2, status: 'met', evidence: ['src/invoice.ts:8'], note: 'Rounding happens once.' },
        ],
        unrequested: [],
      }),
    });
    const requests = wb.fake.completionRequests.length;
    await review.click();
    const items = wb.chat.locator('.review .review-item');
    await items.first().waitFor();
    assert.deepEqual(
      await items.evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-status'), row.querySelector('.review-constraint')?.textContent])),
      constraints.map((text, i) => [['not met', 'met'][i] ?? 'cannot tell', text]),
    );
    assert.equal(await items.first().locator('.review-evidence').innerText(), 'src/invoice.ts:6');
    const sent = wb.fake.completionRequests[requests].body!;
    assert.equal(sent.tools, undefined, 'the review offers the model no tools');
    assert.match(String(sent.messages?.[0]?.content), /\+  return lines\.reduce\(\(sum, line\) => sum \+ line\.price \* line\.quantity, 0\);/);
    await wb.screenshot('decisions-03-review');
  });
});

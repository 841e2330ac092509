import assert from 'node:assert/strict';
import type { DiscussionEventBody } from '../../../shared/protocol';
import { ATTACHED, buildWebviewBundle, click, numbered, openPanel, type Panel } from '../../support/webviewPanel';

/** The panel's summary marker, review button and follow-up task, in jsdom with the real bundle. */

function turn(text: string): DiscussionEventBody[] {
  return [{ type: 'user_message', text }, { type: 'assistant_message', text: `About ${text}.` }, { type: 'turn_complete' }];
}

const REVIEW = {
  intent: 'Make greet polite.',
  base: 'abc',
  compared: 'changes since abc',
  items: [
    { constraint: 'greet keeps its signature.', status: 'met' as const, evidence: ['src/app.ts:3'] },
    { constraint: 'answer stays 42.', status: 'not met' as const, evidence: ['src/app.ts:1'], note: 'answer became 43.' },
  ],
  unrequested: [{ text: 'Adds a README line.', evidence: ['README.md:1'] }],
  at: 1_700_000_000_000,
};

/** Three turns (user_message seqs 0, 3, 6), then a summary covering the first two. */
const SUMMARIZED: DiscussionEventBody[] = [
  ...turn('first'),
  ...turn('second'),
  ...turn('third'),
  { type: 'history_summarized', note: 'So far: **two** turns. <img src=x onerror="alert(1)"><script>alert(2)</script>', firstKeptSeq: 6 },
];

describe('the panel: summary marker, review and follow-up', function () {
  this.timeout(20_000);
  let panel: Panel | undefined;

  before(buildWebviewBundle);
  afterEach(() => panel?.close());

  it('marks where the summarized turns end with "Earlier turns summarized — show", and "show" reveals the note as sanitized Markdown', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(SUMMARIZED) });
    const marker = panel.document.querySelector('.summary-marker')!;
    assert.ok(marker, 'the marker is shown');
    assert.equal(marker.querySelector('.summary-marker-line')?.textContent, 'Earlier turns summarized — show');
    const next = marker.nextElementSibling as HTMLElement;
    assert.equal(next.dataset.turnId, '6', 'it sits right before the first turn still sent whole');
    const note = marker.querySelector<HTMLElement>('.summary-note')!;
    assert.equal(note.hidden, true);
    const toggle = marker.querySelector<HTMLElement>('[data-action="toggle-summary"]')!;
    assert.equal(toggle.getAttribute('aria-expanded'), 'false');
    click(panel, toggle);
    assert.equal(note.hidden, false);
    assert.equal(toggle.getAttribute('aria-expanded'), 'true');
    assert.ok(note.querySelector('strong'), 'the note is rendered as Markdown');
    assert.equal(note.querySelector('script'), null, 'and sanitized: no script');
    assert.equal(note.querySelector('[onerror]'), null, 'no handler attributes');
  });

  it('keeps the marker across a reload from saved state, and from a full replay', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(SUMMARIZED) });
    const saved = panel.savedState();
    panel.close();

    panel = openPanel(saved);
    const restored = panel.document.querySelector('.summary-marker');
    assert.ok(restored, 'restored from the saved state');
    assert.equal((restored.nextElementSibling as HTMLElement).dataset.turnId, '6');
    panel.close();

    // A panel with nothing saved gets the replay; a summary whose turn is older than the replay goes on top.
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered([...turn('late'), { type: 'history_summarized', note: 'Older.', firstKeptSeq: 1 }], 40) });
    const top = panel.document.querySelector('.summary-marker')!;
    assert.ok(top);
    assert.equal((top.nextElementSibling as HTMLElement).dataset.turnId, '40');
  });

  it('offers "Review implementation" only after a hand-off; a click posts review, shows progress like a turn, and an error ends it', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(turn('plan')) });
    const button = panel.document.querySelector<HTMLButtonElement>('.review-button')!;
    assert.equal(button.hidden, true, 'hidden before any hand-off');
    panel.receive({ type: 'events', events: numbered([{ type: 'task_handed_off', target: 'chat', commit: 'abc' }], 3) });
    assert.equal(button.hidden, false);
    assert.equal(button.getAttribute('aria-label'), 'Review implementation', 'named for screen readers when only the icon shows');
    assert.ok(button.title, 'with a tooltip');
    assert.ok(button.querySelector('.codicon-checklist'));

    click(panel, button);
    assert.deepEqual(panel.posted.at(-1), { type: 'review' });
    assert.equal(button.disabled, true);
    assert.match(panel.document.querySelector('.review-progress')?.textContent ?? '', /Reviewing the implementation/);
    panel.receive({ type: 'notice', level: 'error', message: 'The review needs git_diff, which this folder\'s policy denies.' });
    assert.equal(panel.document.querySelector('.review-progress'), null);
    assert.equal(button.disabled, false);
    assert.match(panel.document.querySelector('.banner-region')?.textContent ?? '', /git_diff/);

    click(panel, button);
    panel.receive({ type: 'events', events: numbered([{ type: 'review', review: REVIEW }], 4) });
    assert.equal(panel.document.querySelector('.review-progress'), null, 'the review event ends the progress');
    assert.deepEqual(
      Array.from(panel.document.querySelectorAll('.review-item'), (item) => item.getAttribute('data-status')),
      ['met', 'not met'],
    );

    // The button survives a reload (saved state) and a replay alike.
    const saved = panel.savedState();
    panel.close();
    panel = openPanel(saved);
    assert.equal(panel.document.querySelector<HTMLButtonElement>('.review-button')!.hidden, false);
  });

  it('hands a review back as a follow-up draft on the editable card: not met items with their evidence and the unasked changes in the intent, the original constraints kept; nothing is sent until Hand off', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered([...turn('plan'), { type: 'task_handed_off', target: 'chat' }, { type: 'review', review: REVIEW }]) });
    const posted = panel.posted.length;
    click(panel, panel.document.querySelector('[data-action="review-follow-up"]'));
    const intent = panel.document.querySelector<HTMLTextAreaElement>('#task-intent')!;
    assert.ok(intent, 'the task card shows the follow-up');
    assert.match(intent.value, /Not met:\n- answer stays 42\. \(src\/app\.ts:1\) — answer became 43\./);
    assert.match(intent.value, /Not asked for:\n- Adds a README line\. \(README\.md:1\)/);
    assert.doesNotMatch(intent.value, /greet keeps its signature\. \(/, 'a met constraint is not listed as a fix');
    const constraints = Array.from(panel.document.querySelectorAll<HTMLTextAreaElement>('.constraint-input'), (field) => field.value);
    assert.deepEqual(constraints, ['greet keeps its signature.', 'answer stays 42.']);
    assert.equal(panel.posted.length, posted, 'drafting the follow-up sends nothing');

    intent.value = 'Set answer back to 42.';
    click(panel, panel.document.querySelector('[data-action="hand-off"]'));
    const handOff = panel.posted.at(-1) as { type: string; task: { intent: string; constraints: string[] } };
    assert.equal(handOff.type, 'handOff');
    assert.deepEqual(handOff.task, { intent: 'Set answer back to 42.', constraints: ['greet keeps its signature.', 'answer stays 42.'] }, 'the user\'s edit is what goes');
  });

  it('offers no follow-up when the review found everything met and nothing unasked', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    const clean = { ...REVIEW, items: [REVIEW.items[0]], unrequested: [] };
    panel.receive({ type: 'events', events: numbered([...turn('plan'), { type: 'task_handed_off', target: 'chat' }, { type: 'review', review: clean }]) });
    assert.ok(panel.document.querySelector('.review-item'));
    assert.equal(panel.document.querySelector('[data-action="review-follow-up"]'), null);
  });
});

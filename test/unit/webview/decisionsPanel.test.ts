import assert from 'node:assert/strict';
import type { DiscussionEventBody } from '../../../shared/protocol';
import { ATTACHED, buildWebviewBundle, click, numbered, openPanel, type Panel } from '../../support/webviewPanel';

/** The panel's summary marker, review button and follow-up task, in jsdom with the real bundle. */

function turn(text: string): DiscussionEventBody[] {
  return [{ type: 'user_message', text }, { type: 'assistant_message', text: `About ${text}.` }, { type: 'turn_complete' }];
}

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
});

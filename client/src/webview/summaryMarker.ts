/**
 * The line that marks where the summarized part of a discussion ends:
 * "Earlier turns summarized — show". The note is the model's text, so it
 * reaches the DOM only through the sanitizing Markdown renderer, like a reply.
 */
import { element } from './dom';
import type { Panel } from './panel';

export function renderSummaryMarker(panel: Panel): void {
  const { model, conversation, renderer, emptyState } = panel;
  const previous = conversation.querySelector<HTMLElement>('.summary-marker');
  // A new note must not fold what the user opened.
  const wasShown = previous?.querySelector('[data-action="toggle-summary"]')?.getAttribute('aria-expanded') === 'true';
  previous?.remove();
  const summary = model.state.summary;
  if (!summary) return;
  const note = element('div', { id: 'summary-note', class: 'summary-note markdown-body' });
  note.innerHTML = renderer.render(summary.note);
  note.hidden = !wasShown;
  const toggle = element(
    'button',
    { type: 'button', class: 'link-button', 'data-action': 'toggle-summary', 'aria-expanded': String(wasShown), 'aria-controls': 'summary-note' },
    [wasShown ? 'hide' : 'show'],
  );
  const marker = element('div', { class: 'summary-marker', role: 'note' }, [
    element('div', { class: 'summary-marker-line' }, [element('span', {}, ['Earlier turns summarized — ']), toggle]),
    note,
  ]);
  // Before the first turn still sent whole; at the top when that turn is older than the panel holds.
  const before = summary.beforeTurn === null ? null : conversation.querySelector(`[data-turn-id="${summary.beforeTurn}"]`);
  if (before) conversation.insertBefore(marker, before);
  else emptyState.after(marker);
}

/** "show" / "hide" on the marker. */
export function toggleSummary({ conversation }: Panel, button: HTMLElement): void {
  const note = conversation.querySelector<HTMLElement>('.summary-note');
  if (!note) return;
  const show = note.hidden;
  note.hidden = !show;
  button.setAttribute('aria-expanded', String(show));
  button.textContent = show ? 'hide' : 'show';
}

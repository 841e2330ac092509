/**
 * The decision log and the latest review, under the conversation: what was
 * agreed, rejected, left open or settled, and how an implementation fared
 * against the hand-off. Every string here came from the model or the
 * repository, so it reaches the DOM only as textContent, made inert.
 */
import type { Decision, DecisionKind, Review, ReviewStatus } from '../../../shared/protocol';
import { evidenceLabel } from '../../../shared/evidenceLabel';
import { inertLine, inertText } from '../../../shared/printablePath';
import { followUpTask } from '../../../shared/reviewFollowUp';
import { element, icon, iconButton } from './dom';
import type { Panel } from './panel';

const KIND_HEADINGS: Record<DecisionKind, string> = {
  constraint: 'Constraints',
  rejected: 'Rejected alternatives',
  question: 'Open questions',
  resolved: 'Resolved',
};

const STATUS_LABELS: Record<ReviewStatus, { label: string; icon: string }> = {
  met: { label: 'Met', icon: 'pass' },
  'not met': { label: 'Not met', icon: 'error' },
  'cannot tell': { label: 'Cannot tell', icon: 'question' },
};

export function renderDecisions({ model, decisionsRegion, reviewing }: Panel): void {
  const { decisions, review } = model.state;
  // Kept open across re-renders: a new entry must not fold what the user opened.
  const wasOpen = decisionsRegion.querySelector<HTMLDetailsElement>('details.decisions')?.open ?? false;
  decisionsRegion.replaceChildren();
  if (decisions.length > 0) decisionsRegion.append(decisionSection(decisions, wasOpen));
  // Shown like a turn's status while the one read-only review request runs.
  if (reviewing) {
    decisionsRegion.append(
      element('div', { class: 'review-progress turn-status', role: 'status' }, [
        icon('loading', 'codicon-modifier-spin'),
        element('span', {}, ['Reviewing the implementation against the task…']),
      ]),
    );
  }
  if (review) decisionsRegion.append(reviewSection(review));
}

function decisionSection(decisions: readonly Decision[], open: boolean): HTMLElement {
  const details = element('details', { class: 'decisions' }) as HTMLDetailsElement;
  details.open = open;
  details.append(element('summary', { class: 'decisions-summary' }, [icon('law'), element('span', {}, [`Decisions (${decisions.length})`])]));
  for (const kind of ['constraint', 'rejected', 'question', 'resolved'] as const) {
    const entries = decisions.filter((decision) => decision.kind === kind);
    if (entries.length === 0) continue;
    details.append(
      element('section', { class: 'decision-group', 'data-kind': kind }, [
        element('h3', { class: 'decision-heading' }, [KIND_HEADINGS[kind]]),
        element('ul', { class: 'decision-list' }, entries.map(decisionItem)),
      ]),
    );
  }
  return details;
}

function decisionItem(decision: Decision): HTMLElement {
  const id = inertLine(decision.id);
  const item = element('li', { class: 'decision', 'data-decision-id': id }, [
    element('span', { class: 'decision-text' }, [inertText(decision.text)]),
  ]);
  if (decision.evidence.length > 0) {
    item.append(element('span', { class: 'decision-evidence' }, [decision.evidence.map(evidenceLabel).join(', ')]));
  }
  item.append(
    element('span', { class: 'decision-actions' }, [
      iconButton('edit', `Edit decision ${id}`, { 'data-action': 'edit-decision', 'data-id': id }),
      iconButton('trash', `Delete decision ${id}`, { 'data-action': 'delete-decision', 'data-id': id }),
    ]),
  );
  return item;
}

/** Turns an entry into a text field with Save, for `edit-decision`. */
export function startEditingDecision({ decisionsRegion, model }: Panel, id: string): void {
  const decision = model.state.decisions.find((entry) => entry.id === id);
  const item = Array.from(decisionsRegion.querySelectorAll<HTMLElement>('[data-decision-id]')).find((node) => node.dataset.decisionId === id);
  if (!decision || !item) return;
  const field = element('textarea', { class: 'decision-input', rows: '2', 'aria-label': `Decision ${inertLine(id)}`, 'data-decision-field': inertLine(id) }) as HTMLTextAreaElement;
  field.value = decision.text;
  item.replaceChildren(
    field,
    element('span', { class: 'decision-actions' }, [
      element('button', { type: 'button', class: 'button primary', 'data-action': 'save-decision', 'data-id': inertLine(id) }, ['Save']),
    ]),
  );
  field.focus();
}

/** The edited text of entry `id`, while it is being edited. */
export function editedDecisionText({ decisionsRegion }: Panel, id: string): string | undefined {
  const field = Array.from(decisionsRegion.querySelectorAll<HTMLTextAreaElement>('[data-decision-field]')).find((node) => node.dataset.decisionField === id);
  return field?.value;
}

function reviewSection(review: Review): HTMLElement {
  const items = review.items.map((item) => {
    const status = STATUS_LABELS[item.status] ?? STATUS_LABELS['cannot tell'];
    const row = element('li', { class: 'review-item', 'data-status': status.label.toLowerCase() }, [
      icon(status.icon),
      element('span', { class: 'review-status' }, [status.label]),
      element('span', { class: 'review-constraint' }, [inertText(item.constraint)]),
    ]);
    if (item.evidence.length > 0) row.append(element('span', { class: 'review-evidence' }, [item.evidence.map(inertLine).join(', ')]));
    if (item.note) row.append(element('span', { class: 'review-note' }, [inertText(item.note)]));
    if (item.droppedEvidence) row.append(droppedMark(item.droppedEvidence));
    return row;
  });
  const section = element('section', { class: 'review', 'aria-labelledby': 'review-title' }, [
    element('h2', { id: 'review-title', class: 'review-title' }, ['Review against the task']),
    element('p', { class: 'review-compared' }, [inertLine(review.compared)]),
    element('ul', { class: 'review-items' }, items),
  ]);
  if (review.unrequested.length > 0) {
    section.append(
      element('h3', { class: 'review-heading' }, ['Changes the task did not ask for']),
      element(
        'ul',
        { class: 'review-unrequested' },
        review.unrequested.map((change) =>
          element('li', {}, [
            element('span', {}, [inertText(change.text)]),
            ...(change.evidence.length > 0 ? [element('span', { class: 'review-evidence' }, [change.evidence.map(inertLine).join(', ')])] : []),
            ...(change.droppedEvidence ? [droppedMark(change.droppedEvidence)] : []),
          ]),
        ),
      ),
    );
  }
  if (followUpTask(review)) {
    section.append(
      element('div', { class: 'review-actions' }, [
        element('button', { type: 'button', class: 'button secondary', 'data-action': 'review-follow-up' }, [
          icon('reply'),
          element('span', {}, ['Hand back as follow-up task']),
        ]),
      ]),
    );
  }
  return section;
}

/** Cited places the server found missing from the diff: said, never shown (they may point anywhere). */
function droppedMark(count: number): HTMLElement {
  const places = count === 1 ? '1 cited place' : `${count} cited places`;
  return element('span', { class: 'review-dropped', title: 'The model cited places the diff does not show; they were left out.' }, [
    `(${places} not in the diff left out)`,
  ]);
}

import type { PreparedTask, Review } from './protocol';

/** The server's bound on a task's intent (TASK_LIMITS.intentChars), with room for the user's edits. */
const INTENT_CHARS = 7_000;

/**
 * The follow-up task a review hands back to the coding agent: fix each
 * constraint the review found `not met` (with the diff's `path:line`
 * evidence) and the changes nobody asked for, under the original
 * constraints. Only a draft: it goes to the editable task card like any
 * prepared task, and nothing starts until the user hands it off.
 * Undefined when the review found nothing to fix.
 */
export function followUpTask(review: Review): PreparedTask | undefined {
  const unmet = review.items.filter((item) => item.status === 'not met');
  if (unmet.length === 0 && review.unrequested.length === 0) return undefined;
  const lines = [
    `Follow-up to the task "${review.intent}": a review of the implementation (${review.compared}) found it incomplete.`,
    unmet.length && review.unrequested.length
      ? 'Fix each constraint it found not met, and undo (or justify to the user) each change the task did not ask for.'
      : unmet.length
        ? 'Fix each constraint it found not met.'
        : 'Undo (or justify to the user) each change the task did not ask for.',
  ];
  if (unmet.length) {
    lines.push('', 'Not met:');
    for (const item of unmet) lines.push(`- ${item.constraint}${evidence(item.evidence)}${item.note ? ` — ${item.note}` : ''}`);
  }
  if (review.unrequested.length) {
    lines.push('', 'Not asked for:');
    for (const change of review.unrequested) lines.push(`- ${change.text}${evidence(change.evidence)}`);
  }
  let intent = lines.join('\n');
  if (intent.length > INTENT_CHARS) intent = `${intent.slice(0, INTENT_CHARS)}\n[…cut: see the review in the discussion]`;
  return { intent, constraints: review.items.map((item) => item.constraint) };
}

function evidence(places: readonly string[]): string {
  return places.length ? ` (${places.join(', ')})` : '';
}

/** The prepared coding task's card: rendered from the model, and read back as the user edits it. */
import type { ConstraintSource, PreparedTask } from '../../../shared/protocol';
import { inertText, printablePath } from '../../../shared/printablePath';
import { element, icon, iconButton } from './dom';
import type { Panel } from './panel';

/** Which field of the card takes the focus after it is rebuilt. */
export type TaskFocus = { field: 'intent' } | { field: 'constraint'; index: number } | { field: 'add' };

export function renderTask({ model, taskRegion }: Panel, focus?: TaskFocus): void {
  const { task, handingOff } = model.state;
  taskRegion.replaceChildren();
  if (!task) return;

  const intent = element('textarea', {
    id: 'task-intent',
    class: 'task-intent',
    rows: '3',
    'data-task-field': 'intent',
  }) as HTMLTextAreaElement;
  intent.value = task.intent;

  const constraints = element('ol', { class: 'constraint-list' });
  task.constraints.forEach((text, index) => {
    const field = element('textarea', {
      class: 'constraint-input',
      rows: '1',
      'data-task-field': 'constraint',
      'data-index': String(index),
      'aria-label': `Constraint ${index + 1}`,
    }) as HTMLTextAreaElement;
    field.value = text;
    const item = element('li', { class: 'constraint' }, [
      field,
      iconButton('trash', `Remove constraint ${index + 1}`, { 'data-action': 'remove-constraint', 'data-index': String(index) }),
    ]);
    const stale = staleMark(sourceOf(task, text, index));
    if (stale) item.append(stale);
    constraints.append(item);
  });
  const questions = task.openQuestions?.length
    ? [
        element('div', { class: 'task-questions' }, [
          element('span', { class: 'task-label' }, ['Open questions']),
          element('ul', { class: 'task-question-list' }, task.openQuestions.map((question) => element('li', {}, [inertText(question)]))),
        ]),
      ]
    : [];

  const addButton = element('button', { type: 'button', class: 'button secondary', 'data-action': 'add-constraint' }, [
    icon('add'),
    element('span', {}, ['Add constraint']),
  ]);
  const card = element('section', { class: 'task-card', 'aria-labelledby': 'task-title' }, [
    element('div', { class: 'task-card-header' }, [
      icon('tasklist'),
      element('h2', { id: 'task-title', class: 'task-title' }, ['Prepared coding task']),
      iconButton('close', 'Discard the task', { 'data-action': 'discard-task' }),
    ]),
    element('label', { for: 'task-intent', class: 'task-label' }, ['Intent']),
    intent,
    element('fieldset', { class: 'task-constraints' }, [
      element('legend', { class: 'task-label' }, ['Constraints']),
      constraints,
      addButton,
    ]),
    ...questions,
    element('div', { class: 'task-actions' }, [
      element('span', { class: 'task-hint' }, ['Nothing runs until you hand it off.']),
      element('button', { type: 'button', class: 'button primary', 'data-action': 'hand-off' }, [
        icon(handingOff ? 'loading' : 'rocket', ...(handingOff ? ['codicon-modifier-spin'] : [])),
        element('span', {}, [handingOff ? 'Handing off…' : 'Hand off']),
      ]),
    ]),
  ]);
  if (handingOff) {
    // Frozen while the extension delivers it: what goes out is what was shown.
    card.setAttribute('aria-busy', 'true');
    for (const control of Array.from(card.querySelectorAll<HTMLButtonElement | HTMLTextAreaElement>('button, textarea'))) {
      control.disabled = true;
    }
  }
  taskRegion.append(card);

  if (focus?.field === 'intent') intent.focus();
  if (focus?.field === 'add') addButton.focus();
  if (focus?.field === 'constraint') {
    const target = constraints.querySelectorAll<HTMLTextAreaElement>('textarea')[focus.index];
    (target ?? addButton).focus();
  }
}

/** The task as the card shows it now (the card is the source of truth while editing). */
export function readTaskFromCard({ model, taskRegion }: Panel): PreparedTask | null {
  const intent = taskRegion.querySelector<HTMLTextAreaElement>('[data-task-field="intent"]');
  if (!intent) return model.state.task;
  const constraints = Array.from(taskRegion.querySelectorAll<HTMLTextAreaElement>('[data-task-field="constraint"]'), (field) => field.value);
  const task: PreparedTask = { intent: intent.value, constraints };
  // The evidence and open questions go out with the edited task: without them
  // the hand-off text lost every constraint's `path:line` once the card was read.
  const shown = model.state.task;
  if (shown?.constraintSources) {
    // A constraint the user wrote or reworded has no source: it claims neither evidence nor the distillation.
    const sources = constraints.flatMap((text, index) => sourceOf(shown, text, index) ?? []);
    if (sources.length > 0) task.constraintSources = sources;
  }
  if (shown?.openQuestions?.length) task.openQuestions = [...shown.openQuestions];
  return task;
}

/**
 * The source of the constraint at `index`: the one in the same place when the
 * text still matches, else one with the same text (the user removed or added
 * a constraint before it). A reworded constraint no longer claims its source.
 */
function sourceOf(task: PreparedTask, text: string, index: number): ConstraintSource | undefined {
  const sources = task.constraintSources;
  if (!sources) return undefined;
  if (sources[index]?.text === text) return sources[index];
  return sources.find((source) => source.text === text);
}

/** Says that the code a constraint cites changed since it was agreed, with the changed places. */
function staleMark(source: ConstraintSource | undefined): HTMLElement | undefined {
  if (!source?.stale?.length) return undefined;
  const places = source.stale.map((stale) => (stale.line ? `${printablePath(stale.path)}:${stale.line}` : printablePath(stale.path)));
  const mark = element('div', { class: 'constraint-stale', role: 'note' }, [
    icon('warning'),
    element('span', {}, [`The code it cites changed since it was agreed: ${places.join(', ')}`]),
  ]);
  mark.title = source.stale.map((stale) => inertText(stale.diff)).join('\n');
  return mark;
}

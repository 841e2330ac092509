/** The prepared coding task's card: rendered from the model, and read back as the user edits it. */
import type { PreparedTask } from '../../../shared/protocol';
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
    constraints.append(
      element('li', { class: 'constraint' }, [
        field,
        iconButton('trash', `Remove constraint ${index + 1}`, { 'data-action': 'remove-constraint', 'data-index': String(index) }),
      ]),
    );
  });

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
  return { intent: intent.value, constraints };
}

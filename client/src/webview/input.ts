/** User input, all by delegation on the root: send, cancel, links, code actions, banner and task-card buttons. */
import { applyChanges } from './messages';
import { CODE_ACTION_ATTRIBUTE } from './markdown';
import { announce, type Panel } from './panel';
import { scheduleSave } from './panelState';
import { setPreparing } from './panelView';
import { readTaskFromCard, renderTask } from './taskCard';
import type { FixCommand } from './viewModel';

export function handleInput(panel: Panel): void {
  const { vscode, model, app, conversation, composer, input, promoteButton } = panel;

  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    if (model.state.answering) cancelReply(panel);
    else sendDraft(panel);
  });

  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing) {
      event.preventDefault();
      if (!model.state.answering) sendDraft(panel);
    } else if (event.key === 'Escape' && model.state.answering) {
      event.preventDefault();
      cancelReply(panel);
    }
  });

  input.addEventListener('input', () => scheduleSave(panel));

  app.addEventListener('input', (event) => {
    const target = event.target;
    if (target instanceof HTMLTextAreaElement && target.dataset.taskField) {
      target.removeAttribute('aria-invalid');
      const task = readTaskFromCard(panel);
      if (task) model.editTask(task);
      scheduleSave(panel);
    }
  });

  app.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;

    const link = target.closest('a');
    if (link && conversation.contains(link)) {
      // Nothing navigates inside the webview; the extension opens what is worth opening.
      event.preventDefault();
      openLink(panel, link);
      return;
    }

    const codeButton = target.closest<HTMLElement>(`[${CODE_ACTION_ATTRIBUTE}]`);
    if (codeButton) {
      handleCodeAction(panel, codeButton);
      return;
    }

    const actionElement = target.closest<HTMLElement>('[data-action]');
    if (!actionElement || (actionElement instanceof HTMLButtonElement && actionElement.disabled)) return;
    switch (actionElement.dataset.action) {
      case 'send':
      case 'cancel':
        // The submit handler covers these.
        return;
      case 'promote':
        setPreparing(panel, true);
        vscode.postMessage({ type: 'promote' });
        announce(panel, 'Preparing the coding task');
        return;
      case 'new-discussion':
        vscode.postMessage({ type: 'newDiscussion' });
        return;
      case 'run-command': {
        const command = actionElement.dataset.command as FixCommand | undefined;
        if (command) vscode.postMessage({ type: 'runCommand', command });
        return;
      }
      case 'dismiss-banner':
        applyChanges(panel, model.dismissBanner());
        scheduleSave(panel);
        input.focus();
        return;
      case 'discard-task':
        applyChanges(panel, model.discardTask());
        scheduleSave(panel);
        promoteButton.focus();
        return;
      case 'add-constraint': {
        const task = readTaskFromCard(panel);
        if (!task) return;
        model.editTask({ intent: task.intent, constraints: [...task.constraints, ''] });
        renderTask(panel, { field: 'constraint', index: task.constraints.length });
        scheduleSave(panel);
        return;
      }
      case 'remove-constraint': {
        const task = readTaskFromCard(panel);
        const index = Number(actionElement.dataset.index);
        if (!task || !Number.isInteger(index)) return;
        const constraints = task.constraints.filter((_, i) => i !== index);
        model.editTask({ intent: task.intent, constraints });
        renderTask(panel, constraints.length > 0 ? { field: 'constraint', index: Math.min(index, constraints.length - 1) } : { field: 'add' });
        scheduleSave(panel);
        return;
      }
      case 'hand-off':
        handOff(panel);
        return;
    }
  });
}

function sendDraft(panel: Panel): void {
  const { vscode, model, input } = panel;
  const text = input.value;
  if (!text.trim() || model.state.detached !== null) return;
  vscode.postMessage({ type: 'send', text });
  panel.unconfirmedSend = text;
  input.value = '';
  scheduleSave(panel);
  dismissErrorBanner(panel);
}

function cancelReply(panel: Panel): void {
  panel.vscode.postMessage({ type: 'cancel' });
  announce(panel, 'Stopping the reply');
}

function handOff(panel: Panel): void {
  const { vscode, model, taskRegion } = panel;
  const task = readTaskFromCard(panel);
  if (!task) return;
  const intent = task.intent.trim();
  if (!intent) {
    const field = taskRegion.querySelector<HTMLTextAreaElement>('[data-task-field="intent"]');
    field?.setAttribute('aria-invalid', 'true');
    field?.focus();
    announce(panel, 'The intent is empty: say what should change before handing off');
    return;
  }
  const constraints = task.constraints.map((c) => c.trim()).filter(Boolean);
  applyChanges(panel, model.startHandOff({ intent, constraints }));
  scheduleSave(panel);
  vscode.postMessage({ type: 'handOff', requestId: model.handOffRequestId, task: { intent, constraints } });
  announce(panel, 'Handing off the task');
}

function openLink({ vscode }: Panel, link: HTMLAnchorElement): void {
  const path = link.dataset.path;
  if (path) {
    const line = Number(link.dataset.line);
    vscode.postMessage(Number.isInteger(line) && line > 0 ? { type: 'openFile', path, line } : { type: 'openFile', path });
    return;
  }
  const href = link.getAttribute('href') ?? '';
  if (/^https?:\/\//i.test(href)) vscode.postMessage({ type: 'openExternal', url: href });
}

function handleCodeAction(panel: Panel, button: HTMLElement): void {
  const code = button.closest('.code-block')?.querySelector('pre code')?.textContent ?? '';
  if (button.getAttribute(CODE_ACTION_ATTRIBUTE) === 'insert') {
    panel.vscode.postMessage({ type: 'insertCode', code });
    return;
  }
  void copyText(code).then((copied) => {
    announce(panel, copied ? 'Code copied' : 'Could not copy the code');
    button.classList.toggle('is-done', copied);
    setTimeout(() => button.classList.remove('is-done'), 1500);
  });
}

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function dismissErrorBanner(panel: Panel): void {
  if (panel.model.state.banner?.level === 'error') applyChanges(panel, panel.model.dismissBanner());
}

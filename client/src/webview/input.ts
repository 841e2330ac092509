/** User input, all by delegation on the root: send, cancel, links, code actions, banner and task-card buttons. */
import { attachmentsToSend, clearPendingAttachments, removePendingAttachment, renderPendingAttachments } from './attachmentChips';
import { chooseMention, closeMention, handleMentionKey, updateMention } from './mentions';
import { applyChanges } from './messages';
import { CODE_ACTION_ATTRIBUTE } from './markdown';
import { announce, type Panel } from './panel';
import { scheduleSave } from './panelState';
import { setPreparing, setReviewing } from './panelView';
import { editedDecisionText, startEditingDecision } from './decisions';
import { toggleSummary } from './summaryMarker';
import { followUpTask } from '../../../shared/reviewFollowUp';
import { readTaskFromCard, renderTask } from './taskCard';
import type { FixCommand } from './viewModel';
import type { PreparedTask } from '../../../shared/protocol';

export function handleInput(panel: Panel): void {
  const { vscode, model, app, conversation, composer, input, promoteButton } = panel;

  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    if (model.state.answering) cancelReply(panel);
    else sendDraft(panel);
  });

  input.addEventListener('keydown', (event) => {
    if (handleMentionKey(panel, event)) return;
    if (event.key === 'ArrowUp' && input.value === '' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey) {
      const last = lastQuestion(panel);
      if (last !== undefined) {
        event.preventDefault();
        input.value = last;
        input.setSelectionRange(last.length, last.length);
        scheduleSave(panel);
      }
      return;
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing) {
      event.preventDefault();
      if (!model.state.answering) sendDraft(panel);
    } else if (event.key === 'Escape' && model.state.answering) {
      event.preventDefault();
      cancelReply(panel);
    }
  });

  input.addEventListener('input', () => {
    updateMention(panel);
    scheduleSave(panel);
  });
  // The caret moved away from an `@query` (a click, Home): the list follows it.
  input.addEventListener('click', () => updateMention(panel));
  input.addEventListener('blur', () => {
    // Late enough for a click on an option to land first.
    setTimeout(() => {
      if (panel.input.ownerDocument.activeElement !== panel.input) closeMention(panel);
    }, 150);
  });

  // Escape stops a reply from anywhere in the panel, not only the input.
  app.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && event.target !== input && model.state.answering && !event.defaultPrevented) {
      event.preventDefault();
      cancelReply(panel);
    }
  });

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
      case 'choose-mention':
        chooseMention(panel, Number(actionElement.dataset.index));
        return;
      case 'drop-active-file':
        panel.activeFileDropped = true;
        renderPendingAttachments(panel);
        announce(panel, 'The current file will not be attached to this message');
        input.focus();
        return;
      case 'remove-attachment':
        removePendingAttachment(panel, Number(actionElement.dataset.index));
        input.focus();
        return;
      case 'promote':
        setPreparing(panel, true);
        vscode.postMessage({ type: 'promote' });
        announce(panel, 'Preparing the coding task');
        return;
      case 'review':
        setReviewing(panel, true);
        vscode.postMessage({ type: 'review' });
        announce(panel, 'Reviewing the implementation against the task');
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
      case 'edit-decision': {
        const id = actionElement.dataset.id;
        if (id) startEditingDecision(panel, id);
        return;
      }
      case 'save-decision': {
        const id = actionElement.dataset.id;
        const text = id ? editedDecisionText(panel, id) : undefined;
        // The log redraws from the server's decision_recorded event, not from here.
        if (id && text !== undefined && text.trim()) vscode.postMessage({ type: 'editDecision', id, text });
        return;
      }
      case 'review-follow-up': {
        // A draft on the editable card: nothing goes anywhere until the user presses Hand off.
        const task = model.state.review ? followUpTask(model.state.review) : undefined;
        if (!task) return;
        applyChanges(panel, model.offerTask(task));
        scheduleSave(panel);
        panel.taskRegion.querySelector<HTMLElement>('textarea, input')?.focus();
        return;
      }
      case 'toggle-summary':
        toggleSummary(panel, actionElement);
        return;
      case 'delete-decision': {
        const id = actionElement.dataset.id;
        if (id) vscode.postMessage({ type: 'deleteDecision', id });
        return;
      }
    }
  });
}

function sendDraft(panel: Panel): void {
  const { vscode, model, input } = panel;
  const text = input.value;
  if (!text.trim() || model.state.detached !== null) return;
  const attachments = attachmentsToSend(panel);
  vscode.postMessage(attachments.length > 0 ? { type: 'send', text, attachments } : { type: 'send', text });
  panel.unconfirmedSend = text;
  panel.unconfirmedAttachments = [...panel.pendingAttachments];
  input.value = '';
  closeMention(panel);
  clearPendingAttachments(panel);
  scheduleSave(panel);
  dismissErrorBanner(panel);
  // The send button took the focus on a click: the next question starts in the input.
  input.focus();
}

function cancelReply(panel: Panel): void {
  panel.vscode.postMessage({ type: 'cancel' });
  announce(panel, 'Stopping the reply');
  panel.input.focus();
}

/** The text of the newest question in the conversation, for Up in an empty input. */
function lastQuestion({ model }: Panel): string | undefined {
  const turns = model.state.turns;
  for (let i = turns.length - 1; i >= 0; i--) {
    const user = turns[i].user;
    if (user) return user.text;
  }
  return undefined;
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
  // Each constraint's `path:line` evidence and the open questions go with it: the hand-off text carries them.
  const constraintSources = task.constraintSources?.filter((source) => constraints.includes(source.text));
  const handed: PreparedTask = {
    intent,
    constraints,
    ...(constraintSources?.length ? { constraintSources } : {}),
    ...(task.openQuestions?.length ? { openQuestions: task.openQuestions } : {}),
  };
  applyChanges(panel, model.startHandOff(handed));
  scheduleSave(panel);
  vscode.postMessage({ type: 'handOff', requestId: model.handOffRequestId, task: handed });
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

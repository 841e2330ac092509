/** Whole-panel rendering: everything from the model at once, the header, and the composer's controls. */
import { inertLine } from '../../../shared/printablePath';
import { renderBanner } from './banner';
import { icon } from './dom';
import type { Panel } from './panel';
import { renderDecisions } from './decisions';
import { renderSummaryMarker } from './summaryMarker';
import { renderTask } from './taskCard';
import { addTurnView, formatCount } from './turnView';
import { discussionUsage } from './viewModel';

export function renderEverything(panel: Panel): void {
  const { model, conversation, emptyState, pendingReplies, turnViews } = panel;
  pendingReplies.clear();
  turnViews.clear();
  panel.liveReply = null;
  conversation.replaceChildren(emptyState);
  for (const turn of model.state.turns) addTurnView(panel, turn);
  renderSummaryMarker(panel);
  renderHeader(panel);
  renderBanner(panel);
  renderDecisions(panel);
  renderTask(panel);
  renderControls(panel);
}

export function renderHeader({ model, repoLabel, modelLabel }: Panel): void {
  const { repo, model: modelId, detached } = model.state;
  repoLabel.textContent = repo ? inertLine(baseName(repo)) : 'Repo Discuss';
  repoLabel.title = inertLine(repo ?? '');
  const total = discussionUsage(model.state.turns);
  const spent = total ? ` · ${formatCount(total.promptTokens + total.completionTokens)} tokens` : '';
  modelLabel.textContent = detached ? 'not connected' : `${modelId ?? ''}${spent}`;
  modelLabel.title = [
    modelId ? `Model: ${modelId}` : '',
    total ? `This discussion: ${formatCount(total.promptTokens)} tokens in, ${formatCount(total.completionTokens)} out` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

export function renderControls(panel: Panel): void {
  const { model, emptyState, sendButton, input, promoteButton, preparingTask } = panel;
  const { answering, detached, turns, task } = model.state;
  const connected = detached === null;
  emptyState.hidden = turns.length > 0;

  sendButton.replaceChildren(icon(answering ? 'debug-stop' : 'send'));
  sendButton.setAttribute('aria-label', answering ? 'Stop the reply' : 'Send');
  sendButton.title = answering ? 'Stop the reply (Escape)' : 'Send (Enter)';
  sendButton.dataset.action = answering ? 'cancel' : 'send';
  sendButton.classList.toggle('is-stop', answering);
  sendButton.disabled = !connected;
  input.disabled = !connected;

  promoteButton.disabled = !connected || answering || preparingTask || turns.length === 0;
  promoteButton.title = answering
    ? 'Wait for the reply to finish'
    : turns.length === 0
      ? 'Discuss the change first'
      : 'Distill the discussion into a coding task you can edit';
  const promoteLabel = preparingTask ? 'Preparing…' : task ? 'Prepare again' : 'Prepare coding task';
  promoteButton.querySelector('.button-label')!.textContent = promoteLabel;
  // At sidebar widths the label is hidden (chat.css): the name stays.
  promoteButton.setAttribute('aria-label', promoteLabel);
  promoteButton.classList.toggle('is-busy', preparingTask);
  renderReviewButton(panel, connected);
}

/** Shown once a task was handed off; at sidebar widths only its icon, with the name kept for screen readers. */
function renderReviewButton({ model, reviewButton, reviewing, preparingTask }: Panel, connected: boolean): void {
  const { handedOff, answering } = model.state;
  reviewButton.hidden = !handedOff;
  reviewButton.disabled = !connected || answering || preparingTask || reviewing;
  const label = reviewing ? 'Reviewing…' : 'Review implementation';
  reviewButton.querySelector('.button-label')!.textContent = label;
  reviewButton.setAttribute('aria-label', label);
  reviewButton.title = answering
    ? 'Wait for the reply to finish'
    : 'Check what changed since the hand-off against the task and each constraint (read-only)';
  reviewButton.classList.toggle('is-busy', reviewing);
}

export function setReviewing(panel: Panel, reviewing: boolean): void {
  if (panel.reviewing === reviewing) return;
  panel.reviewing = reviewing;
  renderControls(panel);
  renderDecisions(panel);
}

export function setPreparing(panel: Panel, preparing: boolean): void {
  if (panel.preparingTask === preparing) return;
  panel.preparingTask = preparing;
  renderControls(panel);
}

function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

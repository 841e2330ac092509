/** Messages from the extension: each is applied to the model, and the model's changes to the DOM. */
import type { Attachment, ExtensionToWebview } from '../../../shared/protocol';
import { addPendingAttachment, setActiveFile } from './attachmentChips';
import { receiveFiles, receiveSymbols } from './mentions';
import { renderBanner } from './banner';
import { announce, isNearBottom, scrollToBottom, type Panel, type TurnView } from './panel';
import { scheduleSave } from './panelState';
import { renderControls, renderEverything, renderHeader, setPreparing, setReviewing } from './panelView';
import { queueReply } from './replyStream';
import { renderDecisions } from './decisions';
import { renderSummaryMarker } from './summaryMarker';
import { renderTask } from './taskCard';
import { addTurnView, renderTurnMeta, showReasoning } from './turnView';
import type { Turn, ViewChange } from './viewModel';

export function receiveMessages(panel: Panel): void {
  const { renderer, model, input } = panel;
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    const message = event.data as ExtensionToWebview | null;
    if (!message || typeof message !== 'object' || typeof message.type !== 'string') return;

    // The composer's own messages: nothing in the conversation changes.
    if (message.type === 'filesResult') return receiveFiles(panel, message);
    if (message.type === 'symbolsResult') return receiveSymbols(panel, message);
    if (message.type === 'activeEditor') return setActiveFile(panel, isAttachment(message.attachment) ? message.attachment : null);
    if (message.type === 'addAttachment') {
      if (isAttachment(message.attachment)) addPendingAttachment(panel, message.attachment);
      input.focus();
      return;
    }

    if (message.type === 'attached') renderer.setRepoRoot(message.repo);
    if (
      message.type === 'notice' ||
      message.type === 'detached' ||
      message.type === 'attached' ||
      message.type === 'handOffResult'
    ) {
      setPreparing(panel, false);
      // A review is answered by its event or, on failure, by an error notice.
      if (message.type !== 'notice' || message.level === 'error') setReviewing(panel, false);
    }
    if (message.type === 'events' && message.events.some((e) => e.type === 'review')) setReviewing(panel, false);
    if (message.type === 'notice' && message.level === 'error' && panel.unconfirmedSend !== null && input.value === '') {
      // The send was refused (busy, too long): give the text back.
      input.value = panel.unconfirmedSend;
      panel.unconfirmedSend = null;
      for (const attachment of panel.unconfirmedAttachments.splice(0)) addPendingAttachment(panel, attachment);
    }
    if (message.type === 'events' && message.events.some((e) => e.type === 'user_message')) panel.unconfirmedSend = null;

    const pinned = isNearBottom(panel);
    applyChanges(panel, model.apply(message));
    if (pinned) scrollToBottom(panel);
    scheduleSave(panel);
  });
}

function isAttachment(value: unknown): value is Attachment {
  if (!value || typeof value !== 'object') return false;
  const a = value as Partial<Attachment>;
  return (a.kind === 'file' || a.kind === 'selection' || a.kind === 'symbol') && typeof a.path === 'string';
}

export function applyChanges(panel: Panel, changes: ViewChange[]): void {
  const { model, turnViews } = panel;
  for (const change of changes) {
    switch (change.kind) {
      case 'reset':
        renderEverything(panel);
        break;
      case 'resync':
        postReady(panel);
        break;
      case 'header':
        renderHeader(panel);
        renderControls(panel);
        break;
      case 'answering': {
        renderControls(panel);
        const view = latestTurnView(panel);
        if (view) renderTurnMeta(panel, view);
        announce(panel, model.state.answering ? 'Answering' : '');
        break;
      }
      case 'turnAdded':
        addTurnView(panel, findTurn(panel, change.turnId));
        renderControls(panel);
        break;
      case 'replyAppended': {
        queueReply(panel, change.turnId, false, change.text);
        // "Thinking…" turns into "Writing…" with the first text; later deltas
        // leave the status alone rather than rebuild it on every one.
        const view = turnViews.get(change.turnId);
        if (view && view.status.textContent?.endsWith('Thinking…')) renderTurnMeta(panel, view);
        break;
      }
      case 'replyReplaced':
        queueReply(panel, change.turnId, true);
        break;
      case 'reasoningAppended': {
        const view = turnViews.get(change.turnId);
        if (view) showReasoning(view);
        break;
      }
      case 'turnUpdated': {
        const view = turnViews.get(change.turnId);
        if (view) renderTurnMeta(panel, view);
        break;
      }
      case 'task':
        // A promote is answered by a task_prepared event (or a notice on failure).
        panel.preparingTask = false;
        renderTask(panel);
        renderControls(panel);
        if (model.state.task && !model.state.handingOff) announce(panel, 'Coding task ready to review');
        break;
      case 'decisions':
        renderDecisions(panel);
        break;
      case 'summary':
        renderSummaryMarker(panel);
        break;
      case 'banner':
        renderBanner(panel);
        break;
    }
  }
}

function latestTurnView({ model, turnViews }: Panel): TurnView | undefined {
  const turns = model.state.turns;
  const last = turns[turns.length - 1];
  return last ? turnViews.get(last.id) : undefined;
}

function findTurn({ model }: Panel, turnId: number): Turn {
  // New turns are at the end: look there first.
  const turns = model.state.turns;
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i].id === turnId) return turns[i];
  throw new Error(`No turn ${turnId}`);
}

/** Tells the extension what the panel already holds, so it replays only the rest. */
export function postReady({ model, vscode }: Panel): void {
  const { discussionId, lastSeq } = model.state;
  vscode.postMessage(discussionId ? { type: 'ready', discussionId, lastSeq } : { type: 'ready', lastSeq });
}

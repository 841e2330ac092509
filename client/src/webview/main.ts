/**
 * The chat panel's DOM: renders the conversation model, turns clicks and keys
 * into messages for the extension. Runs under a CSP without inline script or
 * style, so every handler is attached in script, by delegation on the root
 * (input.ts).
 *
 * Text from the model reaches the DOM only as sanitized Markdown HTML
 * (markdown.ts); everything else (user text, tool previews, errors) is set as
 * textContent.
 *
 * This module is the bootstrap: it builds the skeleton, creates the one Panel
 * context every other module works on, wires them, and posts `ready`.
 */
import { element, icon, iconButton } from './dom';
import { handleInput } from './input';
import { createMarkdownRenderer } from './markdown';
import { postReady, receiveMessages } from './messages';
import { announce, type Panel, type VsCodeApi } from './panel';
import { handleDrops } from './attachmentChips';
import { readSavedState, saveWhenHidden } from './panelState';
import { renderEverything } from './panelView';
import { ConversationModel } from './viewModel';

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const renderer = createMarkdownRenderer(window);
const saved = readSavedState(vscode.getState());
const model = ConversationModel.restore(saved?.conversation);
renderer.setRepoRoot(model.state.repo);

const app = document.getElementById('app') ?? document.body.appendChild(element('div', { id: 'app', class: 'app' }));
app.replaceChildren();

const header = element('header', { class: 'header' });
const repoLabel = element('span', { class: 'header-repo' });
const modelLabel = element('span', { class: 'header-model' });
header.append(
  element('div', { class: 'header-title' }, [icon('comment-discussion'), repoLabel, modelLabel]),
  element('div', { class: 'header-actions' }, [
    iconButton('add', 'New discussion', { 'data-action': 'new-discussion' }),
  ]),
);

const bannerRegion = element('div', { class: 'banner-region' });
const conversation = element('main', { class: 'conversation', role: 'log', 'aria-label': 'Conversation', tabindex: '0' });
const emptyState = element('div', { class: 'empty-state' }, [
  icon('comment-discussion', 'empty-state-icon'),
  element('p', {}, ['Ask about this repository. The assistant can read it, not change it.']),
  element('p', { class: 'empty-state-hint' }, ['When the change is clear, prepare a coding task and hand it off.']),
]);
const taskRegion = element('div', { class: 'task-region' });
const decisionsRegion = element('div', { class: 'decisions-region' });

const composer = element('form', { class: 'composer', 'aria-label': 'Message composer' });
const input = element('textarea', {
  id: 'message-input',
  class: 'composer-input',
  rows: '1',
  placeholder: 'Ask about this repository (@ to attach a file)',
  'aria-describedby': 'composer-hint',
  'aria-autocomplete': 'list',
  'aria-controls': 'mention-list',
  'aria-expanded': 'false',
}) as HTMLTextAreaElement;
const attachmentBar = element('ul', { class: 'attachment-chips composer-attachments', 'aria-label': 'Attachments for the next message' });
attachmentBar.hidden = true;
const mentionList = element('ul', { id: 'mention-list', class: 'mention-list', role: 'listbox', 'aria-label': 'Files to attach' });
mentionList.hidden = true;
const promoteButton = element('button', { type: 'button', class: 'button secondary promote-button', 'data-action': 'promote', 'aria-label': 'Prepare coding task' }, [
  icon('tasklist'),
  element('span', { class: 'button-label' }, ['Prepare coding task']),
]) as HTMLButtonElement;
const reviewButton = element('button', { type: 'button', class: 'button secondary review-button', 'data-action': 'review', 'aria-label': 'Review implementation' }, [
  icon('checklist'),
  element('span', { class: 'button-label' }, ['Review implementation']),
]) as HTMLButtonElement;
const sendButton = element('button', { type: 'submit', class: 'icon-button send-button' }) as HTMLButtonElement;
composer.append(
  element('label', { for: 'message-input', class: 'visually-hidden' }, ['Message']),
  attachmentBar,
  mentionList,
  input,
  element('div', { class: 'composer-footer' }, [
    element('span', { id: 'composer-hint', class: 'composer-hint' }, ['Enter: send · Shift+Enter: new line · @: attach']),
    element('div', { class: 'composer-actions' }, [reviewButton, promoteButton, sendButton]),
  ]),
);
const announcer = element('div', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });

app.append(header, bannerRegion, conversation, decisionsRegion, taskRegion, composer, announcer);
app.removeAttribute('aria-busy');

const panel: Panel = {
  vscode,
  renderer,
  model,
  app,
  repoLabel,
  modelLabel,
  bannerRegion,
  conversation,
  emptyState,
  taskRegion,
  decisionsRegion,
  composer,
  input,
  attachmentBar,
  mentionList,
  promoteButton,
  reviewButton,
  sendButton,
  announcer,
  turnViews: new Map(),
  pendingReplies: new Map(),
  replyFrame: null,
  saveTimer: null,
  preparingTask: false,
  reviewing: false,
  liveReply: null,
  unconfirmedSend: null,
  unconfirmedAttachments: [],
  pendingAttachments: [],
  activeFile: null,
  activeFileDropped: false,
  mention: null,
  mentionRequests: 0,
};

input.value = saved?.draft ?? '';
renderEverything(panel);
conversation.scrollTop = conversation.scrollHeight;

receiveMessages(panel);
handleInput(panel);
handleDrops(panel, (text) => announce(panel, text));
saveWhenHidden(panel);

// Announce readiness last, so the replay lands on a fully built panel.
postReady(panel);
input.focus();

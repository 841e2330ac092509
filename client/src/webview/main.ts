/**
 * The chat panel's DOM: renders the conversation model, turns clicks and keys
 * into messages for the extension. Runs under a CSP without inline script or
 * style, so every handler is attached here, by delegation on the root.
 *
 * Text from the model reaches the DOM only as sanitized Markdown HTML
 * (markdown.ts); everything else (user text, tool previews, errors) is set as
 * textContent.
 */
import type { ExtensionToWebview, PreparedTask, WebviewToExtension } from '../../../shared/protocol';
import { inertLine, inertText } from '../../../shared/printablePath';
import { CODE_ACTION_ATTRIBUTE, createMarkdownRenderer, MarkdownStream, type StreamUpdate } from './markdown';
import {
  discussionUsage,
  ConversationModel,
  describeParams,
  type Banner,
  type ConversationSnapshot,
  type FixAction,
  type FixCommand,
  type ToolChip,
  type Turn,
  type ViewChange,
} from './viewModel';

interface VsCodeApi {
  postMessage(message: WebviewToExtension): void;
  getState(): unknown;
  setState(state: PanelState): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

interface PanelState {
  version: 1;
  discussionId: string | null;
  lastSeq: number;
  draft: string;
  conversation: ConversationSnapshot;
}

interface TurnView {
  turn: Turn;
  root: HTMLElement;
  tools: HTMLElement;
  reply: HTMLElement;
  reasoning: HTMLDetailsElement;
  reasoningText: HTMLElement;
  /** Characters of `turn.reasoning` already in the DOM. */
  reasoningShown: number;
  frozen: HTMLElement;
  tail: HTMLElement;
  errors: HTMLElement;
  status: HTMLElement;
  /** Present while the reply can still grow. */
  stream: MarkdownStream | null;
}

/** `replace`: the reply may differ from what is shown, not just be longer. */
type PendingReply = { replace: boolean };

const SAVE_DELAY_MS = 300;
/** Within this many pixels of the bottom, new content keeps the view pinned there. */
const STICK_TO_BOTTOM_PX = 48;

const vscode = acquireVsCodeApi();
const renderer = createMarkdownRenderer(window);
const saved = readSavedState(vscode.getState());
const model = ConversationModel.restore(saved?.conversation);
renderer.setRepoRoot(model.state.repo);

const turnViews = new Map<number, TurnView>();
const pendingReplies = new Map<number, PendingReply>();
let replyFrame: number | null = null;
let saveTimer: ReturnType<typeof setTimeout> | null = null;
let preparingTask = false;
/** The one reply element that is an aria-live region: the newest. */
let liveReply: HTMLElement | null = null;
/** Text of the last send, restored to the input if the extension refuses it. */
let unconfirmedSend: string | null = null;

// ---------------------------------------------------------------------------
// Skeleton
// ---------------------------------------------------------------------------

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

const composer = element('form', { class: 'composer', 'aria-label': 'Message composer' });
const input = element('textarea', {
  id: 'message-input',
  class: 'composer-input',
  rows: '1',
  placeholder: 'Ask about this repository',
  'aria-describedby': 'composer-hint',
}) as HTMLTextAreaElement;
const promoteButton = element('button', { type: 'button', class: 'button secondary', 'data-action': 'promote' }, [
  icon('tasklist'),
  element('span', { class: 'button-label' }, ['Prepare coding task']),
]) as HTMLButtonElement;
const sendButton = element('button', { type: 'submit', class: 'icon-button send-button' }) as HTMLButtonElement;
composer.append(
  element('label', { for: 'message-input', class: 'visually-hidden' }, ['Message']),
  input,
  element('div', { class: 'composer-footer' }, [
    element('span', { id: 'composer-hint', class: 'composer-hint' }, ['Enter to send, Shift+Enter for a new line']),
    element('div', { class: 'composer-actions' }, [promoteButton, sendButton]),
  ]),
);
const announcer = element('div', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });

app.append(header, bannerRegion, conversation, taskRegion, composer, announcer);
app.removeAttribute('aria-busy');

input.value = saved?.draft ?? '';
renderEverything();
conversation.scrollTop = conversation.scrollHeight;

// ---------------------------------------------------------------------------
// Messages from the extension
// ---------------------------------------------------------------------------

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const message = event.data as ExtensionToWebview | null;
  if (!message || typeof message !== 'object' || typeof message.type !== 'string') return;

  if (message.type === 'attached') renderer.setRepoRoot(message.repo);
  if (
    message.type === 'notice' ||
    message.type === 'detached' ||
    message.type === 'attached' ||
    message.type === 'handOffResult'
  ) {
    setPreparing(false);
  }
  if (message.type === 'notice' && message.level === 'error' && unconfirmedSend !== null && input.value === '') {
    // The send was refused (busy, too long): give the text back.
    input.value = unconfirmedSend;
    unconfirmedSend = null;
  }
  if (message.type === 'events' && message.events.some((e) => e.type === 'user_message')) unconfirmedSend = null;

  const pinned = isNearBottom();
  applyChanges(model.apply(message));
  if (pinned) scrollToBottom();
  scheduleSave();
});

function applyChanges(changes: ViewChange[]): void {
  for (const change of changes) {
    switch (change.kind) {
      case 'reset':
        renderEverything();
        break;
      case 'resync':
        postReady();
        break;
      case 'header':
        renderHeader();
        renderControls();
        break;
      case 'answering': {
        renderControls();
        const view = latestTurnView();
        if (view) renderTurnMeta(view);
        announce(model.state.answering ? 'Answering' : '');
        break;
      }
      case 'turnAdded':
        addTurnView(findTurn(change.turnId));
        renderControls();
        break;
      case 'replyAppended': {
        queueReply(change.turnId, false);
        // "Thinking…" turns into "Writing…" with the first text; later deltas
        // leave the status alone rather than rebuild it on every one.
        const view = turnViews.get(change.turnId);
        if (view && view.status.textContent?.endsWith('Thinking…')) renderTurnMeta(view);
        break;
      }
      case 'replyReplaced':
        queueReply(change.turnId, true);
        break;
      case 'reasoningAppended': {
        const view = turnViews.get(change.turnId);
        if (view) showReasoning(view);
        break;
      }
      case 'turnUpdated': {
        const view = turnViews.get(change.turnId);
        if (view) renderTurnMeta(view);
        break;
      }
      case 'task':
        // A promote is answered by a task_prepared event (or a notice on failure).
        preparingTask = false;
        renderTask();
        renderControls();
        if (model.state.task && !model.state.handingOff) announce('Coding task ready to review');
        break;
      case 'banner':
        renderBanner();
        break;
    }
  }
}

function latestTurnView(): TurnView | undefined {
  const turns = model.state.turns;
  const last = turns[turns.length - 1];
  return last ? turnViews.get(last.id) : undefined;
}

function findTurn(turnId: number): Turn {
  // New turns are at the end: look there first.
  const turns = model.state.turns;
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i].id === turnId) return turns[i];
  throw new Error(`No turn ${turnId}`);
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

function renderEverything(): void {
  pendingReplies.clear();
  turnViews.clear();
  liveReply = null;
  conversation.replaceChildren(emptyState);
  for (const turn of model.state.turns) addTurnView(turn);
  renderHeader();
  renderBanner();
  renderTask();
  renderControls();
}

function renderHeader(): void {
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

function renderControls(): void {
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
  promoteButton.querySelector('.button-label')!.textContent = preparingTask
    ? 'Preparing…'
    : task
      ? 'Prepare again'
      : 'Prepare coding task';
  promoteButton.classList.toggle('is-busy', preparingTask);
}

function addTurnView(turn: Turn): void {
  // Only the newest reply is a live region: older ones must stay quiet.
  liveReply?.removeAttribute('aria-live');

  const frozen = element('div', { class: 'reply-frozen' });
  const tail = element('div', { class: 'reply-tail' });
  const reply = element('div', { class: 'reply markdown-body', 'aria-live': 'polite' }, [frozen, tail]);
  const tools = element('div', { class: 'tool-chips' });
  const reasoningText = element('div', { class: 'reasoning-text' });
  const reasoning = element('details', { class: 'reasoning' }, [
    element('summary', { class: 'reasoning-summary' }, [icon('lightbulb'), element('span', {}, ['Reasoning'])]),
    reasoningText,
  ]) as HTMLDetailsElement;
  reasoning.hidden = true;
  const errors = element('div', { class: 'turn-errors' });
  const status = element('div', { class: 'turn-status' });
  const root = element('article', { class: 'turn', 'data-turn-id': String(turn.id) });
  if (turn.user) {
    root.append(
      element('div', { class: 'message user-message' }, [
        element('div', { class: 'message-author' }, [icon('account'), element('span', {}, ['You'])]),
        element('div', { class: 'user-text' }, [turn.user.text]),
      ]),
    );
  }
  root.append(
    element('div', { class: 'message assistant-message' }, [
      element('div', { class: 'message-author' }, [icon('sparkle'), element('span', {}, ['Assistant'])]),
      reasoning,
      tools,
      reply,
      errors,
      status,
    ]),
  );
  conversation.append(root);
  liveReply = reply;

  const view: TurnView = { turn, root, tools, reply, reasoning, reasoningText, reasoningShown: 0, frozen, tail, errors, status, stream: null };
  turnViews.set(turn.id, view);
  showReasoning(view);
  if (turn.reply) {
    if (turn.complete) {
      frozen.innerHTML = renderer.render(turn.reply);
    } else {
      view.stream = new MarkdownStream(renderer);
      applyStreamUpdate(view, view.stream.replace(turn.reply));
    }
  }
  renderTurnMeta(view);
}

function renderTurnMeta(view: TurnView): void {
  const { turn } = view;
  const waiting = !turn.complete && model.state.answering;
  view.reply.setAttribute('aria-busy', String(waiting));
  view.root.classList.toggle('is-answering', waiting);

  // Chips are updated in place, so one the user expanded stays expanded.
  const existing = new Map<string, HTMLDetailsElement>();
  for (const chip of Array.from(view.tools.children)) {
    if (chip instanceof HTMLDetailsElement && chip.dataset.chipId) existing.set(chip.dataset.chipId, chip);
  }
  const chips = turn.tools.map((chip) => renderToolChip(existing.get(String(chip.id)), chip, turn.complete));
  view.tools.replaceChildren(...chips);
  view.tools.hidden = chips.length === 0;

  view.errors.replaceChildren(
    ...turn.errors.map((error) =>
      element('div', { class: 'turn-error' }, [
        icon('error'),
        element('span', { class: 'turn-error-message' }, [error.message]),
        ...(error.fix ? [fixButton(error.fix)] : []),
      ]),
    ),
  );

  view.status.replaceChildren();
  if (turn.usage && turn.complete) {
    view.status.append(
      element('span', { class: 'turn-usage', title: 'Tokens this reply used' }, [
        `${formatCount(turn.usage.promptTokens)} tokens in, ${formatCount(turn.usage.completionTokens)} out`,
      ]),
    );
  }
  if (waiting) {
    const running = turn.tools.some((chip) => chip.ok === null);
    view.status.append(icon('loading', 'codicon-modifier-spin'), element('span', {}, [running ? 'Reading the repository…' : turn.reply ? 'Writing…' : 'Thinking…']));
  } else if (turn.complete && !turn.reply && turn.errors.length === 0) {
    view.status.append(element('span', {}, ['No reply.']));
  }
  view.status.hidden = view.status.childElementCount === 0;
  if (turn.complete && !pendingReplies.has(turn.id)) view.stream = null;
}

/** Appends only the reasoning not yet shown: the model may be ahead of the DOM by a whole batch. */
function showReasoning(view: TurnView): void {
  const text = view.turn.reasoning;
  if (text.length <= view.reasoningShown) return;
  view.reasoningText.append(text.slice(view.reasoningShown));
  view.reasoningShown = text.length;
  view.reasoning.hidden = false;
}

function formatCount(count: number): string {
  return count >= 10_000 ? `${Math.round(count / 1000)}k` : count >= 1000 ? `${(count / 1000).toFixed(1)}k` : String(count);
}

function renderToolChip(existing: HTMLDetailsElement | undefined, chip: ToolChip, turnComplete: boolean): HTMLDetailsElement {
  const details = existing ?? (element('details', { class: 'tool-chip', 'data-chip-id': String(chip.id) }) as HTMLDetailsElement);
  const state =
    chip.ok === null ? (turnComplete ? 'not-run' : 'running') : chip.ok ? 'ok' : chip.refused ? 'refused' : 'failed';
  const stateIcon: Record<typeof state, string[]> = {
    running: ['loading', 'codicon-modifier-spin'],
    ok: ['check'],
    refused: ['circle-slash'],
    failed: ['warning'],
    'not-run': ['dash'],
  };
  const stateText: Record<typeof state, string> = {
    running: 'running',
    ok: 'done',
    refused: 'refused',
    failed: 'failed',
    'not-run': 'not run',
  };
  details.className = `tool-chip is-${state}`;
  const params = describeParams(chip.params);
  const [iconName, ...iconModifiers] = stateIcon[state];
  // Names in arguments and answers are repository or model input: bidi and control characters are shown escaped.
  const summary = element('summary', { class: 'tool-chip-summary', title: inertText(chip.params || chip.tool) }, [
    icon(iconName, ...iconModifiers),
    element('span', { class: 'tool-name' }, [inertLine(chip.tool)]),
    ...(params ? [element('span', { class: 'tool-params' }, [params])] : []),
    element('span', { class: 'tool-state' }, [stateText[state]]),
  ]);
  const body = chip.preview
    ? element('pre', { class: 'tool-preview' }, [inertText(chip.preview)])
    : element('p', { class: 'tool-preview is-empty' }, [chip.ok === null ? 'No result yet.' : 'No output.']);
  details.replaceChildren(summary, body);
  return details;
}

function fixButton(fix: FixAction): HTMLElement {
  return element('button', { type: 'button', class: 'button secondary fix-button', 'data-action': 'run-command', 'data-command': fix.command }, [
    fix.label,
  ]);
}

function renderBanner(): void {
  const banner: Banner | null = model.state.banner;
  const detached = model.state.detached;
  bannerRegion.replaceChildren();
  if (detached !== null) {
    bannerRegion.append(
      element('div', { class: 'banner is-info', role: 'status' }, [
        icon('debug-disconnect'),
        element('div', { class: 'banner-message' }, [detached]),
        element('button', { type: 'button', class: 'button secondary', 'data-action': 'new-discussion' }, ['New discussion']),
      ]),
    );
  }
  if (!banner) return;
  bannerRegion.append(
    element('div', { class: `banner is-${banner.level}`, role: banner.level === 'error' ? 'alert' : 'status' }, [
      icon(banner.level === 'error' ? 'error' : 'info'),
      element('div', { class: 'banner-message' }, [banner.message]),
      ...(banner.fix ? [fixButton(banner.fix)] : []),
      iconButton('close', 'Dismiss', { 'data-action': 'dismiss-banner' }),
    ]),
  );
}

function renderTask(focus?: { field: 'intent' } | { field: 'constraint'; index: number } | { field: 'add' }): void {
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
function readTaskFromCard(): PreparedTask | null {
  const intent = taskRegion.querySelector<HTMLTextAreaElement>('[data-task-field="intent"]');
  if (!intent) return model.state.task;
  const constraints = Array.from(taskRegion.querySelectorAll<HTMLTextAreaElement>('[data-task-field="constraint"]'), (field) => field.value);
  return { intent: intent.value, constraints };
}

// ---------------------------------------------------------------------------
// Streaming replies
// ---------------------------------------------------------------------------

/**
 * The model is already ahead of the DOM when changes are applied (a batch of
 * events lands at once), so a flush renders whatever the turn's reply holds
 * beyond what its stream has: never the same text twice.
 */
function queueReply(turnId: number, replace: boolean): void {
  const pending = pendingReplies.get(turnId);
  pendingReplies.set(turnId, { replace: replace || pending?.replace === true });
  scheduleReplyFlush();
}

/** Deltas arrive faster than frames: render at most once a frame. */
function scheduleReplyFlush(): void {
  if (replyFrame !== null) return;
  replyFrame = requestAnimationFrame(() => {
    replyFrame = null;
    const pinned = isNearBottom();
    for (const [turnId, pending] of pendingReplies) {
      const view = turnViews.get(turnId);
      if (view) flushReply(view, pending);
    }
    pendingReplies.clear();
    if (pinned) scrollToBottom();
  });
}

function flushReply(view: TurnView, pending: PendingReply): void {
  const text = view.turn.reply;
  if (!view.stream) {
    view.stream = new MarkdownStream(renderer);
    applyStreamUpdate(view, view.stream.replace(text));
  } else if (pending.replace) {
    // Usually the final message is exactly what streamed; re-render only if not.
    if (view.stream.source !== text) applyStreamUpdate(view, view.stream.replace(text));
  } else if (text.length > view.stream.source.length) {
    applyStreamUpdate(view, view.stream.append(text.slice(view.stream.source.length)));
  }
  // A finished reply never changes again: let its stream state go.
  if (view.turn.complete) view.stream = null;
}

function applyStreamUpdate(view: TurnView, update: StreamUpdate): void {
  if (update.reset) view.frozen.innerHTML = update.frozenHtml;
  else if (update.frozenHtml) view.frozen.insertAdjacentHTML('beforeend', update.frozenHtml);
  view.tail.innerHTML = update.tailHtml;
}

// ---------------------------------------------------------------------------
// User input (all by delegation)
// ---------------------------------------------------------------------------

composer.addEventListener('submit', (event) => {
  event.preventDefault();
  if (model.state.answering) cancelReply();
  else sendDraft();
});

input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing) {
    event.preventDefault();
    if (!model.state.answering) sendDraft();
  } else if (event.key === 'Escape' && model.state.answering) {
    event.preventDefault();
    cancelReply();
  }
});

input.addEventListener('input', scheduleSave);

app.addEventListener('input', (event) => {
  const target = event.target;
  if (target instanceof HTMLTextAreaElement && target.dataset.taskField) {
    target.removeAttribute('aria-invalid');
    const task = readTaskFromCard();
    if (task) model.editTask(task);
    scheduleSave();
  }
});

app.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target : null;
  if (!target) return;

  const link = target.closest('a');
  if (link && conversation.contains(link)) {
    // Nothing navigates inside the webview; the extension opens what is worth opening.
    event.preventDefault();
    openLink(link);
    return;
  }

  const codeButton = target.closest<HTMLElement>(`[${CODE_ACTION_ATTRIBUTE}]`);
  if (codeButton) {
    handleCodeAction(codeButton);
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
      setPreparing(true);
      vscode.postMessage({ type: 'promote' });
      announce('Preparing the coding task');
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
      applyChanges(model.dismissBanner());
      scheduleSave();
      input.focus();
      return;
    case 'discard-task':
      applyChanges(model.discardTask());
      scheduleSave();
      promoteButton.focus();
      return;
    case 'add-constraint': {
      const task = readTaskFromCard();
      if (!task) return;
      model.editTask({ intent: task.intent, constraints: [...task.constraints, ''] });
      renderTask({ field: 'constraint', index: task.constraints.length });
      scheduleSave();
      return;
    }
    case 'remove-constraint': {
      const task = readTaskFromCard();
      const index = Number(actionElement.dataset.index);
      if (!task || !Number.isInteger(index)) return;
      const constraints = task.constraints.filter((_, i) => i !== index);
      model.editTask({ intent: task.intent, constraints });
      renderTask(constraints.length > 0 ? { field: 'constraint', index: Math.min(index, constraints.length - 1) } : { field: 'add' });
      scheduleSave();
      return;
    }
    case 'hand-off':
      handOff();
      return;
  }
});

function sendDraft(): void {
  const text = input.value;
  if (!text.trim() || model.state.detached !== null) return;
  vscode.postMessage({ type: 'send', text });
  unconfirmedSend = text;
  input.value = '';
  scheduleSave();
  dismissErrorBanner();
}

function cancelReply(): void {
  vscode.postMessage({ type: 'cancel' });
  announce('Stopping the reply');
}

function handOff(): void {
  const task = readTaskFromCard();
  if (!task) return;
  const intent = task.intent.trim();
  if (!intent) {
    const field = taskRegion.querySelector<HTMLTextAreaElement>('[data-task-field="intent"]');
    field?.setAttribute('aria-invalid', 'true');
    field?.focus();
    announce('The intent is empty: say what should change before handing off');
    return;
  }
  const constraints = task.constraints.map((c) => c.trim()).filter(Boolean);
  applyChanges(model.startHandOff({ intent, constraints }));
  scheduleSave();
  vscode.postMessage({ type: 'handOff', requestId: model.handOffRequestId, task: { intent, constraints } });
  announce('Handing off the task');
}

function openLink(link: HTMLAnchorElement): void {
  const path = link.dataset.path;
  if (path) {
    const line = Number(link.dataset.line);
    vscode.postMessage(Number.isInteger(line) && line > 0 ? { type: 'openFile', path, line } : { type: 'openFile', path });
    return;
  }
  const href = link.getAttribute('href') ?? '';
  if (/^https?:\/\//i.test(href)) vscode.postMessage({ type: 'openExternal', url: href });
}

function handleCodeAction(button: HTMLElement): void {
  const code = button.closest('.code-block')?.querySelector('pre code')?.textContent ?? '';
  if (button.getAttribute(CODE_ACTION_ATTRIBUTE) === 'insert') {
    vscode.postMessage({ type: 'insertCode', code });
    return;
  }
  void copyText(code).then((copied) => {
    announce(copied ? 'Code copied' : 'Could not copy the code');
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

function dismissErrorBanner(): void {
  if (model.state.banner?.level === 'error') applyChanges(model.dismissBanner());
}

function setPreparing(preparing: boolean): void {
  if (preparingTask === preparing) return;
  preparingTask = preparing;
  renderControls();
}

// ---------------------------------------------------------------------------
// State, scrolling, announcements
// ---------------------------------------------------------------------------

/** Debounced: a long reply streams many events, and the state is the whole conversation. */
function scheduleSave(): void {
  if (saveTimer !== null) return;
  saveTimer = setTimeout(saveNow, SAVE_DELAY_MS);
}

function saveNow(): void {
  if (saveTimer !== null) clearTimeout(saveTimer);
  saveTimer = null;
  const conversationSnapshot = model.snapshot();
  vscode.setState({
    version: 1,
    discussionId: conversationSnapshot.discussionId,
    lastSeq: conversationSnapshot.lastSeq,
    draft: input.value,
    conversation: conversationSnapshot,
  });
}

window.addEventListener('pagehide', saveNow);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') saveNow();
});

function readSavedState(state: unknown): PanelState | undefined {
  if (!state || typeof state !== 'object') return undefined;
  const candidate = state as Partial<PanelState>;
  if (candidate.version !== 1) return undefined;
  return {
    version: 1,
    discussionId: typeof candidate.discussionId === 'string' ? candidate.discussionId : null,
    lastSeq: typeof candidate.lastSeq === 'number' ? candidate.lastSeq : -1,
    draft: typeof candidate.draft === 'string' ? candidate.draft : '',
    conversation: candidate.conversation as ConversationSnapshot,
  };
}

function isNearBottom(): boolean {
  return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < STICK_TO_BOTTOM_PX;
}

function scrollToBottom(): void {
  conversation.scrollTop = conversation.scrollHeight;
}

function announce(text: string): void {
  // Cleared first so the same words twice are still announced.
  announcer.textContent = '';
  if (text) setTimeout(() => (announcer.textContent = text), 50);
}

// ---------------------------------------------------------------------------
// DOM helpers
// ---------------------------------------------------------------------------

function element(tag: string, attributes: Record<string, string> = {}, children: Array<Node | string> = []): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function icon(name: string, ...modifiers: string[]): HTMLElement {
  return element('span', { class: ['codicon', `codicon-${name}`, ...modifiers].join(' '), 'aria-hidden': 'true' });
}

function iconButton(iconName: string, label: string, attributes: Record<string, string>): HTMLElement {
  return element('button', { type: 'button', class: 'icon-button', 'aria-label': label, title: label, ...attributes }, [icon(iconName)]);
}

function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** Tells the extension what the panel already holds, so it replays only the rest. */
function postReady(): void {
  const { discussionId, lastSeq } = model.state;
  vscode.postMessage(discussionId ? { type: 'ready', discussionId, lastSeq } : { type: 'ready', lastSeq });
}

// Announce readiness last, so the replay lands on a fully built panel.
postReady();
input.focus();

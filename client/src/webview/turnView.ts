/** One turn in the conversation: its DOM, its status line, its reasoning, its tool chips and error fixes. */
import { inertLine, inertText } from '../../../shared/printablePath';
import { sentAttachmentChips } from './attachmentChips';
import { element, icon } from './dom';
import { findRepoPaths, formatRepoPath } from './links';
import { MarkdownStream } from './markdown';
import type { Panel, TurnView } from './panel';
import { applyStreamUpdate } from './replyStream';
import { describeParams, type FixAction, type ToolChip, type Turn } from './viewModel';
import { summarizeTool } from '../common/toolSummary';

export function addTurnView(panel: Panel, turn: Turn): void {
  const { renderer, conversation, turnViews } = panel;
  // Only the newest reply is a live region: older ones must stay quiet.
  panel.liveReply?.removeAttribute('aria-live');

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
        ...(turn.user.attachments?.length ? [sentAttachmentChips(turn.user.attachments)] : []),
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
  panel.liveReply = reply;

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
  renderTurnMeta(panel, view);
}

export function renderTurnMeta(panel: Panel, view: TurnView): void {
  const { model, pendingReplies } = panel;
  const { turn } = view;
  const waiting = !turn.complete && model.state.answering;
  view.reply.setAttribute('aria-busy', String(waiting));
  view.root.classList.toggle('is-answering', waiting);

  // Chips are updated in place, so one the user expanded stays expanded.
  const existing = new Map<string, HTMLDetailsElement>();
  for (const chip of Array.from(view.tools.children)) {
    if (chip instanceof HTMLDetailsElement && chip.dataset.chipId) existing.set(chip.dataset.chipId, chip);
  }
  const repoRoot = model.state.repo ?? undefined;
  const chips = turn.tools.map((chip) => renderToolChip(existing.get(String(chip.id)), chip, turn.complete, repoRoot));
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
export function showReasoning(view: TurnView): void {
  const text = view.turn.reasoning;
  if (text.length <= view.reasoningShown) return;
  view.reasoningText.append(text.slice(view.reasoningShown));
  view.reasoningShown = text.length;
  view.reasoning.hidden = false;
}

export function formatCount(count: number): string {
  return count >= 10_000 ? `${Math.round(count / 1000)}k` : count >= 1000 ? `${(count / 1000).toFixed(1)}k` : String(count);
}

function renderToolChip(existing: HTMLDetailsElement | undefined, chip: ToolChip, turnComplete: boolean, repoRoot: string | undefined): HTMLDetailsElement {
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
  // What was asked and what came back, in words ("references to `x` — 37 in
  // 12 files"); the raw call stays one click away, in the body.
  const result = chip.ok === null ? undefined : { ok: chip.ok, preview: chip.preview };
  const said = summarizeTool({ tool: chip.tool, paramsPreview: chip.params }, result);
  const line = said.outcome ? `${said.subject} — ${said.outcome}` : said.subject;
  const summary = element('summary', { class: 'tool-chip-summary', title: inertText(chip.params || chip.tool) }, [
    icon(iconName, ...iconModifiers),
    element('span', { class: 'tool-summary' }, [inertLine(line)]),
    element('span', { class: 'tool-state' }, [stateText[state]]),
  ]);
  const call = element('span', { class: 'tool-call' }, [
    element('span', { class: 'tool-name' }, [inertLine(chip.tool)]),
    ...(params ? [element('span', { class: 'tool-params' }, [params])] : []),
  ]);
  const body = chip.preview
    ? element('pre', { class: 'tool-preview' }, linkedPaths(inertText(chip.preview), repoRoot))
    : element('p', { class: 'tool-preview is-empty' }, [chip.ok === null ? 'No result yet.' : 'No output.']);
  details.replaceChildren(summary, call, body);
  return details;
}

export function fixButton(fix: FixAction): HTMLElement {
  return element('button', { type: 'button', class: 'button secondary fix-button', 'data-action': 'run-command', 'data-command': fix.command }, [
    fix.label,
  ]);
}

/**
 * Text with every `path:line` it cites as a link that opens the file at that
 * line (the click is handled like the answer's links, in input.ts). The text
 * is already inert; a link carries only the parsed path and line.
 */
function linkedPaths(text: string, repoRoot: string | undefined): Array<Node | string> {
  const matches = findRepoPaths(text, { repoRoot });
  if (matches.length === 0) return [text];
  const pieces: Array<Node | string> = [];
  let cursor = 0;
  for (const match of matches) {
    if (match.start > cursor) pieces.push(text.slice(cursor, match.start));
    const attributes: Record<string, string> = { href: '#', class: 'path-link', 'data-path': match.path, title: formatRepoPath(match) };
    if (match.line !== undefined) attributes['data-line'] = String(match.line);
    pieces.push(element('a', attributes, [text.slice(match.start, match.end)]));
    cursor = match.end;
  }
  if (cursor < text.length) pieces.push(text.slice(cursor));
  return pieces;
}

/**
 * `@` completion in the input: typing `@` asks the extension for the folder's
 * files matching what follows (the server ranks them, through the read
 * boundary), shows them in a listbox, and a chosen one becomes a chip in place
 * of the `@query` text. Driven by the keyboard (arrows, Enter or Tab, Escape)
 * or the mouse.
 */
import type { ExtensionToWebview } from '../../../shared/protocol';
import { inertLine, printablePath } from '../../../shared/printablePath';
import { addPendingAttachment } from './attachmentChips';
import { element, icon } from './dom';
import type { Panel } from './panel';

/** An `@` at the start or after a space, then the query up to the caret. */
const MENTION_BEFORE_CARET = /(?:^|\s)@([^\s@]*)$/;

export interface MentionState {
  /** Where the `@` is in the input. */
  start: number;
  query: string;
  /** The request whose answer is awaited; older answers are ignored. */
  requestId: number;
  files: string[];
  selected: number;
}

export function mentionOpen(panel: Panel): boolean {
  return panel.mention !== null;
}

/** After each edit: open, refine or close the list from the text before the caret. */
export function updateMention(panel: Panel): void {
  const { input } = panel;
  const before = input.value.slice(0, input.selectionStart ?? input.value.length);
  const match = MENTION_BEFORE_CARET.exec(before);
  if (!match || panel.model.state.detached !== null) {
    closeMention(panel);
    return;
  }
  const query = match[1];
  const start = before.length - query.length - 1;
  if (panel.mention && panel.mention.start === start && panel.mention.query === query) return;
  const requestId = ++panel.mentionRequests;
  panel.mention = { start, query, requestId, files: panel.mention?.files ?? [], selected: 0 };
  panel.vscode.postMessage({ type: 'files', requestId, query });
  renderMentionList(panel);
}

export function receiveFiles(panel: Panel, message: Extract<ExtensionToWebview, { type: 'filesResult' }>): void {
  const mention = panel.mention;
  if (!mention || message.requestId !== mention.requestId) return;
  mention.files = Array.isArray(message.files) ? message.files.filter((f): f is string => typeof f === 'string') : [];
  mention.selected = 0;
  renderMentionList(panel);
}

export function closeMention(panel: Panel): void {
  if (!panel.mention) return;
  panel.mention = null;
  renderMentionList(panel);
}

/** Keys while the list is open; true when the key was the list's. */
export function handleMentionKey(panel: Panel, event: KeyboardEvent): boolean {
  const mention = panel.mention;
  if (!mention || event.isComposing) return false;
  const count = mention.files.length;
  switch (event.key) {
    case 'ArrowDown':
      if (count === 0) return false;
      mention.selected = (mention.selected + 1) % count;
      break;
    case 'ArrowUp':
      if (count === 0) return false;
      mention.selected = (mention.selected - 1 + count) % count;
      break;
    case 'Enter':
    case 'Tab':
      if (count === 0 || event.shiftKey) return false;
      chooseMention(panel, mention.selected);
      break;
    case 'Escape':
      closeMention(panel);
      break;
    default:
      return false;
  }
  event.preventDefault();
  event.stopPropagation();
  renderMentionList(panel);
  return true;
}

/** The chosen file becomes a chip and its `@query` leaves the text. */
export function chooseMention(panel: Panel, index: number): void {
  const mention = panel.mention;
  const file = mention?.files[index];
  if (!mention || file === undefined) return;
  const { input } = panel;
  const end = mention.start + 1 + mention.query.length;
  input.value = input.value.slice(0, mention.start) + input.value.slice(end);
  input.setSelectionRange(mention.start, mention.start);
  panel.mention = null;
  addPendingAttachment(panel, { kind: 'file', path: file });
  renderMentionList(panel);
  input.focus();
}

function renderMentionList(panel: Panel): void {
  const { mention, mentionList, input } = panel;
  if (!mention) {
    mentionList.hidden = true;
    mentionList.replaceChildren();
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    return;
  }
  const options = mention.files.map((file, index) =>
    element(
      'li',
      {
        id: `mention-option-${index}`,
        class: index === mention.selected ? 'mention-option is-selected' : 'mention-option',
        role: 'option',
        'aria-selected': String(index === mention.selected),
        'data-action': 'choose-mention',
        'data-index': String(index),
      },
      [icon('file'), element('span', { class: 'mention-path' }, [inertLine(printablePath(file))])],
    ),
  );
  mentionList.replaceChildren(
    ...(options.length > 0 ? options : [element('li', { class: 'mention-empty', role: 'presentation' }, [mention.query ? 'No matching files' : 'Type to search files'])]),
  );
  mentionList.hidden = false;
  input.setAttribute('aria-expanded', 'true');
  if (options.length > 0) {
    input.setAttribute('aria-activedescendant', `mention-option-${mention.selected}`);
    options[mention.selected]?.scrollIntoView?.({ block: 'nearest' });
  } else input.removeAttribute('aria-activedescendant');
}

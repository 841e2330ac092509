/**
 * `@` completion in the input: typing `@` asks the extension for the folder's
 * files matching what follows (the server ranks them, through the read
 * boundary) and, once something is typed, for its symbols (the editor's
 * language service or the symbol index); it shows both in one listbox, and a
 * chosen one becomes a chip (a file or a symbol) in place of the `@query`
 * text. Driven by the keyboard (arrows, Enter or Tab, Escape) or the mouse.
 */
import type { ExtensionToWebview, SymbolSuggestion } from '../../../shared/protocol';
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
  /** The symbols request whose answer is awaited (none for an empty query). */
  symbolRequestId: number | undefined;
  symbols: SymbolSuggestion[];
  selected: number;
  /**
   * The option the arrows moved to, while they have moved it: an answer that
   * arrives after the keys (the symbols after the files, or the other way
   * round) keeps it selected where it now stands, rather than snapping back to
   * the first row under a pressed Enter.
   */
  picked: string | undefined;
}

/** One row of the list. */
export type MentionOption = { kind: 'file'; path: string } | { kind: 'symbol'; symbol: SymbolSuggestion };

/** The most symbols shown, and the longest field kept, whatever the extension sends. */
const SHOWN_SYMBOLS_MAX = 30;
const SYMBOL_FIELD_MAX = 200;

/**
 * A query that reads as a symbol rather than a path: a qualified name
 * (`Cart.total`, `mod::f`) or a camelCase or snake_case identifier. Its
 * symbols are listed before the files; otherwise after them.
 */
export function looksLikeSymbol(query: string): boolean {
  if (/^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)+$/.test(query)) return !/\.[a-z]{1,4}$/.test(query) || /[A-Z]/.test(query.split(/\.|::|#/)[0]);
  return /^[A-Za-z_$][\w$]*$/.test(query) && /[a-z][A-Z]|[A-Za-z]_[A-Za-z]/.test(query);
}

/** What identifies an option across answers. */
function optionKey(option: MentionOption): string {
  return option.kind === 'file' ? `file\0${option.path}` : `symbol\0${option.symbol.path}\0${option.symbol.line}\0${option.symbol.container ?? ''}\0${option.symbol.name}`;
}

export function mentionOptions(mention: MentionState): MentionOption[] {
  const files: MentionOption[] = mention.files.map((path) => ({ kind: 'file', path }));
  const symbols: MentionOption[] = mention.symbols.map((symbol) => ({ kind: 'symbol', symbol }));
  return looksLikeSymbol(mention.query) ? [...symbols, ...files] : [...files, ...symbols];
}

/** What a symbol attachment names: `Container.name` when it has one, so the server finds that very one. */
function symbolName(symbol: SymbolSuggestion): string {
  return symbol.container && !/[.\s]/.test(symbol.container) ? `${symbol.container}.${symbol.name}` : symbol.name;
}

function validSymbol(value: unknown): value is SymbolSuggestion {
  const s = value as SymbolSuggestion;
  return (
    typeof s === 'object' && s !== null &&
    typeof s.name === 'string' && s.name !== '' && s.name.length <= SYMBOL_FIELD_MAX &&
    typeof s.kind === 'string' && s.kind.length <= SYMBOL_FIELD_MAX &&
    typeof s.path === 'string' && s.path !== '' &&
    Number.isInteger(s.line) && s.line >= 1 &&
    (s.container === undefined || (typeof s.container === 'string' && s.container.length <= SYMBOL_FIELD_MAX))
  );
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
  // An empty query has no symbols worth offering: the list is the folder's first files.
  const symbolRequestId = query === '' ? undefined : ++panel.mentionRequests;
  panel.mention = { start, query, requestId, files: panel.mention?.files ?? [], symbolRequestId, symbols: symbolRequestId === undefined ? [] : panel.mention?.symbols ?? [], selected: 0, picked: undefined };
  panel.vscode.postMessage({ type: 'files', requestId, query });
  if (symbolRequestId !== undefined) panel.vscode.postMessage({ type: 'symbols', requestId: symbolRequestId, query });
  renderMentionList(panel);
}

export function receiveSymbols(panel: Panel, message: Extract<ExtensionToWebview, { type: 'symbolsResult' }>): void {
  const mention = panel.mention;
  if (!mention || mention.symbolRequestId === undefined || message.requestId !== mention.symbolRequestId) return;
  mention.symbols = Array.isArray(message.symbols) ? message.symbols.filter(validSymbol).slice(0, SHOWN_SYMBOLS_MAX) : [];
  keepPicked(mention);
  renderMentionList(panel);
}

export function receiveFiles(panel: Panel, message: Extract<ExtensionToWebview, { type: 'filesResult' }>): void {
  const mention = panel.mention;
  if (!mention || message.requestId !== mention.requestId) return;
  mention.files = Array.isArray(message.files) ? message.files.filter((f): f is string => typeof f === 'string') : [];
  keepPicked(mention);
  renderMentionList(panel);
}

/** After an answer: the option the arrows picked stays selected if the list still has it; otherwise the first row is. */
function keepPicked(mention: MentionState): void {
  const index = mention.picked === undefined ? -1 : mentionOptions(mention).findIndex((option) => optionKey(option) === mention.picked);
  mention.selected = Math.max(index, 0);
  if (index < 0) mention.picked = undefined;
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
  const count = mentionOptions(mention).length;
  switch (event.key) {
    case 'ArrowDown':
      if (count === 0) return false;
      mention.selected = (mention.selected + 1) % count;
      mention.picked = optionKey(mentionOptions(mention)[mention.selected]);
      break;
    case 'ArrowUp':
      if (count === 0) return false;
      mention.selected = (mention.selected - 1 + count) % count;
      mention.picked = optionKey(mentionOptions(mention)[mention.selected]);
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

/** The chosen file or symbol becomes a chip and its `@query` leaves the text. */
export function chooseMention(panel: Panel, index: number): void {
  const mention = panel.mention;
  const option = mention ? mentionOptions(mention)[index] : undefined;
  if (!mention || option === undefined) return;
  const { input } = panel;
  const end = mention.start + 1 + mention.query.length;
  input.value = input.value.slice(0, mention.start) + input.value.slice(end);
  input.setSelectionRange(mention.start, mention.start);
  panel.mention = null;
  addPendingAttachment(
    panel,
    option.kind === 'file'
      ? { kind: 'file', path: option.path }
      : // The line only picks among same-named definitions in that file; the server finds the range.
        { kind: 'symbol', path: option.symbol.path, symbol: symbolName(option.symbol), startLine: option.symbol.line },
  );
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
  const options = mentionOptions(mention).map((option, index) =>
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
      option.kind === 'file'
        ? [icon('file'), element('span', { class: 'mention-path' }, [inertLine(printablePath(option.path))])]
        : [
            icon(symbolIcon(option.symbol.kind)),
            element('span', { class: 'mention-symbol' }, [inertLine(symbolName(option.symbol))]),
            ' ',
            element('span', { class: 'mention-kind' }, [inertLine(option.symbol.kind)]),
            ' ',
            element('span', { class: 'mention-path' }, [`${inertLine(printablePath(option.symbol.path))}:${option.symbol.line}`]),
          ],
    ),
  );
  mentionList.replaceChildren(
    ...(options.length > 0 ? options : [element('li', { class: 'mention-empty', role: 'presentation' }, [mention.query ? 'No matching files or symbols' : 'Type to search files and symbols'])]),
  );
  mentionList.hidden = false;
  input.setAttribute('aria-expanded', 'true');
  if (options.length > 0) {
    input.setAttribute('aria-activedescendant', `mention-option-${mention.selected}`);
    options[mention.selected]?.scrollIntoView?.({ block: 'nearest' });
  } else input.removeAttribute('aria-activedescendant');
}

/** A codicon for a symbol kind; an unknown kind gets the generic one (the kind is server input, never a class name). */
function symbolIcon(kind: string): string {
  const known: Record<string, string> = {
    class: 'symbol-class', interface: 'symbol-interface', struct: 'symbol-structure', enum: 'symbol-enum', enum_member: 'symbol-enum-member',
    type: 'symbol-parameter', function: 'symbol-method', method: 'symbol-method', constructor: 'symbol-method', property: 'symbol-property',
    variable: 'symbol-variable', constant: 'symbol-constant', module: 'symbol-namespace', macro: 'symbol-misc',
  };
  return Object.prototype.hasOwnProperty.call(known, kind) ? known[kind] : 'symbol-misc';
}

/** The panel's saved state (what survives a reload): its shape, reading it back, and the debounced save. */
import type { Panel } from './panel';
import type { ConversationSnapshot } from './viewModel';

export interface PanelState {
  version: 1;
  discussionId: string | null;
  lastSeq: number;
  draft: string;
  conversation: ConversationSnapshot;
}

const SAVE_DELAY_MS = 300;

/** Debounced: a long reply streams many events, and the state is the whole conversation. */
export function scheduleSave(panel: Panel): void {
  if (panel.saveTimer !== null) return;
  panel.saveTimer = setTimeout(() => saveNow(panel), SAVE_DELAY_MS);
}

export function saveNow(panel: Panel): void {
  if (panel.saveTimer !== null) clearTimeout(panel.saveTimer);
  panel.saveTimer = null;
  const conversationSnapshot = panel.model.snapshot();
  panel.vscode.setState({
    version: 1,
    discussionId: conversationSnapshot.discussionId,
    lastSeq: conversationSnapshot.lastSeq,
    draft: panel.input.value,
    conversation: conversationSnapshot,
  });
}

/** Saves at once when the panel is hidden or goes away, without waiting for the debounce. */
export function saveWhenHidden(panel: Panel): void {
  window.addEventListener('pagehide', () => saveNow(panel));
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') saveNow(panel);
  });
}

export function readSavedState(state: unknown): PanelState | undefined {
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

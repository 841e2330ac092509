/** The panel context every module works on (model, renderer, DOM regions, turn views, flags), and scrolling and announcing. */
import type { Attachment, WebviewToExtension } from '../../../shared/protocol';
import type { MentionState } from './mentions';
import type { MarkdownRenderer, MarkdownStream } from './markdown';
import type { PanelState } from './panelState';
import type { ConversationModel, Turn } from './viewModel';

export interface VsCodeApi {
  postMessage(message: WebviewToExtension): void;
  getState(): unknown;
  setState(state: PanelState): void;
}

export interface TurnView {
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
/** A reply to flush next frame: replaced whole, or the deltas appended since the last flush. */
export type PendingReply = { replace: boolean; appended: string[] };

/**
 * Everything the panel holds, in one object created by main.ts and passed to
 * every module, so no module keeps state of its own.
 */
export interface Panel {
  readonly vscode: VsCodeApi;
  readonly renderer: MarkdownRenderer;
  readonly model: ConversationModel;

  readonly app: HTMLElement;
  readonly repoLabel: HTMLElement;
  readonly modelLabel: HTMLElement;
  readonly bannerRegion: HTMLElement;
  readonly conversation: HTMLElement;
  readonly emptyState: HTMLElement;
  readonly taskRegion: HTMLElement;
  /** The decision log and the latest review. */
  readonly decisionsRegion: HTMLElement;
  readonly composer: HTMLElement;
  readonly input: HTMLTextAreaElement;
  /** The input's attachment chips. */
  readonly attachmentBar: HTMLElement;
  /** The `@` completion listbox. */
  readonly mentionList: HTMLElement;
  readonly promoteButton: HTMLButtonElement;
  /** "Review implementation", shown once a task was handed off. */
  readonly reviewButton: HTMLButtonElement;
  readonly sendButton: HTMLButtonElement;
  readonly announcer: HTMLElement;

  readonly turnViews: Map<number, TurnView>;
  readonly pendingReplies: Map<number, PendingReply>;
  replyFrame: number | null;
  saveTimer: ReturnType<typeof setTimeout> | null;
  preparingTask: boolean;
  /** A review was asked for and neither its `review` event nor an error has arrived. */
  reviewing: boolean;
  /** The one reply element that is an aria-live region: the newest. */
  liveReply: HTMLElement | null;
  /** Text of the last send, restored to the input if the extension refuses it. */
  unconfirmedSend: string | null;
  /** The chips of that send, given back with it. */
  unconfirmedAttachments: Attachment[];
  /** Chips waiting in the input for the next send. */
  readonly pendingAttachments: Attachment[];
  /** The active editor's file or selection, as the extension last reported it. */
  activeFile: Attachment | null;
  /** The user dropped the active-file chip for this message. */
  activeFileDropped: boolean;
  /** The open `@` completion, if any. */
  mention: MentionState | null;
  mentionRequests: number;
}

/** Within this many pixels of the bottom, new content keeps the view pinned there. */
const STICK_TO_BOTTOM_PX = 48;

export function isNearBottom({ conversation }: Panel): boolean {
  return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < STICK_TO_BOTTOM_PX;
}

export function scrollToBottom({ conversation }: Panel): void {
  conversation.scrollTop = conversation.scrollHeight;
}

export function announce({ announcer }: Panel, text: string): void {
  // Cleared first so the same words twice are still announced.
  announcer.textContent = '';
  if (text) setTimeout(() => (announcer.textContent = text), 50);
}

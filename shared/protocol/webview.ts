import type { Attachment, SymbolSuggestion } from './attachments';
import type { DiscussionEvent } from './events';
import type { PreparedTask } from './task';

/** A command of the extension the panel may ask for by name (from a notice's button or a link). */
export type PanelCommand = 'setApiKey' | 'selectModel' | 'openSettings' | 'showLogs';

/** Messages the chat webview posts to the extension. */
export type WebviewToExtension =
  /** The webview (re)loaded; it holds events of `discussionId` up to `lastSeq`. */
  | { type: 'ready'; discussionId?: string; lastSeq: number }
  /** `attachments`: the chips in the input (the implicit active-file chip among them, unless dropped). */
  | { type: 'send'; text: string; attachments?: Attachment[] }
  /** The folder's files matching `query`, for `@` completion; answered by one `filesResult`. */
  | { type: 'files'; requestId: number; query: string }
  /** The folder's symbols matching `query`, for `@` completion; answered by one `symbolsResult`. */
  | { type: 'symbols'; requestId: number; query: string }
  | { type: 'cancel' }
  | { type: 'promote' }
  /** Review what changed since the last hand-off against its task (discuss/review); answered by a `review` event or an error notice. */
  | { type: 'review' }
  /** Hand the (edited) task off; answered by one `handOffResult` with the same `requestId`. */
  | { type: 'handOff'; requestId: number; task: PreparedTask }
  | { type: 'newDiscussion' }
  | { type: 'runCommand'; command: PanelCommand }
  | { type: 'openFile'; path: string; line?: number }
  /** Insert a code block's text at the cursor of the active editor. */
  | { type: 'insertCode'; code: string }
  /** Open an http(s) link in the browser; the extension re-checks the scheme. */
  | { type: 'openExternal'; url: string }
  /** The user reworded an entry of the decision log. */
  | { type: 'editDecision'; id: string; text: string }
  /** The user deleted an entry of the decision log. */
  | { type: 'deleteDecision'; id: string };

/** Messages the extension posts to the chat webview. */
export type ExtensionToWebview =
  | {
      type: 'attached';
      discussionId: string;
      repo: string;
      model: string | null;
      /** True when the panel's history belongs to another discussion and must be cleared. */
      reset: boolean;
    }
  | { type: 'events'; events: DiscussionEvent[] }
  | { type: 'status'; answering: boolean; model: string | null }
  | { type: 'notice'; level: 'info' | 'error'; message: string; action?: { type: 'runCommand'; command: PanelCommand } }
  | { type: 'detached'; message: string }
  /** The answer to the `handOff` with this `requestId`: on success the task is used and its card goes. */
  | { type: 'handOffResult'; requestId: number; ok: boolean; message: string }
  /** The answer to the `files` with this `requestId`: folder-relative paths, best first. */
  | { type: 'filesResult'; requestId: number; files: string[] }
  /** The answer to the `symbols` with this `requestId`: definitions, best first. */
  | { type: 'symbolsResult'; requestId: number; symbols: SymbolSuggestion[] }
  /**
   * The active editor's file (and selection), folder-relative, whenever it
   * changes; null when there is none inside the discussed folder or the
   * `repoDiscuss.context.includeActiveFile` setting is off.
   */
  | { type: 'activeEditor'; attachment: Attachment | null }
  /** Add a chip to the input ("Discuss selection"). */
  | { type: 'addAttachment'; attachment: Attachment };

/**
 * The webview messages that are requests, and the type of the one answer each
 * gets. The extension answers through `replyTo`, so an answer cannot be of the
 * wrong type or lose the id of the request it answers.
 */
export interface WebviewReplies {
  handOff: 'handOffResult';
  files: 'filesResult';
  symbols: 'symbolsResult';
}

export type WebviewRequest = Extract<WebviewToExtension, { type: keyof WebviewReplies }>;
export type WebviewReply<R extends WebviewRequest> = Extract<ExtensionToWebview, { type: WebviewReplies[R['type']] }>;

/** The answer to `request`, carrying its `requestId`. */
export function replyTo<R extends WebviewRequest>(
  request: R,
  body: Omit<WebviewReply<R>, 'type' | 'requestId'>,
): WebviewReply<R> {
  const replies: WebviewReplies = { handOff: 'handOffResult', files: 'filesResult', symbols: 'symbolsResult' };
  return { ...body, type: replies[request.type], requestId: request.requestId } as WebviewReply<R>;
}

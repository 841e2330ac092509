/**
 * The discussion protocol: every message the extension client (and the
 * terminal client) exchanges with the discussion server, and every message the
 * chat webview exchanges with the extension. One module, imported by all three
 * sides, so a renamed field is a compile error rather than a silent mismatch.
 *
 * Documented for people in docs/protocol.md; keep the two in step.
 *
 * This file has no runtime dependencies on vscode or vscode-languageserver: the
 * webview bundle imports it too.
 */

/** Where a model lives and which one to use. */
export interface ModelConfig {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  /** Azure OpenAI `api-version`; also detected from the base URL. */
  apiVersion?: string;
  /** The model's context window in tokens; absent or 0 means a default for the model. */
  contextTokens?: number;
}

/** `initialize` params' `initializationOptions`. */
export interface InitializationOptions {
  /** Where discussions are saved; defaults to the platform's user data folder. */
  storageDir?: string;
  model?: ModelConfig;
  /** Extra globs the model may not read, on top of the built-in secrets rule. */
  denyRead?: string[];
  /** Path of a ripgrep binary; `null` turns ripgrep off; absent means look on PATH. */
  ripgrepPath?: string | null;
  /**
   * The client runs the code actions' commands itself (the VS Code extension
   * does). Otherwise the server offers them through `workspace/executeCommand`.
   */
  clientCommands?: boolean;
}

/** The prepared task distilled from a discussion: one imperative intent and the agreed constraints. */
export interface PreparedTask {
  intent: string;
  constraints: string[];
}

// ---------------------------------------------------------------------------
// Events (server to client, as `discuss/event` notifications)
// ---------------------------------------------------------------------------

/** Fields every event carries. */
export interface EventBase {
  discussionId: string;
  /** Counts from 0 per discussion, assigned by a single writer; never reused. */
  seq: number;
  /** Epoch milliseconds. */
  ts: number;
}

export type DiscussionEventBody =
  | { type: 'user_message'; text: string }
  | { type: 'assistant_delta'; text: string }
  | { type: 'assistant_message'; text: string }
  | { type: 'tool_call'; tool: string; paramsPreview: string }
  | { type: 'tool_result'; tool: string; ok: boolean; preview: string }
  | { type: 'task_prepared'; proposedIntent: string; constraints: string[] }
  | { type: 'turn_complete' }
  | { type: 'error'; message: string }
  /** The model's reasoning, streamed; shown collapsed and never part of the answer. */
  | { type: 'reasoning_delta'; text: string }
  /** Tokens one turn used, when the endpoint reports them. */
  | { type: 'usage'; promptTokens: number; completionTokens: number };

export type DiscussionEvent = EventBase & DiscussionEventBody;
export type DiscussionEventType = DiscussionEventBody['type'];

// ---------------------------------------------------------------------------
// Requests (client to server)
// ---------------------------------------------------------------------------

/** Client → server: open a discussion of a folder (or resume a saved one). */
export namespace StartRequest {
  export const method = 'discuss/start';
  export interface Params {
    /** Absolute path or `file:` URI of an existing directory. */
    folder: string;
    resumeId?: string;
    /** Model id for this discussion; `"auto"` or empty clears a saved choice. */
    model?: string;
  }
  export interface Result {
    discussionId: string;
    /** Real absolute path of the folder. */
    repo: string;
    repoSummary: string;
    persistent: boolean;
    resumed: boolean;
    model: string | null;
  }
}

/** Client → server: send one user message; refused while a turn runs. */
export namespace SendRequest {
  export const method = 'discuss/send';
  export interface Params {
    discussionId: string;
    text: string;
  }
  export interface Result {
    ok: true;
    /** Seq of this turn's `user_message` event: subscribe from here to miss nothing. */
    seq: number;
  }
}

/** Client → server: replay buffered events from a cursor, then stream live ones. */
export namespace SubscribeRequest {
  export const method = 'discuss/subscribe';
  export interface Params {
    discussionId: string;
    fromSeq?: number;
  }
  export interface Result {
    eventsReplayed: number;
  }
}

/** Client → server: stop streaming a discussion's events to this connection. */
export namespace UnsubscribeRequest {
  export const method = 'discuss/unsubscribe';
  export interface Params {
    discussionId: string;
  }
  export interface Result {
    ok: true;
  }
}

/** Client → server: stop the in-flight turn; it still ends with `turn_complete`. */
export namespace CancelRequest {
  export const method = 'discuss/cancel';
  export interface Params {
    discussionId: string;
  }
  export interface Result {
    ok: true;
  }
}

/** Client → server: distill the discussion into an intent and constraints; starts nothing. */
export namespace PromoteRequest {
  export const method = 'discuss/promote';
  export interface Params {
    discussionId: string;
  }
  export interface Result {
    discussionId: string;
    proposedIntent: string;
    constraints: string[];
  }
}

/** Client → server: close a discussion, aborting any turn in flight. */
export namespace CloseRequest {
  export const method = 'discuss/close';
  export interface Params {
    discussionId: string;
  }
  export interface Result {
    ok: true;
  }
}

/** One row of `discuss/list`. */
export interface DiscussionSummary {
  discussionId: string;
  repo: string;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt?: number;
  turns: number;
  title: string;
  model?: string | null;
  answering?: boolean;
}

/** Client → server: the open discussions, and the saved ones not open now. */
export namespace ListRequest {
  export const method = 'discuss/list';
  export interface Params {
    /** Only discussions of this folder. */
    folder?: string;
  }
  export interface Result {
    discussions: DiscussionSummary[];
    saved: DiscussionSummary[];
  }
}

/** Client → server: the models the configured endpoint offers. */
export namespace ModelsRequest {
  export const method = 'discuss/models';
  export type Params = Record<string, never>;
  export interface Result {
    models: Array<{ id: string }>;
  }
}

/** Client → server: change the endpoint, key or default model at run time. */
export namespace ConfigureRequest {
  export const method = 'discuss/configure';
  export interface Params {
    model?: ModelConfig;
    denyRead?: string[];
  }
  export interface Result {
    ok: true;
  }
}

/** Client → server: rename a discussion. */
export namespace RenameRequest {
  export const method = 'discuss/rename';
  export interface Params {
    discussionId: string;
    title: string;
  }
  export interface Result {
    ok: true;
  }
}

/** A prepared task that was handed to a coding agent. */
export interface Handoff {
  /** Epoch milliseconds. */
  at: number;
  target: string;
  intent: string;
  constraints: string[];
}

/** Client → server: mark the prepared task handed off; later turns are told about it. */
export namespace ConsumeTaskRequest {
  export const method = 'discuss/consumeTask';
  export interface Params {
    discussionId: string;
    /** Where it went: `chat`, `markdown`, `clipboard`, `command`, or another name. */
    target?: string;
    /** The task as the user edited it; defaults to the prepared one. */
    task?: PreparedTask;
  }
  export interface Result {
    ok: true;
    handoff: Handoff;
  }
}

/** Client → server: delete a saved discussion (closing it here first). */
export namespace DeleteRequest {
  export const method = 'discuss/delete';
  export interface Params {
    discussionId: string;
  }
  export interface Result {
    ok: true;
  }
}

/** Client → server: a discussion, open or saved, as Markdown or JSON text. */
export namespace ExportRequest {
  export const method = 'discuss/export';
  export interface Params {
    discussionId: string;
    format?: 'markdown' | 'json';
  }
  export interface Result {
    format: 'markdown' | 'json';
    text: string;
  }
}

/** Server → client: one event of a discussion the connection subscribed to. */
export namespace EventNotification {
  export const method = 'discuss/event';
  export type Params = DiscussionEvent;
}

// ---------------------------------------------------------------------------
// Webview ⇄ extension (postMessage)
// ---------------------------------------------------------------------------

/** Messages the chat webview posts to the extension. */
export type WebviewToExtension =
  /** The webview (re)loaded; it holds events of `discussionId` up to `lastSeq`. */
  | { type: 'ready'; discussionId?: string; lastSeq: number }
  | { type: 'send'; text: string }
  | { type: 'cancel' }
  | { type: 'promote' }
  | { type: 'handOff'; task: PreparedTask }
  | { type: 'newDiscussion' }
  | { type: 'runCommand'; command: 'setApiKey' | 'selectModel' | 'openSettings' | 'showLogs' }
  | { type: 'openFile'; path: string; line?: number }
  /** Insert a code block's text at the cursor of the active editor. */
  | { type: 'insertCode'; code: string }
  /** Open an http(s) link in the browser; the extension re-checks the scheme. */
  | { type: 'openExternal'; url: string };

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
  | { type: 'taskPrepared'; task: PreparedTask }
  | { type: 'status'; answering: boolean; model: string | null }
  | { type: 'notice'; level: 'info' | 'error'; message: string; action?: WebviewToExtension & { type: 'runCommand' } }
  | { type: 'detached'; message: string }
  /** The answer to a `handOff`: on success the task is used and its card goes. */
  | { type: 'handOffResult'; ok: boolean; message: string };

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/** JSON-RPC error codes of refused requests; the message always says what to do. */
export const DiscussErrorCode = {
  /** Bad params: empty or oversized message, missing folder, malformed id. */
  InvalidParams: -32602,
  /** No open discussion with that id (or no saved one to resume). */
  NotFound: -32010,
  /** A turn is running: the request would interleave with it. */
  Busy: -32011,
  /** A cap was reached (open discussions), or the discussion is open elsewhere. */
  Conflict: -32012,
  /** The model could not produce a usable answer (distillation, listing models). */
  ModelFailed: -32013,
  /** The discussion's storage could not be read or written. */
  StorageFailed: -32014,
} as const;

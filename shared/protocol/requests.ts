import type { ModelConfig } from './config';
import type { Handoff, PreparedTask } from './task';
import type { Decision, DecisionKind } from './decisions';
import type { Attachment, SymbolSuggestion } from './attachments';
import type { Review } from './review';

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
    /** The typed text; the 64 KiB message cap applies to it alone. */
    text: string;
    /** Code the user points at; each is read through the read boundary, with its own caps. */
    attachments?: Attachment[];
  }
  export interface Result {
    ok: true;
    /** Seq of this turn's `user_message` event: subscribe from here to miss nothing. */
    seq: number;
  }
}

/**
 * Client → server: the folder's files for `@` completion, fuzzy-matched on
 * `query` and best first (at most 50). The walk find_files uses, through the
 * same read boundary: ignored, denied and secret files are never listed.
 */
export namespace FilesRequest {
  export const method = 'discuss/files';
  export interface Params {
    discussionId: string;
    query?: string;
  }
  export interface Result {
    /** Folder-relative paths, `/`-separated. */
    files: string[];
  }
}

/** Client → server: the folder's symbols for `@` completion, from the editor's language service or the symbol index (at most 30, best first). */
export namespace SymbolsRequest {
  export const method = 'discuss/symbols';
  export interface Params {
    discussionId: string;
    query: string;
  }
  export interface Result {
    symbols: SymbolSuggestion[];
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
  export interface Result extends PreparedTask {
    discussionId: string;
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

/** Client → server: the discussion's current decision log (superseded entries left out). */
export namespace DecisionsRequest {
  export const method = 'discuss/decisions';
  export interface Params {
    discussionId: string;
  }
  export interface Result {
    decisions: Decision[];
  }
}

/** Client → server: the user edits an entry of the decision log; the model sees it on its next call. */
export namespace EditDecisionRequest {
  export const method = 'discuss/editDecision';
  export interface Params {
    discussionId: string;
    id: string;
    text?: string;
    kind?: DecisionKind;
  }
  export interface Result {
    decision: Decision;
  }
}

/** Client → server: the user deletes an entry of the decision log. */
export namespace DeleteDecisionRequest {
  export const method = 'discuss/deleteDecision';
  export interface Params {
    discussionId: string;
    id: string;
  }
  export interface Result {
    ok: true;
  }
}

/**
 * Client → server: review what changed since the last hand-off against its
 * task (one read-only model request). Refused before any hand-off. The
 * review also arrives as a `review` event.
 */
export namespace ReviewRequest {
  export const method = 'discuss/review';
  export interface Params {
    discussionId: string;
    /** A commit, branch or tag to diff from instead of the hand-off's commit. */
    base?: string;
  }
  export interface Result {
    review: Review;
  }
}

/**
 * Every client → server request, by method: `[params, result]`. Both sides
 * type their calls through it (`RequestChannel.request` in the clients,
 * `bindRequest` in the server), so changing a field here breaks the build
 * wherever that field is sent or read.
 */
export interface DiscussRequests {
  [StartRequest.method]: [StartRequest.Params, StartRequest.Result];
  [SendRequest.method]: [SendRequest.Params, SendRequest.Result];
  [FilesRequest.method]: [FilesRequest.Params, FilesRequest.Result];
  [SymbolsRequest.method]: [SymbolsRequest.Params, SymbolsRequest.Result];
  [SubscribeRequest.method]: [SubscribeRequest.Params, SubscribeRequest.Result];
  [UnsubscribeRequest.method]: [UnsubscribeRequest.Params, UnsubscribeRequest.Result];
  [CancelRequest.method]: [CancelRequest.Params, CancelRequest.Result];
  [PromoteRequest.method]: [PromoteRequest.Params, PromoteRequest.Result];
  [CloseRequest.method]: [CloseRequest.Params, CloseRequest.Result];
  [ListRequest.method]: [ListRequest.Params, ListRequest.Result];
  [ModelsRequest.method]: [ModelsRequest.Params, ModelsRequest.Result];
  [ConfigureRequest.method]: [ConfigureRequest.Params, ConfigureRequest.Result];
  [RenameRequest.method]: [RenameRequest.Params, RenameRequest.Result];
  [ConsumeTaskRequest.method]: [ConsumeTaskRequest.Params, ConsumeTaskRequest.Result];
  [DeleteRequest.method]: [DeleteRequest.Params, DeleteRequest.Result];
  [ExportRequest.method]: [ExportRequest.Params, ExportRequest.Result];
  [DecisionsRequest.method]: [DecisionsRequest.Params, DecisionsRequest.Result];
  [EditDecisionRequest.method]: [EditDecisionRequest.Params, EditDecisionRequest.Result];
  [DeleteDecisionRequest.method]: [DeleteDecisionRequest.Params, DeleteDecisionRequest.Result];
  [ReviewRequest.method]: [ReviewRequest.Params, ReviewRequest.Result];
}

export type DiscussMethod = keyof DiscussRequests;
export type ParamsOf<M extends DiscussMethod> = DiscussRequests[M][0];
export type ResultOf<M extends DiscussMethod> = DiscussRequests[M][1];

/** The typed slice of a JSON-RPC connection a client needs to make requests. */
export interface RequestChannel {
  request<M extends DiscussMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
}

/**
 * A request's params as they arrive over the wire: the protocol's field
 * names, each value unchecked. The server's core validates every field; typing
 * its inputs this way keeps a renamed field a compile error there too.
 */
export type Untrusted<P> = { readonly [K in keyof P]?: unknown };

/**
 * Server → client: the model requests of a discussion held with one of VS
 * Code's language models (`vscode.lm`), which exist only in the extension
 * host. The server still runs the discussion; the client only runs each
 * request and streams its parts back. Only a client that says so in
 * `initialize` (`languageModels: true`) is asked.
 */

/** A discussion's model id names a VS Code language model when it starts with this. */
export const VSCODE_MODEL_PREFIX = 'vscode-lm:';

/** What to do when VS Code offers no language models (said by the server and the extension alike). */
export const NO_VSCODE_MODELS_REMEDY = 'Install or sign in to an extension that provides language models, or pick an OpenAI-compatible endpoint';

/** One message of the conversation as the server holds it; the client maps it to `LanguageModelChatMessage` parts. */
export type LmChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: Array<{ id: string; name: string; arguments: string }> }
  | { role: 'tool'; toolCallId: string; content: string };

export interface LmToolSpec {
  name: string;
  description: string;
  /** JSON Schema, passed as the tool's `inputSchema`. */
  parameters: Record<string, unknown>;
}

/** A VS Code language model as `vscode.lm.selectChatModels()` describes it. */
export interface LmModelInfo {
  /** The model's id in VS Code (without `VSCODE_MODEL_PREFIX`). */
  id: string;
  name: string;
  vendor: string;
  family: string;
  version?: string;
  maxInputTokens: number;
}

/**
 * Why the client could not run a request, in words the server turns into a
 * remedy. `available` names the models still offered (for a withdrawn one).
 */
export interface LmFailure {
  kind: 'no_models' | 'model_not_found' | 'no_consent' | 'blocked' | 'cancelled' | 'failed';
  /** What VS Code or the providing extension said, if anything. */
  detail?: string;
  /** `LanguageModelError.code`, when there was one. */
  code?: string;
  available?: string[];
}

/** Server → client: run one model request with `model.sendRequest`; its parts arrive as `discuss/lmDelta` first. */
export namespace LmRequest {
  export const method = 'discuss/lmRequest';
  export interface Params {
    /** Keys this request's `discuss/lmDelta` notifications. */
    requestId: string;
    /** The model's id in VS Code (without `VSCODE_MODEL_PREFIX`); absent: the first model VS Code offers. */
    model?: string;
    messages: LmChatMessage[];
    tools?: LmToolSpec[];
    /** Passed on in `modelOptions`; a provider may ignore them. */
    temperature?: number;
    maxTokens?: number;
  }
  export interface Result {
    /** Absent when the reply streamed whole. */
    error?: LmFailure;
  }
}

/** One streamed part of a reply: text, or a whole tool call (VS Code delivers tool calls whole). */
export type LmResponsePart =
  | { type: 'text'; value: string }
  | { type: 'toolCall'; callId: string; name: string; input: unknown };

/** Client → server: parts of the reply to `discuss/lmRequest` `requestId`, in order, all before its result. */
export namespace LmDeltaNotification {
  export const method = 'discuss/lmDelta';
  export interface Params {
    requestId: string;
    parts: LmResponsePart[];
  }
}

/** Server → client: the language models VS Code offers now. */
export namespace LmModelsRequest {
  export const method = 'discuss/lmModels';
  export type Params = Record<string, never>;
  export interface Result {
    models: LmModelInfo[];
  }
}

/**
 * The model seam. The discussion core talks to a model only through this
 * interface, so tests drive it with scripted fakes and production plugs in the
 * OpenAI-compatible implementation.
 */
import type { ClientKind, RemedyCode } from '../../../shared/protocol';

export interface ToolCall {
  /** Provider-assigned id, echoed back on the tool's result message. */
  id: string;
  name: string;
  /** The raw argument string exactly as the model produced it (may be invalid JSON). */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A function tool advertised to the model (JSON Schema parameters). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** Model id; undefined means the endpoint's configured default. */
  model?: string;
  temperature?: number;
  maxTokens?: number;
  /** Aborted on cancel or close: the request must stop, not just be ignored. */
  signal: AbortSignal;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface ChatResponse {
  content: string;
  toolCalls: ToolCall[];
  /** `stop`, `tool_calls`, `length`, or null when the provider sent none. */
  finishReason: string | null;
  /** What the call cost, when the endpoint reports it. */
  usage?: TokenUsage;
}

/** Side channels of a streamed completion besides the visible text. */
export interface StreamObserver {
  /** Reasoning text (`reasoning_content`, `reasoning`, `<think>` blocks): shown collapsed, never part of the answer. */
  onReasoning?(text: string): void;
  /**
   * Everything this call passed to `onDelta` so far was reasoning after all
   * (content that turned out to end with a lone `</think>`): drop it from the
   * answer. Its text follows through `onReasoning`; `ChatResponse.content`
   * leaves it out.
   */
  onAnswerRetracted?(): void;
  /** A try failed in a way worth retrying, and the next one starts after `retryInMs`: a sign of life for whoever waits. */
  onRetry?(retry: RetryNotice): void;
}

/** A retry about to be waited for. */
export interface RetryNotice {
  retryInMs: number;
  /** The retry this wait leads to, from 1. */
  attempt: number;
  /** Retries allowed in all. */
  of: number;
  /** A few words on what failed, e.g. "rate-limited (429)". */
  reason: string;
}

export interface ChatModel {
  /** Streams one completion, calling `onDelta` with each piece of visible text. */
  complete(request: ChatRequest, onDelta: (text: string) => void, observer?: StreamObserver): Promise<ChatResponse>;
  /**
   * Model ids the endpoint offers. Throws a ModelError of kind `cannot_list`
   * when the endpoint has no model list (the id is then free text); other
   * kinds (auth, network…) are real failures. With `like`, only the models
   * of the source that model id belongs to (see sources.ts).
   */
  listModels(signal?: AbortSignal, like?: string): Promise<string[]>;
  /** The context window this source knows for a model id (a VS Code model's `maxInputTokens`), if any. */
  contextWindow?(modelId: string): number | undefined;
}

export type ModelErrorKind =
  | 'auth'
  | 'unknown_model'
  | 'rate_limited'
  | 'server'
  | 'network'
  | 'bad_request'
  | 'not_configured'
  | 'cancelled'
  /** The model refused the tool definitions: it cannot read the repository. */
  | 'no_tools'
  /**
   * `listModels` only: the endpoint has no usable model list (404/405/501, or
   * not a JSON list, or an Azure deployment URL without one). Any model id may
   * still work, so callers should accept one typed in by hand.
   */
  | 'cannot_list';

/**
 * A model failure a person can act on: `message` says what happened and what
 * to do about it (set a key, pick another model, try again). `remedy` names
 * the fix, so a client can word it in its own terms (see RemedyCode).
 */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status?: number,
    readonly remedy?: RemedyCode,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** Where a model lives and how to reach it. */
export interface ModelSettings {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  /**
   * Azure OpenAI `api-version` query parameter. Setting it (or putting
   * `?api-version=…` in the base URL, or using a `*.openai.azure.com` /
   * `*.cognitiveservices.azure.com` host) switches to Azure's conventions:
   * the key goes in an `api-key` header and every request carries the version.
   */
  apiVersion?: string;
  /** Who reads the failure messages: a terminal gets them without VS Code's commands (absent: VS Code). */
  audience?: ClientKind;
}

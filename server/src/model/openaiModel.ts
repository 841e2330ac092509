/**
 * ChatModel over any OpenAI-compatible endpoint, through the official SDK.
 *
 * Failures become ModelErrors whose message tells a person what to do next.
 * Retrying is done here rather than by the SDK so that a wait can be
 * cancelled, an unreasonable retry-after is not obeyed, and a request is never
 * repeated once part of its reply has been shown.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, OpenAIError } from 'openai';
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  ModelError,
  ModelErrorKind,
  ModelSettings,
  ToolCall,
  ToolSpec,
} from './types';

export interface OpenAIModelOptions {
  /** Retries after a 429, a 5xx or a failed connection, before any reply arrived. Default 2. */
  maxRetries?: number;
  /** Longest wait for the endpoint to answer, and then between two chunks of a reply. Default 5 minutes. */
  timeoutMs?: number;
  /** First backoff when the endpoint names no wait; doubled per retry. Default 500 ms. */
  retryDelayMs?: number;
}

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_RETRY_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A server asking for a longer pause is better reported than waited out. */
const MAX_HONOURED_RETRY_AFTER_MS = 60_000;
/** The SDK refuses to start without a key; local endpoints rarely need one. */
const PLACEHOLDER_API_KEY = 'no-api-key-set';

const SET_KEY_REMEDY = "Set a valid key with 'Repo Discuss: Set API key' in VS Code, or OPENAI_API_KEY for the server.";
const SELECT_MODEL_REMEDY = "Pick one it offers with 'Repo Discuss: Select model' in VS Code, or set OPENAI_MODEL for the server.";
const SET_MODEL_REMEDY = "Set a model with 'Repo Discuss: Select model' in VS Code, or OPENAI_MODEL for the server.";

export function createOpenAIModel(getSettings: () => ModelSettings, options: OpenAIModelOptions = {}): ChatModel {
  return new OpenAIChatModel(getSettings, options);
}

/** Settings cleaned up once per call, so blanks mean "unset" everywhere. */
interface Endpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string | undefined;
}

type Operation = 'chat' | 'models';

interface FailureContext {
  endpoint: Endpoint;
  operation: Operation;
  model?: string;
}

/** A classified failure; the message is written once we know how many retries were made. */
interface Failure {
  kind: ModelErrorKind;
  status?: number;
  retryable: boolean;
  retryAfterMs?: number;
  describe(retries: number): string;
}

/** Shared between an attempt and the retry loop: once anything arrived, the attempt must not be repeated. */
interface AttemptProgress {
  received: boolean;
}

/** The endpoint went quiet for longer than the timeout. */
class StreamStalled extends Error {
  constructor(readonly timeoutMs: number) {
    super('stream stalled');
  }
}
/** The stream ended with no finish reason and nothing in it. */
class StreamEndedEmpty extends Error {}
/** The caller's onDelta threw: its error is the caller's, passed through untouched. */
class DeltaCallbackFailed extends Error {
  constructor(readonly original: unknown) {
    super('onDelta failed');
  }
}

class OpenAIChatModel implements ChatModel {
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly retryDelayMs: number;
  private cachedClient: { key: string; client: OpenAI } | undefined;
  /** First listed model per base URL, used when no model is set. */
  private readonly fallbackModels = new Map<string, string>();

  constructor(
    private readonly getSettings: () => ModelSettings,
    options: OpenAIModelOptions,
  ) {
    this.maxRetries = Math.max(0, Math.floor(options.maxRetries ?? DEFAULT_MAX_RETRIES));
    this.timeoutMs = Math.max(1, Math.floor(options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    this.retryDelayMs = Math.max(0, options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS);
  }

  async complete(request: ChatRequest, onDelta: (text: string) => void): Promise<ChatResponse> {
    const { signal } = request;
    if (signal.aborted) throw cancelledError();
    const endpoint = this.currentEndpoint();
    const chosenModel = request.model?.trim() || endpoint.model;
    const model = chosenModel ?? (await this.fallbackModel(endpoint, signal));
    const body = requestBody(request, model);
    const client = this.clientFor(endpoint);
    try {
      return await this.withRetries({ endpoint, operation: 'chat', model }, signal, (progress) =>
        this.streamOnce(client, body, signal, onDelta, progress),
      );
    } catch (error) {
      // A listed model that has since disappeared should not stay the default.
      if (!chosenModel && error instanceof ModelError && error.kind === 'unknown_model') {
        this.fallbackModels.delete(endpoint.baseUrl);
      }
      throw error;
    }
  }

  listModels(signal?: AbortSignal): Promise<string[]> {
    return this.listModelsAt(this.currentEndpoint(), signal);
  }

  private async listModelsAt(endpoint: Endpoint, signal: AbortSignal | undefined): Promise<string[]> {
    if (signal?.aborted) throw cancelledError();
    const client = this.clientFor(endpoint);
    return this.withRetries({ endpoint, operation: 'models' }, signal, async () => {
      const ids: string[] = [];
      for await (const model of client.models.list({ signal })) ids.push(model.id);
      return ids;
    });
  }

  private async fallbackModel(endpoint: Endpoint, signal: AbortSignal): Promise<string> {
    const cached = this.fallbackModels.get(endpoint.baseUrl);
    if (cached) return cached;
    let ids: string[];
    try {
      ids = await this.listModelsAt(endpoint, signal);
    } catch (error) {
      // Setting a model would not fix a bad key, an unreachable server or a cancel.
      if (error instanceof ModelError && ['auth', 'network', 'cancelled'].includes(error.kind)) throw error;
      const why = error instanceof ModelError && error.status ? `its model list failed with ${error.status}` : 'its model list failed';
      throw notConfigured(endpoint, why);
    }
    const first = ids.find((id) => id.trim() !== '');
    if (!first) throw notConfigured(endpoint, 'it lists no models');
    this.fallbackModels.set(endpoint.baseUrl, first);
    return first;
  }

  private currentEndpoint(): Endpoint {
    const settings = this.getSettings();
    const baseUrl = (settings.baseUrl?.trim() || DEFAULT_BASE_URL).replace(/\/+$/, '');
    let protocol: string | undefined;
    try {
      protocol = new URL(baseUrl).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new ModelError(
        'not_configured',
        `The model base URL '${baseUrl}' is not an http(s) URL. Set it to the endpoint's OpenAI-compatible API, e.g. http://localhost:11434/v1 (OPENAI_BASE_URL for the server).`,
      );
    }
    return {
      baseUrl,
      apiKey: settings.apiKey?.trim() || undefined,
      model: settings.model?.trim() || undefined,
    };
  }

  /** Settings change at run time; a client is rebuilt only when the endpoint or key does. */
  private clientFor(endpoint: Endpoint): OpenAI {
    const key = JSON.stringify([endpoint.baseUrl, endpoint.apiKey ?? null]);
    if (this.cachedClient?.key !== key) {
      const client = new OpenAI({
        baseURL: endpoint.baseUrl,
        apiKey: endpoint.apiKey ?? PLACEHOLDER_API_KEY,
        // Retries are ours (see the file comment).
        maxRetries: 0,
        timeout: this.timeoutMs,
        // The server may speak JSON-RPC on stdio; our errors carry what matters.
        logLevel: 'off',
        // Not inherited from the environment: this endpoint is the one the settings name.
        organization: null,
        project: null,
      });
      this.cachedClient = { key, client };
    }
    return this.cachedClient.client;
  }

  private async streamOnce(
    client: OpenAI,
    body: ChatCompletionCreateParamsStreaming,
    signal: AbortSignal,
    onDelta: (text: string) => void,
    progress: AttemptProgress,
  ): Promise<ChatResponse> {
    // One controller per attempt: aborted by the caller's signal, or by us when the endpoint goes quiet.
    const attempt = new AbortController();
    const abortAttempt = () => attempt.abort();
    signal.addEventListener('abort', abortAttempt, { once: true });
    let stalled = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const restartIdleTimer = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        stalled = true;
        attempt.abort();
      }, this.timeoutMs);
    };

    let content = '';
    let finishReason: string | null = null;
    const toolCalls = new ToolCallAssembler();
    try {
      restartIdleTimer();
      const stream = await client.chat.completions.create(body, { signal: attempt.signal });
      for await (const chunk of stream) {
        restartIdleTimer();
        for (const choice of chunk.choices ?? []) {
          if (choice.index !== undefined && choice.index !== 0) continue;
          const delta = (choice.delta ?? {}) as LooseDelta;
          for (const piece of [delta.content, delta.refusal]) {
            if (typeof piece !== 'string' || piece === '') continue;
            progress.received = true;
            content += piece;
            try {
              onDelta(piece);
            } catch (error) {
              throw new DeltaCallbackFailed(error);
            }
          }
          for (const fragment of delta.tool_calls ?? []) {
            progress.received = true;
            toolCalls.add(fragment);
          }
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
      }
    } catch (error) {
      if (stalled && !signal.aborted) throw new StreamStalled(this.timeoutMs);
      throw error;
    } finally {
      clearTimeout(idleTimer);
      signal.removeEventListener('abort', abortAttempt);
    }
    // The SDK ends iteration quietly on abort, so an abort must be noticed here.
    if (signal.aborted) throw cancelledError();
    if (stalled) throw new StreamStalled(this.timeoutMs);
    const calls = toolCalls.result();
    if (finishReason === null && content === '' && calls.length === 0) throw new StreamEndedEmpty();
    return { content, toolCalls: calls, finishReason };
  }

  private async withRetries<T>(
    context: FailureContext,
    signal: AbortSignal | undefined,
    attempt: (progress: AttemptProgress) => Promise<T>,
  ): Promise<T> {
    for (let retries = 0; ; retries++) {
      const progress: AttemptProgress = { received: false };
      try {
        return await attempt(progress);
      } catch (error) {
        if (error instanceof DeltaCallbackFailed) throw error.original;
        if (signal?.aborted) throw cancelledError();
        if (error instanceof ModelError) throw error;
        const failure = classify(error, context);
        if (!failure) throw error;
        const wait = failure.retryable && !progress.received && retries < this.maxRetries ? this.backoff(failure, retries) : undefined;
        if (wait === undefined) throw new ModelError(failure.kind, failure.describe(retries), failure.status);
        await sleep(wait, signal);
      }
    }
  }

  /** Milliseconds to wait before the next try, or undefined when the server asks for too long. */
  private backoff(failure: Failure, retries: number): number | undefined {
    if (failure.retryAfterMs !== undefined) {
      return failure.retryAfterMs > MAX_HONOURED_RETRY_AFTER_MS ? undefined : Math.max(0, failure.retryAfterMs);
    }
    const exponential = Math.min(this.retryDelayMs * 2 ** retries, MAX_BACKOFF_MS);
    // Jitter keeps several clients from retrying in lockstep.
    return exponential * (1 - Math.random() * 0.25);
  }
}

// ---------------------------------------------------------------------------
// Request mapping

function requestBody(request: ChatRequest, model: string): ChatCompletionCreateParamsStreaming {
  return {
    model,
    messages: request.messages.map(toOpenAIMessage),
    stream: true,
    // Some servers reject an empty tools array, so none is sent.
    ...(request.tools?.length ? { tools: request.tools.map(toOpenAITool) } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
  };
}

export function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      // OpenAI rejects an empty tool_calls array; null content is its form for "only tool calls".
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toOpenAITool(tool: ToolSpec): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

// ---------------------------------------------------------------------------
// Stream assembly

/** A delta as servers actually send it: index, id or arguments' type are not always what the spec says. */
interface LooseDelta {
  content?: string | null;
  refusal?: string | null;
  tool_calls?: LooseToolCallFragment[];
}

interface LooseToolCallFragment {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

/**
 * Rebuilds tool calls from streamed fragments: id and name come first, the
 * arguments in pieces. Fragments are matched by `index`; without one, a
 * fragment continues the last call unless it brings a new id.
 */
export class ToolCallAssembler {
  private readonly calls: Array<{ id: string; name: string; arguments: string }> = [];
  private readonly positionByIndex = new Map<number, number>();
  private lastPosition: number | undefined;

  add(fragment: LooseToolCallFragment): void {
    const position = this.positionFor(fragment);
    const call = this.calls[position];
    if (fragment.id && !call.id) call.id = fragment.id;
    const name = fragment.function?.name;
    // Some servers repeat the name on every fragment; the first one is the name.
    if (name && !call.name) call.name = name;
    const args = fragment.function?.arguments;
    if (typeof args === 'string') call.arguments += args;
    else if (args !== undefined && args !== null) call.arguments += JSON.stringify(args);
    this.lastPosition = position;
  }

  result(): ToolCall[] {
    // Tool results must be matched to calls by id, so a call without one gets one.
    return this.calls.map((call) => ({
      id: call.id || `call_${randomBytes(6).toString('hex')}`,
      name: call.name,
      arguments: call.arguments,
    }));
  }

  private positionFor(fragment: LooseToolCallFragment): number {
    const bringsOtherId = (position: number) => {
      const known = this.calls[position].id;
      return Boolean(fragment.id) && known !== '' && known !== fragment.id;
    };
    if (typeof fragment.index === 'number') {
      const known = this.positionByIndex.get(fragment.index);
      // A new id under a used index is a new call (some servers number every call 0).
      if (known !== undefined && !bringsOtherId(known)) return known;
      const position = this.openCall();
      this.positionByIndex.set(fragment.index, position);
      return position;
    }
    if (this.lastPosition !== undefined && !bringsOtherId(this.lastPosition)) return this.lastPosition;
    return this.openCall();
  }

  private openCall(): number {
    this.calls.push({ id: '', name: '', arguments: '' });
    return this.calls.length - 1;
  }
}

// ---------------------------------------------------------------------------
// Failures

function classify(error: unknown, context: FailureContext): Failure | undefined {
  const where = displayUrl(context.endpoint.baseUrl);
  const model = context.model ?? '(none)';

  if (error instanceof StreamStalled) {
    const seconds = Math.max(1, Math.round(error.timeoutMs / 1000));
    return network(false, () =>
      `The model endpoint at ${where} sent nothing for ${seconds} s. Check that the server is running and not overloaded, then try again.`,
    );
  }
  if (error instanceof StreamEndedEmpty) {
    return network(true, (retries) =>
      `The model endpoint at ${where} ended its reply before sending anything${gaveUp(retries)}. Check that the base URL points at an OpenAI-compatible API and that the server is running.`,
    );
  }
  if (error instanceof SyntaxError) {
    return network(false, () =>
      `The model endpoint at ${where} sent a stream chunk that is not valid JSON. Check that the base URL points at an OpenAI-compatible API.`,
    );
  }
  if (error instanceof APIConnectionTimeoutError) {
    return network(true, (retries) =>
      `The model endpoint at ${where} did not answer in time${gaveUp(retries)}. Check the base URL and that the server is running.`,
    );
  }
  if (error instanceof APIConnectionError) {
    return network(true, (retries) =>
      `Could not reach the model endpoint at ${where} (${connectionProblem(error)})${gaveUp(retries)}. Check the base URL and that the server is running.`,
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    return classifyStatus(error, error.status, context, where, model);
  }
  if (error instanceof APIError) {
    // An error event inside an otherwise good stream.
    const detail = serverDetail(error, context.endpoint.apiKey);
    if (error.code === 'model_not_found') return unknownModel(where, model, undefined);
    return {
      kind: 'server',
      retryable: true,
      describe: (retries) =>
        `The model endpoint at ${where} reported an error mid-reply${detail ? `: ${detail}` : ''}${gaveUp(retries)}. Try again; if it keeps failing, check the server.`,
    };
  }
  if (error instanceof TypeError || error instanceof OpenAIError) {
    // fetch reports a body cut short (reset, closed socket) as a TypeError.
    return network(true, (retries) =>
      `The connection to the model endpoint at ${where} broke off (${connectionProblem(error)})${gaveUp(retries)}. Check that the server is still running and try again.`,
    );
  }
  return undefined;
}

function classifyStatus(error: APIError, status: number, context: FailureContext, where: string, model: string): Failure {
  const detail = serverDetail(error, context.endpoint.apiKey);
  const withDetail = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) {
    // The 401 detail is left out: providers echo (part of) the key in it.
    const message = !context.endpoint.apiKey
      ? `The model endpoint at ${where} needs an API key (${status}) and none is set. ${SET_KEY_REMEDY.replace('a valid key', 'one')}`
      : status === 401
        ? `The model endpoint at ${where} rejected the API key (401). ${SET_KEY_REMEDY}`
        : `The model endpoint at ${where} refused this API key access (403)${withDetail}. Check the key's permissions. ${SET_KEY_REMEDY}`;
    return { kind: 'auth', status, retryable: false, describe: () => message };
  }
  if (error.code === 'model_not_found' || (status === 404 && context.operation === 'chat')) {
    return unknownModel(where, model, status);
  }
  if (status === 404) {
    return {
      kind: 'not_configured',
      status,
      retryable: false,
      describe: () =>
        `The endpoint at ${where} has no model list (404 on /models). Check the base URL (OpenAI-compatible APIs usually end in /v1), or name the model yourself: ${SET_MODEL_REMEDY}`,
    };
  }
  if (status === 429) {
    if (error.code === 'insufficient_quota') {
      return {
        kind: 'rate_limited',
        status,
        retryable: false,
        describe: () =>
          `The model endpoint at ${where} reports that the API key's quota is used up (429). Check the plan and billing for this key, or set another with 'Repo Discuss: Set API key'.`,
      };
    }
    const retryAfterMs = retryAfter(error.headers);
    return {
      kind: 'rate_limited',
      status,
      retryable: true,
      retryAfterMs,
      describe: (retries) => {
        const asked = retryAfterMs !== undefined && retryAfterMs > MAX_HONOURED_RETRY_AFTER_MS
          ? ` and asks to wait ${Math.ceil(retryAfterMs / 1000)} s` : '';
        return `The model endpoint at ${where} is rate-limiting requests (429)${asked}${gaveUp(retries)}. Wait a little and try again, or check the rate limits of this key.`;
      },
    };
  }
  if (status >= 500 || status === 408) {
    return {
      kind: 'server',
      status,
      retryable: true,
      retryAfterMs: retryAfter(error.headers),
      describe: (retries) =>
        `The model endpoint at ${where} failed with a server error (${status})${withDetail}${gaveUp(retries)}. Try again shortly; if it keeps failing, check the server.`,
    };
  }
  if (error.code === 'context_length_exceeded') {
    return {
      kind: 'bad_request',
      status,
      retryable: false,
      describe: () =>
        `The discussion no longer fits the context of model '${model}' (${status})${withDetail}. Start a new discussion, or pick a model with a larger context.`,
    };
  }
  return {
    kind: 'bad_request',
    status,
    retryable: false,
    describe: () =>
      `The model endpoint at ${where} rejected the request (${status})${withDetail}. Check that model '${model}' supports tool calls and that the endpoint is OpenAI-compatible.`,
  };
}

function unknownModel(where: string, model: string, status: number | undefined): Failure {
  const code = status === undefined ? '' : ` (${status})`;
  return {
    kind: 'unknown_model',
    status,
    retryable: false,
    describe: () =>
      `The model endpoint at ${where} does not offer the model '${model}'${code}. ${SELECT_MODEL_REMEDY} If the name is right, check the base URL (OpenAI-compatible APIs usually end in /v1).`,
  };
}

function network(retryable: boolean, describe: (retries: number) => string): Failure {
  return { kind: 'network', retryable, describe };
}

function notConfigured(endpoint: Endpoint, why: string): ModelError {
  return new ModelError(
    'not_configured',
    `No model is set, and the endpoint at ${displayUrl(endpoint.baseUrl)} gave none to fall back on (${why}). ${SET_MODEL_REMEDY}`,
  );
}

function cancelledError(): ModelError {
  return new ModelError('cancelled', 'The model request was cancelled.');
}

function gaveUp(retries: number): string {
  return retries === 0 ? '' : `, still after ${retries} ${retries === 1 ? 'retry' : 'retries'}`;
}

/** The server's own words, without the key, short enough for a notification. */
function serverDetail(error: APIError, apiKey: string | undefined): string {
  const body = error.error as { message?: unknown } | undefined;
  let text = typeof body?.message === 'string' ? body.message : error.message.replace(/^\d{3}\s+/, '');
  if (/status code \(no body\)/.test(text)) return '';
  // Proxies answer errors with HTML pages; their text is what helps.
  text = text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  if (apiKey) text = text.split(apiKey).join('***');
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** Header-provided wait: `retry-after-ms` (OpenAI), else `retry-after` in seconds or as a date. */
function retryAfter(headers: Headers | undefined): number | undefined {
  const millis = parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(millis)) return millis;
  const header = headers?.get('retry-after');
  if (!header) return undefined;
  const seconds = parseFloat(header);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** A short name for why a connection failed, from the error's cause chain. */
function connectionProblem(error: Error): string {
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found',
    ECONNRESET: 'connection reset',
    EPIPE: 'connection reset',
    UND_ERR_SOCKET: 'connection closed by the server',
    ETIMEDOUT: 'timed out',
    UND_ERR_CONNECT_TIMEOUT: 'timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  let innermost: unknown = error;
  for (let current: unknown = error, depth = 0; current && depth < 6; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && known[code]) return known[code];
    if (typeof code === 'string' && /CERT|SSL|TLS/.test(code)) return `TLS problem: ${code}`;
    innermost = current;
    current = (current as { cause?: unknown }).cause;
  }
  const message = innermost instanceof Error ? innermost.message : String(innermost);
  return message || 'connection failed';
}

/** The base URL as shown to people: no credentials or query string. */
function displayUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return baseUrl;
  }
}

/** Waits, unless the caller cancels first. */
async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {
    throw cancelledError();
  }
}

/**
 * ChatModel over any OpenAI-compatible endpoint, through the official SDK.
 *
 * Failures become ModelErrors whose message tells a person what to do next.
 * Retrying is done here rather than by the SDK so that a wait can be
 * cancelled, an unreasonable retry-after is not obeyed, and a request is never
 * repeated once part of its reply has been shown.
 *
 * "OpenAI-compatible" servers differ in the details, so this file also:
 * - rebuilds tool calls however they are cut up (see ToolCallAssembler);
 * - keeps reasoning (`reasoning_content`, `reasoning`, a leading `<think>`
 *   block) out of the answer and hands it to `StreamObserver.onReasoning`;
 * - asks for token usage and returns it when the endpoint reports it;
 * - tells a reply cut off mid-stream from a whole one: a whole one ends with
 *   a finish reason or `[DONE]` (servers send one or both);
 * - retries once without a parameter the endpoint refuses (`stream_options`,
 *   streaming together with tools, `max_tokens` vs `max_completion_tokens`)
 *   and remembers that for the endpoint (or model) from then on;
 * - speaks Azure OpenAI's dialect (`api-key` header, `api-version` query).
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, AzureOpenAI, OpenAIError } from 'openai';
import { Stream } from 'openai/core/streaming';
import type {
  ChatCompletionCreateParamsNonStreaming,
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
  StreamObserver,
  TokenUsage,
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
/** A GA `api-version` of Azure OpenAI's data-plane API (tools, streamed usage); used when an Azure host is given without one. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_RETRY_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A server asking for a longer pause is better reported than waited out. */
const MAX_HONOURED_RETRY_AFTER_MS = 60_000;
/** The SDK refuses to start without a key; local endpoints rarely need one. */
const PLACEHOLDER_API_KEY = 'no-api-key-set';
/** Azure OpenAI resource hosts (classic, and AI Services / Foundry). */
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i;

const SET_KEY_REMEDY = "Set a valid key with 'Repo Discuss: Set API key' in VS Code, or OPENAI_API_KEY for the server.";
const SELECT_MODEL_REMEDY = "Pick one it offers with 'Repo Discuss: Select model' in VS Code, or set OPENAI_MODEL for the server.";
const SET_MODEL_REMEDY = "Set a model with 'Repo Discuss: Select model' in VS Code, or OPENAI_MODEL for the server.";
const TOOL_CAPABLE_REMEDY =
  "Pick a tool-capable one with 'Repo Discuss: Select model' in VS Code, or set OPENAI_MODEL for the server.";

export function createOpenAIModel(getSettings: () => ModelSettings, options: OpenAIModelOptions = {}): ChatModel {
  return new OpenAIChatModel(getSettings, options);
}

/** Settings cleaned up once per call, so blanks mean "unset" everywhere. */
export interface Endpoint {
  /** Without query string, fragment or trailing slash. */
  baseUrl: string;
  /** Identity of the endpoint for what is remembered about it (base URL, API version, query). */
  id: string;
  apiKey: string | undefined;
  model: string | undefined;
  /** Query parameters from the base URL other than `api-version`, sent with every request. */
  query: Record<string, string>;
  /** Present when the endpoint speaks Azure OpenAI's deployment API. */
  azure?: { apiVersion: string; deployment?: string };
}

type Operation = 'chat' | 'models';

interface FailureContext {
  endpoint: Endpoint;
  operation: Operation;
  model?: string;
  /** The request advertised tools, so a refusal of tools can be told apart. */
  withTools?: boolean;
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
/** The stream ended with no finish reason and nothing in it (or a whole reply had no choice). */
class StreamEndedEmpty extends Error {}
/** The stream stopped after part of a reply, with neither a finish reason nor `[DONE]` to say it was whole. */
class StreamCutOff extends Error {}
/** The caller's onDelta or an observer callback threw: its error is the caller's, passed through untouched. */
class DeltaCallbackFailed extends Error {
  constructor(readonly original: unknown) {
    super('onDelta failed');
  }
}

/** A request shape the endpoint refused, and that the next attempt avoids. */
type Adaptation =
  /** Older Azure api-versions, some gateways: 400 "Unrecognized request argument supplied: stream_options". */
  | 'drop_stream_options'
  /** llama.cpp before streamed tool calls: 400 "Cannot use tools with stream". */
  | 'no_streaming_with_tools'
  /** OpenAI o-series and gpt-5: 400 "Unsupported parameter: 'max_tokens' … Use 'max_completion_tokens' instead." */
  | 'use_max_completion_tokens'
  /** Servers (and old Azure api-versions) that only know the older name. */
  | 'use_max_tokens';

/** Raised by an attempt whose parameters were refused; the caller adapts the request and tries again. */
class ParameterRejected extends Error {
  constructor(readonly adaptation: Adaptation) {
    super(`parameter rejected: ${adaptation}`);
  }
}

/** What one endpoint has refused so far. */
interface EndpointQuirks {
  noStreamOptions?: boolean;
  noStreamingWithTools?: boolean;
}

type TokenLimitParam = 'max_tokens' | 'max_completion_tokens';

/** How the next request is shaped, from what the endpoint and model have refused before. */
interface RequestPlan {
  stream: boolean;
  streamOptions: boolean;
  tokenLimitParam: TokenLimitParam;
}

class OpenAIChatModel implements ChatModel {
  private readonly maxRetries: number;
  private readonly timeoutMs: number;
  private readonly retryDelayMs: number;
  private cachedClient: { key: string; client: OpenAI } | undefined;
  /** First listed model per endpoint, used when no model is set. */
  private readonly fallbackModels = new Map<string, string>();
  /** Parameters each endpoint refused, by endpoint id. */
  private readonly endpointQuirks = new Map<string, EndpointQuirks>();
  /** The output-limit parameter each model accepts, by endpoint id and model. */
  private readonly tokenLimitParams = new Map<string, TokenLimitParam>();

  constructor(
    private readonly getSettings: () => ModelSettings,
    options: OpenAIModelOptions,
  ) {
    this.maxRetries = Math.max(0, Math.floor(options.maxRetries ?? DEFAULT_MAX_RETRIES));
    this.timeoutMs = Math.max(1, Math.floor(options.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    this.retryDelayMs = Math.max(0, options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS);
  }

  async complete(request: ChatRequest, onDelta: (text: string) => void, observer: StreamObserver = {}): Promise<ChatResponse> {
    const { signal } = request;
    if (signal.aborted) throw cancelledError();
    const endpoint = this.currentEndpoint();
    const chosenModel = request.model?.trim() || endpoint.model;
    const model = chosenModel ?? (await this.fallbackModel(endpoint, signal));
    const client = this.clientFor(endpoint);
    const context: FailureContext = { endpoint, operation: 'chat', model, withTools: Boolean(request.tools?.length) };
    // Each refusal is adapted to at most once per call, so a server that keeps refusing cannot loop us.
    const adapted = new Set<Adaptation>();
    try {
      for (;;) {
        const plan = this.planFor(endpoint, model, request);
        try {
          return await this.withRetries(context, signal, async (progress) => {
            const reply = new ReplyBuilder(onDelta, observer, progress);
            try {
              return plan.stream
                ? await this.streamOnce(client, streamingBody(request, model, plan), signal, reply)
                : await this.fetchWhole(client, wholeBody(request, model, plan), signal, reply);
            } catch (error) {
              const adaptation = progress.received ? undefined : adaptationFor(error, request, plan);
              if (adaptation && !adapted.has(adaptation)) throw new ParameterRejected(adaptation);
              throw error;
            }
          });
        } catch (error) {
          if (!(error instanceof ParameterRejected)) throw error;
          adapted.add(error.adaptation);
          this.remember(endpoint, model, error.adaptation);
        }
      }
    } catch (error) {
      // A listed model that has since disappeared should not stay the default.
      if (!chosenModel && error instanceof ModelError && error.kind === 'unknown_model') {
        this.fallbackModels.delete(endpoint.id);
      }
      throw error;
    }
  }

  listModels(signal?: AbortSignal): Promise<string[]> {
    return this.listModelsAt(this.currentEndpoint(), signal);
  }

  private planFor(endpoint: Endpoint, model: string, request: ChatRequest): RequestPlan {
    const quirks = this.endpointQuirks.get(endpoint.id) ?? {};
    const stream = !(request.tools?.length && quirks.noStreamingWithTools);
    return {
      stream,
      streamOptions: stream && !quirks.noStreamOptions,
      tokenLimitParam: this.tokenLimitParams.get(modelKey(endpoint, model)) ?? 'max_tokens',
    };
  }

  private remember(endpoint: Endpoint, model: string, adaptation: Adaptation): void {
    const quirks = this.endpointQuirks.get(endpoint.id) ?? {};
    switch (adaptation) {
      case 'drop_stream_options':
        quirks.noStreamOptions = true;
        break;
      case 'no_streaming_with_tools':
        quirks.noStreamingWithTools = true;
        break;
      case 'use_max_completion_tokens':
        this.tokenLimitParams.set(modelKey(endpoint, model), 'max_completion_tokens');
        break;
      case 'use_max_tokens':
        this.tokenLimitParams.set(modelKey(endpoint, model), 'max_tokens');
        break;
    }
    this.endpointQuirks.set(endpoint.id, quirks);
  }

  private async listModelsAt(endpoint: Endpoint, signal: AbortSignal | undefined): Promise<string[]> {
    if (signal?.aborted) throw cancelledError();
    const where = displayUrl(endpoint.baseUrl);
    if (endpoint.azure?.deployment) {
      // An Azure deployment URL serves exactly one model, whatever the request names.
      return [endpoint.azure.deployment];
    }
    if (endpoint.azure) {
      // Azure's /models lists the base models of the resource, not its deployments, which are what requests name.
      throw new ModelError(
        'cannot_list',
        `The Azure OpenAI endpoint at ${where} cannot list its deployments. Type the deployment name as the model, or put it in the base URL (…/openai/deployments/NAME).`,
      );
    }
    const client = this.clientFor(endpoint);
    return this.withRetries({ endpoint, operation: 'models' }, signal, async () => {
      let body: unknown;
      try {
        body = await client.get<unknown>('/models', { signal });
      } catch (error) {
        if (!(error instanceof SyntaxError)) throw error;
        body = undefined;
      }
      const ids = modelIdsFrom(body);
      if (!ids) {
        throw new ModelError(
          'cannot_list',
          `The endpoint at ${where} did not answer /models with a model list. Check the base URL (OpenAI-compatible APIs usually end in /v1), or name the model yourself: ${SET_MODEL_REMEDY}`,
        );
      }
      return ids;
    });
  }

  private async fallbackModel(endpoint: Endpoint, signal: AbortSignal): Promise<string> {
    const cached = this.fallbackModels.get(endpoint.id);
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
    this.fallbackModels.set(endpoint.id, first);
    return first;
  }

  private currentEndpoint(): Endpoint {
    return resolveEndpoint(this.getSettings());
  }

  /** Settings change at run time; a client is rebuilt only when the endpoint or key does. */
  private clientFor(endpoint: Endpoint): OpenAI {
    const key = JSON.stringify([endpoint.id, endpoint.apiKey ?? null]);
    if (this.cachedClient?.key !== key) {
      const common = {
        baseURL: endpoint.baseUrl,
        // Retries are ours (see the file comment).
        maxRetries: 0,
        timeout: this.timeoutMs,
        // The server may speak JSON-RPC on stdio; our errors carry what matters.
        logLevel: 'off' as const,
        // Not inherited from the environment: this endpoint is the one the settings name.
        organization: null,
        project: null,
        ...(Object.keys(endpoint.query).length > 0 ? { defaultQuery: endpoint.query } : {}),
      };
      let client: OpenAI;
      if (endpoint.azure) {
        if (!endpoint.apiKey) {
          throw new ModelError(
            'auth',
            `The Azure OpenAI endpoint at ${displayUrl(endpoint.baseUrl)} needs an API key and none is set. ${SET_KEY_REMEDY.replace('a valid key', 'one')}`,
          );
        }
        // Azure wants the key in an `api-key` header and `api-version` on every request; the SDK's Azure client does both.
        client = new AzureOpenAI({ ...common, apiKey: endpoint.apiKey, apiVersion: endpoint.azure.apiVersion });
      } else {
        client = new OpenAI({ ...common, apiKey: endpoint.apiKey ?? PLACEHOLDER_API_KEY });
      }
      this.cachedClient = { key, client };
    }
    return this.cachedClient.client;
  }

  private async streamOnce(
    client: OpenAI,
    body: ChatCompletionCreateParamsStreaming,
    signal: AbortSignal,
    reply: ReplyBuilder,
  ): Promise<ChatResponse> {
    // One controller per attempt: aborted by the caller's signal, or by us when the endpoint goes quiet.
    const attempt = new AbortController();
    const abortAttempt = () => attempt.abort();
    signal.addEventListener('abort', abortAttempt, { once: true });
    let stalled = false;
    let idleTimer: NodeJS.Timeout | undefined;
    // One timer that checks when the stream last moved, rather than a new
    // timer for each of the thousands of chunks a reply arrives in.
    let lastActivity = performance.now();
    const armIdleTimer = (ms: number) => {
      idleTimer = setTimeout(() => {
        const idle = performance.now() - lastActivity;
        if (idle < this.timeoutMs) return armIdleTimer(this.timeoutMs - idle);
        stalled = true;
        attempt.abort();
      }, ms);
    };
    const restartIdleTimer = () => {
      lastActivity = performance.now();
      if (idleTimer === undefined) armIdleTimer(this.timeoutMs);
    };

    const end = new StreamEndWatch();
    try {
      restartIdleTimer();
      // The raw response, so its bytes can be watched for `[DONE]` on their way to the SDK's own parser.
      const response = await client.chat.completions.create(body, { signal: attempt.signal }).asResponse();
      const stream = Stream.fromSSEResponse<LooseChunk>(end.watch(response), attempt, client);
      for await (const chunk of stream) {
        restartIdleTimer();
        const loose = chunk as unknown as LooseChunk;
        // OpenAI and vLLM send usage in a last chunk with no choices; llama.cpp and Ollama on the finishing chunk.
        if (loose.usage) reply.setUsage(loose.usage);
        for (const choice of loose.choices ?? []) {
          if (choice.index !== undefined && choice.index !== 0) continue;
          const delta = choice.delta ?? {};
          reply.addReasoning(reasoningOf(delta));
          reply.addText(delta.content);
          reply.addText(delta.refusal);
          for (const fragment of delta.tool_calls ?? []) reply.addToolCallFragment(fragment);
          if (choice.finish_reason) reply.finishReason = choice.finish_reason;
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
    return reply.finish(end.sawDone);
  }

  /** One request without streaming, for endpoints that cannot stream together with tools. */
  private async fetchWhole(
    client: OpenAI,
    body: ChatCompletionCreateParamsNonStreaming,
    signal: AbortSignal,
    reply: ReplyBuilder,
  ): Promise<ChatResponse> {
    const completion = (await client.chat.completions.create(body, { signal })) as unknown as LooseCompletion | string;
    if (signal.aborted) throw cancelledError();
    const choices = typeof completion === 'object' && completion !== null ? (completion.choices ?? []) : [];
    const choice = choices.find((candidate) => candidate.index === undefined || candidate.index === 0);
    if (typeof completion !== 'object' || completion === null || !choice) throw new StreamEndedEmpty();
    if (completion.usage) reply.setUsage(completion.usage);
    const message = choice.message ?? {};
    reply.addReasoning(reasoningOf(message));
    reply.addText(message.content);
    reply.addText(message.refusal);
    // A whole reply lists each call complete; its position is its index.
    (message.tool_calls ?? []).forEach((call, index) => reply.addToolCallFragment({ ...call, index }));
    reply.finishReason = choice.finish_reason ?? null;
    return reply.finish();
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
        if (error instanceof ModelError || error instanceof ParameterRejected) throw error;
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

function modelKey(endpoint: Endpoint, model: string): string {
  return `${endpoint.id}\n${model}`;
}

// ---------------------------------------------------------------------------
// Endpoint

/**
 * Reads the settings into an Endpoint. Azure OpenAI is recognised by its host,
 * an `api-version` in the base URL, or `apiVersion` in the settings.
 */
export function resolveEndpoint(settings: ModelSettings): Endpoint {
  const raw = settings.baseUrl?.trim() || DEFAULT_BASE_URL;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ModelError(
      'not_configured',
      `The model base URL '${raw.replace(/\/+$/, '')}' is not an http(s) URL. Set it to the endpoint's OpenAI-compatible API, e.g. http://localhost:11434/v1 (OPENAI_BASE_URL for the server).`,
    );
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const versionInUrl = query['api-version']?.trim() || undefined;
  delete query['api-version'];
  // The user's own spelling is kept (not URL-normalised), minus query and fragment. People paste
  // the full request URL the Azure portal or a server's docs show, so a trailing /chat/completions goes too.
  let baseUrl = raw.split(/[?#]/)[0].replace(/\/+$/, '').replace(/\/chat\/completions$/i, '');
  const path = url.pathname.replace(/\/+$/, '').replace(/\/chat\/completions$/i, '');
  const azureHost = AZURE_HOST.test(url.hostname);
  // Azure's newer /openai/v1 API is plain OpenAI (Bearer key, no deployments); only the classic one needs the dialect.
  const v1Api = /\/openai\/v1$/i.test(path);
  const apiVersion =
    settings.apiVersion?.trim() || versionInUrl || (azureHost && !v1Api ? DEFAULT_AZURE_API_VERSION : undefined);

  let azure: Endpoint['azure'];
  if (apiVersion && v1Api) {
    query['api-version'] = apiVersion;
  } else if (apiVersion) {
    // A bare resource URL gets the /openai prefix every Azure data-plane path has.
    if (azureHost && path === '') baseUrl = `${baseUrl}/openai`;
    const deployment = /\/deployments\/([^/]+)/i.exec(path)?.[1];
    azure = { apiVersion, ...(deployment ? { deployment: safeDecode(deployment) } : {}) };
  }
  return {
    baseUrl,
    id: JSON.stringify([baseUrl, azure?.apiVersion ?? null, query]),
    apiKey: settings.apiKey?.trim() || undefined,
    model: settings.model?.trim() || undefined,
    query,
    ...(azure ? { azure } : {}),
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Ids from a /models answer: OpenAI's `{data: [{id}]}`, or the `models` list or bare array some servers send. */
function modelIdsFrom(body: unknown): string[] | undefined {
  const list = Array.isArray(body)
    ? body
    : typeof body === 'object' && body !== null
      ? ((body as { data?: unknown }).data ?? (body as { models?: unknown }).models)
      : undefined;
  if (!Array.isArray(list)) return undefined;
  const ids: string[] = [];
  for (const item of list) {
    const id =
      typeof item === 'string'
        ? item
        : typeof item === 'object' && item !== null
          ? [(item as { id?: unknown }).id, (item as { name?: unknown }).name, (item as { model?: unknown }).model].find(
              (value): value is string => typeof value === 'string',
            )
          : undefined;
    if (id) ids.push(id);
  }
  return ids;
}

// ---------------------------------------------------------------------------
// Request mapping

function baseBody(request: ChatRequest, model: string, plan: RequestPlan) {
  return {
    model,
    messages: request.messages.map(toOpenAIMessage),
    // Some servers reject an empty tools array, so none is sent.
    ...(request.tools?.length ? { tools: request.tools.map(toOpenAITool) } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { [plan.tokenLimitParam]: request.maxTokens } : {}),
  };
}

function streamingBody(request: ChatRequest, model: string, plan: RequestPlan): ChatCompletionCreateParamsStreaming {
  return {
    ...baseBody(request, model, plan),
    stream: true,
    // Without it OpenAI (and most servers that follow it) report no usage for a streamed reply.
    ...(plan.streamOptions ? { stream_options: { include_usage: true } } : {}),
  };
}

function wholeBody(request: ChatRequest, model: string, plan: RequestPlan): ChatCompletionCreateParamsNonStreaming {
  // `stream_options` is refused without streaming, so it is not sent here.
  return { ...baseBody(request, model, plan), stream: false };
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

/**
 * Which refusal, if any, a failed attempt met. Only a 400/422 that names a
 * parameter we actually sent counts, so an unrelated bad request is reported
 * as it is rather than retried.
 */
function adaptationFor(error: unknown, request: ChatRequest, plan: RequestPlan): Adaptation | undefined {
  if (!(error instanceof APIError) || (error.status !== 400 && error.status !== 422)) return undefined;
  const body = error.error as { message?: unknown; param?: unknown } | undefined;
  const text = [error.message, body?.message, body?.param, error.param, error.code]
    .filter((part) => typeof part === 'string')
    .join(' ')
    .toLowerCase();
  // Words of a refused parameter, not of a bad value: vLLM's "'max_tokens' is too large" is a context problem.
  const refused = /unsupported|not supported|unrecognized|unknown (?:parameter|field|argument)|not permitted|extra (?:inputs|fields)/.test(text);
  if (plan.streamOptions && text.includes('stream_options')) return 'drop_stream_options';
  if (request.maxTokens !== undefined) {
    const namesOld = /\bmax_tokens\b/.test(text);
    const namesNew = text.includes('max_completion_tokens');
    if (plan.tokenLimitParam === 'max_tokens' && namesOld && (namesNew || refused)) return 'use_max_completion_tokens';
    if (plan.tokenLimitParam === 'max_completion_tokens' && namesNew && (namesOld || refused)) return 'use_max_tokens';
  }
  if (plan.stream && request.tools?.length && /stream/.test(text) && /tool/.test(text) && /not|cannot|can't|unsupported/.test(text)) {
    return 'no_streaming_with_tools';
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Stream assembly

/** A delta or message as servers actually send it: index, id or arguments' type are not always what the spec says. */
interface LooseDelta {
  content?: string | null;
  refusal?: string | null;
  /** DeepSeek, vLLM, llama.cpp, LM Studio (older). */
  reasoning_content?: string | null;
  /** Ollama, LM Studio (newer), vLLM (newer), OpenRouter. */
  reasoning?: unknown;
  tool_calls?: LooseToolCallFragment[];
}

interface LooseToolCallFragment {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

interface LooseUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
}

interface LooseChunk {
  choices?: Array<{ index?: number; delta?: LooseDelta | null; finish_reason?: string | null }> | null;
  usage?: LooseUsage | null;
}

interface LooseCompletion {
  choices?: Array<{ index?: number; message?: LooseDelta | null; finish_reason?: string | null }> | null;
  usage?: LooseUsage | null;
}

function reasoningOf(delta: LooseDelta): string | null | undefined {
  // Some servers fill both fields with the same text during a rename; one of them is the reasoning.
  if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') return delta.reasoning_content;
  return typeof delta.reasoning === 'string' ? delta.reasoning : undefined;
}

/** Gathers one reply: visible text, reasoning, tool calls, finish reason and usage. */
class ReplyBuilder {
  finishReason: string | null = null;
  private content = '';
  private usage: TokenUsage | undefined;
  private reasoningStarted = false;
  private readonly think = new ThinkTagSplitter();
  private readonly toolCalls = new ToolCallAssembler();

  constructor(
    private readonly onDelta: (text: string) => void,
    private readonly observer: StreamObserver,
    private readonly progress: AttemptProgress,
  ) {}

  addText(piece: string | null | undefined): void {
    if (typeof piece !== 'string' || piece === '') return;
    this.progress.received = true;
    this.route(this.think.push(piece));
  }

  addReasoning(piece: string | null | undefined): void {
    if (typeof piece !== 'string' || piece === '') return;
    this.progress.received = true;
    this.reason(piece);
  }

  addToolCallFragment(fragment: LooseToolCallFragment): void {
    this.progress.received = true;
    this.toolCalls.add(fragment);
  }

  setUsage(raw: LooseUsage): void {
    const prompt = raw.prompt_tokens;
    const completion = raw.completion_tokens;
    if (typeof prompt !== 'number' && typeof completion !== 'number') return;
    const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0);
    this.usage = { promptTokens: count(prompt), completionTokens: count(completion) };
  }

  /**
   * The reply as received. `endAnnounced`: the stream said it was over
   * (`[DONE]`); a finish reason says so too. Providers send one or both
   * (some drop the finish reason, some close without `[DONE]`), so a stream
   * that stops with neither was cut off, and passing it off as a whole reply
   * would hide that from the user.
   */
  finish(endAnnounced = true): ChatResponse {
    this.route(this.think.flush());
    const calls = this.toolCalls.result();
    if (this.finishReason === null && this.content === '' && calls.length === 0 && !this.reasoningStarted) {
      throw new StreamEndedEmpty();
    }
    if (this.finishReason === null && !endAnnounced) throw new StreamCutOff();
    return {
      content: this.content,
      toolCalls: calls,
      finishReason: this.finishReason,
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }

  private route(segments: ThinkSegment[]): void {
    for (const segment of segments) {
      if (segment.retractsAnswer) {
        // The answer so far was reasoning: it must not stay in the reply, the history or the task.
        this.content = '';
        try {
          this.observer.onAnswerRetracted?.();
        } catch (error) {
          throw new DeltaCallbackFailed(error);
        }
      }
      if (segment.reasoning) {
        this.reason(segment.text);
        continue;
      }
      // LM Studio and vLLM move the reasoning out but leave the blank lines that followed it at the start of the content.
      const text = this.content === '' && this.reasoningStarted ? segment.text.trimStart() : segment.text;
      if (text === '') continue;
      this.content += text;
      try {
        this.onDelta(text);
      } catch (error) {
        throw new DeltaCallbackFailed(error);
      }
    }
  }

  private reason(piece: string): void {
    // Reasoning often opens with blank lines (and an empty <think></think> is all blank): they would show as an empty block.
    const text = this.reasoningStarted ? piece : piece.trimStart();
    if (text === '') return;
    this.reasoningStarted = true;
    try {
      this.observer.onReasoning?.(text);
    } catch (error) {
      throw new DeltaCallbackFailed(error);
    }
  }
}

/** The payload of a stream's `data: [DONE]` line (with or without the space; the SDK accepts both). */
const DONE_PAYLOAD = Buffer.from('[DONE]');
const DATA_FIELD = Buffer.from('data:');
/** Bytes kept from the end of one read, enough to see a `data: [DONE]` line cut between two reads. */
const DONE_LINE_BYTES = 16;
const LF = 0x0a;
const CR = 0x0d;
const LF_LF = Buffer.from('\n\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');

/**
 * Sits between a streamed response's body and the SDK's SSE parser, passing
 * the bytes through unchanged (errors and cancels included), for two reasons:
 *
 * - It watches for the `data: [DONE]` line that ends an OpenAI-style stream.
 *   The SDK skips that line without a word, and it is what tells a reply that
 *   ended without a finish reason from one cut off.
 * - It hands the parser one event at a time. The SDK's splitter copies the
 *   rest of its buffer for every event it takes out, which is quadratic in the
 *   events per read: a server that fell behind and read 64 KiB (400 events)
 *   at once spent longer splitting than the endpoint took to send them.
 */
export class StreamEndWatch {
  sawDone = false;
  /** The last bytes of the previous read; at first a line end, as the stream begins a line. */
  private tail: Buffer = Buffer.from('\n');

  watch(response: Response): Response {
    if (!response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        // Read until there is something to hand on: a pull that enqueues
        // nothing is never called again, and the reply would hang.
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            return;
          }
          if (!value || value.byteLength === 0) continue;
          const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
          this.scan(bytes);
          for (const piece of eventPieces(bytes)) controller.enqueue(piece);
          return;
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  private scan(bytes: Buffer): void {
    if (this.sawDone || bytes.length === 0) return;
    // A line cut between two reads: look at the seam, then at the read itself.
    const seam = Buffer.concat([this.tail, bytes.subarray(0, DONE_LINE_BYTES)]);
    if (hasDoneLine(seam) || hasDoneLine(bytes)) this.sawDone = true;
    // A copy: the reader may reuse the buffer behind `bytes`.
    this.tail = Buffer.concat([this.tail, bytes.subarray(-DONE_LINE_BYTES)]).subarray(-DONE_LINE_BYTES);
  }
}

/** True when `bytes` holds a line `data:[DONE]` or `data: [DONE]`, begun after a \n or \r. */
function hasDoneLine(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(DONE_PAYLOAD); at >= 0; at = bytes.indexOf(DONE_PAYLOAD, at + 1)) {
    const field = bytes[at - 1] === 0x20 ? at - 1 - DATA_FIELD.length : at - DATA_FIELD.length;
    if (field < 0 || !bytes.subarray(field, field + DATA_FIELD.length).equals(DATA_FIELD)) continue;
    if (bytes[field - 1] === LF || bytes[field - 1] === CR) return true;
  }
  return false;
}

/** A read cut after each event's blank line (views, not copies); a read with none stays whole. */
function eventPieces(bytes: Buffer): Buffer[] {
  // One separator per stream in practice: \n\n, or \r\n\r\n from servers that end lines in CRLF.
  const separator = bytes.indexOf(CR) >= 0 ? CRLF_CRLF : LF_LF;
  const pieces: Buffer[] = [];
  let from = 0;
  for (let at = bytes.indexOf(separator); at >= 0; at = bytes.indexOf(separator, from)) {
    pieces.push(bytes.subarray(from, at + separator.length));
    from = at + separator.length;
  }
  if (from < bytes.length) pieces.push(bytes.subarray(from));
  return pieces;
}

export interface ThinkSegment {
  reasoning: boolean;
  text: string;
  /** Everything pushed out as answer so far was this reasoning (untagged; see ThinkTagSplitter): take it back. */
  retractsAnswer?: boolean;
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

/**
 * Splits a leading `<think>…</think>` block off streamed content. Reasoning
 * models served without a reasoning parser (Ollama before `think`, llama.cpp
 * with `--reasoning-format none`, LM Studio, vLLM without `--reasoning-parser`)
 * put their reasoning in the content this way, and the tags may be cut
 * anywhere between deltas. Only a block at the start counts: a `<think>` later
 * in an answer is text the model means to show.
 *
 * Some servers send the block without its opening tag (vLLM 0.7 with the
 * DeepSeek-R1 chat template, which puts `<think>\n` in the prompt): the reply
 * is reasoning up to a lone `</think>`. That is only known once the tag
 * arrives, and holding every reply back until then would delay every normal
 * answer, so the text streams as answer and is taken back (a segment with
 * `retractsAnswer`) when a lone closing tag ends it. A `</think>` counts as
 * closing untagged reasoning only when all of these hold, so an answer that
 * merely mentions the tag keeps it:
 * - it is the first `</think>` of a reply that did not open with `<think>`,
 *   and no `<think>` came before it;
 * - it stands on a line of its own: after the reply's start or a line break
 *   (spaces allowed), and followed by a line break or the end of the reply;
 * - it is not inside a fenced code block (an even number of ``` before it).
 */
export class ThinkTagSplitter {
  private state: 'start' | 'thinking' | 'afterThinking' | 'watching' | 'answer' = 'start';
  private held = '';
  /** The answer shown so far while a lone `</think>` could still turn it into reasoning. */
  private shown = '';

  push(piece: string): ThinkSegment[] {
    const out: ThinkSegment[] = [];
    let rest = piece;
    while (rest !== '') {
      switch (this.state) {
        case 'start': {
          const text = this.held + rest;
          rest = '';
          const trimmed = text.trimStart();
          if (trimmed.startsWith(THINK_OPEN)) {
            this.held = '';
            this.state = 'thinking';
            rest = trimmed.slice(THINK_OPEN.length);
          } else if (trimmed === '' || THINK_OPEN.startsWith(trimmed)) {
            // Could still become `<think>`: wait for more.
            this.held = text;
          } else {
            this.held = '';
            this.state = 'watching';
            rest = text;
          }
          break;
        }
        case 'watching': {
          const text = this.held + rest;
          rest = '';
          this.held = '';
          const end = text.indexOf(THINK_CLOSE);
          if (end < 0) {
            // Hold back what may be the start of `</think>`; show the rest.
            const keep = partialSuffix(text, THINK_CLOSE);
            this.held = text.slice(text.length - keep);
            this.showWhileWatching(out, text.slice(0, text.length - keep));
            break;
          }
          const after = text.slice(end + THINK_CLOSE.length);
          if (/^[ \t]*$/.test(after)) {
            // Whether a line break follows is not known yet.
            this.showWhileWatching(out, text.slice(0, end));
            this.held = text.slice(end);
            break;
          }
          rest = this.closeUntagged(out, text.slice(0, end), after);
          break;
        }
        case 'thinking': {
          const text = this.held + rest;
          rest = '';
          const end = text.indexOf(THINK_CLOSE);
          if (end >= 0) {
            if (end > 0) out.push({ reasoning: true, text: text.slice(0, end) });
            this.held = '';
            this.state = 'afterThinking';
            rest = text.slice(end + THINK_CLOSE.length);
          } else {
            // Hold back what may be the start of `</think>`.
            const keep = partialSuffix(text, THINK_CLOSE);
            this.held = text.slice(text.length - keep);
            if (text.length > keep) out.push({ reasoning: true, text: text.slice(0, text.length - keep) });
          }
          break;
        }
        case 'afterThinking': {
          // The blank lines between `</think>` and the answer are not part of it.
          const trimmed = rest.trimStart();
          rest = '';
          if (trimmed !== '') {
            this.state = 'answer';
            out.push({ reasoning: false, text: trimmed });
          }
          break;
        }
        case 'answer':
          out.push({ reasoning: false, text: rest });
          rest = '';
          break;
      }
    }
    return out;
  }

  /** What is still held when the reply ends: unfinished tags are what they look like. */
  flush(): ThinkSegment[] {
    const held = this.held;
    this.held = '';
    if (held === '') return [];
    if (this.state === 'start') {
      this.state = 'answer';
      return [{ reasoning: false, text: held }];
    }
    if (this.state === 'watching') {
      const out: ThinkSegment[] = [];
      // A held `</think>` with only spaces after it ends the reply: that is a line end too.
      if (held.startsWith(THINK_CLOSE)) this.closeUntagged(out, '', held.slice(THINK_CLOSE.length));
      else this.showWhileWatching(out, held);
      return out;
    }
    return this.state === 'thinking' ? [{ reasoning: true, text: held }] : [];
  }

  private showWhileWatching(out: ThinkSegment[], text: string): void {
    if (text === '') return;
    this.shown += text;
    out.push({ reasoning: false, text });
  }

  /**
   * At the first `</think>` of a reply that did not open with `<think>`:
   * reasoning if it closes untagged reasoning (see the class comment), else
   * plain answer text from here on. Returns what follows the tag.
   */
  private closeUntagged(out: ThinkSegment[], before: string, after: string): string {
    const reasoning = this.shown + before;
    const fences = reasoning.split('```').length - 1;
    const closesReasoning =
      !reasoning.includes(THINK_OPEN) && /(?:^|\n)[ \t]*$/.test(reasoning) && /^[ \t]*(?:\r?\n|$)/.test(after) && fences % 2 === 0;
    const retractsAnswer = this.shown !== '';
    this.shown = '';
    if (!closesReasoning) {
      this.state = 'answer';
      out.push({ reasoning: false, text: before + THINK_CLOSE + after });
      return '';
    }
    this.state = 'afterThinking';
    out.push({ reasoning: true, text: reasoning.trimEnd(), ...(retractsAnswer ? { retractsAnswer } : {}) });
    return after;
  }
}

/** Length of the longest end of `text` that begins `tag` (a tag cut off by the end of a delta). */
function partialSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/**
 * Rebuilds tool calls from streamed fragments: id and name come first, the
 * arguments in pieces. Fragments are matched by `index`; without one, a
 * fragment continues the last call unless it brings a new id, or a name
 * after the last call's arguments are already complete JSON.
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
    // Ollama-backed gateways pass Ollama's native shape through: arguments as an object.
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
    if (this.lastPosition !== undefined && !bringsOtherId(this.lastPosition) && !this.startsAnother(fragment, this.lastPosition)) {
      return this.lastPosition;
    }
    return this.openCall();
  }

  /**
   * Without index or id, a fragment naming a function after the last call's
   * arguments form a complete JSON value is the next call: no proper prefix of
   * a JSON object parses, so a server repeating the name mid-arguments is not
   * mistaken for one.
   */
  private startsAnother(fragment: LooseToolCallFragment, position: number): boolean {
    const last = this.calls[position];
    if (!fragment.function?.name || fragment.id || !last.name || last.arguments.trim() === '') return false;
    try {
      JSON.parse(last.arguments);
      return true;
    } catch {
      return false;
    }
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
  if (error instanceof StreamCutOff) {
    // Part of the reply has been shown, so it is not repeated (see withRetries).
    return network(false, () =>
      `The model endpoint at ${where} stopped its reply part-way: the stream closed without a finish reason or [DONE], so what was shown is incomplete. Send the message again for a whole answer; if replies keep being cut off, check the server's log, or the timeout of any proxy in between.`,
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
    if (error.code === 'model_not_found') return unknownModel(context, where, model, undefined);
    if (isContextOverflow(error, detail)) return contextOverflow(model, undefined, detail);
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
  // Ollama: 400 "registry.ollama.ai/library/gemma2:9b does not support tools"; llama.cpp without --jinja:
  // "tools param requires --jinja flag"; vLLM without --enable-auto-tool-choice.
  if (context.withTools && status < 500 && NO_TOOLS.test(detail)) {
    return {
      kind: 'no_tools',
      status,
      retryable: false,
      describe: () =>
        `Model '${model}' cannot read the repository: the endpoint at ${where} says it does not support tools (${status}${withDetail}). ${TOOL_CAPABLE_REMEDY}`,
    };
  }
  if (error.code === 'model_not_found' || (status === 404 && context.operation === 'chat')) {
    return unknownModel(context, where, model, status);
  }
  // Endpoints without a model list (llama.cpp builds before /v1/models, gateways, some proxies) answer 404, 405 or 501.
  if (context.operation === 'models' && (status === 404 || status === 405 || status === 501)) {
    return {
      kind: 'cannot_list',
      status,
      retryable: false,
      describe: () =>
        `The endpoint at ${where} has no model list (${status} on /models). Check the base URL (OpenAI-compatible APIs usually end in /v1), or name the model yourself: ${SET_MODEL_REMEDY}`,
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
  if (isContextOverflow(error, detail)) return contextOverflow(model, status, detail);
  return {
    kind: 'bad_request',
    status,
    retryable: false,
    describe: () =>
      `The model endpoint at ${where} rejected the request (${status})${withDetail}. Check that model '${model}' supports tool calls and that the endpoint is OpenAI-compatible.`,
  };
}

/** Words servers use to refuse tool definitions for a model. */
const NO_TOOLS =
  /does not support tools|tools? (?:are|is) not supported|not support(?:ed)? (?:for )?(?:tool|function)[ _-]?call|tool use is not supported|requires --jinja|enable-auto-tool-choice/i;

/** OpenAI's code; vLLM "maximum context length is … tokens"; llama.cpp "exceeds the available context size"; LM Studio "context length". */
function isContextOverflow(error: APIError, detail: string): boolean {
  if (error.code === 'context_length_exceeded') return true;
  const type = (error.error as { type?: unknown } | undefined)?.type;
  if (type === 'exceed_context_size_error') return true;
  return /maximum context length|context (?:length|size|window) (?:exceeded|is exceeded)|exceeds? the (?:available )?context|context overflow/i.test(detail);
}

function contextOverflow(model: string, status: number | undefined, detail: string): Failure {
  const code = status === undefined ? '' : ` (${status})`;
  return {
    kind: 'bad_request',
    status,
    retryable: false,
    describe: () =>
      `The discussion no longer fits the context of model '${model}'${code}${detail ? `: ${detail}` : ''}. Start a new discussion, or pick a model with a larger context; for a local server, start it with a larger context size.`,
  };
}

function unknownModel(context: FailureContext, where: string, model: string, status: number | undefined): Failure {
  const code = status === undefined ? '' : ` (${status})`;
  const deployment = context.endpoint.azure?.deployment;
  return {
    kind: 'unknown_model',
    status,
    retryable: false,
    describe: () =>
      deployment
        ? // The deployment in an Azure base URL is the model; the request's model name is ignored there.
          `The Azure OpenAI endpoint at ${where} has no deployment '${deployment}'${code}. Check the deployment name in the base URL, or its api-version.`
        : `The model endpoint at ${where} does not offer the model '${model}'${code}. ${SELECT_MODEL_REMEDY} If the name is right, check the base URL (OpenAI-compatible APIs usually end in /v1).`,
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

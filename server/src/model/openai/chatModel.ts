/**
 * ChatModel over any OpenAI-compatible endpoint, through the official SDK.
 *
 * Failures become ModelErrors whose message tells a person what to do next
 * (see failures.ts). Retrying is done here rather than by the SDK so that a
 * wait can be cancelled, an unreasonable retry-after is not obeyed, and a
 * request is never repeated once part of its reply has been shown.
 *
 * "OpenAI-compatible" servers differ in the details, so this module also:
 * - rebuilds tool calls however they are cut up (see stream/toolCalls.ts);
 * - keeps reasoning (`reasoning_content`, `reasoning`, a leading `<think>`
 *   block) out of the answer and hands it to `StreamObserver.onReasoning`
 *   (see stream/replyBuilder.ts and stream/thinkTags.ts);
 * - asks for token usage and returns it when the endpoint reports it;
 * - tells a reply cut off mid-stream from a whole one: a whole one ends with
 *   a finish reason or `[DONE]` (servers send one or both; see
 *   stream/completionChunks.ts);
 * - retries once without a parameter the endpoint refuses (`stream_options`,
 *   streaming together with tools, `max_tokens` vs `max_completion_tokens`)
 *   and remembers that for the endpoint (or model) from then on (see
 *   requestMapping.ts);
 * - speaks Azure OpenAI's dialect (`api-key` header, `api-version` query; see
 *   endpoint.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { APIError, AzureOpenAI } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { ChatModel, ChatRequest, ChatResponse, ModelError, ModelSettings, RetryNotice, StreamObserver } from '../types';
import { displayUrl, Endpoint, modelIdsFrom, resolveEndpoint } from './endpoint';
import {
  advised,
  cancelledError,
  classify,
  DeltaCallbackFailed,
  Failure,
  FailureContext,
  failureError,
  MAX_HONOURED_RETRY_AFTER_MS,
  missingApiPath,
  notConfigured,
  StreamEndedEmpty,
  StreamStalled,
} from './failures';
import { Adaptation, adaptationFor, RequestPlan, streamingBody, TokenLimitParam, wholeBody } from './requestMapping';
import { AttemptProgress, LooseChunk, LooseCompletion, reasoningOf, ReplyBuilder } from './stream/replyBuilder';
import { CompletionChunks } from './stream/completionChunks';

export interface OpenAIModelOptions {
  /** Retries after a 429, a 5xx or a failed connection, before any reply arrived. Default 2. */
  maxRetries?: number;
  /** Longest wait for the endpoint to answer, and then between two chunks of a reply. Default 5 minutes. */
  timeoutMs?: number;
  /** First backoff when the endpoint names no wait; doubled per retry. Default 500 ms. */
  retryDelayMs?: number;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_RETRY_DELAY_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/** The SDK refuses to start without a key; local endpoints rarely need one. */
const PLACEHOLDER_API_KEY = 'no-api-key-set';

export function createOpenAIModel(getSettings: () => ModelSettings, options: OpenAIModelOptions = {}): ChatModel {
  return new OpenAIChatModel(getSettings, options);
}

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
    const model = chosenModel ?? (await this.fallbackModel(endpoint, signal, observer.onRetry));
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
          }, observer.onRetry);
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
      if (error instanceof ModelError && error.kind === 'unknown_model' && error.status === 404 && !endpoint.azure) {
        if (await this.answers404OnModels(client, signal)) throw failureError(missingApiPath(endpoint, '/chat/completions and /models'), 0);
      }
      throw error;
    }
  }

  /**
   * A 404 on /chat/completions means an unknown model only if the API is
   * there: one more 404 on /models says the base URL itself is wrong (most
   * often missing /v1). Anything else leaves the model to blame.
   */
  private async answers404OnModels(client: OpenAI, signal: AbortSignal): Promise<boolean> {
    try {
      await client.get<unknown>('/models', { signal });
      return false;
    } catch (error) {
      return error instanceof APIError && error.status === 404;
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

  private async listModelsAt(endpoint: Endpoint, signal: AbortSignal | undefined, onRetry?: (retry: RetryNotice) => void): Promise<string[]> {
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
        const problem = `The endpoint at ${where} did not answer /models with a model list. Check the base URL (OpenAI-compatible APIs usually end in /v1), or name the model yourself`;
        throw new ModelError(
          'cannot_list',
          endpoint.audience === 'terminal' ? `${problem}.` : advised(`${problem}:`, 'setModel', endpoint.audience),
          undefined,
          'model',
        );
      }
      return ids;
    }, onRetry);
  }

  private async fallbackModel(endpoint: Endpoint, signal: AbortSignal, onRetry?: (retry: RetryNotice) => void): Promise<string> {
    const cached = this.fallbackModels.get(endpoint.id);
    if (cached) return cached;
    let ids: string[];
    try {
      ids = await this.listModelsAt(endpoint, signal, onRetry);
    } catch (error) {
      // Setting a model would not fix a bad key, an unreachable server, a wrong base URL or a cancel.
      if (error instanceof ModelError && (['auth', 'network', 'cancelled'].includes(error.kind) || error.remedy === 'base_url')) throw error;
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
            advised(`The Azure OpenAI endpoint at ${displayUrl(endpoint.baseUrl)} needs an API key and none is set.`, 'setFirstKey', endpoint.audience),
            undefined,
            'api_key',
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

    let chunks: CompletionChunks | undefined;
    try {
      restartIdleTimer();
      // The raw response: its events are read here (completionChunks.ts), not by the SDK's Stream.
      const response = await client.chat.completions.create(body, { signal: attempt.signal }).asResponse();
      chunks = new CompletionChunks(response, attempt);
      for await (const chunk of chunks) {
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
    return reply.finish(chunks?.sawDone ?? false);
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
    /** Told of each wait before it starts: without it, a retry is silence for as long as it takes. */
    onRetry?: (retry: RetryNotice) => void,
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
        if (wait === undefined) throw failureError(failure, retries);
        // A listener's failure must not turn a retry into a failed turn.
        try {
          onRetry?.({ retryInMs: Math.round(wait), attempt: retries + 1, of: this.maxRetries, reason: retryReason(failure) });
        } catch {
          // ignored: the retry is what matters
        }
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

/** What failed, in a few words for a progress line: never the endpoint's own text, which the error message carries. */
function retryReason(failure: Failure): string {
  const status = failure.status !== undefined ? ` (${failure.status})` : '';
  switch (failure.kind) {
    case 'rate_limited':
      return `rate-limited${status}`;
    case 'network':
      return 'could not reach the endpoint';
    default:
      return `server error${status}`;
  }
}

function modelKey(endpoint: Endpoint, model: string): string {
  return `${endpoint.id}\n${model}`;
}

/** Waits, unless the caller cancels first. */
async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch {
    throw cancelledError();
  }
}

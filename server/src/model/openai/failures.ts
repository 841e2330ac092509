/**
 * What can go wrong with a model request: the failures our own code raises
 * (a stalled, empty or cut-off stream, a callback that threw), and how any
 * failure is classified (kind, retryable, server-asked wait) and told to a
 * person, with the remedy to try.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, OpenAIError } from 'openai';
import type { ClientKind, RemedyCode } from '../../../../shared/protocol';
import { ModelError, ModelErrorKind } from '../types';
import { displayUrl, Endpoint } from './endpoint';
import { asClause, errorText } from '../../../../shared/errorText';
import { shortLine } from '../../../../shared/oneLine';

/** A server asking for a longer pause is better reported than waited out. */
export const MAX_HONOURED_RETRY_AFTER_MS = 60_000;

/**
 * VS Code's words for each fix, said after the problem: its users know these
 * commands. A terminal reader gets the problem alone and words the fix from
 * the error's remedy code (its flags, environment and config file), so it is
 * never told to run a VS Code command.
 */
const VSCODE_REMEDIES = {
  setKey: "Set a valid key with 'Repo Discuss: Set API key' in VS Code, or OPENAI_API_KEY for the server.",
  setFirstKey: "Set one with 'Repo Discuss: Set API key' in VS Code, or OPENAI_API_KEY for the server.",
  selectModel: "Pick one it offers with 'Repo Discuss: Select model' in VS Code, or set OPENAI_MODEL for the server.",
  setModel: "Set a model with 'Repo Discuss: Select model' in VS Code, or OPENAI_MODEL for the server.",
  toolModel: "Pick a tool-capable one with 'Repo Discuss: Select model' in VS Code, or set OPENAI_MODEL for the server.",
  baseUrl: "Set it with 'Repo Discuss: Select endpoint' in VS Code, or OPENAI_BASE_URL for the server.",
} as const;

/** `problem` (whole sentences), then VS Code's remedy for it unless a terminal reads it. */
export function advised(problem: string, remedy: keyof typeof VSCODE_REMEDIES, audience: ClientKind | undefined): string {
  return audience === 'terminal' ? problem : `${problem} ${VSCODE_REMEDIES[remedy]}`;
}

type Operation = 'chat' | 'models';

export interface FailureContext {
  endpoint: Endpoint;
  operation: Operation;
  model?: string;
  /** The request advertised tools, so a refusal of tools can be told apart. */
  withTools?: boolean;
}

/** A classified failure; the message is written once we know how many retries were made. */
export interface Failure {
  kind: ModelErrorKind;
  status?: number;
  retryable: boolean;
  retryAfterMs?: number;
  /** What fixes it, for a client that words the fix itself. */
  remedy?: RemedyCode;
  describe(retries: number): string;
}

/** The endpoint went quiet for longer than the timeout. */
export class StreamStalled extends Error {
  constructor(readonly timeoutMs: number) {
    super('stream stalled');
  }
}
/** The stream ended with no finish reason and nothing in it (or a whole reply had no choice). */
export class StreamEndedEmpty extends Error {}
/** The stream stopped after part of a reply, with neither a finish reason nor `[DONE]` to say it was whole. */
export class StreamCutOff extends Error {}
/** One server-sent event grew past what any chat completion chunk needs (see completionChunks.ts). */
export class StreamEventTooLarge extends Error {
  constructor(readonly limitChars: number) {
    super('stream event too large');
  }
}
/** The caller's onDelta or an observer callback threw: its error is the caller's, passed through untouched. */
export class DeltaCallbackFailed extends Error {
  constructor(readonly original: unknown) {
    super('onDelta failed');
  }
}

export function classify(error: unknown, context: FailureContext): Failure | undefined {
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
    'base_url');
  }
  if (error instanceof StreamCutOff) {
    // Part of the reply has been shown, so it is not repeated (see withRetries).
    return network(false, () =>
      `The model endpoint at ${where} stopped its reply part-way: the stream closed without a finish reason or [DONE], so what was shown is incomplete. Send the message again for a whole answer; if replies keep being cut off, check the server's log, or the timeout of any proxy in between.`,
    );
  }
  if (error instanceof StreamEventTooLarge) {
    return network(false, () =>
      `The model endpoint at ${where} sent a stream event of more than ${Math.round(error.limitChars / 2 ** 20)} MiB without ending it, far more than any chat completion chunk; the reply was stopped there. Check that the base URL points at an OpenAI-compatible API.`,
    'base_url');
  }
  if (error instanceof SyntaxError) {
    return network(false, () =>
      `The model endpoint at ${where} sent a stream chunk that is not valid JSON. Check that the base URL points at an OpenAI-compatible API.`,
    'base_url');
  }
  if (error instanceof APIConnectionTimeoutError) {
    return network(true, (retries) =>
      `The model endpoint at ${where} did not answer in time${gaveUp(retries)}. Check the base URL and that the server is running.`,
    'base_url');
  }
  if (error instanceof APIConnectionError) {
    if (nothingConfigured(context.endpoint)) {
      return network(true, (retries) =>
        `No model endpoint is set, so OpenAI's default (${where}) was used, and it could not be reached (${connectionProblem(error)})${gaveUp(retries)}.`,
      'default_endpoint');
    }
    return network(true, (retries) =>
      `Could not reach the model endpoint at ${where} (${connectionProblem(error)})${gaveUp(retries)}. Check the base URL and that the server is running.`,
    'base_url');
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
    'base_url');
  }
  return undefined;
}

function classifyStatus(error: APIError, status: number, context: FailureContext, where: string, model: string): Failure {
  const { endpoint } = context;
  const audience = endpoint.audience;
  const detail = serverDetail(error, endpoint.apiKey);
  const withDetail = detail ? `: ${detail}` : '';
  if (status === 401 || status === 403) {
    // The 401 detail is left out: providers echo (part of) the key in it.
    if (nothingConfigured(endpoint)) {
      // Nothing was configured: the likely fix is naming the endpoint meant, not a key for one never chosen.
      const message = `No model endpoint is set, so OpenAI's default (${where}) was used, and it needs an API key (${status}), which is not set either.`;
      return { kind: 'auth', status, retryable: false, remedy: 'default_endpoint', describe: () => message };
    }
    const message = !endpoint.apiKey
      ? advised(`The model endpoint at ${where} needs an API key (${status}) and none is set.`, 'setFirstKey', audience)
      : status === 401
        ? advised(`The model endpoint at ${where} rejected the API key (401).`, 'setKey', audience)
        : advised(`The model endpoint at ${where} refused this API key access (403)${withDetail}. Check the key's permissions.`, 'setKey', audience);
    return { kind: 'auth', status, retryable: false, remedy: 'api_key', describe: () => message };
  }
  // Ollama: 400 "registry.ollama.ai/library/gemma2:9b does not support tools"; llama.cpp without --jinja:
  // "tools param requires --jinja flag"; vLLM without --enable-auto-tool-choice.
  if (context.withTools && status < 500 && NO_TOOLS.test(detail)) {
    return {
      kind: 'no_tools',
      status,
      retryable: false,
      remedy: 'tool_model',
      describe: () =>
        advised(`Model '${model}' cannot read the repository: the endpoint at ${where} says it does not support tools (${status}${withDetail}).`, 'toolModel', audience),
    };
  }
  if (error.code === 'model_not_found' || (status === 404 && context.operation === 'chat')) {
    return unknownModel(context, where, model, status);
  }
  // Endpoints without a model list (llama.cpp builds before /v1/models, gateways, some proxies) answer 404, 405 or 501.
  if (context.operation === 'models' && (status === 404 || status === 405 || status === 501)) {
    if (status === 404 && lacksApiVersion(endpoint)) return missingApiPath(endpoint, '/models');
    return {
      kind: 'cannot_list',
      status,
      retryable: false,
      remedy: 'model',
      describe: () =>
        audience === 'terminal'
          ? `The endpoint at ${where} has no model list (${status} on /models). Check the base URL (OpenAI-compatible APIs usually end in /v1), or name the model yourself.`
          : `The endpoint at ${where} has no model list (${status} on /models). Check the base URL (OpenAI-compatible APIs usually end in /v1), or name the model yourself: ${VSCODE_REMEDIES.setModel}`,
    };
  }
  if (status === 429) {
    if (error.code === 'insufficient_quota') {
      return {
        kind: 'rate_limited',
        status,
        retryable: false,
        remedy: 'api_key',
        describe: () =>
          `The model endpoint at ${where} reports that the API key's quota is used up (429). Check the plan and billing for this key, or set another${audience === 'terminal' ? '' : " with 'Repo Discuss: Set API key'"}.`,
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

/**
 * No base URL and no key: the request went to OpenAI because nobody chose
 * anything. A terminal user is told that, and how to name their endpoint,
 * rather than handed the fix for a choice never made. (VS Code's setup asks
 * for the endpoint first, so its wording stays as it was.)
 */
function nothingConfigured(endpoint: Endpoint): boolean {
  return endpoint.defaulted && !endpoint.apiKey && endpoint.audience === 'terminal';
}

/** `/v1`, `/v1beta`, `/openai/v1`…: a base URL without a version segment is usually one cut short. */
function lacksApiVersion(endpoint: Endpoint): boolean {
  let path: string;
  try {
    path = new URL(endpoint.baseUrl).pathname;
  } catch {
    return false;
  }
  return !endpoint.azure && !/\/v\d+[a-z]*(?:\/|$)/i.test(path);
}

/**
 * A base URL that answers 404 for the API's own paths (`/models`, and
 * `/chat/completions` when that was tried) is the wrong URL, not a wrong
 * model: blaming the model sends people to the wrong fix.
 */
export function missingApiPath(endpoint: Endpoint, paths: '/models' | '/chat/completions and /models'): Failure {
  const where = displayUrl(endpoint.baseUrl);
  const both = paths === '/models' ? '404 on /models' : 'a 404 on both /chat/completions and /models';
  const problem = lacksApiVersion(endpoint)
    ? `The endpoint at ${where} answered ${both}: the base URL is probably missing /v1 (try ${where}/v1).`
    : `The endpoint at ${where} answered ${both}: the base URL probably does not point at an OpenAI-compatible API.`;
  return {
    kind: paths === '/models' ? 'cannot_list' : 'not_configured',
    status: 404,
    retryable: false,
    remedy: 'base_url',
    describe: () => advised(problem, 'baseUrl', endpoint.audience),
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
  const audience = context.endpoint.audience;
  const checkBaseUrl = 'If the name is right, check the base URL (OpenAI-compatible APIs usually end in /v1).';
  return {
    kind: 'unknown_model',
    status,
    retryable: false,
    remedy: deployment ? 'base_url' : 'model',
    describe: () =>
      deployment
        ? // The deployment in an Azure base URL is the model; the request's model name is ignored there.
          `The Azure OpenAI endpoint at ${where} has no deployment '${deployment}'${code}. Check the deployment name in the base URL, or its api-version.`
        : audience === 'terminal'
          ? `The model endpoint at ${where} does not offer the model '${model}'${code}. ${checkBaseUrl}`
          : `The model endpoint at ${where} does not offer the model '${model}'${code}. ${VSCODE_REMEDIES.selectModel} ${checkBaseUrl}`,
  };
}

function network(retryable: boolean, describe: (retries: number) => string, remedy?: RemedyCode): Failure {
  return { kind: 'network', retryable, describe, ...(remedy ? { remedy } : {}) };
}

export function notConfigured(endpoint: Endpoint, why: string): ModelError {
  return new ModelError(
    'not_configured',
    advised(`No model is set, and the endpoint at ${displayUrl(endpoint.baseUrl)} gave none to fall back on (${why}).`, 'setModel', endpoint.audience),
    undefined,
    'model',
  );
}

/** The error a classified failure ends in, once the retries are counted. */
export function failureError(failure: Failure, retries: number): ModelError {
  return new ModelError(failure.kind, failure.describe(retries), failure.status, failure.remedy);
}

export function cancelledError(): ModelError {
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
  // It is set inside our sentences, so its own closing stop would double ours (".." or ".,").
  return asClause(shortLine(text, 300));
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
  const message = errorText(innermost);
  return message || 'connection failed';
}

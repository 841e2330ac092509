/**
 * A fake OpenAI-compatible endpoint for tests: a real HTTP server on
 * 127.0.0.1 that answers chat completions with real SSE, scripted step by
 * step, so the official SDK and our server process talk to it exactly as they
 * would to a provider. Every wait is driven by server events, never by timers.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { SUMMARY_PROMPT_HEAD } from '../../server/src/core/compaction';

// ---------------------------------------------------------------------------
// Steps

export interface FakeToolCall {
  id: string;
  name: string;
  /** A string is streamed in fragments; an object is sent whole and unencoded, as some servers do. */
  arguments: string | Record<string, unknown>;
  /** Explicit argument fragments (their concatenation should equal `arguments`); default: three pieces. */
  fragments?: string[];
  /** Leave `index` out of this call's fragments, as some servers do. */
  omitIndex?: boolean;
}

/** Token counts for an OpenAI-shaped usage chunk (`choices: []`) sent after the finish chunk. */
export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
}

/** A text reply, streamed as `deltas`, or `text` cut per word. */
export interface TextStep {
  kind: 'text';
  text?: string;
  deltas?: string[];
  /** Default `stop`; null sends no finish_reason (but still `[DONE]`). */
  finishReason?: string | null;
  /** Reasoning deltas streamed before the text, in `reasoningField`. */
  reasoning?: string[];
  /** Default `reasoning_content` (DeepSeek, vLLM, llama.cpp); Ollama uses `reasoning`. */
  reasoningField?: 'reasoning_content' | 'reasoning';
  usage?: FakeUsage;
  /** Milliseconds between content deltas, as a model generating tokens paces them; default none. */
  paceMs?: number;
}

/** A reply that calls tools; several calls are parallel calls with distinct `index`. */
export interface ToolCallsStep {
  kind: 'toolCalls';
  calls: FakeToolCall[];
  /** Text streamed before the calls. */
  content?: string;
  /** Alternate the calls' fragments instead of finishing one call before the next. */
  interleave?: boolean;
  /** Default `tool_calls`; null sends none. */
  finishReason?: string | null;
  usage?: FakeUsage;
}

/**
 * An HTTP error with an OpenAI-shaped JSON body. Reached after the stream has
 * started (as a gate's continuation), it is sent in-stream as `data: {"error": …}`.
 */
export interface HttpErrorStep {
  kind: 'error';
  status: number;
  message?: string;
  type?: string;
  code?: string | null;
  param?: string | null;
  /** e.g. `retry-after`, `retry-after-ms`. */
  headers?: Record<string, string>;
  /** Sent verbatim instead of the JSON error body (e.g. a proxy's HTML page). */
  rawBody?: string;
}

/** Sends headers and `deltas`, then never ends until the client goes away. */
export interface HangStep {
  kind: 'hang';
  deltas?: string[];
}

/** Sends `deltas`, waits until the test releases `gate`, then continues the same response with `then`. */
export interface GateStep {
  kind: 'gate';
  deltas?: string[];
  gate: FakeGate;
  then: FakeStep;
}

/** Sends `deltas`, then destroys the socket. */
export interface ResetStep {
  kind: 'reset';
  deltas?: string[];
}

/**
 * Sends `deltas`, then the fragments of `calls` (whose arguments may stop
 * mid-JSON), then ends the response cleanly but without finish_reason or
 * `[DONE]`: a reply cut off, as a proxy timeout or a crashed server leaves it.
 */
export interface TruncatedStep {
  kind: 'truncated';
  deltas?: string[];
  calls?: FakeToolCall[];
}

/** Sends `deltas`, then an event whose data is not JSON. */
export interface MalformedStep {
  kind: 'malformed';
  deltas?: string[];
  /** The broken event data; default a cut-off JSON object. */
  raw?: string;
}

/**
 * A response body sent verbatim, e.g. a provider's recorded SSE stream from
 * `test/fixtures/providers` (see `loadProviderFixture`). Sent event by event
 * (split at blank lines), or in `chunkBytes`-sized pieces to cut events, JSON
 * and UTF-8 sequences at arbitrary points as TCP may.
 */
export interface ReplayStep {
  kind: 'replay';
  body: string;
  /** Default 200. */
  status?: number;
  /** Default `text/event-stream; charset=utf-8`. */
  contentType?: string;
  chunkBytes?: number;
}

export type FakeStep =
  | TextStep
  | ReplayStep
  | ToolCallsStep
  | HttpErrorStep
  | HangStep
  | GateStep
  | ResetStep
  | TruncatedStep
  | MalformedStep;

/** A step chosen by looking at the request, for deterministic replies without a script. */
export type FakeStepScript = (request: RecordedRequest) => FakeStep;

// ---------------------------------------------------------------------------
// Gates

/** Holds a `gate` step mid-stream until the test calls `release()`. */
export class FakeGate {
  /** Resolves once the gated response has written its deltas and is waiting. */
  readonly reached: Promise<void>;
  /** Resolves on `release()`. */
  readonly released: Promise<void>;
  private markReached!: () => void;
  private markReleased!: () => void;

  constructor() {
    this.reached = new Promise((resolve) => (this.markReached = resolve));
    this.released = new Promise((resolve) => (this.markReleased = resolve));
  }

  release(): void {
    this.markReleased();
  }

  /** Called by the server when a response arrives at the gate. */
  arrive(): void {
    this.markReached();
  }
}

export function createGate(): FakeGate {
  return new FakeGate();
}

// ---------------------------------------------------------------------------
// Recorded traffic

/** The JSON body of a chat-completions request, loosely typed for assertions. */
export interface RecordedBody {
  model?: string;
  messages?: Array<Record<string, unknown>>;
  tools?: Array<Record<string, unknown>>;
  stream?: boolean;
  temperature?: number;
  max_tokens?: number;
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  /** Path without query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Query parameters, e.g. `{ 'api-version': '2024-10-21' }` for Azure. */
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body; undefined when empty or not JSON. */
  body: RecordedBody | undefined;
  rawBody: string;
}

/** Text of the last user message in a recorded request ('' when none). */
export function lastUserMessage(request: RecordedRequest): string {
  const messages = request.body?.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role === 'user' && typeof message.content === 'string') return message.content;
  }
  return '';
}

/** A fallback that answers every request with `Echo: <last user message>`. */
export const echoLastUserMessage: FakeStepScript = (request) => ({
  kind: 'text',
  text: `Echo: ${lastUserMessage(request)}`,
});

// ---------------------------------------------------------------------------
// Server

export interface FakeOpenAIOptions {
  /** Answers for chat-completion requests, consumed in order. */
  steps?: FakeStep[];
  /** Ids served by `GET /v1/models`, or an error to answer it with. Default `['fake-model']`. */
  models?: string[] | HttpErrorStep;
  /** Answer once `steps` runs out; without it such a request gets a 400 naming the problem. */
  fallback?: FakeStep | FakeStepScript;
}

export interface FakeOpenAI {
  /** e.g. `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  /** Every request received, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Only the chat-completion requests. */
  readonly completionRequests: readonly RecordedRequest[];
  /** Streaming responses currently open. */
  readonly openStreams: number;
  /** Responses the client dropped before they ended. */
  readonly disconnects: number;
  /** Scripted steps not yet consumed. */
  readonly pendingSteps: number;
  push(...steps: FakeStep[]): void;
  setModels(models: string[] | HttpErrorStep): void;
  setFallback(fallback: FakeStep | FakeStepScript | undefined): void;
  /** Resolves once at least `count` requests of any kind have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once at least `count` chat-completion requests have arrived. */
  waitForCompletionRequests(count: number): Promise<void>;
  /** Resolves once at least `count` (default 1) responses have been dropped by their client mid-way. */
  waitForDisconnect(count?: number): Promise<void>;
  /** Resolves once no streaming response is open. */
  waitForStreamsClosed(): Promise<void>;
  /** Stops listening and cuts every open connection, including hanging streams. */
  close(): Promise<void>;
}

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const fake = new FakeOpenAIServer(options);
  await fake.listen();
  return fake;
}

/** Any prefix is accepted (`/v1`, Azure's `/openai/deployments/NAME`), as base URLs vary by provider. */
const COMPLETIONS_SUFFIX = '/chat/completions';
const MODELS_SUFFIX = '/models';

class FakeOpenAIServer implements FakeOpenAI {
  private readonly server: http.Server;
  private readonly steps: FakeStep[];
  private models: string[] | HttpErrorStep;
  private fallback: FakeStep | FakeStepScript | undefined;
  private readonly recorded: RecordedRequest[] = [];
  private waiters: Array<{ ready: () => boolean; resolve: () => void }> = [];
  private port = 0;
  private chunkCounter = 0;
  private closing = false;
  openStreams = 0;
  disconnects = 0;

  constructor(options: FakeOpenAIOptions) {
    this.steps = [...(options.steps ?? [])];
    this.models = options.models ?? ['fake-model'];
    this.fallback = options.fallback;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        // A bug in a script should fail the test loudly, not hang it.
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`fake OpenAI server failed: ${String(error)}`);
        } else {
          res.destroy();
        }
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get requests(): readonly RecordedRequest[] {
    return this.recorded;
  }

  get completionRequests(): readonly RecordedRequest[] {
    return this.recorded.filter((request) => request.path.endsWith(COMPLETIONS_SUFFIX) && !isSummaryRequest(request));
  }

  /** The requests that summarize a discussion's oldest turns (compaction); answered on the side, see nextStep. */
  get summaryRequests(): readonly RecordedRequest[] {
    return this.recorded.filter((request) => request.path.endsWith(COMPLETIONS_SUFFIX) && isSummaryRequest(request));
  }

  get pendingSteps(): number {
    return this.steps.length;
  }

  push(...steps: FakeStep[]): void {
    this.steps.push(...steps);
  }

  setModels(models: string[] | HttpErrorStep): void {
    this.models = models;
  }

  setFallback(fallback: FakeStep | FakeStepScript | undefined): void {
    this.fallback = fallback;
  }

  waitForRequests(count: number): Promise<void> {
    return this.until(() => this.recorded.length >= count);
  }

  waitForCompletionRequests(count: number): Promise<void> {
    return this.until(() => this.completionRequests.length >= count);
  }

  waitForDisconnect(count = 1): Promise<void> {
    return this.until(() => this.disconnects >= count);
  }

  waitForStreamsClosed(): Promise<void> {
    return this.until(() => this.openStreams === 0);
  }

  async close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ ready, resolve }));
  }

  private notify(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.ready()) return true;
      waiter.resolve();
      return false;
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: parseJsonObject(rawBody),
      rawBody,
    };
    this.recorded.push(request);
    this.notify();

    if (request.path.endsWith(MODELS_SUFFIX) && request.method === 'GET') {
      this.answerModels(res);
    } else if (request.path.endsWith(COMPLETIONS_SUFFIX) && request.method === 'POST') {
      await this.answerCompletion(request, res);
    } else {
      sendHttpError(res, {
        kind: 'error',
        status: 404,
        message: `Unknown request: ${request.method} ${request.path}`,
        type: 'invalid_request_error',
        code: 'unknown_url',
      });
    }
  }

  private answerModels(res: http.ServerResponse): void {
    if (!Array.isArray(this.models)) {
      sendHttpError(res, this.models);
      return;
    }
    sendJson(res, 200, {
      object: 'list',
      data: this.models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake' })),
    });
  }

  private nextStep(request: RecordedRequest): FakeStep {
    // A long discussion summarizes its oldest turns in a request of its own;
    // answered here, so it never takes a step scripted for the discussion.
    // (Still recorded in `requests`, which the leak scans read.)
    if (isSummaryRequest(request)) return { kind: 'text', text: 'So far: the earlier turns, summarized.' };
    const scripted = this.steps.shift();
    if (scripted) return scripted;
    if (typeof this.fallback === 'function') return this.fallback(request);
    if (this.fallback) return this.fallback;
    // A 400 is not retried, so a missing script shows up as one clear failure.
    return {
      kind: 'error',
      status: 400,
      message: 'fake OpenAI server: no scripted step left for this request',
      type: 'invalid_request_error',
      code: 'fake_script_exhausted',
    };
  }

  private async answerCompletion(request: RecordedRequest, res: http.ServerResponse): Promise<void> {
    const step = this.nextStep(request);
    const model = request.body?.model ?? 'fake-model';
    if (request.body?.stream !== true && (step.kind === 'text' || step.kind === 'toolCalls')) {
      sendJson(res, 200, wholeCompletion(step, model, this.nextId()));
      return;
    }
    if (step.kind === 'error') {
      sendHttpError(res, step);
      return;
    }
    if (step.kind === 'replay' && (step.status ?? 200) !== 200) {
      res.writeHead(step.status ?? 200, { 'content-type': step.contentType ?? 'application/json' });
      res.end(step.body);
      return;
    }
    const stream = new SseResponse(res, model, this.nextId(), {
      opened: () => {
        this.openStreams++;
        this.notify();
      },
      closed: (droppedByClient) => {
        this.openStreams--;
        // Cutting connections in close() is teardown, not a client going away.
        if (droppedByClient && !this.closing) this.disconnects++;
        this.notify();
      },
    });
    await this.stream(step, stream);
  }

  private nextId(): string {
    return `chatcmpl-fake-${++this.chunkCounter}`;
  }

  private async stream(step: FakeStep, out: SseResponse): Promise<void> {
    switch (step.kind) {
      case 'text': {
        await out.open();
        const field = step.reasoningField ?? 'reasoning_content';
        for (const piece of step.reasoning ?? []) await out.delta({ [field]: piece });
        await out.contentDeltas(step.deltas ?? splitPerWord(step.text ?? ''), step.paceMs);
        await out.finish(step.finishReason === undefined ? 'stop' : step.finishReason, step.usage);
        return;
      }
      case 'toolCalls': {
        await out.open();
        await out.contentDeltas(splitPerWord(step.content ?? ''));
        for (const fragment of toolCallFragments(step.calls, step.interleave ?? false)) {
          await out.delta({ tool_calls: [fragment] });
        }
        await out.finish(step.finishReason === undefined ? 'tool_calls' : step.finishReason, step.usage);
        return;
      }
      case 'replay': {
        await out.openRaw(step.contentType ?? 'text/event-stream; charset=utf-8');
        const pieces = step.chunkBytes ? splitBytes(step.body, step.chunkBytes) : splitEvents(step.body);
        for (const piece of pieces) await out.write(piece);
        out.end();
        return;
      }
      case 'error': {
        // Headers are already out, so the error travels in-stream, as providers do.
        await out.open();
        await out.event(JSON.stringify({ error: errorBody(step).error }));
        out.end();
        return;
      }
      case 'hang': {
        await out.open();
        await out.contentDeltas(step.deltas ?? []);
        await out.closed;
        return;
      }
      case 'gate': {
        await out.open();
        await out.contentDeltas(step.deltas ?? []);
        step.gate.arrive();
        await Promise.race([step.gate.released, out.closed]);
        if (out.gone) return;
        await this.stream(step.then, out);
        return;
      }
      case 'reset': {
        await out.open();
        await out.contentDeltas(step.deltas ?? []);
        out.reset();
        return;
      }
      case 'truncated': {
        await out.open();
        await out.contentDeltas(step.deltas ?? []);
        for (const fragment of toolCallFragments(step.calls ?? [], false)) await out.delta({ tool_calls: [fragment] });
        out.end();
        return;
      }
      case 'malformed': {
        await out.open();
        await out.contentDeltas(step.deltas ?? []);
        await out.event(step.raw ?? '{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "cut');
        await out.done();
        return;
      }
    }
  }
}

/** One streaming response: SSE framing, chunk shape, and who ended it. */
class SseResponse {
  /** Resolves when the connection is gone, whoever ended it. */
  readonly closed: Promise<void>;
  private started = false;
  private resetByServer = false;

  constructor(
    private readonly res: http.ServerResponse,
    private readonly model: string,
    private readonly id: string,
    private readonly hooks: { opened: () => void; closed: (droppedByClient: boolean) => void },
  ) {
    this.closed = new Promise((resolve) => {
      res.on('close', () => {
        if (this.started) hooks.closed(!res.writableFinished && !this.resetByServer);
        resolve();
      });
    });
  }

  /** True once the client (or a reset) has closed the connection. */
  get gone(): boolean {
    return this.res.destroyed;
  }

  async open(): Promise<void> {
    if (this.started) return;
    await this.openRaw('text/event-stream; charset=utf-8');
    // Providers open with a role-only delta and empty content.
    await this.delta({ role: 'assistant', content: '' });
  }

  /** Sends the headers only: what follows is written verbatim. */
  async openRaw(contentType: string): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, {
      'content-type': contentType,
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    this.hooks.opened();
  }

  async contentDeltas(pieces: string[], paceMs = 0): Promise<void> {
    for (const content of pieces) {
      if (paceMs > 0) await new Promise((resolve) => setTimeout(resolve, paceMs));
      await this.delta({ content });
    }
  }

  async delta(delta: Record<string, unknown>, finishReason: string | null = null): Promise<void> {
    await this.event(
      JSON.stringify({
        id: this.id,
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: this.model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      }),
    );
  }

  /** Sends the finish chunk (unless null), the usage chunk (if any) and `[DONE]`, and ends the response. */
  async finish(finishReason: string | null, usage?: FakeUsage): Promise<void> {
    if (finishReason !== null) await this.delta({}, finishReason);
    if (usage) {
      await this.event(
        JSON.stringify({
          id: this.id,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: this.model,
          choices: [],
          usage: {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.promptTokens + usage.completionTokens,
          },
        }),
      );
    }
    await this.done();
  }

  async done(): Promise<void> {
    await this.event('[DONE]');
    this.end();
  }

  /** Resolves when the bytes are handed to the socket, so a later reset cannot swallow them. */
  event(data: string): Promise<void> {
    return this.write(`data: ${data}\n\n`);
  }

  write(bytes: string | Buffer): Promise<void> {
    if (this.gone) return Promise.resolve();
    return new Promise((resolve) => this.res.write(bytes, () => resolve()));
  }

  end(): void {
    if (!this.gone) this.res.end();
  }

  reset(): void {
    this.resetByServer = true;
    this.res.socket?.destroy();
  }
}

// ---------------------------------------------------------------------------
// Helpers

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJsonObject(text: string): RecordedBody | undefined {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as RecordedBody) : undefined;
  } catch {
    return undefined;
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function errorBody(step: HttpErrorStep): { error: Record<string, unknown> } {
  return {
    error: {
      message: step.message ?? `fake error ${step.status}`,
      type: step.type ?? (step.status >= 500 ? 'server_error' : 'invalid_request_error'),
      param: step.param ?? null,
      code: step.code ?? null,
    },
  };
}

function sendHttpError(res: http.ServerResponse, step: HttpErrorStep): void {
  if (step.rawBody !== undefined) {
    res.writeHead(step.status, { 'content-type': 'text/html', ...step.headers });
    res.end(step.rawBody);
    return;
  }
  sendJson(res, step.status, errorBody(step), step.headers);
}

/** Events of an SSE body, each with its blank-line terminator, so the pieces rejoin exactly. */
function splitEvents(body: string): string[] {
  return body.split(/(?<=\n\n)/).filter((piece) => piece !== '');
}

/** Fixed-size byte pieces: they may cut an event, a JSON string or a UTF-8 sequence anywhere. */
function splitBytes(body: string, size: number): Buffer[] {
  const bytes = Buffer.from(body, 'utf8');
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += Math.max(1, size)) pieces.push(bytes.subarray(offset, offset + Math.max(1, size)));
  return pieces;
}

/** Directory of the recorded-shape provider fixtures (the same from `test/` sources and compiled `out/test/`). */
export const PROVIDER_FIXTURES_DIR = path.resolve(__dirname, __dirname.includes(`${path.sep}out${path.sep}`) ? '../../../test/fixtures/providers' : '../fixtures/providers');

/** The text of a provider fixture, e.g. `openai-parallel-tool-calls.sse`. */
export function loadProviderFixture(name: string): string {
  return fs.readFileSync(path.join(PROVIDER_FIXTURES_DIR, name), 'utf8');
}

/** A step that replays a provider fixture verbatim: SSE for `.sse` files, a JSON body for `.json` ones. */
export function replayFixture(name: string, options: Omit<ReplayStep, 'kind' | 'body'> = {}): ReplayStep {
  const contentType = name.endsWith('.json') ? 'application/json' : undefined;
  return { kind: 'replay', body: loadProviderFixture(name), ...(contentType ? { contentType } : {}), ...options };
}

/** Cuts text into words that keep their trailing whitespace, so the pieces rejoin exactly. */
export function splitPerWord(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

function splitInThree(text: string): string[] {
  if (text.length < 3) return [text];
  const third = Math.ceil(text.length / 3);
  return [text.slice(0, third), text.slice(third, 2 * third), text.slice(2 * third)];
}

/** The `tool_calls` delta entries for the calls: id and name first, then argument pieces. */
function toolCallFragments(calls: FakeToolCall[], interleave: boolean): Array<Record<string, unknown>> {
  const perCall = calls.map((call, index) => {
    const withIndex = (fragment: Record<string, unknown>) => (call.omitIndex ? fragment : { index, ...fragment });
    const head = withIndex({ id: call.id, type: 'function', function: { name: call.name, arguments: '' } });
    const pieces =
      typeof call.arguments === 'string' ? (call.fragments ?? splitInThree(call.arguments)) : [call.arguments];
    return [head, ...pieces.map((piece) => withIndex({ function: { arguments: piece } }))];
  });
  if (!interleave) return perCall.flat();
  const alternated: Array<Record<string, unknown>> = [];
  for (let round = 0; perCall.some((fragments) => round < fragments.length); round++) {
    for (const fragments of perCall) if (round < fragments.length) alternated.push(fragments[round]);
  }
  return alternated;
}

/** A non-streamed `chat.completion`, for clients that do not ask to stream. */
function wholeCompletion(step: TextStep | ToolCallsStep, model: string, id: string): unknown {
  const message =
    step.kind === 'text'
      ? {
          role: 'assistant',
          content: step.deltas?.join('') ?? step.text ?? '',
          ...(step.reasoning ? { [step.reasoningField ?? 'reasoning_content']: step.reasoning.join('') } : {}),
        }
      : {
          role: 'assistant',
          content: step.content ?? null,
          tool_calls: step.calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: {
              name: call.name,
              arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
            },
          })),
        };
  const defaultFinish = step.kind === 'text' ? 'stop' : 'tool_calls';
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: step.finishReason === undefined ? defaultFinish : step.finishReason,
      },
    ],
    ...(step.usage
      ? {
          usage: {
            prompt_tokens: step.usage.promptTokens,
            completion_tokens: step.usage.completionTokens,
            total_tokens: step.usage.promptTokens + step.usage.completionTokens,
          },
        }
      : {}),
  };
}

/** Whether `request` is the compaction's summary request (no tools, opening with its prompt). */
function isSummaryRequest(request: RecordedRequest): boolean {
  const body = request.body as { tools?: unknown; messages?: Array<{ role?: string; content?: unknown }> } | undefined;
  if (!body || body.tools) return false;
  const first = body.messages?.find((message) => message.role === 'user');
  return typeof first?.content === 'string' && first.content.startsWith(SUMMARY_PROMPT_HEAD);
}

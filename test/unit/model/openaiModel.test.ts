import * as assert from 'node:assert/strict';
import { createOpenAIModel, OpenAIModelOptions } from '../../../server/src/model/openai/chatModel';
import { CompletionChunks, MAX_EVENT_CHARS } from '../../../server/src/model/openai/stream/completionChunks';
import { StreamEventTooLarge } from '../../../server/src/model/openai/failures';
import { ChatMessage, ChatModel, ChatRequest, ChatResponse, ModelError, ModelSettings } from '../../../server/src/model/types';
import {
  createGate,
  echoLastUserMessage,
  FakeOpenAI,
  FakeStep,
  HttpErrorStep,
  startFakeOpenAI,
} from '../../support/fakeOpenAI';

/** Echoed back by the fake's error bodies, as real providers do, so leaks would show. */
const API_KEY = 'sk-test-SECRET-0123456789';

describe('OpenAI-compatible model', () => {
  let fake: FakeOpenAI;
  const extraFakes: FakeOpenAI[] = [];

  beforeEach(async () => {
    fake = await startFakeOpenAI();
  });

  afterEach(async () => {
    await fake.close();
    await Promise.all(extraFakes.splice(0).map((other) => other.close()));
  });

  function modelFor(settings: Partial<ModelSettings> = {}, options: OpenAIModelOptions = {}): ChatModel {
    return createOpenAIModel(() => ({ baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'test-model', ...settings }), {
      retryDelayMs: 1,
      ...options,
    });
  }

  function ask(overrides: Partial<ChatRequest> = {}): ChatRequest {
    return { messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides };
  }

  async function completeCollecting(
    model: ChatModel,
    request: ChatRequest = ask(),
  ): Promise<{ response: ChatResponse; deltas: string[] }> {
    const deltas: string[] = [];
    const response = await model.complete(request, (text) => deltas.push(text));
    return { response, deltas };
  }

  async function modelErrorFrom(promise: Promise<unknown>): Promise<ModelError> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof ModelError, `expected a ModelError, got ${String(error)}`);
      return error;
    }
    assert.fail('expected the call to fail');
  }

  function assertActionable(error: ModelError, ...mustMention: string[]): void {
    assert.ok(!error.message.includes(API_KEY), `message leaks the key: ${error.message}`);
    for (const text of mustMention) {
      assert.ok(error.message.includes(text), `message should mention ${JSON.stringify(text)}: ${error.message}`);
    }
  }

  const httpError = (status: number, extra: Partial<HttpErrorStep> = {}): HttpErrorStep => ({
    kind: 'error',
    status,
    message: `failure ${status} for key ${API_KEY}`,
    ...extra,
  });

  describe('streaming', () => {
    it('delivers streamed text to onDelta piece by piece, in order, and returns it whole', async () => {
      fake.push({ kind: 'text', deltas: ['Hel', 'lo', ', wor', 'ld'] });
      const { response, deltas } = await completeCollecting(modelFor());
      assert.deepEqual(deltas, ['Hel', 'lo', ', wor', 'ld']);
      assert.deepEqual(response, { content: 'Hello, world', toolCalls: [], finishReason: 'stop' });
    });

    it('assembles a tool call whose id and name arrive only on the first fragment', async () => {
      fake.push({
        kind: 'toolCalls',
        calls: [{ id: 'call_1', name: 'read_file', arguments: '{"path": "src/a.ts"}', fragments: ['{"pa', 'th": "src/', 'a.ts"}'] }],
      });
      const { response, deltas } = await completeCollecting(modelFor());
      assert.deepEqual(deltas, []);
      assert.deepEqual(response, {
        content: '',
        toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path": "src/a.ts"}' }],
        finishReason: 'tool_calls',
      });
    });

    it('assembles parallel tool calls from interleaved fragments by their index', async () => {
      fake.push({
        kind: 'toolCalls',
        content: 'Let me look.',
        interleave: true,
        calls: [
          { id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' },
          { id: 'call_b', name: 'search', arguments: '{"query":"TODO"}' },
        ],
      });
      const { response, deltas } = await completeCollecting(modelFor());
      assert.equal(deltas.join(''), 'Let me look.');
      assert.deepEqual(response.toolCalls, [
        { id: 'call_a', name: 'read_file', arguments: '{"path":"a.ts"}' },
        { id: 'call_b', name: 'search', arguments: '{"query":"TODO"}' },
      ]);
    });

    it('turns tool-call arguments sent as a JSON object into their JSON string', async () => {
      fake.push({ kind: 'toolCalls', calls: [{ id: 'call_o', name: 'list_dir', arguments: { path: 'src', depth: 2 } }] });
      const { response } = await completeCollecting(modelFor());
      assert.equal(response.toolCalls.length, 1);
      assert.deepEqual(JSON.parse(response.toolCalls[0].arguments), { path: 'src', depth: 2 });
    });

    it('continues the last tool call when a fragment has no index, and starts a new one when a new id appears', async () => {
      fake.push({
        kind: 'toolCalls',
        calls: [
          { id: 'call_x', name: 'read_file', arguments: '{"path":"x"}', omitIndex: true },
          { id: 'call_y', name: 'read_file', arguments: '{"path":"y"}', omitIndex: true },
        ],
      });
      const { response } = await completeCollecting(modelFor());
      assert.deepEqual(response.toolCalls, [
        { id: 'call_x', name: 'read_file', arguments: '{"path":"x"}' },
        { id: 'call_y', name: 'read_file', arguments: '{"path":"y"}' },
      ]);
    });

    it('reports the finish reason as null when the provider sends text and [DONE] but no finish reason', async () => {
      fake.push({ kind: 'text', text: 'Cut short', finishReason: null });
      const { response } = await completeCollecting(modelFor());
      assert.deepEqual(response, { content: 'Cut short', toolCalls: [], finishReason: null });
    });

    it('passes a length finish reason through', async () => {
      fake.push({ kind: 'text', text: 'Too long', finishReason: 'length' });
      const { response } = await completeCollecting(modelFor());
      assert.equal(response.finishReason, 'length');
    });
  });

  describe('request body', () => {
    it('maps messages, earlier tool calls and tool results, tools and sampling settings to the OpenAI request', async () => {
      fake.push({ kind: 'text', text: 'ok' });
      const messages: ChatMessage[] = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What does a.ts do?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
        { role: 'tool', toolCallId: 'call_1', content: 'export const a = 1;' },
        { role: 'assistant', content: 'It exports a.', toolCalls: [] },
        { role: 'user', content: 'Thanks' },
      ];
      const tools = [
        { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
      ];
      await completeCollecting(modelFor(), ask({ messages, tools, temperature: 0.2, maxTokens: 512 }));

      const [request] = fake.completionRequests;
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
      assert.deepEqual(request.body, {
        model: 'test-model',
        stream: true,
        stream_options: { include_usage: true },
        temperature: 0.2,
        max_tokens: 512,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What does a.ts do?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'export const a = 1;' },
          { role: 'assistant', content: 'It exports a.' },
          { role: 'user', content: 'Thanks' },
        ],
        tools: [{ type: 'function', function: tools[0] }],
      });
    });

    it('sends no tools, temperature or max_tokens when the request gives none', async () => {
      fake.push({ kind: 'text', text: 'ok' });
      await completeCollecting(modelFor(), ask({ tools: [] }));
      const body = fake.completionRequests[0].body ?? {};
      assert.deepEqual(Object.keys(body).sort(), ['messages', 'model', 'stream', 'stream_options']);
    });

    it('uses the model named in the request over the configured one', async () => {
      fake.push({ kind: 'text', text: 'ok' });
      await completeCollecting(modelFor(), ask({ model: 'request-model' }));
      assert.equal(fake.completionRequests[0].body?.model, 'request-model');
    });

    it('reads the settings on every call, so a changed endpoint or model takes effect at once', async () => {
      const other = await startFakeOpenAI({ steps: [{ kind: 'text', text: 'from other' }] });
      extraFakes.push(other);
      let settings: ModelSettings = { baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'first-model' };
      const model = createOpenAIModel(() => settings);
      fake.push({ kind: 'text', text: 'from first' });

      assert.equal((await model.complete(ask(), () => {})).content, 'from first');
      settings = { baseUrl: other.baseUrl, apiKey: 'sk-other', model: 'second-model' };
      assert.equal((await model.complete(ask(), () => {})).content, 'from other');

      assert.equal(other.completionRequests[0].body?.model, 'second-model');
      assert.equal(other.completionRequests[0].headers.authorization, 'Bearer sk-other');
    });
  });

  describe('cancellation', () => {
    it('stops the HTTP request when the signal is aborted mid-stream, and fails as cancelled', async () => {
      fake.push({ kind: 'hang', deltas: ['partial'] });
      const controller = new AbortController();
      const deltas: string[] = [];
      const pending = modelFor().complete(ask({ signal: controller.signal }), (text) => {
        deltas.push(text);
        controller.abort();
      });
      const error = await modelErrorFrom(pending);
      assert.equal(error.kind, 'cancelled');
      assert.deepEqual(deltas, ['partial']);
      await fake.waitForDisconnect();
      await fake.waitForStreamsClosed();
    });

    it('fails at once as cancelled, without a request, when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await modelErrorFrom(modelFor().complete(ask({ signal: controller.signal }), () => {}));
      assert.equal(error.kind, 'cancelled');
      assert.equal(fake.requests.length, 0);
    });

    it('stops waiting to retry as soon as the signal is aborted', async () => {
      // Were the wait not cancellable, this test would outlive its timeout.
      fake.push(httpError(429, { headers: { 'retry-after-ms': '50000' } }));
      const controller = new AbortController();
      const pending = modelFor().complete(ask({ signal: controller.signal }), () => {});
      await fake.waitForCompletionRequests(1);
      controller.abort();
      const error = await modelErrorFrom(pending);
      assert.equal(error.kind, 'cancelled');
      assert.equal(fake.completionRequests.length, 1);
    });

    it('rethrows an error thrown by onDelta unchanged and stops the request', async () => {
      fake.push({ kind: 'hang', deltas: ['boom'] });
      const thrown = new Error('renderer failed');
      await assert.rejects(
        modelFor().complete(ask(), () => {
          throw thrown;
        }),
        (error) => error === thrown,
      );
      await fake.waitForDisconnect();
    });
  });

  describe('HTTP errors', () => {
    it('turns a 401 into an auth error that says how to set a key, without quoting the key', async () => {
      fake.push(httpError(401, { code: 'invalid_api_key' }));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'auth');
      assert.equal(error.status, 401);
      assertActionable(error, 'rejected the API key (401)', "'Repo Discuss: Set API key'", 'OPENAI_API_KEY', fake.baseUrl);
      assert.equal(fake.completionRequests.length, 1, 'auth failures are not retried');
    });

    it('says a key is needed when the endpoint answers 401 and no key is set', async () => {
      fake.push(httpError(401));
      const error = await modelErrorFrom(completeCollecting(modelFor({ apiKey: undefined })));
      assert.equal(error.kind, 'auth');
      assertActionable(error, 'none is set', "'Repo Discuss: Set API key'");
    });

    it('turns a 403 into an auth error without quoting the key', async () => {
      fake.push(httpError(403));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'auth');
      assertActionable(error, '(403)', "'Repo Discuss: Set API key'");
    });

    it('turns a 404 into unknown_model that names the model and how to pick one the endpoint offers', async () => {
      fake.push(httpError(404, { code: 'model_not_found' }));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'unknown_model');
      assertActionable(error, "'test-model'", "'Repo Discuss: Select model'", 'OPENAI_MODEL');
    });

    it('treats a model_not_found code on a 400 as unknown_model too', async () => {
      fake.push(httpError(400, { code: 'model_not_found' }));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'unknown_model');
    });

    it('turns another 400 into bad_request carrying the server’s words with the key masked', async () => {
      fake.push(httpError(400, { message: `tools are not supported (key ${API_KEY})` }));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'bad_request');
      assertActionable(error, 'tools are not supported', '***');
      assert.equal(fake.completionRequests.length, 1, 'bad requests are not retried');
    });

    it('retries a 429 after the retry-after-ms the server asks for, then returns the reply', async () => {
      // The default backoff is set far beyond the test timeout, so only the header can make this pass.
      fake.push(httpError(429, { headers: { 'retry-after-ms': '5' } }), { kind: 'text', text: 'after the wait' });
      const { response } = await completeCollecting(modelFor({}, { retryDelayMs: 60_000 }));
      assert.equal(response.content, 'after the wait');
      assert.equal(fake.completionRequests.length, 2);
    });

    it('tells the observer of each retry before waiting for it: the wait asked for, which retry of how many, and why', async () => {
      fake.push(httpError(429, { headers: { 'retry-after-ms': '5' } }), httpError(503), { kind: 'text', text: 'after two waits' });
      const retries: Array<{ retryInMs: number; attempt: number; of: number; reason: string; requestsSoFar: number }> = [];
      const response = await modelFor({}, { maxRetries: 2 }).complete(ask(), () => undefined, {
        onRetry: (retry) => retries.push({ ...retry, requestsSoFar: fake.completionRequests.length }),
      });
      assert.equal(response.content, 'after two waits');
      assert.equal(retries.length, 2);
      assert.deepEqual(
        retries[0],
        { retryInMs: 5, attempt: 1, of: 2, reason: 'rate-limited (429)', requestsSoFar: 1 },
        'told after the first try failed, before the second was made',
      );
      assert.equal(retries[1].attempt, 2);
      assert.equal(retries[1].reason, 'server error (503)');
    });

    it('does not tell of a retry it will not make', async () => {
      const limited = httpError(429, { headers: { 'retry-after-ms': '1' } });
      fake.push(limited, limited);
      const retries: number[] = [];
      await modelErrorFrom(modelFor({}, { maxRetries: 1 }).complete(ask(), () => undefined, { onRetry: (retry) => retries.push(retry.attempt) }));
      assert.deepEqual(retries, [1], 'the last failure ends the call instead of announcing a wait');
    });

    it('gives up on a persisting 429 after maxRetries with rate_limited', async () => {
      const limited = httpError(429, { headers: { 'retry-after-ms': '1' } });
      fake.push(limited, limited, limited, { kind: 'text', text: 'never reached' });
      const error = await modelErrorFrom(completeCollecting(modelFor({}, { maxRetries: 2 })));
      assert.equal(error.kind, 'rate_limited');
      assert.equal(error.status, 429);
      assertActionable(error, '(429)', 'after 2 retries');
      assert.equal(fake.completionRequests.length, 3);
    });

    it('reports rather than waits out a retry-after longer than a minute', async () => {
      fake.push(httpError(429, { headers: { 'retry-after': '3600' } }));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'rate_limited');
      assertActionable(error, '3600 s');
      assert.equal(fake.completionRequests.length, 1);
    });

    it('does not retry a 429 that says the quota is used up', async () => {
      fake.push(httpError(429, { code: 'insufficient_quota' }));
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'rate_limited');
      assertActionable(error, 'quota');
      assert.equal(fake.completionRequests.length, 1);
    });

    it('retries a 500 and returns the reply of the retry', async () => {
      fake.push(httpError(500), { kind: 'text', text: 'recovered' });
      const { response, deltas } = await completeCollecting(modelFor());
      assert.equal(response.content, 'recovered');
      assert.deepEqual(deltas, ['recovered']);
      assert.equal(fake.completionRequests.length, 2);
    });

    it('gives up on a persisting 503 after the retries with a server error', async () => {
      fake.push(httpError(503), httpError(503), httpError(503));
      const error = await modelErrorFrom(completeCollecting(modelFor({}, { maxRetries: 2 })));
      assert.equal(error.kind, 'server');
      assert.equal(error.status, 503);
      assertActionable(error, '(503)', 'after 2 retries', fake.baseUrl);
      assert.equal(fake.completionRequests.length, 3);
    });

    it('turns an error event inside the stream into a server error', async () => {
      const gate = createGate();
      gate.release();
      fake.push({ kind: 'gate', gate, deltas: ['Part'], then: httpError(500, { message: 'overloaded' }) });
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'server');
      assertActionable(error, 'overloaded');
    });
  });

  describe('broken connections and streams', () => {
    it('reports a connection reset mid-reply as a network error and does not repeat a reply already shown', async () => {
      fake.push({ kind: 'reset', deltas: ['Hello'] }, { kind: 'text', text: 'must not be requested' });
      const deltas: string[] = [];
      const error = await modelErrorFrom(modelFor().complete(ask(), (text) => deltas.push(text)));
      assert.equal(error.kind, 'network');
      assertActionable(error, fake.baseUrl);
      assert.deepEqual(deltas, ['Hello']);
      assert.equal(fake.completionRequests.length, 1);
      assert.equal(fake.pendingSteps, 1);
    });

    function readsOf(reads: Array<string | Uint8Array>): Response {
      const queue = reads.map((read) => (typeof read === 'string' ? new TextEncoder().encode(read) : read));
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            const next = queue.shift();
            if (next) controller.enqueue(next);
            else controller.close();
          },
        }),
      );
    }

    async function chunksOf(response: Response): Promise<{ chunks: unknown[]; sawDone: boolean }> {
      const reading = new CompletionChunks(response, new AbortController());
      const chunks: unknown[] = [];
      for await (const chunk of reading) chunks.push(chunk);
      return { chunks, sawDone: reading.sawDone };
    }

    it('reads events across reads: past an empty read, an event and a [DONE] cut between reads, a character cut between its bytes', async () => {
      const snowman = new TextEncoder().encode('data: {"a":"☃"}\n\n');
      const cut = snowman.indexOf(0xe2) + 1;
      const { chunks, sawDone } = await chunksOf(
        readsOf(['', 'data: {"a":1}\n\ndata: {"a"', ':2}\n\n', snowman.subarray(0, cut), snowman.subarray(cut), 'data: [DO', '', 'NE]\n\n']),
      );
      assert.deepEqual(chunks, [{ a: 1 }, { a: 2 }, { a: '\u2603' }]);
      assert.equal(sawDone, true);
    });

    it('reads CRLF and CR line ends, comments and multi-line data as EventSource does, and nothing after [DONE]', async () => {
      const { chunks, sawDone } = await chunksOf(readsOf([': keep-alive\r\n\r\ndata: {"a":\r\ndata: 1}\r\n\r\n', 'event: message\rdata:{"a":2}\r\r', 'data:[DONE]\n\ndata: {"a":3}\n\n']));
      assert.deepEqual(chunks, [{ a: 1 }, { a: 2 }]);
      assert.equal(sawDone, true);
    });

    it('drops an event the stream ends in the middle of, and says no [DONE] came', async () => {
      const { chunks, sawDone } = await chunksOf(readsOf(['data: {"a":1}\n\n', 'data: {"a":2}']));
      assert.deepEqual(chunks, [{ a: 1 }]);
      assert.equal(sawDone, false);
    });

    it('stops a stream whose event grows past the limit without ending, and aborts the request', async () => {
      const attempt = new AbortController();
      const reading = new CompletionChunks(readsOf(['data: {"a":1}\n\n', 'data: "', 'x'.repeat(600), 'x'.repeat(600)]), attempt, 1000);
      const chunks: unknown[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of reading) chunks.push(chunk);
        })(),
        StreamEventTooLarge,
      );
      assert.deepEqual(chunks, [{ a: 1 }]);
      assert.equal(attempt.signal.aborted, true);
    });

    it('reports an endpoint that streams one event past 16 MiB as a network error naming the endpoint, rather than buffering it', async () => {
      fake.push({ kind: 'replay', body: `data: "${'x'.repeat(MAX_EVENT_CHARS + 1024)}` });
      const error = await modelErrorFrom(completeCollecting(modelFor({}, { maxRetries: 0 })));
      assert.equal(error.kind, 'network');
      assertActionable(error, 'more than 16 MiB', fake.baseUrl);
    });

    it('takes a [DONE] the stream closed right after, before the blank line that ends it, and nothing else of an unfinished event', async () => {
      for (const last of ['data: [DONE]', 'data: [DONE]\n', 'data:[DONE]\r']) {
        const { chunks, sawDone } = await chunksOf(readsOf(['data: {"a":1}\n\n', last]));
        assert.deepEqual(chunks, [{ a: 1 }], JSON.stringify(last));
        assert.equal(sawDone, true, JSON.stringify(last));
      }
      const { chunks, sawDone } = await chunksOf(readsOf(['data: {"a":1}\n\n', 'data: {"a":2}\n']));
      assert.deepEqual(chunks, [{ a: 1 }]);
      assert.equal(sawDone, false);
    });

    it('leaves the request alone when the stream ends by itself', async () => {
      const attempt = new AbortController();
      for await (const chunk of new CompletionChunks(readsOf(['data: {"a":1}\n\ndata: [DONE]\n\n']), attempt)) void chunk;
      assert.equal(attempt.signal.aborted, false);
    });

    it('fails on a response with no body, as the SDK does, and aborts the request', async () => {
      const attempt = new AbortController();
      await assert.rejects(
        (async () => {
          for await (const chunk of new CompletionChunks(new Response(null), attempt)) void chunk;
        })(),
        /no body/,
      );
      assert.equal(attempt.signal.aborted, true);
    });

    it('counts no run of keep-alive comments toward the limit of one event', async () => {
      const { chunks } = await (async () => {
        const reading = new CompletionChunks(readsOf([...Array.from({ length: 20 }, () => `: ${'k'.repeat(100)}\n`), 'data: {"a":1}\n\n']), new AbortController(), 1000);
        const found: unknown[] = [];
        for await (const chunk of reading) found.push(chunk);
        return { chunks: found };
      })();
      assert.deepEqual(chunks, [{ a: 1 }]);
    });

    it('aborts the request when its reader stops early', async () => {
      const attempt = new AbortController();
      const reading = new CompletionChunks(readsOf(['data: {"a":1}\n\ndata: {"a":2}\n\n']), attempt);
      for await (const chunk of reading) {
        assert.deepEqual(chunk, { a: 1 });
        break;
      }
      assert.equal(attempt.signal.aborted, true);
    });

    it('retries a connection reset that came before any reply', async () => {
      fake.push({ kind: 'reset' }, { kind: 'text', text: 'second try' });
      const { response } = await completeCollecting(modelFor());
      assert.equal(response.content, 'second try');
      assert.equal(fake.completionRequests.length, 2);
    });

    it('reports a stream that ends with no finish reason, no [DONE] and nothing in it as a network error', async () => {
      fake.push({ kind: 'truncated' });
      const error = await modelErrorFrom(completeCollecting(modelFor({}, { maxRetries: 0 })));
      assert.equal(error.kind, 'network');
      assertActionable(error, fake.baseUrl, 'before sending anything');
    });

    it('reports a stream cut off after some text (no finish reason, no [DONE]) as an incomplete reply: the text is passed on, the error says so and what to do, and the request is not repeated', async () => {
      fake.push({ kind: 'truncated', deltas: ['Half an ', 'answer'] }, { kind: 'text', text: 'must not be requested' });
      const deltas: string[] = [];
      const error = await modelErrorFrom(modelFor().complete(ask(), (text) => deltas.push(text)));
      assert.equal(error.kind, 'network');
      assertActionable(error, fake.baseUrl, 'incomplete', 'Send the message again');
      assert.deepEqual(deltas, ['Half an ', 'answer']);
      assert.equal(fake.completionRequests.length, 1);
      assert.equal(fake.pendingSteps, 1);
    });

    it('reports a stream cut off in the middle of a tool call as incomplete, so the half-received call is never run', async () => {
      fake.push({ kind: 'truncated', calls: [{ id: 'call_cut', name: 'read_file', arguments: '{"path": "src/a', fragments: ['{"path"', ': "src/a'] }] });
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'network');
      assertActionable(error, 'incomplete');
      assert.equal(fake.completionRequests.length, 1);
    });

    it('takes a reply that closes right after its finish reason, without [DONE], as whole', async () => {
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      fake.push({ kind: 'replay', body: chunk({ role: 'assistant', content: 'All ' }, null) + chunk({ content: 'there.' }, null) + chunk({}, 'stop') });
      const { response } = await completeCollecting(modelFor());
      assert.deepEqual(response, { content: 'All there.', toolCalls: [], finishReason: 'stop' });
    });

    it('reports a stream chunk that is not JSON as a network error naming the endpoint', async () => {
      fake.push({ kind: 'malformed', deltas: ['Some'] });
      const error = await modelErrorFrom(completeCollecting(modelFor()));
      assert.equal(error.kind, 'network');
      assertActionable(error, 'not valid JSON', fake.baseUrl);
    });

    it('reports an unreachable endpoint as a network error naming the base URL', async () => {
      const gone = await startFakeOpenAI();
      const baseUrl = gone.baseUrl;
      await gone.close();
      const model = createOpenAIModel(() => ({ baseUrl, apiKey: API_KEY, model: 'm' }), { retryDelayMs: 1 });
      const error = await modelErrorFrom(model.complete(ask(), () => {}));
      assert.equal(error.kind, 'network');
      assertActionable(error, baseUrl, 'connection refused', 'server is running');
    });

    it('reports an endpoint that stops sending mid-reply as a network error once the timeout passes', async () => {
      fake.push({ kind: 'hang', deltas: ['Thinking'] });
      const error = await modelErrorFrom(completeCollecting(modelFor({}, { timeoutMs: 100 })));
      assert.equal(error.kind, 'network');
      assertActionable(error, 'sent nothing');
      await fake.waitForDisconnect();
    });

    it('rejects a base URL that is not http(s) as not configured, before any request', async () => {
      const error = await modelErrorFrom(completeCollecting(modelFor({ baseUrl: 'localhost:8080' })));
      assert.equal(error.kind, 'not_configured');
      assertActionable(error, 'localhost:8080');
    });
  });

  describe('models', () => {
    it('lists the ids the endpoint offers', async () => {
      fake.setModels(['alpha', 'beta']);
      assert.deepEqual(await modelFor().listModels(), ['alpha', 'beta']);
    });

    it('maps a 401 from the model list to an auth error', async () => {
      fake.setModels(httpError(401));
      const error = await modelErrorFrom(modelFor().listModels());
      assert.equal(error.kind, 'auth');
      assertActionable(error, "'Repo Discuss: Set API key'");
    });

    it('uses the first listed model when none is set, asking for the list only once per endpoint', async () => {
      fake.setModels(['first', 'second']);
      fake.push({ kind: 'text', text: 'one' }, { kind: 'text', text: 'two' });
      const model = modelFor({ model: undefined });
      await completeCollecting(model);
      await completeCollecting(model);
      assert.deepEqual(
        fake.completionRequests.map((request) => request.body?.model),
        ['first', 'first'],
      );
      assert.equal(fake.requests.filter((request) => request.path === '/v1/models').length, 1);
    });

    it('asks the user to set a model when none is set and the endpoint lists none', async () => {
      fake.setModels([]);
      const error = await modelErrorFrom(completeCollecting(modelFor({ model: undefined })));
      assert.equal(error.kind, 'not_configured');
      assertActionable(error, "'Repo Discuss: Select model'", 'OPENAI_MODEL');
      assert.equal(fake.completionRequests.length, 0);
    });

    it('asks the user to set a model when none is set and the model list fails', async () => {
      fake.setModels(httpError(404));
      const error = await modelErrorFrom(completeCollecting(modelFor({ model: undefined })));
      assert.equal(error.kind, 'not_configured');
      assertActionable(error, "'Repo Discuss: Select model'", 'OPENAI_MODEL');
    });
  });
});

describe('fake OpenAI server', () => {
  let fake: FakeOpenAI;

  afterEach(async () => {
    await fake.close();
  });

  it('streams real SSE: data lines of chat.completion.chunk JSON, ending with [DONE]', async () => {
    fake = await startFakeOpenAI({ steps: [{ kind: 'text', text: 'Hello there' }] });
    const response = await fetch(`${fake.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [] }),
    });
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await response.text()).split('\n\n').filter(Boolean);
    assert.ok(events.every((event) => event.startsWith('data: ')));
    assert.equal(events.at(-1), 'data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)));
    assert.ok(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'm'));
    assert.equal(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join(''), 'Hello there');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  it('answers unknown paths with a 404', async () => {
    fake = await startFakeOpenAI();
    const response = await fetch(`${fake.baseUrl}/embeddings`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 404);
    const body = (await response.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'unknown_url');
  });

  it('holds a gated stream until the test releases it, then continues the same reply', async () => {
    const gate = createGate();
    const steps: FakeStep[] = [{ kind: 'gate', gate, deltas: ['before '], then: { kind: 'text', text: 'after' } }];
    fake = await startFakeOpenAI({ steps });
    const model = createOpenAIModel(() => ({ baseUrl: fake.baseUrl, model: 'm' }));
    let settled = false;
    let sawFirst!: () => void;
    const firstDelta = new Promise<void>((resolve) => (sawFirst = resolve));
    const deltas: string[] = [];
    const pending = model
      .complete({ messages: [], signal: new AbortController().signal }, (text) => {
        deltas.push(text);
        sawFirst();
      })
      .finally(() => (settled = true));

    await gate.reached;
    await firstDelta;
    assert.equal(settled, false);
    assert.equal(fake.openStreams, 1);
    gate.release();
    const response = await pending;
    assert.equal(response.content, 'before after');
    assert.deepEqual(deltas, ['before ', 'after']);
  });

  it('answers from the request with a fallback script once the scripted steps run out', async () => {
    fake = await startFakeOpenAI({ fallback: echoLastUserMessage });
    const model = createOpenAIModel(() => ({ baseUrl: fake.baseUrl, model: 'm' }));
    const response = await model.complete(
      { messages: [{ role: 'user', content: 'ping' }], signal: new AbortController().signal },
      () => {},
    );
    assert.equal(response.content, 'Echo: ping');
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createOpenAIModel, OpenAIModelOptions } from '../../../server/src/model/openai/chatModel';
import { DEFAULT_AZURE_API_VERSION, resolveEndpoint } from '../../../server/src/model/openai/endpoint';
import { ThinkTagSplitter } from '../../../server/src/model/openai/stream/thinkTags';
import { ToolCallAssembler } from '../../../server/src/model/openai/stream/toolCalls';
import { ChatModel, ChatRequest, ChatResponse, ModelError, ModelSettings, ToolSpec } from '../../../server/src/model/types';
import { FakeOpenAI, HttpErrorStep, loadProviderFixture, PROVIDER_FIXTURES_DIR, replayFixture, startFakeOpenAI } from '../../support/fakeOpenAI';

const API_KEY = 'sk-test-SECRET-0123456789';

const TOOLS: ToolSpec[] = [
  { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
];

describe('providers: recorded stream shapes and endpoint quirks', () => {
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

  interface Collected {
    response: ChatResponse;
    deltas: string[];
    reasoning: string[];
  }

  async function collect(model: ChatModel, request: ChatRequest = ask()): Promise<Collected> {
    const deltas: string[] = [];
    const reasoning: string[] = [];
    const response = await model.complete(request, (text) => deltas.push(text), {
      onReasoning: (text) => reasoning.push(text),
    });
    return { response, deltas, reasoning };
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

  const httpError = (status: number, message: string, extra: Partial<HttpErrorStep> = {}): HttpErrorStep => ({
    kind: 'error',
    status,
    message,
    ...extra,
  });

  /** The visible text equals what was streamed: nothing hidden was shown, nothing shown is missing. */
  function assertShownIsContent({ response, deltas }: Collected): void {
    assert.equal(deltas.join(''), response.content);
  }

  describe('OpenAI', () => {
    it('assembles parallel tool calls split over many fragments with the id only on the first, and returns the usage chunk', async () => {
      fake.push(replayFixture('openai-parallel-tool-calls.sse'));
      const collected = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.deepEqual(collected.response, {
        content: '',
        toolCalls: [
          { id: 'call_Wb3kQm8TzR1yXv2LpN4sHd7J', name: 'read_file', arguments: '{"path":"server/src/model/openaiModel.ts"}' },
          { id: 'call_Hn6vRt2YkE9sLq0ZcXa5Mf1U', name: 'search', arguments: '{"query":"createOpenAIModel","glob":"server/**/*.ts"}' },
        ],
        finishReason: 'tool_calls',
        usage: { promptTokens: 1893, completionTokens: 61 },
      });
      assert.deepEqual(collected.deltas, []);
    });

    it('returns both the text and the tool call when one message carries both', async () => {
      fake.push(replayFixture('openai-content-and-tool-call.sse'));
      const collected = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.equal(collected.response.content, "I'll read the entry point first.");
      assert.deepEqual(collected.response.toolCalls, [
        { id: 'call_pK2dN8vXq5RtY1mLw9sZc3Bh', name: 'read_file', arguments: '{"path":"server/src/main.ts"}' },
      ]);
      assert.equal(collected.response.finishReason, 'tool_calls');
      assertShownIsContent(collected);
    });

    it('reports a reply cut at the output limit with finishReason length', async () => {
      fake.push(replayFixture('openai-length.sse'));
      const collected = await collect(modelFor());
      assert.equal(collected.response.finishReason, 'length');
      assert.equal(collected.response.content, "The retry loop waits for the server's retry-after header, then");
      assert.deepEqual(collected.response.usage, { promptTokens: 3120, completionTokens: 12 });
    });

    it('asks for usage with stream_options.include_usage', async () => {
      fake.push({ kind: 'text', text: 'ok' });
      await collect(modelFor());
      assert.deepEqual(fake.completionRequests[0].body?.stream_options, { include_usage: true });
    });

    it('leaves usage out of the response when the endpoint reports none', async () => {
      fake.push({ kind: 'text', text: 'ok' });
      const { response } = await collect(modelFor());
      assert.equal('usage' in response, false);
    });
  });

  describe('Azure OpenAI', () => {
    const root = () => fake.baseUrl.replace(/\/v1$/, '');

    it('sends the key in an api-key header and the api-version from the base URL to the deployment path', async () => {
      fake.push(replayFixture('azure-openai-tool-call.sse'));
      const baseUrl = `${root()}/openai/deployments/my-gpt4o?api-version=2024-10-21`;
      const collected = await collect(modelFor({ baseUrl }), ask({ tools: TOOLS }));

      const [request] = fake.completionRequests;
      assert.equal(request.path, '/openai/deployments/my-gpt4o/chat/completions');
      assert.deepEqual(request.query, { 'api-version': '2024-10-21' });
      assert.equal(request.headers['api-key'], API_KEY);
      assert.equal(request.headers.authorization, undefined);
      // The prompt_filter_results chunk (no choices, empty id) and content_filter_results are ignored.
      assert.equal(collected.response.content, 'Checking the config loader.');
      assert.deepEqual(collected.response.toolCalls, [
        { id: 'call_Zr4uT8mKq1VxN6cLb3Ws9Ye2', name: 'read_file', arguments: '{"path":"server/src/config.ts"}' },
      ]);
      assert.deepEqual(collected.response.usage, { promptTokens: 1544, completionTokens: 27 });
    });

    it('routes to the deployment named as the model when the base URL ends at /openai and apiVersion is set', async () => {
      fake.push({ kind: 'text', text: 'ok' });
      const model = modelFor({ baseUrl: `${root()}/openai`, apiVersion: '2025-01-01-preview', model: 'team-gpt41' });
      await collect(model);
      const [request] = fake.completionRequests;
      assert.equal(request.path, '/openai/deployments/team-gpt41/chat/completions');
      assert.deepEqual(request.query, { 'api-version': '2025-01-01-preview' });
      assert.equal(request.headers['api-key'], API_KEY);
    });

    it('lists the deployment of a deployment URL as its only model, without a request', async () => {
      const ids = await modelFor({ baseUrl: `${root()}/openai/deployments/my-gpt4o?api-version=2024-10-21` }).listModels();
      assert.deepEqual(ids, ['my-gpt4o']);
      assert.equal(fake.requests.length, 0);
    });

    it('says an Azure endpoint without a key needs one, before any request', async () => {
      const model = modelFor({ baseUrl: `${root()}/openai/deployments/d?api-version=2024-10-21`, apiKey: undefined });
      const error = await modelErrorFrom(model.complete(ask(), () => {}));
      assert.equal(error.kind, 'auth');
      assert.match(error.message, /needs an API key/);
      assert.equal(fake.requests.length, 0);
    });

    it('recognises Azure by host, api-version or setting, and leaves the /openai/v1 API and other hosts alone', () => {
      const classic = resolveEndpoint({ baseUrl: 'https://contoso.openai.azure.com/openai/deployments/gpt-4o/' });
      assert.deepEqual(classic.azure, { apiVersion: DEFAULT_AZURE_API_VERSION, deployment: 'gpt-4o' });
      assert.equal(classic.baseUrl, 'https://contoso.openai.azure.com/openai/deployments/gpt-4o');

      const bare = resolveEndpoint({ baseUrl: 'https://contoso.cognitiveservices.azure.com' });
      assert.equal(bare.baseUrl, 'https://contoso.cognitiveservices.azure.com/openai');
      assert.deepEqual(bare.azure, { apiVersion: DEFAULT_AZURE_API_VERSION });

      const pasted = resolveEndpoint({
        baseUrl: 'https://contoso.openai.azure.com/openai/deployments/o3-mini/chat/completions?api-version=2025-01-01-preview',
      });
      assert.equal(pasted.baseUrl, 'https://contoso.openai.azure.com/openai/deployments/o3-mini');
      assert.deepEqual(pasted.azure, { apiVersion: '2025-01-01-preview', deployment: 'o3-mini' });

      const byGateway = resolveEndpoint({ baseUrl: 'https://gateway.example.com/openai/deployments/x', apiVersion: '2024-10-21' });
      assert.deepEqual(byGateway.azure, { apiVersion: '2024-10-21', deployment: 'x' });

      assert.equal(resolveEndpoint({ baseUrl: 'https://contoso.openai.azure.com/openai/v1/' }).azure, undefined);
      assert.equal(resolveEndpoint({ baseUrl: 'http://localhost:11434/v1' }).azure, undefined);
    });
  });

  describe('Ollama', () => {
    it('takes a tool call sent whole in one chunk without an index, even when finish_reason says stop', async () => {
      fake.push(replayFixture('ollama-tool-call-whole-no-index.sse'));
      const { response } = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.deepEqual(response.toolCalls, [{ id: 'call_ns8yc9xf', name: 'read_file', arguments: '{"path":"README.md"}' }]);
      assert.equal(response.finishReason, 'stop');
    });

    it('takes several whole tool calls from one delta, in order', async () => {
      fake.push(replayFixture('ollama-parallel-tool-calls.sse'));
      const { response } = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.deepEqual(response.toolCalls, [
        { id: 'call_k3x9q2lm', name: 'read_file', arguments: '{"path":"package.json"}' },
        { id: 'call_7vb1rt0s', name: 'list_dir', arguments: '{"path":"server/src"}' },
      ]);
      assert.deepEqual(response.usage, { promptTokens: 1311, completionTokens: 52 });
    });

    it('keeps `reasoning` deltas out of the answer and passes them to onReasoning', async () => {
      fake.push(replayFixture('ollama-reasoning.sse'));
      const collected = await collect(modelFor());
      assert.equal(collected.reasoning.join(''), 'The user asks where retries happen. Look at withRetries.');
      assert.equal(collected.response.content, 'Retries happen in `withRetries`.');
      assertShownIsContent(collected);
    });

    it('keeps a leading <think> block out of the answer even when its closing tag is cut across deltas', async () => {
      fake.push(replayFixture('ollama-think-tags.sse'));
      const collected = await collect(modelFor());
      assert.equal(collected.reasoning.join(''), 'Okay, the user wants a summary. Keep it short.\n');
      assert.equal(collected.response.content, 'The server reads files — read-only.');
      assertShownIsContent(collected);
    });

    it('decodes the same reply when the stream is cut every few bytes, inside events, JSON and UTF-8 sequences', async () => {
      fake.push(replayFixture('ollama-think-tags.sse', { chunkBytes: 7 }));
      const collected = await collect(modelFor());
      assert.equal(collected.response.content, 'The server reads files — read-only.');
      assert.equal(collected.reasoning.join(''), 'Okay, the user wants a summary. Keep it short.\n');
    });

    it('refuses a model without tool support with a message that says it cannot read the repository and how to pick another', async () => {
      fake.push(httpError(400, 'registry.ollama.ai/library/gemma2:9b does not support tools', { type: 'api_error' }));
      const error = await modelErrorFrom(collect(modelFor({ model: 'gemma2:9b' }), ask({ tools: TOOLS })));
      assert.equal(error.kind, 'no_tools');
      assert.match(error.message, /'gemma2:9b' cannot read the repository/);
      assert.match(error.message, /tool-capable/);
      assert.ok(error.message.includes("'Repo Discuss: Select model'") && error.message.includes('OPENAI_MODEL'));
      assert.equal(fake.completionRequests.length, 1);
    });
  });

  describe('gateways and proxies', () => {
    it('turns tool-call arguments sent as an object into their JSON text', async () => {
      fake.push(replayFixture('gateway-arguments-object.sse'));
      const { response } = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.equal(response.toolCalls.length, 1);
      assert.equal(response.toolCalls[0].name, 'search');
      assert.deepEqual(JSON.parse(response.toolCalls[0].arguments), { query: 'TODO', max_results: 20 });
    });

    it('returns the text with a null finish reason when the stream has none, skipping SSE comments', async () => {
      fake.push(replayFixture('proxy-no-finish-reason.sse'));
      const collected = await collect(modelFor());
      assert.equal(collected.response.content, 'Sure, the store writes atomically.');
      assert.equal(collected.response.finishReason, null);
      assertShownIsContent(collected);
    });

    it('takes a stream without a finish reason as whole when it ends with [DONE], with LF or CRLF line ends, wherever the stream is cut into pieces', async () => {
      const lf = loadProviderFixture('proxy-no-finish-reason.sse');
      for (const body of [lf, lf.replace(/\n/g, '\r\n')]) {
        for (const chunkBytes of [1, 2, 3, 5, 7, 64]) {
          fake.push({ kind: 'replay', body, chunkBytes });
          const { response } = await collect(modelFor());
          assert.equal(response.content, 'Sure, the store writes atomically.', `chunks of ${chunkBytes} bytes`);
        }
      }
    });

    it('reports a stream with neither a finish reason nor [DONE] as incomplete, after passing on its text', async () => {
      const cut = loadProviderFixture('proxy-no-finish-reason.sse').replace('data: [DONE]\n', '');
      fake.push({ kind: 'replay', body: cut });
      const deltas: string[] = [];
      const error = await modelErrorFrom(modelFor().complete(ask(), (text) => deltas.push(text)));
      assert.equal(error.kind, 'network');
      assert.match(error.message, /incomplete/);
      assert.equal(deltas.join(''), 'Sure, the store writes atomically.');
    });
  });

  describe('how streams end', () => {
    const streamFixtures = fs.readdirSync(PROVIDER_FIXTURES_DIR).filter((name) => name.endsWith('.sse') && name !== 'proxy-no-finish-reason.sse');

    it('takes every recorded provider stream that has a finish reason as whole, also when the server closes it without [DONE]', async () => {
      assert.ok(streamFixtures.length >= 10, 'the fixtures are there');
      for (const name of streamFixtures) {
        const whole = loadProviderFixture(name);
        assert.match(whole, /"finish_reason":\s*"[a-z_]+"/, `${name} has a finish reason`);
        const withoutDone = whole.replace(/^data: \[DONE\]\n+/m, '');
        assert.notEqual(withoutDone, whole, `${name} ends with [DONE]`);
        for (const body of [whole, withoutDone]) {
          fake.push({ kind: 'replay', body });
          const { response } = await collect(modelFor(), ask({ tools: TOOLS }));
          assert.notEqual(response.finishReason, null, `${name}${body === whole ? '' : ' without [DONE]'}`);
        }
      }
    });
  });

  describe('LM Studio', () => {
    it('assembles a tool call that follows text, split with the id only on the first fragment, with usage on the finish chunk', async () => {
      fake.push(replayFixture('lmstudio-tool-call-split.sse'));
      const collected = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.equal(collected.response.content, 'Let me look.');
      assert.deepEqual(collected.response.toolCalls, [
        { id: '415823067', name: 'read_file', arguments: '{"path":"client/src/extension.ts"}' },
      ]);
      assert.deepEqual(collected.response.usage, { promptTokens: 1702, completionTokens: 33 });
    });

    it('keeps reasoning_content out of the answer, and the blank lines after it out of the answer’s start', async () => {
      fake.push(replayFixture('lmstudio-reasoning-content.sse'));
      const collected = await collect(modelFor());
      assert.equal(collected.reasoning.join(''), 'Hmm, the question is about timeouts.');
      assert.equal(collected.response.content, 'The idle timer restarts on every chunk.');
      assertShownIsContent(collected);
    });
  });

  describe('llama.cpp server', () => {
    it('separates reasoning_content, text and a split tool call in one reply, with usage on the finish chunk', async () => {
      fake.push(replayFixture('llamacpp-reasoning-tool-call.sse'));
      const collected = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.equal(collected.reasoning.join(''), 'I should read the store module.');
      assert.equal(collected.response.content, 'Reading the store.');
      assert.deepEqual(collected.response.toolCalls, [
        { id: 'Vq3LkT9xR2mPz8Yw1NcB5sHd0Gf4Ja7E', name: 'read_file', arguments: '{"path":"server/src/store/index.ts"}' },
      ]);
      assert.equal(collected.response.finishReason, 'tool_calls');
      assert.deepEqual(collected.response.usage, { promptTokens: 1488, completionTokens: 41 });
      assertShownIsContent(collected);
    });

    it('reports a reply cut at n_predict with finishReason length', async () => {
      fake.push(replayFixture('llamacpp-length.sse'));
      const { response } = await collect(modelFor());
      assert.equal(response.finishReason, 'length');
      assert.equal(response.content, 'The fake server streams real SSE so the');
    });

    it('retries once without streaming when the server cannot stream with tools, and remembers that for the endpoint', async () => {
      fake.push(
        httpError(400, 'Cannot use tools with stream', { type: 'invalid_request_error' }),
        replayFixture('llamacpp-nonstream-tool-call.json'),
        { kind: 'text', text: 'Whole reply.', usage: { promptTokens: 5, completionTokens: 2 } },
        { kind: 'text', text: 'Streamed reply.' },
      );
      const model = modelFor();

      const first = await collect(model, ask({ tools: TOOLS }));
      assert.deepEqual(first.response.toolCalls, [{ id: 'rT5nB8kQ2wX9mL4vZ1cY7hG3dF0sJ6pA', name: 'list_dir', arguments: '{"path":"."}' }]);
      assert.deepEqual(first.response.usage, { promptTokens: 977, completionTokens: 18 });

      const second = await collect(model, ask({ tools: TOOLS }));
      assert.equal(second.response.content, 'Whole reply.');
      assert.deepEqual(second.deltas, ['Whole reply.']);
      assert.deepEqual(second.response.usage, { promptTokens: 5, completionTokens: 2 });

      // Without tools the endpoint streams as before.
      const third = await collect(model);
      assert.equal(third.response.content, 'Streamed reply.');

      const bodies = fake.completionRequests.map((request) => request.body ?? {});
      assert.deepEqual(
        bodies.map((body) => [body.stream, 'stream_options' in body]),
        [
          [true, true],
          [false, false],
          [false, false],
          [true, true],
        ],
      );
    });

    it('says the discussion no longer fits when the server reports the context size is exceeded', async () => {
      fake.push(
        httpError(400, 'the request exceeds the available context size, try increasing it', { type: 'exceed_context_size_error' }),
      );
      const error = await modelErrorFrom(collect(modelFor()));
      assert.equal(error.kind, 'bad_request');
      assert.match(error.message, /no longer fits the context/);
      assert.equal(fake.completionRequests.length, 1);
    });
  });

  describe('vLLM', () => {
    it('assembles parallel tool calls whose first fragment has no arguments, with the usage chunk', async () => {
      fake.push(replayFixture('vllm-parallel-tool-calls.sse'));
      const { response } = await collect(modelFor(), ask({ tools: TOOLS }));
      assert.deepEqual(response.toolCalls, [
        { id: 'chatcmpl-tool-8d1f4b2c6e9a4f7b', name: 'read_file', arguments: '{"path": "docs/protocol.md"}' },
        { id: 'chatcmpl-tool-2c7e9a1b5d3f4e8a', name: 'search', arguments: '{"query": "reasoning_delta"}' },
      ]);
      assert.equal(response.finishReason, 'tool_calls');
      assert.deepEqual(response.usage, { promptTokens: 2045, completionTokens: 48 });
    });

    it('reports max_tokens beyond the context as a context problem, not a parameter to rename', async () => {
      fake.push(
        httpError(
          400,
          "'max_tokens' is too large: 4096. This model's maximum context length is 8192 tokens and your request has 5000 input tokens (4096 > 8192 - 5000).",
        ),
      );
      const error = await modelErrorFrom(collect(modelFor(), ask({ maxTokens: 4096 })));
      assert.equal(error.kind, 'bad_request');
      assert.match(error.message, /no longer fits the context/);
      assert.equal(fake.completionRequests.length, 1);
    });

    it('keeps reasoning_content apart and reports a reply cut at max_tokens as length', async () => {
      fake.push(replayFixture('vllm-reasoning-length.sse'));
      const collected = await collect(modelFor());
      assert.equal(collected.reasoning.join(''), 'Let me think about the budget.');
      assert.equal(collected.response.content, 'The budget drops old tool results first,');
      assert.equal(collected.response.finishReason, 'length');
      assertShownIsContent(collected);
    });
  });

  describe('refused parameters', () => {
    it('retries once without stream_options when the endpoint rejects it, and remembers that for the endpoint only', async () => {
      const other = await startFakeOpenAI({ steps: [{ kind: 'text', text: 'elsewhere' }] });
      extraFakes.push(other);
      let baseUrl = fake.baseUrl;
      const model = createOpenAIModel(() => ({ baseUrl, apiKey: API_KEY, model: 'm' }), { retryDelayMs: 1 });
      fake.push(
        httpError(400, 'Unrecognized request argument supplied: stream_options'),
        { kind: 'text', text: 'first' },
        { kind: 'text', text: 'second' },
      );

      assert.equal((await model.complete(ask(), () => {})).content, 'first');
      assert.equal((await model.complete(ask(), () => {})).content, 'second');
      baseUrl = other.baseUrl;
      assert.equal((await model.complete(ask(), () => {})).content, 'elsewhere');

      assert.deepEqual(
        fake.completionRequests.map((request) => 'stream_options' in (request.body ?? {})),
        [true, false, false],
      );
      assert.equal('stream_options' in (other.completionRequests[0].body ?? {}), true);
    });

    it('does not retry a second time when the endpoint still refuses after the adaptation', async () => {
      fake.push(
        httpError(400, 'Unrecognized request argument supplied: stream_options'),
        httpError(400, 'Unrecognized request argument supplied: stream_options'),
        { kind: 'text', text: 'never requested' },
      );
      const error = await modelErrorFrom(collect(modelFor()));
      assert.equal(error.kind, 'bad_request');
      assert.equal(fake.completionRequests.length, 2);
    });

    it('switches to max_completion_tokens for a model that refuses max_tokens, and remembers it for that model', async () => {
      fake.push(
        httpError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", {
          param: 'max_tokens',
          code: 'unsupported_parameter',
        }),
        { kind: 'text', text: 'one' },
        { kind: 'text', text: 'two' },
        { kind: 'text', text: 'three' },
      );
      const model = modelFor({ model: 'o3-mini' });
      await collect(model, ask({ maxTokens: 256 }));
      await collect(model, ask({ maxTokens: 256 }));
      await collect(model, ask({ maxTokens: 256, model: 'gpt-4o' }));

      assert.deepEqual(
        fake.completionRequests.map((request) => [request.body?.model, request.body?.max_tokens, request.body?.max_completion_tokens]),
        [
          ['o3-mini', 256, undefined],
          ['o3-mini', undefined, 256],
          ['o3-mini', undefined, 256],
          ['gpt-4o', 256, undefined],
        ],
      );
    });

    it('goes back to max_tokens for a model that then refuses max_completion_tokens', async () => {
      fake.push(
        httpError(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."),
        { kind: 'text', text: 'one' },
        httpError(400, 'Unrecognized request argument supplied: max_completion_tokens'),
        { kind: 'text', text: 'two' },
      );
      const model = modelFor();
      await collect(model, ask({ maxTokens: 64 }));
      await collect(model, ask({ maxTokens: 64 }));
      assert.deepEqual(
        fake.completionRequests.map((request) => ('max_tokens' in (request.body ?? {}) ? 'max_tokens' : 'max_completion_tokens')),
        ['max_tokens', 'max_completion_tokens', 'max_completion_tokens', 'max_tokens'],
      );
    });
  });

  describe('model lists', () => {
    it('reports an endpoint without /models (404) as cannot_list', async () => {
      fake.setModels(httpError(404, 'Not Found'));
      const error = await modelErrorFrom(modelFor().listModels());
      assert.equal(error.kind, 'cannot_list');
      assert.ok(error.message.includes("'Repo Discuss: Select model'"));
    });

    it('reports a 501 from /models as cannot_list without retrying it', async () => {
      fake.setModels(httpError(501, 'Not Implemented'));
      const error = await modelErrorFrom(modelFor().listModels());
      assert.equal(error.kind, 'cannot_list');
      assert.equal(fake.requests.length, 1);
    });

    it('reports a /models answer that is not a JSON model list as cannot_list', async () => {
      fake.setModels({ kind: 'error', status: 200, rawBody: '<html><body>Welcome</body></html>' });
      const error = await modelErrorFrom(modelFor().listModels());
      assert.equal(error.kind, 'cannot_list');
    });
  });

  describe('vLLM, reasoning in the content without an opening <think>', () => {
    const REASONING = 'Okay, the user asks where retries happen. I remember `withRetries` in openaiModel.ts.';
    const ANSWER = 'Retries happen in `withRetries` (server/src/model/openaiModel.ts).';

    async function collectRetracting(model: ChatModel): Promise<Collected & { retractions: number; shown: string }> {
      let shown = '';
      let retractions = 0;
      const deltas: string[] = [];
      const reasoning: string[] = [];
      const response = await model.complete(ask(), (text) => {
        deltas.push(text);
        shown += text;
      }, {
        onReasoning: (text) => reasoning.push(text),
        onAnswerRetracted: () => {
          retractions++;
          shown = '';
        },
      });
      return { response, deltas, reasoning, retractions, shown };
    }

    for (const chunkBytes of [undefined, 7]) {
      it(`treats the text before a lone </think> cut across deltas as reasoning, and the answer leaves it out${chunkBytes ? ' (stream cut every 7 bytes)' : ''}`, async () => {
        fake.push(replayFixture('vllm-r1-untagged-think.sse', chunkBytes ? { chunkBytes } : {}));
        const collected = await collectRetracting(modelFor());
        assert.equal(collected.response.content, ANSWER);
        assert.equal(collected.reasoning.join(''), REASONING);
        assert.equal(collected.retractions, 1, 'what was streamed as answer is taken back once');
        assert.equal(collected.shown, ANSWER, 'what stays shown after the retraction is the answer');
        assert.deepEqual(collected.response.usage, { promptTokens: 412, completionTokens: 37 });
      });
    }

    it('leaves a reply alone that mentions </think> other than alone on a line at the start of untagged reasoning', async () => {
      const replies = [
        'The template closes reasoning with `</think>`,\nthen the answer.',
        'Tags:\n</think> closes the block.',
        'A <think> block\n</think>\nends like this.',
        'The chat template ends with:\n```\n</think>\n```\n',
        'First </think>\nthen more.',
      ];
      for (const text of replies) {
        fake.push({ kind: 'text', deltas: [...text] });
        const collected = await collectRetracting(modelFor());
        assert.equal(collected.response.content, text, text);
        assert.equal(collected.retractions, 0, text);
        assert.deepEqual(collected.reasoning, [], text);
        assert.equal(collected.deltas.join(''), text, text);
      }
    });

    it('streams a normal reply without holding it back: each delta is passed on as it arrives', async () => {
      fake.push({ kind: 'text', deltas: ['Retries ', 'happen ', 'in withRetries.'] });
      const { deltas } = await collect(modelFor());
      assert.deepEqual(deltas, ['Retries ', 'happen ', 'in withRetries.']);
    });
  });

  describe('reasoning and callbacks', () => {
    it('rethrows an error thrown by onReasoning unchanged', async () => {
      fake.push({ kind: 'text', text: 'answer', reasoning: ['thinking'] });
      const thrown = new Error('panel failed');
      await assert.rejects(
        modelFor().complete(ask(), () => {}, {
          onReasoning: () => {
            throw thrown;
          },
        }),
        (error) => error === thrown,
      );
    });

    it('returns an empty answer, not an error, when the reply is all reasoning cut at the limit', async () => {
      fake.push({ kind: 'text', deltas: ['<think>', 'still going'], finishReason: 'length' });
      const collected = await collect(modelFor());
      assert.deepEqual(collected.response, { content: '', toolCalls: [], finishReason: 'length' });
      assert.equal(collected.reasoning.join(''), 'still going');
    });

    it('drops an empty <think></think> block without a reasoning event', async () => {
      fake.push({ kind: 'text', deltas: ['<think>\n\n</think>\n\n', 'Hello.'] });
      const collected = await collect(modelFor());
      assert.equal(collected.response.content, 'Hello.');
      assert.deepEqual(collected.reasoning, []);
    });
  });
});

describe('ThinkTagSplitter', () => {
  function split(pieces: string[]): { text: string; reasoning: string } {
    const splitter = new ThinkTagSplitter();
    let text = '';
    let reasoning = '';
    for (const segment of [...pieces.flatMap((piece) => splitter.push(piece)), ...splitter.flush()]) {
      if (segment.retractsAnswer) text = '';
      if (segment.reasoning) reasoning += segment.text;
      else text += segment.text;
    }
    return { text, reasoning };
  }

  it('gives the same reasoning and text wherever the stream is cut, at one or two points', () => {
    const whole = '\n<think>plan: a < b </thin k></think>\n\nThe answer <think>stays</think>.';
    const expected = { text: 'The answer <think>stays</think>.', reasoning: 'plan: a < b </thin k>' };
    assert.deepEqual(split([whole]), expected);
    for (let i = 1; i < whole.length; i++) {
      assert.deepEqual(split([whole.slice(0, i), whole.slice(i)]), expected, `cut at ${i}`);
      for (let j = i + 1; j < whole.length; j += 3) {
        assert.deepEqual(split([whole.slice(0, i), whole.slice(i, j), whole.slice(j)]), expected, `cut at ${i} and ${j}`);
      }
    }
  });

  it('gives the same split of untagged reasoning ended by a lone </think> wherever the stream is cut', () => {
    const whole = 'Plan: a < b, see </thin k>.\n</think>  \n\nThe answer mentions </think> too.';
    const expected = { text: 'The answer mentions </think> too.', reasoning: 'Plan: a < b, see </thin k>.' };
    assert.deepEqual(split([whole]), expected);
    for (let i = 1; i < whole.length; i++) {
      assert.deepEqual(split([whole.slice(0, i), whole.slice(i)]), expected, `cut at ${i}`);
      for (let j = i + 1; j < whole.length; j += 3) {
        assert.deepEqual(split([whole.slice(0, i), whole.slice(i, j), whole.slice(j)]), expected, `cut at ${i} and ${j}`);
      }
    }
    assert.deepEqual(split(['Only reasoning\n', '</think>']), { text: '', reasoning: 'Only reasoning' });
  });

  it('leaves text that only starts like a tag as text', () => {
    assert.deepEqual(split(['<th', 'ese are tags>']), { text: '<these are tags>', reasoning: '' });
    assert.deepEqual(split(['<thi']), { text: '<thi', reasoning: '' });
    assert.deepEqual(split(['Some <think> in the middle']), { text: 'Some <think> in the middle', reasoning: '' });
  });
});

describe('ToolCallAssembler', () => {
  it('separates whole calls that arrive without index or id, one after the other', () => {
    const assembler = new ToolCallAssembler();
    assembler.add({ function: { name: 'read_file', arguments: '{"path":"a"}' } });
    assembler.add({ function: { name: 'read_file', arguments: '{"path":"b"}' } });
    assert.deepEqual(
      assembler.result().map(({ name, arguments: args }) => ({ name, args })),
      [
        { name: 'read_file', args: '{"path":"a"}' },
        { name: 'read_file', args: '{"path":"b"}' },
      ],
    );
  });

  it('keeps one call when a server repeats the name on every argument fragment', () => {
    const assembler = new ToolCallAssembler();
    for (const piece of ['{"pa', 'th":"', 'a"}']) assembler.add({ function: { name: 'read_file', arguments: piece } });
    assert.deepEqual(
      assembler.result().map(({ name, arguments: args }) => ({ name, args })),
      [{ name: 'read_file', args: '{"path":"a"}' }],
    );
  });
});

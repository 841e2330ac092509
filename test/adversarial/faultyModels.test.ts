/**
 * Part 4 — faulty models. The endpoint refuses, rate-limits, fails, cuts the
 * connection, sends garbage, never finishes, or crawls. Every turn ends (with
 * `error` and `turn_complete`, or after a bounded retry with an answer), and
 * the discussion takes the next message.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { ResponseError } from 'vscode-jsonrpc';
import type { DiscussionEvent } from '../../shared/protocol';
import { DiscussErrorCode } from '../../shared/protocol';
import { createGate, startFakeOpenAI, type FakeGate, type FakeOpenAI, type FakeStep } from '../support/fakeOpenAI';
import type { ServerProcess } from '../support/serverProcess';
import { Lab, assertNoLeak, assertValidHistory, recordFigures, runTurn, scanForLeaks, toolOutputs } from './lab';

const API_KEY = 'sk-adversarial-key';
/** Retries the server allows itself after the first try (the default in model/openai/chatModel.ts). */
const MAX_TRIES = 3;

type Outcome = 'error' | 'success' | 'either';

interface FaultCase {
  /** Completes "… ends the turn …" style sentences in the test name. */
  name: string;
  steps: FakeStep[];
  expect: Outcome;
  /** Model requests the turn may make (bounded retry). */
  requests: number;
  errorMatch?: RegExp;
  /** Extra checks on the turn's events and the requests it made. */
  check?: (events: DiscussionEvent[], fake: FakeOpenAI, firstRequest: number) => void;
}

const fast = { 'retry-after-ms': '1' };

const CASES: FaultCase[] = [
  { name: 'a 401 for the key', steps: [{ kind: 'error', status: 401, message: `Incorrect API key provided: ${API_KEY}` }], expect: 'error', requests: 1, errorMatch: /API key/ },
  { name: 'a 403 for the key', steps: [{ kind: 'error', status: 403, message: `Key ${API_KEY} has no access to this model` }], expect: 'error', requests: 1, errorMatch: /403/ },
  { name: 'a 404 for the model', steps: [{ kind: 'error', status: 404, message: 'The model fake-model does not exist', code: 'model_not_found' }], expect: 'error', requests: 1, errorMatch: /does not offer the model/ },
  { name: 'a 429 with retry-after-ms, then an answer', steps: [{ kind: 'error', status: 429, headers: fast }, { kind: 'text', text: 'After the wait.' }], expect: 'success', requests: 2 },
  { name: 'a 429 with retry-after: 0, then an answer', steps: [{ kind: 'error', status: 429, headers: { 'retry-after': '0' } }, { kind: 'text', text: 'After the wait.' }], expect: 'success', requests: 2 },
  {
    name: 'a 429 without retry-after on every try',
    steps: [{ kind: 'error', status: 429 }, { kind: 'error', status: 429 }, { kind: 'error', status: 429 }],
    expect: 'error',
    requests: MAX_TRIES,
    errorMatch: /429.*still after 2 retries/,
  },
  { name: 'a 429 asking to wait an hour', steps: [{ kind: 'error', status: 429, headers: { 'retry-after': '3600' } }], expect: 'error', requests: 1, errorMatch: /asks to wait 3600 s/ },
  { name: 'a 429 for a used-up quota', steps: [{ kind: 'error', status: 429, code: 'insufficient_quota' }], expect: 'error', requests: 1, errorMatch: /quota/ },
  { name: 'a 500, then an answer', steps: [{ kind: 'error', status: 500, headers: fast }, { kind: 'text', text: 'Second try.' }], expect: 'success', requests: 2 },
  {
    name: 'a 500 on every try, echoing the key',
    steps: Array.from({ length: MAX_TRIES }, (): FakeStep => ({ kind: 'error', status: 500, headers: fast, message: `internal error for key ${API_KEY}` })),
    expect: 'error',
    requests: MAX_TRIES,
    errorMatch: /server error \(500\)/,
  },
  { name: 'a 503, then an answer', steps: [{ kind: 'error', status: 503, headers: fast }, { kind: 'text', text: 'Second try.' }], expect: 'success', requests: 2 },
  {
    name: "a proxy's 503 HTML page on every try",
    steps: Array.from({ length: MAX_TRIES }, (): FakeStep => ({ kind: 'error', status: 503, headers: fast, rawBody: '<html><body><h1>503 Service Unavailable</h1><script>x()</script></body></html>' })),
    expect: 'error',
    requests: MAX_TRIES,
    errorMatch: /503/,
    check: (events) => assert.doesNotMatch(errorOf(events), /<[a-z/]/i, 'no HTML in the message'),
  },
  { name: 'a 400 for a context that is too long', steps: [{ kind: 'error', status: 400, code: 'context_length_exceeded', message: 'too many tokens' }], expect: 'error', requests: 1, errorMatch: /context/ },
  { name: 'a connection reset before any byte, then an answer', steps: [{ kind: 'reset' }, { kind: 'text', text: 'Reconnected.' }], expect: 'success', requests: 2 },
  {
    name: 'a connection reset mid-stream',
    steps: [{ kind: 'reset', deltas: ['Half of ', 'an answer'] }],
    expect: 'error',
    requests: 1,
    check: (events) => assert.match(textOf(events), /Half of an answer/, 'what was shown is kept'),
  },
  {
    name: 'a stream truncated mid-answer (no finish, no [DONE])',
    steps: [{ kind: 'truncated', deltas: ['Cut ', 'short'] }],
    expect: 'error',
    requests: 1,
    errorMatch: /incomplete/,
    check: (events) => assert.equal(textOf(events), 'Cut short', 'what was shown is kept'),
  },
  {
    name: 'a stream truncated mid-way through a tool call',
    steps: [{ kind: 'truncated', deltas: ['Let me look. '], calls: [{ id: 'cut-call', name: 'read_file', arguments: '{"path": "REA', fragments: ['{"pa', 'th": "REA'] }] }],
    expect: 'error',
    requests: 1,
    errorMatch: /incomplete/,
    check: (events) => assert.deepEqual(events.filter((e) => e.type === 'tool_call' || e.type === 'tool_result'), [], 'the half-received call is not run'),
  },
  {
    name: 'a stream that closes after its finish reason, without [DONE]',
    steps: [{ kind: 'replay', body: sseChunk({ role: 'assistant', content: 'Whole ' }) + sseChunk({ content: 'answer.' }) + sseChunk({}, 'stop') }],
    expect: 'success',
    requests: 1,
    check: (events) => assert.equal(textOf(events), 'Whole answer.'),
  },
  { name: 'a stream that ends before any byte, then an answer', steps: [{ kind: 'truncated' }, { kind: 'text', text: 'Whole.' }], expect: 'success', requests: 2 },
  { name: 'a malformed chunk mid-stream', steps: [{ kind: 'malformed', deltas: ['Some text '] }], expect: 'error', requests: 1, errorMatch: /not valid JSON/ },
  { name: 'a malformed first chunk', steps: [{ kind: 'malformed', raw: '<<<not json at all>>>' }], expect: 'error', requests: 1 },
  // Buffered whole, an event that never ends would grow the server without bound.
  { name: 'one stream event of 17 MiB that never ends', steps: [{ kind: 'replay', body: `data: "${'x'.repeat(17 * 2 ** 20)}` }], expect: 'error', requests: 1, errorMatch: /more than 16 MiB/ },
  {
    name: 'an error event inside a started stream',
    steps: [{ kind: 'gate', gate: releasedGate(), deltas: ['Starting '], then: { kind: 'error', status: 500, message: 'overloaded mid-reply' } }],
    expect: 'error',
    requests: 1,
    errorMatch: /mid-reply/,
  },
  {
    name: 'tool-call arguments that are not JSON',
    steps: [
      { kind: 'toolCalls', calls: [{ id: 'bad-args', name: 'read_file', arguments: '{"path": README.md' }, { id: 'bad-args-2', name: 'grep_files', arguments: 'pattern=x' }] },
      { kind: 'text', text: 'The arguments were broken.' },
    ],
    expect: 'success',
    requests: 2,
    check: (events, fake, first) => {
      const results = events.filter((e) => e.type === 'tool_result') as Array<{ ok: boolean }>;
      assert.deepEqual(results.map((r) => r.ok), [false, false]);
      assert.match(toolOutputs(fake.completionRequests.slice(first)).get('bad-args') ?? '', /not valid JSON/);
    },
  },
  {
    name: 'tool-call arguments sent as an object instead of a string',
    steps: [{ kind: 'toolCalls', calls: [{ id: 'obj-args', name: 'read_file', arguments: { path: 'README.md' } }] }, { kind: 'text', text: 'Read it.' }],
    expect: 'success',
    requests: 2,
    check: (events) => assert.equal((events.find((e) => e.type === 'tool_result') as { ok: boolean }).ok, true),
  },
  {
    name: 'tool calls without a finish reason',
    steps: [{ kind: 'toolCalls', finishReason: null, calls: [{ id: 'nofinish', name: 'list_dir', arguments: '{}' }] }, { kind: 'text', text: 'Listed.' }],
    expect: 'success',
    requests: 2,
  },
  {
    name: 'an answer cut at the output limit',
    steps: [{ kind: 'text', text: 'A long answer that', finishReason: 'length' }],
    expect: 'success',
    requests: 1,
    check: (events) => assert.match(textOf(events), /cut off/),
  },
  {
    name: 'a model that calls tools forever',
    steps: Array.from({ length: 12 }, (_, i): FakeStep => ({ kind: 'toolCalls', calls: [{ id: `loop-${i}`, name: 'list_dir', arguments: '{}' }] })),
    expect: 'error',
    requests: 12,
    errorMatch: /12 calls without finishing/,
  },
];

/** One chat.completion.chunk event, for streams written by hand. */
function sseChunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-hand', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

function releasedGate(): FakeGate {
  const gate = createGate();
  gate.release();
  return gate;
}

function errorOf(events: DiscussionEvent[]): string {
  return (events.find((e) => e.type === 'error') as { message: string } | undefined)?.message ?? '';
}

function textOf(events: DiscussionEvent[]): string {
  return (events.find((e) => e.type === 'assistant_message') as { text: string } | undefined)?.text ?? '';
}

describe('adversarial: faulty models', function () {
  this.timeout(60_000);
  let lab: Lab;
  let s: ServerProcess;
  /** A fresh endpoint per case, so a case that fails cannot leave its script to the next one. */
  let fake: FakeOpenAI;
  const seenByEndpoints: Array<[string, string]> = [];
  const outcomes: Record<string, string> = {};

  before(async () => {
    lab = await Lab.create({ plain: true });
    s = await lab.server();
  });
  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['fake-model'] });
    await s.request('discuss/configure', { model: { baseUrl: fake.baseUrl } });
  });
  afterEach(async () => {
    fake.requests.forEach((r, i) => seenByEndpoints.push([`case request ${i}`, r.rawBody]));
    await fake.close();
    // Cases open their own discussion; close any a failed case left open.
    const { discussions } = await s.request<{ discussions: Array<{ discussionId: string }> }>('discuss/list', {});
    for (const d of discussions) await s.request('discuss/close', { discussionId: d.discussionId });
  });
  after(async () => {
    assertNoLeak(scanForLeaks(lab, [s], seenByEndpoints));
    recordFigures('faultyModels', { cases: Object.keys(outcomes).length, outcomes });
    await lab.dispose();
  });

  /** The discussion takes the next message and answers it. */
  async function assertTakesNextMessage(id: string): Promise<void> {
    const events = await runTurn(s, fake, id, 'and now?', [{ kind: 'text', text: 'Recovered.' }]);
    assert.equal(textOf(events), 'Recovered.');
    assert.equal(errorOf(events), '');
    assertValidHistory(fake.completionRequests[fake.completionRequests.length - 1]);
  }

  function assertEnded(events: DiscussionEvent[]): void {
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'user_message');
    assert.equal(types[types.length - 1], 'turn_complete', 'the turn ends with turn_complete');
    assert.equal(types.filter((t) => t === 'turn_complete').length, 1);
  }

  function assertUsefulError(events: DiscussionEvent[], match?: RegExp): string {
    const errors = events.filter((e) => e.type === 'error') as Array<{ message: string }>;
    assert.equal(errors.length, 1, 'exactly one error event');
    const message = errors[0].message;
    assert.ok(message.length > 20, 'the error says something');
    assert.doesNotMatch(message, /\n\s+at /, 'no stack trace');
    assert.ok(!message.includes(API_KEY), 'the key is not echoed');
    if (match) assert.match(message, match);
    return message;
  }

  for (const c of CASES) {
    it(`${c.name}: the turn ends (${c.expect === 'success' ? 'with an answer' : c.expect === 'error' ? 'with error and turn_complete' : 'with turn_complete'}) and the discussion takes the next message`, async () => {
      const id = await lab.open(s);
      const first = fake.completionRequests.length;
      const events = await runTurn(s, fake, id, `case: ${c.name}`, c.steps);
      const made = fake.completionRequests.length - first;
      assertEnded(events);
      assert.equal(made, c.requests, `model requests made (bounded retry): ${made}`);
      assert.equal(fake.pendingSteps, 0, 'the script was used up exactly');
      let outcome: string;
      if (c.expect === 'error') {
        outcome = `error: ${assertUsefulError(events, c.errorMatch).slice(0, 140)}`;
      } else if (c.expect === 'success') {
        assert.equal(errorOf(events), '', 'no error');
        assert.ok(textOf(events).length > 0, 'an answer');
        outcome = `answered after ${made} request(s)`;
      } else {
        outcome = errorOf(events) ? `error: ${errorOf(events).slice(0, 140)}` : `answered: ${JSON.stringify(textOf(events))}`;
      }
      c.check?.(events, fake, first);
      await assertTakesNextMessage(id);
      await s.request('discuss/close', { discussionId: id });
      outcomes[c.name] = outcome;
    });
  }

  it('a stream that never ends is stopped by cancel: the endpoint sees the disconnect, the turn ends and the next message is answered', async () => {
    const id = await lab.open(s);
    const disconnects = fake.disconnects;
    fake.push({ kind: 'hang', deltas: ['Thinking about it '] });
    const sent = await s.request<{ seq: number }>('discuss/send', { discussionId: id, text: 'a question that hangs' });
    await s.until((events) => events.some((e) => e.discussionId === id && e.type === 'assistant_delta' && e.seq > sent.seq));
    await s.request('discuss/cancel', { discussionId: id });
    await fake.waitForDisconnect(disconnects + 1);
    await s.turnsComplete(id, 1);
    await fake.waitForStreamsClosed();
    await assertTakesNextMessage(id);
    await s.request('discuss/close', { discussionId: id });
    outcomes['never-ending stream, cancel'] = 'disconnected, turn_complete';
  });

  it('a stream that never ends is stopped by close: the endpoint sees the disconnect and the closed discussion refuses more', async () => {
    const id = await lab.open(s);
    const disconnects = fake.disconnects;
    fake.push({ kind: 'hang' });
    const first = fake.completionRequests.length;
    await s.request('discuss/send', { discussionId: id, text: 'a question that hangs' });
    await fake.waitForCompletionRequests(first + 1);
    await s.request('discuss/close', { discussionId: id });
    await fake.waitForDisconnect(disconnects + 1);
    await fake.waitForStreamsClosed();
    const refused = await s.request('discuss/send', { discussionId: id, text: 'more' }).then(
      () => undefined,
      (err: ResponseError<unknown>) => err,
    );
    assert.equal(refused?.code, DiscussErrorCode.NotFound);
    // The server goes on with another discussion.
    await assertTakesNextMessage(await lab.open(s));
    outcomes['never-ending stream, close'] = 'disconnected, discussion closed';
  });

  it('a stream that hangs after a round of tool calls is cancelled, and the saved history stays valid for the next request', async () => {
    const id = await lab.open(s);
    const disconnects = fake.disconnects;
    fake.push(
      { kind: 'toolCalls', calls: [{ id: 'before-hang', name: 'read_file', arguments: '{"path":"README.md"}' }] },
      { kind: 'hang', deltas: ['Now reading '] },
    );
    const sent = await s.request<{ seq: number }>('discuss/send', { discussionId: id, text: 'read then hang' });
    await s.until((events) => events.some((e) => e.discussionId === id && e.type === 'assistant_delta' && e.seq > sent.seq));
    await s.request('discuss/cancel', { discussionId: id });
    await fake.waitForDisconnect(disconnects + 1);
    await s.turnsComplete(id, 1);
    await assertTakesNextMessage(id);
    await s.request('discuss/close', { discussionId: id });
    outcomes['hang after tool round, cancel'] = 'disconnected, history valid';
  });

  it('a very slow stream is shown piece by piece, each piece reaching the client before the endpoint sends the next, and completes', async () => {
    const id = await lab.open(s);
    const PIECES = 40;
    const gates = Array.from({ length: PIECES }, () => createGate());
    let step: FakeStep = { kind: 'text', text: 'end.' };
    for (let i = PIECES - 1; i >= 0; i--) step = { kind: 'gate', gate: gates[i], deltas: [`w${i} `], then: step };
    fake.push(step);
    const sent = await s.request<{ seq: number }>('discuss/send', { discussionId: id, text: 'take your time' });
    const deltasSeen = () => s.events.filter((e) => e.discussionId === id && e.seq > sent.seq && e.type === 'assistant_delta').length;
    for (let i = 0; i < PIECES; i++) {
      await gates[i].reached;
      await s.until(() => deltasSeen() >= i + 1);
      assert.equal(s.of(id, 'turn_complete').length, 0, 'still streaming');
      gates[i].release();
    }
    await s.turnsComplete(id, 1);
    const text = textOf(s.events.filter((e) => e.discussionId === id));
    assert.equal(text, Array.from({ length: PIECES }, (_, i) => `w${i} `).join('') + 'end.');
    await assertTakesNextMessage(id);
    await s.request('discuss/close', { discussionId: id });
    outcomes['very slow stream'] = `${PIECES} pieces, each forwarded before the next was sent`;
  });

  it('an endpoint nobody listens on ends the turn with an error after bounded retries, and the discussion goes on once it is back', async () => {
    const port = await closedPort();
    await s.request('discuss/configure', { model: { baseUrl: `http://127.0.0.1:${port}/v1` } });
    const id = await lab.open(s);
    const events = await runTurn(s, fake, id, 'is anyone there?');
    assertEnded(events);
    const message = assertUsefulError(events, /Could not reach/);
    await s.request('discuss/configure', { model: { baseUrl: fake.baseUrl } });
    await assertTakesNextMessage(id);
    await s.request('discuss/close', { discussionId: id });
    outcomes['endpoint unreachable'] = `error: ${message.slice(0, 140)}`;
  });

  it('a failing model list is answered with a clear error, and turns still work', async () => {
    fake.setModels({ kind: 'error', status: 500, message: 'models are down' });
    try {
      const refused = await s.request('discuss/models', {}).then(
        () => undefined,
        (err: ResponseError<unknown>) => err,
      );
      assert.equal(refused?.code, DiscussErrorCode.ModelFailed);
      assert.match(refused!.message, /500/);
      const id = await lab.open(s);
      await assertTakesNextMessage(id);
      await s.request('discuss/close', { discussionId: id });
    } finally {
      fake.setModels(['fake-model']);
    }
    outcomes['model list fails'] = 'ModelFailed error';
  });
});

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createOpenAIModel } from '../../../server/src/model/openai/chatModel';
import { ModelThread } from '../../../server/src/model/threaded/threadedModel';
import { countTextTokens } from '../../../server/src/model/tokenizer';
import { ChatModel, ChatRequest, ModelError, ModelSettings, RetryNotice } from '../../../server/src/model/types';
import { createGate, FakeOpenAI, startFakeOpenAI } from '../../support/fakeOpenAI';

const API_KEY = 'sk-test-SECRET-0123456789';

describe('the model in a thread of its own', () => {
  let fake: FakeOpenAI;
  let thread: ModelThread;

  beforeEach(async () => {
    fake = await startFakeOpenAI();
    thread = new ModelThread({ modelOptions: { retryDelayMs: 1 } });
  });

  afterEach(async () => {
    await thread.close();
    await fake.close();
  });

  function modelFor(settings: Partial<ModelSettings> = {}): ChatModel {
    return thread.model(() => ({ baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'test-model', ...settings }));
  }

  const ask = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({ messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal, ...overrides });

  /** What `promise` failed with; the test fails if it resolved. */
  const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
    promise.then(
      () => assert.fail('expected the request to fail'),
      (err: unknown) => err,
    );

  const assertCancelled = (error: unknown): void => assert.ok(error instanceof ModelError && error.kind === 'cancelled', String(error));

  /** A request that its first delta stops, as a user's Stop would, with the deltas the main thread took. */
  function stoppedAtItsFirstDelta(): { reply: Promise<unknown>; seen: string[] } {
    const controller = new AbortController();
    const seen: string[] = [];
    const reply = modelFor().complete(ask({ signal: controller.signal }), (text) => {
      seen.push(text);
      controller.abort();
    });
    return { reply, seen };
  }

  it('streams the reply, its reasoning and its retries to the main thread in the order they came, and resolves with the reply', async () => {
    fake.push({ kind: 'error', status: 503 }, { kind: 'text', reasoning: ['think', 'ing'], deltas: ['Hel', 'lo'] });
    const seen: string[] = [];
    const response = await modelFor().complete(ask(), (text) => seen.push(`delta ${text}`), {
      onReasoning: (text) => seen.push(`reasoning ${text}`),
      onRetry: (notice: RetryNotice) => seen.push(`retry ${notice.attempt} of ${notice.of}`),
    });
    assert.deepEqual(seen, ['retry 1 of 2', 'reasoning think', 'reasoning ing', 'delta Hel', 'delta lo']);
    assert.deepEqual(response, { content: 'Hello', toolCalls: [], finishReason: 'stop' });
  });

  it('keeps a failure\'s kind, status, remedy and wording across the thread, as the in-thread model gives them', async () => {
    const failing = { kind: 'error' as const, status: 401, message: `bad key ${API_KEY}` };
    fake.push(failing, failing);
    const settings = (): ModelSettings => ({ baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'test-model' });
    const threaded = await rejectionOf(thread.model(settings).complete(ask(), () => undefined));
    const inThread = await rejectionOf(createOpenAIModel(settings).complete(ask(), () => undefined));
    assert.ok(threaded instanceof ModelError && inThread instanceof ModelError, `${String(threaded)} / ${String(inThread)}`);
    assert.deepEqual(
      { kind: threaded.kind, status: threaded.status, remedy: threaded.remedy, message: threaded.message },
      { kind: inThread.kind, status: inThread.status, remedy: inThread.remedy, message: inThread.message },
    );
    assert.equal(threaded.kind, 'auth');
    assert.ok(threaded.remedy);
  });

  it('stops the request in the model thread when the main thread aborts it, which then fails as cancelled', async () => {
    fake.push({ kind: 'hang', deltas: ['partial'] });
    const { reply, seen } = stoppedAtItsFirstDelta();
    assertCancelled(await rejectionOf(reply));
    assert.deepEqual(seen, ['partial']);
    await fake.waitForDisconnect();
  });

  it('starts nothing, not even the thread, for a request already stopped, and fails it as cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    assertCancelled(await rejectionOf(modelFor().complete(ask({ signal: controller.signal }), () => undefined)));
    assert.equal(thread.threadId, undefined, 'no thread started');
    assert.equal(fake.completionRequests.length, 0);
  });

  it('fails as cancelled a reply that ended in the thread after the main thread stopped it, as the in-thread model does', async () => {
    // Sent in one write: the thread reads the whole reply and ends it in the turn that posts its first delta,
    // before the abort that delta causes reaches it.
    fake.push({ kind: 'text', deltas: ['one', 'two', 'three'] });
    const { reply, seen } = stoppedAtItsFirstDelta();
    assertCancelled(await rejectionOf(reply));
    assert.equal(seen[0], 'one');
  });

  it('goes on with a retry whose listener throws, as the in-thread model does', async () => {
    fake.push({ kind: 'error', status: 503 }, { kind: 'text', deltas: ['after the retry'] });
    const response = await modelFor().complete(ask(), () => undefined, {
      onRetry: () => {
        throw new Error('a listener that fails');
      },
    });
    assert.equal(response.content, 'after the retry');
  });

  it('fails alone a request that cannot be copied to the thread, and the thread goes on', async () => {
    const uncopyable = ask({ messages: [{ role: 'user', content: 'Hi', extra: () => undefined } as never] });
    await assert.rejects(modelFor().complete(uncopyable, () => undefined), /could not be cloned/);
    fake.push({ kind: 'text', deltas: ['still here'] });
    assert.equal((await modelFor().complete(ask(), () => undefined)).content, 'still here');
  });

  it('ends the request with the failure of a delta the main thread could not take, and stops the reply', async () => {
    const gate = createGate();
    fake.push({ kind: 'gate', deltas: ['one'], gate, then: { kind: 'hang', deltas: ['two'] } });
    const failure = new Error('the discussion could not take the delta');
    const reply = modelFor().complete(ask(), () => {
      throw failure;
    });
    await assert.rejects(reply, (err) => err === failure);
    gate.release();
    await fake.waitForStreamsClosed();
  });

  it('lists the endpoint\'s models through the thread', async () => {
    fake.setModels(['alpha', 'beta']);
    assert.deepEqual(await modelFor().listModels(), ['alpha', 'beta']);
  });

  it('asks the endpoint of the settings each request was made with, also for requests under way at once', async () => {
    const other = await startFakeOpenAI();
    try {
      const gate = createGate();
      fake.push({ kind: 'gate', deltas: ['from the first'], gate, then: { kind: 'text', deltas: [' and on'] } }, { kind: 'text', deltas: ['first again'] });
      other.push({ kind: 'text', deltas: ['from the other'] });
      let model = 'one';
      const first = thread.model(() => ({ baseUrl: fake.baseUrl, apiKey: API_KEY, model }));
      const second = thread.model(() => ({ baseUrl: other.baseUrl, apiKey: API_KEY, model: 'two' }));
      // The first is still streaming while the second is made and ends.
      let firstDelta!: () => void;
      const streaming = new Promise<void>((resolve) => (firstDelta = resolve));
      const held = first.complete(ask(), () => firstDelta());
      await streaming;
      assert.equal((await second.complete(ask(), () => undefined)).content, 'from the other');
      gate.release();
      assert.equal((await held).content, 'from the first and on');
      model = 'changed';
      assert.equal((await first.complete(ask(), () => undefined)).content, 'first again');
      assert.deepEqual(
        fake.completionRequests.map((request) => request.body?.model),
        ['one', 'changed'],
      );
      assert.deepEqual(other.completionRequests.map((request) => request.body?.model), ['two']);
    } finally {
      await other.close();
    }
  });

  it('fails what was asked of a thread that died, saying what to do, and starts a new one for the next request', async () => {
    // The real thread, made to die on the question "die", as a crash would end it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'model-thread-'));
    try {
      const script = path.join(dir, 'dyingModelWorker.js');
      fs.writeFileSync(
        script,
        `const { parentPort } = require('node:worker_threads');\n` +
          `parentPort.on('message', (m) => { if (m.kind === 'complete' && m.request.messages[0].content === 'die') process.exit(3); });\n` +
          `require(${JSON.stringify(require.resolve('../../../server/src/model/threaded/modelWorker'))});\n`,
      );
      const dying = new ModelThread({ script });
      try {
        const model = dying.model(() => ({ baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'test-model' }));
        await assert.rejects(model.complete(ask({ messages: [{ role: 'user', content: 'die' }] }), () => undefined), /stopped \(exit code 3\) — send the message again/);
        fake.push({ kind: 'text', deltas: ['back'] });
        assert.equal((await model.complete(ask(), () => undefined)).content, 'back');
      } finally {
        await dying.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  it('counts in the thread exactly what the o200k tokenizer counts, text by text, in the order asked', async () => {
    const texts = ['', 'hello world', 'the same words again and again '.repeat(500), 'const x = 1;\n'.repeat(300), '<|endoftext|> is plain text'];
    assert.deepEqual(await thread.count(texts), texts.map(countTextTokens));
  });

  it('streams a reply while it counts a long history, rather than after it', async () => {
    // The counts give the reply turns of the thread's event loop (COUNT_SLICE_MS).
    const history = Array.from({ length: 400 }, (_, i) => `message ${i}: ${'some words of a long discussion '.repeat(200)}`);
    fake.push({ kind: 'text', deltas: ['quick'] });
    const order: string[] = [];
    const counted = thread.count(history).then(() => order.push('counted'));
    const replied = modelFor().complete(ask(), () => undefined).then(() => order.push('replied'));
    await Promise.all([counted, replied]);
    assert.deepEqual(order, ['replied', 'counted']);
  });

  it('rejects the counts it cannot make when its thread exits instead of answering', async () => {
    const broken = new ModelThread({ script: require.resolve('../../../server/src/model/tokenizer') });
    await assert.rejects(broken.count(['text']), /stopped \(exit code/);
    await broken.close();
  });

  it('stops its thread once nothing was asked of it for a while, and starts a new one for the next request', async () => {
    const idle = new ModelThread({ idleStopMs: 50 });
    try {
      fake.push({ kind: 'text', deltas: ['first'] }, { kind: 'text', deltas: ['second'] });
      const model = idle.model(() => ({ baseUrl: fake.baseUrl, apiKey: API_KEY, model: 'test-model' }));
      await model.complete(ask(), () => undefined);
      const first = idle.threadId;
      assert.ok(first !== undefined);
      await idle.stopped();
      assert.equal(idle.threadId, undefined);
      assert.equal((await model.complete(ask(), () => undefined)).content, 'second');
      assert.notEqual(idle.threadId, first);
    } finally {
      await idle.close();
    }
  });
});

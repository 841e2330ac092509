import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import * as net from 'node:net';
import { createOpenAIModel } from '../../../server/src/model/openai/chatModel';
import { warmModelPath } from '../../../server/src/model/openai/warmup';
import { requestComplete, withLoopbackModel } from '../../../server/src/model/openai/loopbackEndpoint';
import type { ChatModel, ModelSettings } from '../../../server/src/model/types';

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });
}

/** The real model for these settings, recording each reply it streamed and the settings it was made with. */
function recordingModel(settings: () => ModelSettings, seen: { settings: ModelSettings[]; replies: string[] }): ChatModel {
  seen.settings.push(settings());
  const model = createOpenAIModel(settings, { retryDelayMs: 1 });
  return {
    complete: async (request, onDelta, observer) => {
      const response = await model.complete(request, onDelta, observer);
      seen.replies.push(response.content);
      return response;
    },
    listModels: (signal, like) => model.listModels(signal, like),
  };
}

describe('the model path warm-up', () => {
  it('streams one chat reply through the real model from a loopback server of its own, then closes that server', async () => {
    const seen = { settings: [] as ModelSettings[], replies: [] as string[] };
    await warmModelPath((settings) => recordingModel(settings, seen));
    assert.equal(seen.settings.length, 1);
    const url = new URL(seen.settings[0].baseUrl ?? '');
    assert.equal(url.hostname, '127.0.0.1', 'only its own loopback server is asked');
    assert.equal(seen.replies.length, 1);
    assert.match(seen.replies[0], /^w0w1w2/, 'the reply was streamed and parsed');
    assert.ok(await refusesConnections(Number(url.port)), 'its server is closed');
  });

  it('answers its own request though another local client connected first and sent nothing, and leaves no connection open', async () => {
    let stray: net.Socket | undefined;
    const seen = { settings: [] as ModelSettings[], replies: [] as string[] };
    await warmModelPath(
      (settings) => recordingModel(settings, seen),
      // A minute for the stray client's own timeout: the test ends long before unless the warm-up closes it.
      { timeoutMs: 60_000, onListening: (port) => (stray = net.connect(port, '127.0.0.1').on('error', () => undefined)) },
    );
    assert.equal(seen.replies.length, 1, 'its own request was answered');
    assert.ok(stray);
    if (!stray.destroyed) await once(stray, 'close');
  });

  it('settles quietly when the model cannot be made or its request fails', async () => {
    await warmModelPath(() => {
      throw new Error('no model here');
    });
    await warmModelPath(() => ({
      complete: () => Promise.reject(new Error('refused')),
      listModels: () => Promise.resolve([]),
    }));
  });

  it('sends a plain request of its own through Node\'s fetch first, and makes the model only on a later tick', async () => {
    const order: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      const url = String(input instanceof Request ? input.url : input);
      order.push(url.includes('/chat/completions') ? 'model request' : 'plain request');
      const answer = realFetch(input, init);
      void answer.then(() => setImmediate(() => order.push('tick after it')), () => undefined);
      return answer;
    }) as typeof fetch;
    try {
      const seen = { settings: [] as ModelSettings[], replies: [] as string[] };
      await warmModelPath((settings) => {
        order.push('model made');
        return recordingModel(settings, seen);
      });
      assert.equal(seen.replies.length, 1);
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.deepEqual(order.slice(0, 3), ['plain request', 'tick after it', 'model made']);
  });

  it('lends a model that streams from a loopback endpoint of its own for as long as the use lasts, and closes that endpoint after, also when the use throws', async () => {
    const seen = { settings: [] as ModelSettings[], replies: [] as string[] };
    const reply = await withLoopbackModel(
      (settings) => recordingModel(settings, seen),
      async (model) => (await model.complete({ messages: [{ role: 'user', content: 'Say hello.' }], signal: new AbortController().signal }, () => undefined)).content,
    );
    assert.match(reply, /^w0w1w2/);
    const url = new URL(seen.settings[0].baseUrl ?? '');
    assert.equal(url.hostname, '127.0.0.1', 'only its own loopback endpoint is asked');
    assert.ok(await refusesConnections(Number(url.port)), 'its endpoint is closed');

    let port = 0;
    await assert.rejects(
      withLoopbackModel(
        (settings) => recordingModel(settings, seen),
        async () => {
          port = Number(new URL(seen.settings[seen.settings.length - 1].baseUrl ?? '').port);
          throw new Error('the turn failed');
        },
      ),
      /the turn failed/,
    );
    assert.ok(await refusesConnections(port), 'its endpoint is closed after a failure too');
  });

  it('answers a request of a megabyte, as a rehearsed turn\'s prompt and tools are large', async () => {
    const seen = { settings: [] as ModelSettings[], replies: [] as string[] };
    const reply = await withLoopbackModel(
      (settings) => recordingModel(settings, seen),
      async (model) => (await model.complete({ messages: [{ role: 'user', content: 'x'.repeat(2 ** 20) }], signal: new AbortController().signal }, () => undefined)).content,
    );
    assert.match(reply, /^w0w1w2/);
  });

  it('takes a request for whole once its headers and content-length bytes are in, and refuses one past 4 MB', () => {
    const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n';
    assert.equal(requestComplete(Buffer.from('POST / HTTP/1.1\r\nHost: x\r\n')), undefined, 'headers not ended');
    assert.equal(requestComplete(Buffer.from(head + 'abc')), undefined, 'body short');
    assert.equal(requestComplete(Buffer.from(head + 'abcde')), true);
    assert.equal(requestComplete(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), true, 'no body');
    assert.equal(requestComplete(Buffer.alloc(4 * 2 ** 20 + 1)), false);
  });
});

import { strict as assert } from 'node:assert';
import type { LmDeltaNotification, LmResponsePart } from '../../../shared/protocol';
import { runLmRequest, type LmHost } from '../../../client/src/common/lmRunner';

/** A model whose reply sends one part and then never ends, as a VS Code 1.100 stream does once its request is cancelled. */
function endlessHost(): { host: LmHost; streamClosed: Promise<void> } {
  let closed!: () => void;
  const streamClosed = new Promise<void>((resolve) => (closed = resolve));
  const host: LmHost = {
    async selectChatModels() {
      return [
        {
          id: 'endless',
          name: 'Endless',
          vendor: 'test',
          family: 'endless',
          maxInputTokens: 1000,
          async sendRequest() {
            return {
              [Symbol.asyncIterator]: () => {
                let sent = false;
                return {
                  next: (): Promise<IteratorResult<LmResponsePart>> =>
                    sent ? new Promise(() => undefined) : ((sent = true), Promise.resolve({ done: false, value: { type: 'text', value: 'Thinking ' } })),
                  return: (): Promise<IteratorResult<LmResponsePart>> => {
                    closed();
                    return Promise.resolve({ done: true, value: undefined });
                  },
                };
              },
            };
          },
        },
      ];
    },
    failureOf: () => ({ kind: 'failed' }),
  };
  return { host, streamClosed };
}

describe('runLmRequest', () => {
  it('answers cancelled as soon as its signal aborts, even when the stream never ends, and closes the stream', async () => {
    const { host, streamClosed } = endlessHost();
    const controller = new AbortController();
    const deltas: LmDeltaNotification.Params[] = [];
    let firstDelta!: () => void;
    const sentOne = new Promise<void>((resolve) => (firstDelta = resolve));
    const answered = runLmRequest(host, { requestId: 'r1', messages: [{ role: 'user', content: 'Hi' }] }, (delta) => {
      deltas.push(delta);
      firstDelta();
    }, controller.signal);
    await sentOne;
    controller.abort();
    assert.deepEqual(await answered, { error: { kind: 'cancelled' } });
    await streamClosed;
    assert.deepEqual(deltas, [{ requestId: 'r1', parts: [{ type: 'text', value: 'Thinking ' }] }]);
  });
});

import { setImmediate as nextTick } from 'node:timers/promises';
import type { ChatModel, ModelSettings } from '../types';
import { loopbackSettings, withLoopbackEndpoint } from './loopbackEndpoint';

/**
 * One streamed chat request through the real model code (the openai SDK,
 * Node's fetch, our event parsing) to an endpoint of our own on the loopback
 * (loopbackEndpoint.ts), made ahead of a fresh server's first question. On
 * first use undici's HTTP client (its connection pool, the llhttp parser, the
 * body stream) and the request's own code are compiled as they run: that
 * first request took 20-30 ms longer than the next, and its first delta
 * reached the client 50-90 ms after the question. A failure (no loopback in
 * a sandbox) only means the first question pays as before.
 *
 * Takes the model's factory, so the model it warms is made as the real one
 * is (in the model thread, threaded/modelWorker.ts).
 */
export async function warmModelPath(
  createModel: (settings: () => ModelSettings) => ChatModel,
  options: { timeoutMs?: number; /** Tests: called with the port once the server listens. */ onListening?: (port: number) => void } = {},
): Promise<void> {
  try {
    await withLoopbackEndpoint(async (baseUrl, signal) => {
      // In three ticks, each after the last one's I/O: run back to back through
      // promises, the listen, undici's first HTTP request and the SDK's first
      // request held their thread 30-40 ms at once (the main thread, when the
      // model ran there), and the replies streaming beside them with it.
      await nextTick();
      // undici's HTTP client (pool, connection, parser) on its own...
      await fetch(new URL('/', baseUrl), { signal })
        .then((response) => response.arrayBuffer())
        .catch(() => undefined);
      await nextTick();
      // ...then the SDK's request and our parsing, with undici warm.
      const model = createModel(() => loopbackSettings(baseUrl));
      await model.complete({ messages: [{ role: 'user', content: 'warm-up' }], model: 'warm-up', signal }, () => undefined);
    }, options);
  } catch {
    // The first question warms it instead.
  }
}


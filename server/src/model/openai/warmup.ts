import * as net from 'node:net';
import { setImmediate as nextTick } from 'node:timers/promises';
import type { ChatModel, ModelSettings } from '../types';

/**
 * One streamed chat request through the real model code (the openai SDK,
 * Node's fetch, our event parsing) to a server of our own on the loopback,
 * made ahead of a fresh server's first question. On first use undici's HTTP
 * client (its connection pool, the llhttp parser, the body stream) and the
 * request's own code are compiled as they run: that first request took
 * 20-30 ms longer than the next, and its first delta reached the client
 * 50-90 ms after the question. Nothing leaves the machine and nothing goes to
 * the configured endpoint. A failure (no loopback in a sandbox) only means
 * the first question pays as before.
 *
 * Takes the model's factory rather than importing it: this module is loaded
 * at start, the SDK only once a discussion opens.
 */
export async function warmModelPath(
  createModel: (settings: () => ModelSettings) => ChatModel,
  options: { timeoutMs?: number; /** Tests: called with the port once the server listens. */ onListening?: (port: number) => void } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // Any other local process may connect too: one that sends nothing is not waited for.
    socket.setTimeout(timeoutMs, () => socket.destroy());
    // Answered at the first bytes of a request, whatever they are: the reply is fixed.
    socket.once('data', () => socket.end(WARMUP_RESPONSE));
  });
  // For good, not once: an error after listening (too many open files) must not end the process.
  server.on('error', () => undefined);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
    options.onListening?.(port);
    // In three ticks, each after the last one's I/O: run back to back through
    // promises, the listen, undici's first HTTP request and the SDK's first
    // request held the main thread 30-40 ms at once.
    await nextTick();
    // undici's HTTP client (pool, connection, parser) on its own...
    await fetch(`http://127.0.0.1:${port}/`, { signal })
      .then((response) => response.arrayBuffer())
      .catch(() => undefined);
    await nextTick();
    // ...then the SDK's request and our parsing, with undici warm.
    const model = createModel(() => ({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'warm-up', model: 'warm-up' }));
    await model.complete({ messages: [{ role: 'user', content: 'warm-up' }], model: 'warm-up', signal }, () => undefined);
  } catch {
    // The first question warms it instead.
  } finally {
    server.close();
    for (const socket of sockets) socket.destroy();
  }
}

/** Enough deltas for the parsing code to run more than once, in the shape an endpoint streams them. */
const WARMUP_DELTAS = 32;
const WARMUP_BODY =
  Array.from({ length: WARMUP_DELTAS }, (_, i) => `data: {"id":"w","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"w${i}"},"finish_reason":null}]}\n\n`).join('') +
  'data: {"id":"w","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n';
const WARMUP_RESPONSE =
  'HTTP/1.1 200 OK\r\n' +
  'content-type: text/event-stream\r\n' +
  `content-length: ${Buffer.byteLength(WARMUP_BODY)}\r\n` +
  'connection: close\r\n' +
  '\r\n' +
  WARMUP_BODY;

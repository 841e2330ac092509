import * as net from 'node:net';
import type { ChatModel, ModelSettings } from '../types';

/**
 * Runs `use` with the base URL of an OpenAI-compatible endpoint of our own
 * on the loopback, which streams the same short reply to every request, and
 * closes it afterwards with every connection it had. The warm-up
 * (warmup.ts) and the rehearsed turn (core/rehearsal.ts) run the model's real
 * code against it: nothing leaves the machine and nothing goes to the
 * configured endpoint.
 * Rejects when it cannot listen (no loopback in a sandbox), or with `use`.
 */
export async function withLoopbackEndpoint<T>(
  use: (baseUrl: string, signal: AbortSignal) => Promise<T>,
  options: { timeoutMs?: number; /** Tests: called with the port once the server listens. */ onListening?: (port: number) => void } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // Any other local process may connect too: one that sends nothing is not waited for.
    socket.setTimeout(timeoutMs, () => socket.destroy());
    // The reply is fixed, whatever was asked; it goes once the request has
    // arrived whole. Answered at its first bytes, a request of tens of KB
    // (a rehearsed turn's prompt and tools) could still be writing when the
    // socket closed.
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const whole = requestComplete(received);
      if (whole === undefined) return;
      socket.off('data', onData);
      if (whole) socket.end(LOOPBACK_RESPONSE);
      else socket.destroy();
    };
    socket.on('data', onData);
  });
  // For good, not once: an error after listening (too many open files) must not end the process.
  server.on('error', () => undefined);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
    options.onListening?.(port);
    return await use(`http://127.0.0.1:${port}/v1`, AbortSignal.timeout(timeoutMs));
  } finally {
    server.close();
    for (const socket of sockets) socket.destroy();
  }
}

/**
 * Runs `use` with a model made by `createModel` that asks an endpoint of our
 * own on the loopback (withLoopbackEndpoint): the rehearsed turn's model.
 * Rejects when the endpoint cannot listen, or with `use`.
 */
export function withLoopbackModel<T>(createModel: (settings: () => ModelSettings) => ChatModel, use: (model: ChatModel) => Promise<T>): Promise<T> {
  return withLoopbackEndpoint((baseUrl) => use(createModel(() => loopbackSettings(baseUrl))));
}

/** The settings of a model that asks the loopback endpoint at `baseUrl`. */
export function loopbackSettings(baseUrl: string): ModelSettings {
  return { baseUrl, apiKey: 'loopback', model: 'loopback' };
}

/** The most a request to the loopback endpoint may carry: a rehearsed turn's is tens of KB. */
const MAX_REQUEST_BYTES = 4 * 2 ** 20;
const HEADERS_END = Buffer.from('\r\n\r\n');

/**
 * Whether `received` holds a whole HTTP request: true once its headers and
 * the `content-length` bytes after them are in (a request without one is
 * whole at its headers), undefined while more is to come, false past
 * MAX_REQUEST_BYTES.
 */
export function requestComplete(received: Buffer): boolean | undefined {
  if (received.length > MAX_REQUEST_BYTES) return false;
  const end = received.indexOf(HEADERS_END);
  if (end < 0) return undefined;
  const length = /^content-length:\s*(\d+)\s*$/im.exec(received.subarray(0, end).toString('latin1'))?.[1];
  if (length === undefined) return true;
  return received.length - (end + HEADERS_END.length) >= Number(length) ? true : undefined;
}

/** Enough deltas for the parsing code to run more than once, in the shape an endpoint streams them. */
const LOOPBACK_DELTAS = 32;
const LOOPBACK_BODY =
  Array.from({ length: LOOPBACK_DELTAS }, (_, i) => `data: {"id":"w","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"w${i}"},"finish_reason":null}]}\n\n`).join('') +
  'data: {"id":"w","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n';
const LOOPBACK_RESPONSE =
  'HTTP/1.1 200 OK\r\n' +
  'content-type: text/event-stream\r\n' +
  `content-length: ${Buffer.byteLength(LOOPBACK_BODY)}\r\n` +
  'connection: close\r\n' +
  '\r\n' +
  LOOPBACK_BODY;

/**
 * The chunks of a streamed chat completion, read from the response's bytes as
 * they arrive: server-sent events parsed by eventsource-parser, each event's
 * data parsed as JSON. It keeps the SDK's rules for a stream (an event whose
 * data is `[DONE]` ends it, a chunk carrying `error` is an APIError, an abort
 * ends it quietly) and adds one the SDK has no word for: whether `[DONE]`
 * came, which tells a reply that ended without a finish reason from one cut
 * off.
 *
 * Why not the SDK's own `Stream`: its splitter copies the rest of its buffer
 * for every event it takes out, quadratic in the events per read, and each
 * event then passes through three async generators. Over a 2,000-delta reply
 * that was a quarter of the server's main-thread time, on the path every
 * streamed word takes.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { APIError, OpenAIError } from 'openai';
import { StreamEventTooLarge } from '../failures';

/**
 * The most text one event may grow to before the stream is stopped: a chunk
 * is a few hundred bytes, and an endpoint that streams without ever ending
 * an event (a wrong URL serving a large file as `text/event-stream`, or a
 * hostile one) would otherwise be buffered without bound.
 */
export const MAX_EVENT_CHARS = 16 * 2 ** 20;

export class CompletionChunks {
  /** True once a `data: [DONE]` event came (with or without the space, as the SDK accepts both). */
  sawDone = false;

  constructor(
    private readonly response: Response,
    /** The request's own controller: aborted when the caller is done with the stream early. */
    private readonly attempt: AbortController,
    private readonly maxEventChars = MAX_EVENT_CHARS,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<unknown> {
    const body = this.response.body;
    if (!body) {
      this.attempt.abort();
      throw new OpenAIError('Attempted to iterate over a response with no body');
    }
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const events: EventSourceMessage[] = [];
    /** Text fed since the last whole event, give or take the tail of the read that ended it. */
    let sinceEvent = 0;
    // No onError: a bad `retry` or an unknown field is skipped, as EventSource itself skips it.
    const parser = createParser({
      onEvent: (event) => {
        events.push(event);
        sinceEvent = 0;
      },
      // Keep-alive comments are whole lines too: a long wait full of them is no oversized event.
      onComment: () => {
        sinceEvent = 0;
      },
    });
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        // The last bytes of a multi-byte character may sit in the decoder until the end.
        const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
        sinceEvent += text.length;
        parser.feed(text);
        if (sinceEvent > this.maxEventChars) throw new StreamEventTooLarge(this.maxEventChars);
        for (const event of events.splice(0)) {
          const chunk = this.chunkOf(event);
          if (chunk !== undefined) yield chunk;
        }
        if (done) break;
      }
      // A stream may close right after `data: [DONE]`, before the blank line that ends an event.
      // Only that is taken from an unfinished last event; anything else in one is dropped, as the SDK drops it.
      parser.feed('\n\n');
      if (events.some((event) => event.data.startsWith('[DONE]'))) this.sawDone = true;
      finished = true;
    } catch (error) {
      // Aborted (by the caller or by the idle timer): the caller looks at the signal, as with the SDK.
      if (this.attempt.signal.aborted) return;
      throw error;
    } finally {
      // Left early (the consumer threw or stopped): the request must not go on streaming into nothing.
      if (!finished) this.attempt.abort();
      reader.releaseLock();
    }
  }

  private chunkOf(event: EventSourceMessage): unknown {
    // Past [DONE] nothing counts; Assistants' `thread.*` events are no chat completion chunks.
    if (this.sawDone || event.event?.startsWith('thread.')) return undefined;
    if (event.data.startsWith('[DONE]')) {
      this.sawDone = true;
      return undefined;
    }
    const data = JSON.parse(event.data) as { error?: unknown } | null;
    if (data && data.error) throw new APIError(undefined, data.error as object, undefined, this.response.headers);
    return data;
  }
}

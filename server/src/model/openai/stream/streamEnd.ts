/**
 * The bytes of a streamed response on their way to the SDK's SSE parser:
 * watched for the `data: [DONE]` line that ends a stream, and handed on one
 * event at a time.
 */

/** The payload of a stream's `data: [DONE]` line (with or without the space; the SDK accepts both). */
const DONE_PAYLOAD = Buffer.from('[DONE]');
const DATA_FIELD = Buffer.from('data:');
/** Bytes kept from the end of one read, enough to see a `data: [DONE]` line cut between two reads. */
const DONE_LINE_BYTES = 16;
const LF = 0x0a;
const CR = 0x0d;
const LF_LF = Buffer.from('\n\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');

/**
 * Sits between a streamed response's body and the SDK's SSE parser, passing
 * the bytes through unchanged (errors and cancels included), for two reasons:
 *
 * - It watches for the `data: [DONE]` line that ends an OpenAI-style stream.
 *   The SDK skips that line without a word, and it is what tells a reply that
 *   ended without a finish reason from one cut off.
 * - It hands the parser one event at a time. The SDK's splitter copies the
 *   rest of its buffer for every event it takes out, which is quadratic in the
 *   events per read: a server that fell behind and read 64 KiB (400 events)
 *   at once spent longer splitting than the endpoint took to send them.
 */
export class StreamEndWatch {
  sawDone = false;
  /** The last bytes of the previous read; at first a line end, as the stream begins a line. */
  private tail: Buffer = Buffer.from('\n');

  watch(response: Response): Response {
    if (!response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        // Read until there is something to hand on: a pull that enqueues
        // nothing is never called again, and the reply would hang.
        for (;;) {
          const { done, value } = await reader.read();
          if (done) {
            controller.close();
            return;
          }
          if (!value || value.byteLength === 0) continue;
          const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
          this.scan(bytes);
          for (const piece of eventPieces(bytes)) controller.enqueue(piece);
          return;
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  private scan(bytes: Buffer): void {
    if (this.sawDone || bytes.length === 0) return;
    // A line cut between two reads: look at the seam, then at the read itself.
    const seam = Buffer.concat([this.tail, bytes.subarray(0, DONE_LINE_BYTES)]);
    if (hasDoneLine(seam) || hasDoneLine(bytes)) this.sawDone = true;
    // A copy: the reader may reuse the buffer behind `bytes`.
    this.tail = Buffer.concat([this.tail, bytes.subarray(-DONE_LINE_BYTES)]).subarray(-DONE_LINE_BYTES);
  }
}

/** True when `bytes` holds a line `data:[DONE]` or `data: [DONE]`, begun after a \n or \r. */
function hasDoneLine(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(DONE_PAYLOAD); at >= 0; at = bytes.indexOf(DONE_PAYLOAD, at + 1)) {
    const field = bytes[at - 1] === 0x20 ? at - 1 - DATA_FIELD.length : at - DATA_FIELD.length;
    if (field < 0 || !bytes.subarray(field, field + DATA_FIELD.length).equals(DATA_FIELD)) continue;
    if (bytes[field - 1] === LF || bytes[field - 1] === CR) return true;
  }
  return false;
}

/** A read cut after each event's blank line (views, not copies); a read with none stays whole. */
function eventPieces(bytes: Buffer): Buffer[] {
  // One separator per stream in practice: \n\n, or \r\n\r\n from servers that end lines in CRLF.
  const separator = bytes.indexOf(CR) >= 0 ? CRLF_CRLF : LF_LF;
  const pieces: Buffer[] = [];
  let from = 0;
  for (let at = bytes.indexOf(separator); at >= 0; at = bytes.indexOf(separator, from)) {
    pieces.push(bytes.subarray(from, at + separator.length));
    from = at + separator.length;
  }
  if (from < bytes.length) pieces.push(bytes.subarray(from));
  return pieces;
}

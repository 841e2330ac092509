import * as assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { StreamMessageReader, type Message } from 'vscode-jsonrpc/node';
import { ImmediateMessageWriter, routeConsoleTo } from '../../../server/src/stdioConnection';
import { ServerProcess } from '../../support/serverProcess';

const notification = (text: string): Message => ({ jsonrpc: '2.0', method: 'discuss/event', params: { text } }) as Message;

/** Reads `count` messages back through vscode-jsonrpc's own reader, as a client would. */
function readBack(stream: PassThrough, count: number): Promise<Message[]> {
  const reader = new StreamMessageReader(stream);
  const messages: Message[] = [];
  return new Promise((resolve) => {
    reader.listen((message) => {
      messages.push(message);
      if (messages.length === count) {
        reader.dispose();
        resolve(messages);
      }
    });
  });
}

describe('the stdio transport (server/src/stdioConnection.ts)', () => {
  it('writes a message in the call that sends it, before the event loop turns', () => {
    const stream = new PassThrough();
    void new ImmediateMessageWriter(stream).write(notification('first delta'));
    // vscode-jsonrpc's own stream writer had written nothing yet here: it waits for a setImmediate.
    const written = stream.read() as Buffer | null;
    assert.ok(written, 'nothing was written in the call');
    assert.match(written.toString('utf8'), /^Content-Length: \d+\r\n\r\n\{.*"first delta".*\}$/);
  });

  it('frames each message by its length in bytes, so text beyond ASCII reads back whole and in order', async () => {
    const stream = new PassThrough();
    const writer = new ImmediateMessageWriter(stream);
    const texts = ['café — 🙂', 'second', '第三'];
    const read = readBack(stream, texts.length);
    await Promise.all(texts.map((text) => writer.write(notification(text))));
    assert.deepEqual(
      (await read).map((message) => (message as unknown as { params: { text: string } }).params.text),
      texts,
    );
  });

  it('settles a write once the stream has taken it, and reports a failed one through onError', async () => {
    const taken: Buffer[] = [];
    const fine = new Writable({ write: (chunk: Buffer, _encoding, done) => (taken.push(chunk), done()) });
    await new ImmediateMessageWriter(fine).write(notification('taken'));
    assert.equal(taken.length, 1);

    const broken = new Writable({ write: (_chunk, _encoding, done) => done(new Error('EPIPE')) });
    broken.on('error', () => undefined);
    const writer = new ImmediateMessageWriter(broken);
    const reported = new Promise<Error>((resolve) => writer.onError(([error]) => resolve(error)));
    await assert.rejects(writer.write(notification('lost')), /EPIPE/);
    assert.match((await reported).message, /EPIPE/);
  });

  it('rejects and reports a message that cannot be serialised, rather than throwing out of the send', async () => {
    const stream = new PassThrough();
    const writer = new ImmediateMessageWriter(stream);
    const reported = new Promise<Error>((resolve) => writer.onError(([error]) => resolve(error)));
    let sent: Promise<void> | undefined;
    assert.doesNotThrow(() => {
      sent = writer.write({ jsonrpc: '2.0', method: 'x', params: { n: 1n } } as unknown as Message);
    });
    await assert.rejects(sent!, /BigInt/);
    assert.match((await reported).message, /BigInt/);
    assert.equal(stream.read(), null, 'nothing half-written');
  });

  it('sends console output to the client log instead of into the protocol stream', () => {
    const saved = { log: console.log, debug: console.debug, info: console.info, warn: console.warn, error: console.error, trace: console.trace, dir: console.dir, dirxml: console.dirxml };
    const logged: string[] = [];
    try {
      routeConsoleTo({
        log: (message) => logged.push(`log ${message}`),
        info: (message) => logged.push(`info ${message}`),
        warn: (message) => logged.push(`warn ${message}`),
        error: (message) => logged.push(`error ${message}`),
      });
      console.log('a library says', { detail: 1 });
      console.warn('deprecated');
      console.error(new Error('boom').message);
    } finally {
      Object.assign(console, saved);
    }
    assert.deepEqual(logged, ['log a library says { detail: 1 }', 'warn deprecated', 'error boom']);
  });

  it('ends the server when its client closes stdin without asking it to stop', async function () {
    this.timeout(30_000);
    const server = await ServerProcess.start();
    const exit = once(server.child, 'exit');
    server.child.stdin!.end();
    const [code] = (await exit) as [number | null];
    assert.equal(code, 1, 'a server left without shutdown exits 1, as vscode-languageserver does');
  });
});

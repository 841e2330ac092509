/**
 * The protocol on stdin and stdout (`--stdio`: the terminal client, the
 * bench), with each message written in the call that sends it.
 *
 * vscode-jsonrpc's stream writer sends every message from a setImmediate of
 * its write lock. A message sent while the server reads a burst of the
 * model's stream went out only after the next burst had been read and parsed
 * as well, one turn of the event loop later: the first delta of a reply
 * reached a stdio client about a millisecond late, and up to 14 ms on a
 * fresh server. The node-ipc transport the VS Code client uses writes in the
 * call already; this does the same on a stream.
 */
import { inspect } from 'node:util';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';
import { ProposedFeatures, createConnection, type Connection } from 'vscode-languageserver/node';

/**
 * Frames and writes each message at once. Node writes to a stream in call
 * order, so no lock is needed to keep messages whole and in order. The
 * promise settles when the stream has taken the bytes, which a subscriber's
 * lane waits for before its next event, so a client that stops reading still
 * stops the lane rather than filling memory.
 */
export class ImmediateMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;

  constructor(private readonly stream: NodeJS.WritableStream) {
    super();
    stream.on('error', (error: Error) => this.fireError(error));
    stream.on('close', () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      const settle = (error?: Error | null): void => {
        if (!error) {
          this.errorCount = 0;
          resolve();
          return;
        }
        this.errorCount++;
        this.fireError(error, message, this.errorCount);
        reject(error);
      };
      try {
        // Encoded inside the try: a message that cannot be serialised is a
        // rejected send, as with vscode-jsonrpc's writer, not a throw out of
        // a `void sendNotification(...)`.
        const body = Buffer.from(JSON.stringify(message), 'utf8');
        const frame = Buffer.concat([Buffer.from(`Content-Length: ${body.byteLength}\r\n\r\n`, 'ascii'), body]);
        this.stream.write(frame, settle);
      } catch (error) {
        settle(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  end(): void {
    this.stream.end();
  }
}

/** What `console` would have printed into the protocol's stream goes to the client's log instead. */
export function routeConsoleTo(log: Pick<Connection['console'], 'log' | 'info' | 'warn' | 'error'>): void {
  const text = (args: unknown[]): string => args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg))).join(' ');
  // Replaced, never called: nothing here writes to stdout, which carries the protocol.
  Object.assign(console, {
    log: (...args: unknown[]) => log.log(text(args)),
    debug: (...args: unknown[]) => log.log(text(args)),
    info: (...args: unknown[]) => log.info(text(args)),
    warn: (...args: unknown[]) => log.warn(text(args)),
    error: (...args: unknown[]) => log.error(text(args)),
    trace: (...args: unknown[]) => log.error(`${text(args)}\n${new Error().stack?.split('\n').slice(2).join('\n') ?? ''}`),
    dir: (arg: unknown, options?: object) => log.log(inspect(arg, options)),
    dirxml: (...args: unknown[]) => log.log(text(args)),
  });
}

export function createStdioConnection(): Connection {
  // stdin goes in as a stream: for a stream input createConnection ends the
  // server when the client goes away (the terminal client relies on it). It
  // pairs a stream with a writer at run time (vscode-jsonrpc's
  // createMessageConnection wraps only a side that is a stream), though its
  // overloads name only matching pairs.
  const writer: MessageWriter = new ImmediateMessageWriter(process.stdout);
  const connection = createConnection(ProposedFeatures.all, process.stdin, writer as unknown as NodeJS.WritableStream);
  // createConnection does this itself only when it reads `--stdio` from the command line.
  routeConsoleTo(connection.console);
  return connection;
}

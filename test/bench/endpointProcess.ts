import { fork, type ChildProcess } from 'node:child_process';
import { startFakeOpenAI, type FakeStep, type FakeStepScript, type RecordedRequest } from '../support/fakeOpenAI';

/**
 * The fake OpenAI endpoint in a process of its own, for the bench. Run in the
 * bench's own process, its work (building every SSE chunk) slowed the raw
 * `openai` client it was the reference for, and flattered the server.
 *
 * The parent sends what to answer as messages; steps must be plain data, and
 * scripted answers are named (see SCRIPTS).
 */

/** Answers that depend on the request: functions cannot cross the process boundary, so they are picked by name. */
const SCRIPTS: Record<string, FakeStepScript> = {
  /** A tool call for each user message, then a short text reply once its result is in. */
  readThenAnswer: (request: RecordedRequest): FakeStep => {
    const messages = request.body?.messages ?? [];
    const last = messages[messages.length - 1];
    // A request without tools is the server summarizing old turns: a short note.
    if (!request.body?.tools) return { kind: 'text', text: 'Earlier: the user asked questions and the model read src/app.ts.' };
    if (last?.role === 'tool') return { kind: 'text', deltas: Array.from({ length: 200 }, (_, i) => `word${i} `) };
    return { kind: 'toolCalls', calls: [{ id: `call_${messages.length}`, name: 'read_file', arguments: JSON.stringify({ path: 'src/app.ts' }) }] };
  },
};

export type EndpointAnswer = FakeStep | { script: keyof typeof SCRIPTS };

export interface EndpointProcess {
  readonly baseUrl: string;
  readonly pid: number;
  setFallback(answer: EndpointAnswer): Promise<void>;
  close(): Promise<void>;
}

interface Reply {
  ok: true;
  baseUrl?: string;
}

export async function startEndpointProcess(): Promise<EndpointProcess> {
  const child: ChildProcess = fork(__filename, ['--endpoint'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies: Array<(reply: Reply) => void> = [];
  child.on('message', (reply: Reply) => replies.shift()?.(reply));
  const ask = (message: unknown): Promise<Reply> =>
    new Promise((resolve, reject) => {
      replies.push(resolve);
      child.once('exit', (code) => reject(new Error(`the endpoint process exited (${code})`)));
      child.send(message as object);
    });
  // The child speaks first, once it listens: a message sent before its handler existed would be lost.
  const started = await new Promise<Reply>((resolve, reject) => {
    replies.push(resolve);
    child.once('exit', (code) => reject(new Error(`the endpoint process exited (${code})`)));
  });
  return {
    baseUrl: started.baseUrl as string,
    pid: child.pid as number,
    setFallback: async (answer) => void (await ask({ fallback: answer })),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      await exited;
    },
  };
}

if (require.main === module && process.argv.includes('--endpoint')) {
  void (async () => {
    const fake = await startFakeOpenAI({ models: ['fake-model'], fallback: { kind: 'text', text: 'ok' } });
    process.on('message', (message: { fallback?: EndpointAnswer }) => {
      if (message.fallback) {
        const answer = message.fallback;
        fake.setFallback('script' in answer ? SCRIPTS[answer.script] : answer);
      }
      process.send?.({ ok: true, baseUrl: fake.baseUrl });
    });
    process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
    process.send?.({ ok: true, baseUrl: fake.baseUrl });
  })();
}

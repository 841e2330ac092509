import type { LmDeltaNotification, LmFailure, LmModelsRequest, LmRequest, LmResponsePart } from '../../shared/protocol';
import { modelInfo, runLmRequest, type LmHost, type LmModelHandle, type LmSendOptions } from '../../client/src/common/lmRunner';
import type { LmMessage } from '../../client/src/common/lmMessages';
import type { LmClient } from '../../server/src/model/proxied/chatModel';
import { ModelError, type ChatMessage } from '../../server/src/model/types';
import type { ScriptedModel } from './scriptedModel';

/** What a fake `LanguageModelError` carries: VS Code's error codes. */
export class FakeLanguageModelError extends Error {
  constructor(
    readonly code: 'NoPermissions' | 'Blocked' | 'NotFound' | 'Unknown',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The client side of the proxied model, as the extension runs it (the same
 * `runLmRequest`), over fake `vscode.lm` models that answer from a
 * ScriptedModel: text arrives as text parts, tool calls as whole tool-call
 * parts after the text, a failure as a thrown error, and an abort stops the
 * stream. The ScriptedModel sees the server's messages unchanged (so core
 * tests can read them) while the mapped `LanguageModelChatMessage`s are kept
 * in `sent`.
 */
export class FakeLanguageModels implements LmClient, LmHost {
  /** The mapped messages of every request, as `sendRequest` received them. */
  readonly sent: LmMessage[][] = [];
  /** Requests whose cancellation reached the fake model. */
  cancelled = 0;
  maxInputTokens = 0;
  private readonly listeners: Array<(params: LmDeltaNotification.Params) => void> = [];
  private current: ChatMessage[] = [];

  constructor(readonly scripted: ScriptedModel) {}

  onDelta(listener: (params: LmDeltaNotification.Params) => void): void {
    this.listeners.push(listener);
  }

  async selectChatModels(): Promise<LmModelHandle[]> {
    return this.scripted.models.map((id) => ({
      id,
      name: `Scripted ${id}`,
      vendor: 'test',
      family: id,
      maxInputTokens: this.maxInputTokens,
      sendRequest: (messages, options, signal) => this.sendRequest(id, messages, options, signal),
    }));
  }

  failureOf(err: unknown): LmFailure {
    if (err instanceof FakeLanguageModelError) {
      const kind = err.code === 'NoPermissions' ? 'no_consent' : err.code === 'Blocked' ? 'blocked' : err.code === 'NotFound' ? 'model_not_found' : 'failed';
      return { kind, code: err.code, detail: err.message };
    }
    return { kind: 'failed', detail: err instanceof Error ? err.message : String(err) };
  }

  // LmClient: what the server's side of the connection does with a request.
  async request(params: LmRequest.Params, signal: AbortSignal): Promise<LmRequest.Result> {
    this.current = structuredClone(params.messages) as ChatMessage[];
    const answered = runLmRequest(this, structuredClone(params), (delta) => this.deliver(delta), signal);
    // Like the JSON-RPC client: a cancelled request is given up at once, its late answer ignored.
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new ModelError('cancelled', 'cancelled'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      answered.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  async models(): Promise<LmModelsRequest.Result> {
    return { models: (await this.selectChatModels()).map(modelInfo) };
  }

  private deliver(delta: LmDeltaNotification.Params): void {
    // Notifications cross a connection as JSON.
    const wire = JSON.parse(JSON.stringify(delta)) as LmDeltaNotification.Params;
    for (const listener of this.listeners) listener(wire);
  }

  private async sendRequest(id: string, messages: LmMessage[], options: LmSendOptions, signal: AbortSignal): Promise<AsyncIterable<LmResponsePart>> {
    this.sent.push(messages);
    const parts: LmResponsePart[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    let failure: unknown;
    signal.addEventListener('abort', () => this.cancelled++, { once: true });
    const push = (part?: LmResponsePart) => {
      if (part) parts.push(part);
      wake?.();
    };
    this.scripted
      .complete({ messages: this.current, ...(options.tools ? { tools: options.tools } : {}), ...options.modelOptions, model: id, signal }, (text) => push({ type: 'text', value: text }))
      .then((reply) => {
        for (const call of reply.toolCalls) push({ type: 'toolCall', callId: call.id, name: call.name, input: parsedOrRaw(call.arguments) });
      })
      .catch((err: unknown) => (failure = err))
      .finally(() => {
        done = true;
        push();
      });
    return {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          if (parts.length > 0) {
            yield parts.shift()!;
            continue;
          }
          if (done) {
            if (failure) throw failure;
            return;
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    };
  }
}

/** VS Code hands over a parsed object; a scripted call with broken JSON keeps its text, as a provider passing it through would. */
function parsedOrRaw(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Runs the server's `discuss/lmRequest` against whatever offers language
 * models (VS Code's `vscode.lm` in the extension, a fake in tests): picks the
 * model, maps the messages, streams each reply part back as it arrives, and
 * answers with how it ended. Knows nothing of vscode, so the same code runs
 * under mocha; languageModels.ts supplies the vscode side.
 */
import type { LmDeltaNotification, LmFailure, LmModelInfo, LmRequest, LmResponsePart, LmToolSpec } from '../../../shared/protocol';
import { toLmMessages, type LmMessage } from './lmMessages';

export interface LmModelHandle extends LmModelInfo {
  /** `model.sendRequest(messages, { tools, toolMode }, token)`; the stream ends with the reply. */
  sendRequest(messages: LmMessage[], options: LmSendOptions, signal: AbortSignal): Promise<AsyncIterable<LmResponsePart>>;
}

export interface LmSendOptions {
  tools?: LmToolSpec[];
  /** Provider-specific `modelOptions`: what the server asked for besides the messages. */
  modelOptions?: { temperature?: number; maxTokens?: number };
}

export interface LmHost {
  /** `vscode.lm.selectChatModels()`: the models offered right now. */
  selectChatModels(): Promise<LmModelHandle[]>;
  /** A thrown `LanguageModelError` (or anything else) as a failure the server words. */
  failureOf(err: unknown): LmFailure;
}

export function modelInfo(model: LmModelInfo): LmModelInfo {
  return { id: model.id, name: model.name, vendor: model.vendor, family: model.family, ...(model.version ? { version: model.version } : {}), maxInputTokens: model.maxInputTokens };
}

export async function runLmRequest(
  host: LmHost,
  params: LmRequest.Params,
  sendDelta: (delta: LmDeltaNotification.Params) => void,
  signal: AbortSignal,
): Promise<LmRequest.Result> {
  const models = await host.selectChatModels();
  if (models.length === 0) return { error: { kind: 'no_models' } };
  const model = params.model ? models.find((m) => m.id === params.model) : models[0];
  if (!model) return { error: { kind: 'model_not_found', available: models.map((m) => m.name || m.id) } };
  try {
    const modelOptions = {
      ...(typeof params.temperature === 'number' ? { temperature: params.temperature } : {}),
      ...(typeof params.maxTokens === 'number' ? { maxTokens: params.maxTokens } : {}),
    };
    const options: LmSendOptions = {
      ...(params.tools?.length ? { tools: params.tools } : {}),
      ...(Object.keys(modelOptions).length ? { modelOptions } : {}),
    };
    const stream = await model.sendRequest(toLmMessages(params.messages ?? []), options, signal);
    const parts = stream[Symbol.asyncIterator]();
    // Not `for await`: in VS Code 1.100 a cancelled request's stream may never
    // end (the token stops at the first RPC hop, so a provider that waits for
    // more keeps waiting), and the request would stay pending for good.
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal.aborted) resolve('aborted');
      signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    for (;;) {
      const next = await Promise.race([parts.next(), aborted]);
      if (next === 'aborted') {
        void Promise.resolve(parts.return?.()).catch(() => undefined);
        break;
      }
      if (next.done) break;
      sendDelta({ requestId: params.requestId, parts: [next.value] });
    }
    return signal.aborted ? { error: { kind: 'cancelled' } } : {};
  } catch (err) {
    return { error: signal.aborted ? { kind: 'cancelled' } : host.failureOf(err) };
  }
}

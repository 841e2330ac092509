import * as vscode from 'vscode';
import type { LmDeltaNotification, LmFailure, LmModelInfo, LmModelsRequest, LmRequest, LmResponsePart } from '../../../shared/protocol';
import { VSCODE_MODEL_PREFIX } from '../../../shared/protocol';
import type { LmMessage } from '../common/lmMessages';
import { modelInfo, runLmRequest, type LmHost, type LmModelHandle, type LmSendOptions } from '../common/lmRunner';

/**
 * VS Code's Language Model API as the second model source: runs the server's
 * `discuss/lmRequest` with `model.sendRequest` and streams its parts back
 * (the logic is in common/lmRunner.ts; this file is only the vscode side).
 *
 * Consent: VS Code asks the user the first time an extension sends a request,
 * and only from a user action. Nothing here sends one on its own: the only
 * requests are those of a reply, which starts with the user's send.
 *
 * Tokens: the context window is the model's `maxInputTokens`. `countTokens`
 * is not used: it is an async call into the providing extension per text,
 * while the budget counts synchronously per message, often hundreds per
 * request; the tokenizer estimate the endpoint source uses applies.
 */

const JUSTIFICATION = 'Repo Discuss sends your question and what it reads from this folder to the model you picked, to answer in the discussion.';

export const vscodeLmHost: LmHost = {
  async selectChatModels(): Promise<LmModelHandle[]> {
    return (await vscode.lm.selectChatModels()).map(handleOf);
  },
  failureOf(err: unknown): LmFailure {
    const detail = err instanceof Error ? err.message : String(err);
    if (err instanceof vscode.LanguageModelError) {
      const code = err.code;
      if (code === vscode.LanguageModelError.NoPermissions.name) return { kind: 'no_consent', code, detail };
      if (code === vscode.LanguageModelError.Blocked.name) return { kind: 'blocked', code, detail };
      if (code === vscode.LanguageModelError.NotFound.name) return { kind: 'model_not_found', code, detail };
      return { kind: 'failed', code, detail };
    }
    return { kind: 'failed', detail };
  },
};

/** The models VS Code offers now, as the protocol describes them. */
export async function listVscodeModels(): Promise<LmModelInfo[]> {
  try {
    return (await vscode.lm.selectChatModels()).map((m) => modelInfo(m));
  } catch {
    return [];
  }
}

/** The discussion model id of a VS Code model. */
export function vscodeModelId(model: LmModelInfo): string {
  return VSCODE_MODEL_PREFIX + model.id;
}

export function answerLmRequest(params: LmRequest.Params, token: vscode.CancellationToken, sendDelta: (delta: LmDeltaNotification.Params) => void): Promise<LmRequest.Result> {
  const controller = new AbortController();
  const listener = token.onCancellationRequested(() => controller.abort());
  if (token.isCancellationRequested) controller.abort();
  return runLmRequest(vscodeLmHost, params, sendDelta, controller.signal).finally(() => listener.dispose());
}

export async function answerLmModels(): Promise<LmModelsRequest.Result> {
  return { models: await listVscodeModels() };
}

function handleOf(model: vscode.LanguageModelChat): LmModelHandle {
  return {
    ...modelInfo(model),
    sendRequest: async (messages: LmMessage[], options: LmSendOptions, signal: AbortSignal) => {
      const cancellation = new vscode.CancellationTokenSource();
      const onAbort = (): void => cancellation.cancel();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const response = await model.sendRequest(
          messages.map(chatMessageOf),
          {
            justification: JUSTIFICATION,
            ...(options.tools ? { tools: options.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })), toolMode: vscode.LanguageModelChatToolMode.Auto } : {}),
            ...(options.modelOptions ? { modelOptions: options.modelOptions } : {}),
          },
          cancellation.token,
        );
        return partsOf(response.stream, () => {
          signal.removeEventListener('abort', onAbort);
          cancellation.dispose();
        });
      } catch (err) {
        signal.removeEventListener('abort', onAbort);
        cancellation.dispose();
        throw err;
      }
    },
  };
}

async function* partsOf(stream: AsyncIterable<unknown>, done: () => void): AsyncIterable<LmResponsePart> {
  try {
    for await (const part of stream) {
      if (part instanceof vscode.LanguageModelTextPart) yield { type: 'text', value: part.value };
      else if (part instanceof vscode.LanguageModelToolCallPart) yield { type: 'toolCall', callId: part.callId, name: part.name, input: part.input };
      // Other parts (proposed ones such as thinking or data) are not part of the answer.
    }
  } finally {
    done();
  }
}

function chatMessageOf(message: LmMessage): vscode.LanguageModelChatMessage {
  const parts = message.parts.map((part) => {
    switch (part.type) {
      case 'text':
        return new vscode.LanguageModelTextPart(part.value);
      case 'toolCall':
        return new vscode.LanguageModelToolCallPart(part.callId, part.name, part.input);
      case 'toolResult':
        return new vscode.LanguageModelToolResultPart(part.callId, [new vscode.LanguageModelTextPart(part.content)]);
    }
  });
  return message.role === 'assistant'
    ? vscode.LanguageModelChatMessage.Assistant(parts as Array<vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart>)
    : vscode.LanguageModelChatMessage.User(parts as Array<vscode.LanguageModelTextPart | vscode.LanguageModelToolResultPart>);
}

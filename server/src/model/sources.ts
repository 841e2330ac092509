/**
 * The two model sources behind one ChatModel: a model id starting with
 * `vscode-lm:` is one of the client's VS Code language models (proxied/),
 * any other id goes to the OpenAI-compatible endpoint (openai/). Each
 * discussion's model id is saved, so the source is chosen per discussion.
 */
import { VSCODE_MODEL_PREFIX } from '../../../shared/protocol';
import { ChatModel, ChatRequest, ChatResponse, ModelError, StreamObserver } from './types';
import type { ProxiedChatModel } from './proxied/chatModel';

export function isVscodeModelId(id: string | undefined | null): id is string {
  return typeof id === 'string' && id.startsWith(VSCODE_MODEL_PREFIX);
}

/** Said wherever a discussion held with a VS Code model is continued by a client without them (the terminal). */
export function onlyInsideVsCode(id: string): string {
  return (
    `This discussion uses the VS Code language model ${id.slice(VSCODE_MODEL_PREFIX.length)}, which is only available inside VS Code. ` +
    'Open it there, or resume it here with the configured endpoint instead: add --model auto (its default model) or --model <id>.'
  );
}

export interface ModelSources extends ChatModel {
  /** The context window a source knows for this model id (a VS Code model's `maxInputTokens`). */
  contextWindow(modelId: string): number | undefined;
}

export function modelSources(endpoint: ChatModel, vscodeLm?: ProxiedChatModel): ModelSources {
  return {
    complete(request: ChatRequest, onDelta: (text: string) => void, observer?: StreamObserver): Promise<ChatResponse> {
      if (!isVscodeModelId(request.model)) return endpoint.complete(request, onDelta, observer);
      if (!vscodeLm) return Promise.reject(new ModelError('unknown_model', onlyInsideVsCode(request.model)));
      return vscodeLm.complete({ ...request, model: request.model.slice(VSCODE_MODEL_PREFIX.length) }, onDelta);
    },
    /**
     * With `like`, the list of the source that id belongs to (so checking an
     * endpoint model never depends on VS Code's list, nor the reverse);
     * without, the endpoint's models and then VS Code's.
     */
    async listModels(signal?: AbortSignal, like?: string): Promise<string[]> {
      if (isVscodeModelId(like)) {
        if (!vscodeLm) throw new ModelError('unknown_model', onlyInsideVsCode(like));
        return vscodeModels(vscodeLm, signal);
      }
      if (like !== undefined || !vscodeLm) return endpoint.listModels(signal);
      const [fromEndpoint, fromVscode] = await Promise.allSettled([endpoint.listModels(signal), vscodeModels(vscodeLm, signal)]);
      const vscodeIds = fromVscode.status === 'fulfilled' ? fromVscode.value : [];
      if (fromEndpoint.status === 'rejected') {
        if (vscodeIds.length === 0) throw fromEndpoint.reason;
        return vscodeIds;
      }
      return [...fromEndpoint.value, ...vscodeIds];
    },
    contextWindow(modelId: string): number | undefined {
      return isVscodeModelId(modelId) ? vscodeLm?.contextWindow(modelId.slice(VSCODE_MODEL_PREFIX.length)) : undefined;
    },
  };
}

async function vscodeModels(vscodeLm: ProxiedChatModel, signal?: AbortSignal): Promise<string[]> {
  return (await vscodeLm.listModels(signal)).map((id) => VSCODE_MODEL_PREFIX + id);
}

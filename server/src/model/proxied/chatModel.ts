/**
 * ChatModel over the client's language models (`vscode.lm`): each request
 * goes to the client as `discuss/lmRequest`, its reply streams back as
 * `discuss/lmDelta` parts keyed by a request id, and the result only says
 * whether it ended whole. The discussion core cannot tell this model from
 * the HTTP one: same deltas, same tool calls, same ModelErrors.
 */
import { randomUUID } from 'node:crypto';
import type { LmDeltaNotification, LmModelInfo, LmModelsRequest, LmRequest, LmResponsePart } from '../../../../shared/protocol';
import { ChatModel, ChatRequest, ChatResponse, ModelError, ToolCall } from '../types';
import { modelErrorFrom } from './failures';

/** The connection to the client, as this model needs it (see server.ts for the JSON-RPC one). */
export interface LmClient {
  /** Rejects at once when `signal` aborts; the client's request is cancelled too. */
  request(params: LmRequest.Params, signal: AbortSignal): Promise<LmRequest.Result>;
  models(signal?: AbortSignal): Promise<LmModelsRequest.Result>;
  /** Every `discuss/lmDelta` the client sends. */
  onDelta(listener: (params: LmDeltaNotification.Params) => void): void;
}

export class ProxiedChatModel implements ChatModel {
  /** The reply being built for each request in flight; deltas for any other id are dropped. */
  private readonly inFlight = new Map<string, (parts: LmResponsePart[]) => void>();
  /** The last list the client gave, for each model's context window. */
  private known = new Map<string, LmModelInfo>();

  constructor(private readonly client: LmClient) {
    client.onDelta((params) => {
      if (!params || typeof params.requestId !== 'string' || !Array.isArray(params.parts)) return;
      this.inFlight.get(params.requestId)?.(params.parts);
    });
  }

  async complete(request: ChatRequest, onDelta: (text: string) => void): Promise<ChatResponse> {
    if (request.signal.aborted) throw cancelled();
    const model = request.model || undefined;
    const requestId = randomUUID();
    let content = '';
    const toolCalls: ToolCall[] = [];
    // A throwing listener must not leave the reply half-read as if whole.
    let deltaFailure: unknown;
    this.inFlight.set(requestId, (parts) => {
      for (const part of parts) {
        if (part?.type === 'text' && typeof part.value === 'string') {
          content += part.value;
          try {
            onDelta(part.value);
          } catch (err) {
            deltaFailure ??= err;
          }
        } else if (part?.type === 'toolCall' && typeof part.name === 'string') {
          toolCalls.push({ id: typeof part.callId === 'string' && part.callId ? part.callId : `call_${toolCalls.length}`, name: part.name, arguments: argumentsText(part.input) });
        }
      }
    });
    try {
      const result = await this.client.request(
        {
          requestId,
          ...(model ? { model } : {}),
          messages: request.messages,
          ...(request.tools?.length ? { tools: request.tools } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
        },
        request.signal,
      );
      if (request.signal.aborted) throw cancelled();
      if (deltaFailure) throw deltaFailure;
      if (result?.error) throw modelErrorFrom(result.error, this.nameOf(model ?? 'the VS Code language model'));
      return { content, toolCalls, finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop' };
    } catch (err) {
      if (request.signal.aborted) throw cancelled();
      if (err instanceof ModelError || err === deltaFailure) throw err;
      throw new ModelError('network', `VS Code did not run the model request (${err instanceof Error ? err.message : String(err)}). Try again; if it keeps failing, reload the window.`);
    } finally {
      this.inFlight.delete(requestId);
    }
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const { models } = await this.client.models(signal);
    this.known = new Map((Array.isArray(models) ? models : []).filter((m) => typeof m?.id === 'string').map((m) => [m.id, m]));
    return [...this.known.keys()];
  }

  /** The model's `maxInputTokens`, once the client has listed it. */
  contextWindow(model: string): number | undefined {
    const tokens = this.known.get(model)?.maxInputTokens;
    return typeof tokens === 'number' && tokens > 0 ? tokens : undefined;
  }

  private nameOf(model: string): string {
    return this.known.get(model)?.name || model;
  }
}

/** VS Code hands a tool call's input over parsed; the core keeps the raw argument text. */
function argumentsText(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input ?? {});
  } catch {
    return '{}';
  }
}

function cancelled(): ModelError {
  return new ModelError('cancelled', 'The model request was cancelled.');
}

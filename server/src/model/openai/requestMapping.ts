/**
 * The request as the endpoint gets it: a ChatRequest mapped to the OpenAI
 * chat-completions body (messages, tools, output limit, streaming options),
 * shaped by a RequestPlan, and which refused parameter (an Adaptation) a
 * failed attempt points to.
 */
import { APIError } from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ChatRequest, ToolSpec } from '../types';

/** A request shape the endpoint refused, and that the next attempt avoids. */
export type Adaptation =
  /** Older Azure api-versions, some gateways: 400 "Unrecognized request argument supplied: stream_options". */
  | 'drop_stream_options'
  /** llama.cpp before streamed tool calls: 400 "Cannot use tools with stream". */
  | 'no_streaming_with_tools'
  /** OpenAI o-series and gpt-5: 400 "Unsupported parameter: 'max_tokens' … Use 'max_completion_tokens' instead." */
  | 'use_max_completion_tokens'
  /** Servers (and old Azure api-versions) that only know the older name. */
  | 'use_max_tokens';

export type TokenLimitParam = 'max_tokens' | 'max_completion_tokens';

/** How the next request is shaped, from what the endpoint and model have refused before. */
export interface RequestPlan {
  stream: boolean;
  streamOptions: boolean;
  tokenLimitParam: TokenLimitParam;
}

function baseBody(request: ChatRequest, model: string, plan: RequestPlan) {
  return {
    model,
    messages: request.messages.map(toOpenAIMessage),
    // Some servers reject an empty tools array, so none is sent.
    ...(request.tools?.length ? { tools: request.tools.map(toOpenAITool) } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { [plan.tokenLimitParam]: request.maxTokens } : {}),
  };
}

export function streamingBody(request: ChatRequest, model: string, plan: RequestPlan): ChatCompletionCreateParamsStreaming {
  return {
    ...baseBody(request, model, plan),
    stream: true,
    // Without it OpenAI (and most servers that follow it) report no usage for a streamed reply.
    ...(plan.streamOptions ? { stream_options: { include_usage: true } } : {}),
  };
}

export function wholeBody(request: ChatRequest, model: string, plan: RequestPlan): ChatCompletionCreateParamsNonStreaming {
  // `stream_options` is refused without streaming, so it is not sent here.
  return { ...baseBody(request, model, plan), stream: false };
}

export function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      // OpenAI rejects an empty tool_calls array; null content is its form for "only tool calls".
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toOpenAITool(tool: ToolSpec): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/**
 * Which refusal, if any, a failed attempt met. Only a 400/422 that names a
 * parameter we actually sent counts, so an unrelated bad request is reported
 * as it is rather than retried.
 */
export function adaptationFor(error: unknown, request: ChatRequest, plan: RequestPlan): Adaptation | undefined {
  if (!(error instanceof APIError) || (error.status !== 400 && error.status !== 422)) return undefined;
  const body = error.error as { message?: unknown; param?: unknown } | undefined;
  const text = [error.message, body?.message, body?.param, error.param, error.code]
    .filter((part) => typeof part === 'string')
    .join(' ')
    .toLowerCase();
  // Words of a refused parameter, not of a bad value: vLLM's "'max_tokens' is too large" is a context problem.
  const refused = /unsupported|not supported|unrecognized|unknown (?:parameter|field|argument)|not permitted|extra (?:inputs|fields)/.test(text);
  if (plan.streamOptions && text.includes('stream_options')) return 'drop_stream_options';
  if (request.maxTokens !== undefined) {
    const namesOld = /\bmax_tokens\b/.test(text);
    const namesNew = text.includes('max_completion_tokens');
    if (plan.tokenLimitParam === 'max_tokens' && namesOld && (namesNew || refused)) return 'use_max_completion_tokens';
    if (plan.tokenLimitParam === 'max_completion_tokens' && namesNew && (namesOld || refused)) return 'use_max_tokens';
  }
  if (plan.stream && request.tools?.length && /stream/.test(text) && /tool/.test(text) && /not|cannot|can't|unsupported/.test(text)) {
    return 'no_streaming_with_tools';
  }
  return undefined;
}

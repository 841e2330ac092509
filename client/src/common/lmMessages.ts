/**
 * The conversation as the server holds it, mapped to the messages VS Code's
 * Language Model API takes (`LanguageModelChatMessage` with text, tool-call
 * and tool-result parts). Pure data, so it is tested without VS Code;
 * languageModels.ts only turns each part into its vscode class.
 *
 * VS Code's stable API has two roles, User and Assistant, so:
 * - the system prompt becomes the first User message (what Copilot-backed
 *   agents do; a model sees it before anything else);
 * - an assistant reply keeps its text and then its tool calls, in one message;
 * - tool results go, in the order of the calls, in the User message right
 *   after the reply that made the calls (providers refuse a result that does
 *   not follow its call).
 */
import type { LmChatMessage } from '../../../shared/protocol';

export type LmPart =
  | { type: 'text'; value: string }
  | { type: 'toolCall'; callId: string; name: string; input: object }
  | { type: 'toolResult'; callId: string; content: string };

export interface LmMessage {
  role: 'user' | 'assistant';
  parts: LmPart[];
}

export function toLmMessages(messages: readonly LmChatMessage[]): LmMessage[] {
  const out: LmMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        out.push({ role: 'user', parts: textParts(message.content) });
        break;
      case 'assistant': {
        const calls = (message.toolCalls ?? []).map((call): LmPart => ({ type: 'toolCall', callId: call.id, name: call.name, input: inputOf(call.arguments) }));
        const parts = [...textParts(message.content), ...calls];
        // An empty assistant turn (a reply cut off before any text) says nothing a provider would accept.
        if (parts.length > 0) out.push({ role: 'assistant', parts });
        break;
      }
      case 'tool': {
        const result: LmPart = { type: 'toolResult', callId: message.toolCallId, content: message.content };
        const previous = out[out.length - 1];
        // Results of one reply's calls share one User message, right after that reply.
        if (previous?.role === 'user' && previous.parts.length > 0 && previous.parts.every((p) => p.type === 'toolResult')) previous.parts.push(result);
        else out.push({ role: 'user', parts: [result] });
        break;
      }
    }
  }
  return out;
}

function textParts(text: string): LmPart[] {
  return text ? [{ type: 'text', value: text }] : [];
}

/**
 * VS Code takes a tool call's input as an object; the server keeps the text
 * the model wrote. Text that is not a JSON object (the model's mistake, which
 * the tool already answered with an error) goes as `{}`, since a provider
 * refuses anything else.
 */
function inputOf(argumentsText: string): object {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

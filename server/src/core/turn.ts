import type { ChatMessage, ChatModel, TokenUsage, ToolCall, ToolSpec } from '../model/types';
import { ModelError } from '../model/types';
import type { Logger } from './deps';
import type { EventStream } from './eventStream';
import { MAX_MODEL_CALLS_PER_REPLY, PARAMS_PREVIEW_CHARS, RESULT_PREVIEW_CHARS } from './limits';
import { cutText } from '../../../shared/cutText';
import { errorText } from '../../../shared/errorText';
import type { TurnProgress } from '../../../shared/protocol';

/** Ends a reply in the history that was stopped or cut off part-way. */
export const INTERRUPTED_REPLY_NOTE = '[This reply was interrupted before it finished.]';

/** Characters of a tool name shown in events. */
const TOOL_NAME_CHARS = 100;

/** Characters of one tool result kept for the model (a full read is 256 KiB). */
const TOOL_OUTPUT_MAX_CHARS = 300_000;

/** Characters of a failed call's answer kept for the model. */
const TOOL_ERROR_MAX_CHARS = 4_000;

/** What one reply needs of its discussion. */
export interface TurnHost {
  readonly id: string;
  readonly model: ChatModel;
  readonly stream: EventStream;
  readonly logger: Logger;
  /** The model history; the turn appends to it. */
  readonly history: ChatMessage[];
  readonly effectiveModel: string | null;
  /** The discussion's close latch, checked before every model call. */
  isClosed(): boolean;
  tools(): ToolSpec[];
  /**
   * The history as the next request carries it, fitted to the context
   * window; `usage` is what summarizing older turns to fit it cost.
   */
  requestMessages(tools: ToolSpec[], signal: AbortSignal): Promise<{ messages: ChatMessage[]; usage?: TokenUsage }>;
  /** Runs one of the model's tool calls (refusing whatever is not a read tool). */
  runTool(toolCall: ToolCall, signal: AbortSignal): Promise<{ ok: boolean; output: string }>;
  /** A step of the turn completed: worth saving. */
  saveProgress(): void;
  /**
   * The turn is over; `answer` is what the user saw. Called (and the
   * discussion saved) before the reply's assistant_message is emitted, and
   * before `turn_complete`, so a client that sends on it is not refused.
   */
  finish(answer: string): void;
  /** A sign of life while nothing else happens (a retry's wait); transient, never an event. */
  progress?(progress: TurnProgress): void;
}

/**
 * One reply: model calls and tool calls until the model answers in prose,
 * capped at MAX_MODEL_CALLS_PER_REPLY. Every exit ends with `turn_complete`;
 * a failure emits `error` first, and the discussion takes the next message.
 */
export async function runTurn(host: TurnHost, signal: AbortSignal): Promise<void> {
  const { stream } = host;
  const firstSeqOfReply = stream.seqNext;
  // Let `send` return (and publish the turn) before the first model call.
  await Promise.resolve();
  // What the user saw this turn, across every model call: the final
  // `assistant_message` must match the deltas it replaces.
  let turnText = '';
  // Text streamed by the current call and not yet in the history.
  let streamed = '';
  let finished = false;
  // The history's entry for the call that finished the reply.
  let lastReply: Extract<ChatMessage, { role: 'assistant' }> | undefined;
  const usage = { promptTokens: 0, completionTokens: 0, reported: false };
  const show = (text: string) => {
    turnText += text;
    stream.emitText('assistant_delta', text);
  };
  try {
    for (let call = 0; call < MAX_MODEL_CALLS_PER_REPLY; call++) {
      // The closed latch and the abort are checked before every model call,
      // so a close that landed between steps never reaches the model.
      if (host.isClosed() || signal.aborted) break;
      if (turnText && !turnText.endsWith('\n')) show('\n\n');
      streamed = '';
      const tools = host.tools();
      const request = await host.requestMessages(tools, signal);
      if (request.usage) {
        usage.promptTokens += request.usage.promptTokens;
        usage.completionTokens += request.usage.completionTokens;
        usage.reported = true;
      }
      if (host.isClosed() || signal.aborted) break;
      const response = await host.model.complete(
        {
          messages: request.messages,
          tools,
          model: host.effectiveModel ?? undefined,
          signal,
        },
        (delta) => {
          if (!delta || signal.aborted) return;
          streamed += delta;
          show(delta);
        },
        {
          // Reasoning is shown (collapsed) but never joins the answer, the
          // history or the distilled transcript.
          onReasoning: (text) => {
            if (text && !signal.aborted) stream.emitText('reasoning_delta', text);
          },
          // Streamed text that turned out to be reasoning leaves the turn's answer (and so
          // assistant_message and the transcript); clients already shown it replace it then.
          onAnswerRetracted: () => {
            turnText = turnText.slice(0, turnText.length - streamed.length);
            streamed = '';
          },
          onRetry: (retry) => {
            if (!signal.aborted) host.progress?.({ kind: 'retrying', ...retry });
          },
        },
      );
      if (response.usage) {
        usage.promptTokens += response.usage.promptTokens;
        usage.completionTokens += response.usage.completionTokens;
        usage.reported = true;
      }
      // Providers that do not stream content still return it whole.
      if (!streamed && response.content) show(response.content);
      const content = response.content || streamed;
      streamed = '';
      lastReply = {
        role: 'assistant',
        content,
        ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
      };
      host.history.push(lastReply);
      if (response.toolCalls.length === 0) {
        if (response.finishReason === 'length') show("\n\n_(The reply was cut off at the model's output limit.)_");
        finished = true;
        break;
      }
      for (const toolCall of response.toolCalls) await answerToolCall(host, toolCall, signal);
      host.saveProgress();
    }
    if (!finished && !signal.aborted && !host.isClosed()) {
      stream.emit({
        type: 'error',
        message: `The model made ${MAX_MODEL_CALLS_PER_REPLY} calls without finishing its reply, so the turn was stopped. Ask a narrower question, or name the files to look at.`,
      });
    }
  } catch (err) {
    if (!(signal.aborted || (err instanceof ModelError && err.kind === 'cancelled'))) {
      host.logger.warn(`discussion ${host.id}: turn failed: ${errorText(err)}`);
      stream.emit({ type: 'error', message: errorText(err), ...(err instanceof ModelError && err.remedy ? { remedy: err.remedy } : {}) });
    }
  } finally {
    // A reply cut short keeps what was said, so the model sees it next
    // turn, marked, so it does not take it for an answer it finished.
    if (streamed.trim()) host.history.push({ role: 'assistant', content: `${streamed}\n\n${INTERRUPTED_REPLY_NOTE}` });
    answerUnansweredCalls(host.history, signal.aborted);
    // A reply said in one call is the history's entry and the deltas joined:
    // equal, but two strings built apart. The message is cut from the
    // history's, so an open discussion holds each reply once, not twice (the
    // transcript shares the message's).
    const text = (lastReply?.content === turnText ? lastReply.content : turnText).trim();
    // Saved before the reply is announced: a crash between the
    // assistant_message and the save left a turn that a resume closes as
    // interrupted, its answer shown to the client but missing from the
    // history the model is sent.
    host.finish(text);
    if (text) {
      stream.emit({ type: 'assistant_message', text });
      // The message holds the reply whole, so a replay no longer needs the
      // deltas it streamed in (a resumed one never had them). From an
      // endpoint whose every token arrives in a read of its own, each delta
      // is an event: a 1,000-token reply would fill half the 2,000-event
      // buffer, pushing the turns before it out of every later replay.
      stream.drop((event) => event.type === 'assistant_delta' && event.seq >= firstSeqOfReply);
    }
    if (usage.reported) {
      stream.emit({ type: 'usage', promptTokens: usage.promptTokens, completionTokens: usage.completionTokens });
    }
    stream.emit({ type: 'turn_complete' });
  }
}

async function answerToolCall(host: TurnHost, toolCall: ToolCall, signal: AbortSignal): Promise<void> {
  // The name is the model's output: bounded like everything else it shows.
  const shownName = cutText(toolCall.name, TOOL_NAME_CHARS, 'after');
  host.stream.emit({ type: 'tool_call', tool: shownName, paramsPreview: cutText(toolCall.arguments, PARAMS_PREVIEW_CHARS, 'after') });
  let { ok, output } = await host.runTool(toolCall, signal);
  // Every later request carries this answer: one oversized result (a huge
  // error echoing its input) must not grow them all.
  // A refusal or error needs a sentence, not the megabyte of input it may quote.
  const limit = ok ? TOOL_OUTPUT_MAX_CHARS : TOOL_ERROR_MAX_CHARS;
  if (output.length > limit) {
    output = `${output.slice(0, limit)}\n[cut: this result was ${output.length} characters; ask for less]`;
  }
  host.history.push({ role: 'tool', toolCallId: toolCall.id, content: output });
  host.stream.emit({ type: 'tool_result', tool: shownName, ok, preview: cutText(output, RESULT_PREVIEW_CHARS, 'after') });
}

/**
 * An interrupted turn can leave an assistant message whose tool calls have
 * no results; providers reject that history on the next request, which
 * would brick the discussion. Answer each missing call as interrupted.
 */
export function answerUnansweredCalls(history: ChatMessage[], cancelled: boolean): void {
  const answered = new Set<string>();
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message.role === 'tool') {
      answered.add(message.toolCallId);
      continue;
    }
    if (message.role === 'assistant' && message.toolCalls) {
      for (const call of message.toolCalls) {
        if (!answered.has(call.id)) {
          history.push({
            role: 'tool',
            toolCallId: call.id,
            content: cancelled ? 'Not run: the user stopped this reply.' : 'Not run: the reply ended before this call.',
          });
        }
      }
    }
    break;
  }
}

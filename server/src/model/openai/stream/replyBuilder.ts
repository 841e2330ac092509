/**
 * One reply gathered from what the endpoint sends, streamed or whole: the
 * loose shapes servers really send, visible text (through the `<think>`
 * splitter), reasoning, tool calls, finish reason and usage, and whether the
 * reply is whole.
 */
import type { ChatResponse, StreamObserver, TokenUsage } from '../../types';
import { DeltaCallbackFailed, StreamCutOff, StreamEndedEmpty } from '../failures';
import { ThinkSegment, ThinkTagSplitter } from './thinkTags';
import { LooseToolCallFragment, ToolCallAssembler } from './toolCalls';

/** Shared between an attempt and the retry loop: once anything arrived, the attempt must not be repeated. */
export interface AttemptProgress {
  received: boolean;
}

/** A delta or message as servers actually send it: index, id or arguments' type are not always what the spec says. */
interface LooseDelta {
  content?: string | null;
  refusal?: string | null;
  /** DeepSeek, vLLM, llama.cpp, LM Studio (older). */
  reasoning_content?: string | null;
  /** Ollama, LM Studio (newer), vLLM (newer), OpenRouter. */
  reasoning?: unknown;
  tool_calls?: LooseToolCallFragment[];
}

interface LooseUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
}

export interface LooseChunk {
  choices?: Array<{ index?: number; delta?: LooseDelta | null; finish_reason?: string | null }> | null;
  usage?: LooseUsage | null;
}

export interface LooseCompletion {
  choices?: Array<{ index?: number; message?: LooseDelta | null; finish_reason?: string | null }> | null;
  usage?: LooseUsage | null;
}

export function reasoningOf(delta: LooseDelta): string | null | undefined {
  // Some servers fill both fields with the same text during a rename; one of them is the reasoning.
  if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') return delta.reasoning_content;
  return typeof delta.reasoning === 'string' ? delta.reasoning : undefined;
}

/** Gathers one reply: visible text, reasoning, tool calls, finish reason and usage. */
export class ReplyBuilder {
  finishReason: string | null = null;
  private content = '';
  private usage: TokenUsage | undefined;
  private reasoningStarted = false;
  private readonly think = new ThinkTagSplitter();
  private readonly toolCalls = new ToolCallAssembler();

  constructor(
    private readonly onDelta: (text: string) => void,
    private readonly observer: StreamObserver,
    private readonly progress: AttemptProgress,
  ) {}

  addText(piece: string | null | undefined): void {
    if (typeof piece !== 'string' || piece === '') return;
    this.progress.received = true;
    this.route(this.think.push(piece));
  }

  addReasoning(piece: string | null | undefined): void {
    if (typeof piece !== 'string' || piece === '') return;
    this.progress.received = true;
    this.reason(piece);
  }

  addToolCallFragment(fragment: LooseToolCallFragment): void {
    this.progress.received = true;
    this.toolCalls.add(fragment);
  }

  setUsage(raw: LooseUsage): void {
    const prompt = raw.prompt_tokens;
    const completion = raw.completion_tokens;
    if (typeof prompt !== 'number' && typeof completion !== 'number') return;
    const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : 0);
    this.usage = { promptTokens: count(prompt), completionTokens: count(completion) };
  }

  /**
   * The reply as received. `endAnnounced`: the stream said it was over
   * (`[DONE]`); a finish reason says so too. Providers send one or both
   * (some drop the finish reason, some close without `[DONE]`), so a stream
   * that stops with neither was cut off, and passing it off as a whole reply
   * would hide that from the user.
   */
  finish(endAnnounced = true): ChatResponse {
    this.route(this.think.flush());
    const calls = this.toolCalls.result();
    if (this.finishReason === null && this.content === '' && calls.length === 0 && !this.reasoningStarted) {
      throw new StreamEndedEmpty();
    }
    if (this.finishReason === null && !endAnnounced) throw new StreamCutOff();
    return {
      content: this.content,
      toolCalls: calls,
      finishReason: this.finishReason,
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }

  private route(segments: ThinkSegment[]): void {
    for (const segment of segments) {
      if (segment.retractsAnswer) {
        // The answer so far was reasoning: it must not stay in the reply, the history or the task.
        this.content = '';
        try {
          this.observer.onAnswerRetracted?.();
        } catch (error) {
          throw new DeltaCallbackFailed(error);
        }
      }
      if (segment.reasoning) {
        this.reason(segment.text);
        continue;
      }
      // LM Studio and vLLM move the reasoning out but leave the blank lines that followed it at the start of the content.
      const text = this.content === '' && this.reasoningStarted ? segment.text.trimStart() : segment.text;
      if (text === '') continue;
      this.content += text;
      try {
        this.onDelta(text);
      } catch (error) {
        throw new DeltaCallbackFailed(error);
      }
    }
  }

  private reason(piece: string): void {
    // Reasoning often opens with blank lines (and an empty <think></think> is all blank): they would show as an empty block.
    const text = this.reasoningStarted ? piece : piece.trimStart();
    if (text === '') return;
    this.reasoningStarted = true;
    try {
      this.observer.onReasoning?.(text);
    } catch (error) {
      throw new DeltaCallbackFailed(error);
    }
  }
}

import type { ChatModel, ChatRequest, ChatResponse, StreamObserver, TokenUsage, ToolCall } from '../../server/src/model/types';
import { ModelError } from '../../server/src/model/types';
import { SUMMARY_PROMPT_HEAD } from '../../server/src/core/compaction';

/** One scripted answer: prose, tool calls, a failure, or a turn held open until released. */
export type ScriptStep =
  | {
      text: string;
      deltas?: string[];
      toolCalls?: Array<Omit<ToolCall, 'id'> & { id?: string }>;
      finishReason?: string;
      reasoning?: string[];
      /** Streamed as answer before anything else, then taken back (`onAnswerRetracted`) ahead of `reasoning`. */
      retracted?: string[];
      usage?: TokenUsage;
      /** Each delta (and reasoning piece) in its own tick, as a slow stream delivers them; by default all in one. */
      separateReads?: boolean;
    }
  | { fail: Error }
  | { block: Gate; deltasBefore?: string[]; separateReads?: boolean; then?: ScriptStep };

/** Lets the event loop turn, as it does between two network reads. */
const nextRead = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A latch a test opens when it is ready; the model waits on it or on abort. */
export class Gate {
  private release!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  open(): void {
    this.release();
  }
}

/**
 * A model that answers from a script, records every request, and counts
 * calls. A step may block until its gate opens or the request is aborted,
 * which is how tests hold a turn in flight without sleeping.
 */
export class ScriptedModel implements ChatModel {
  readonly requests: ChatRequest[] = [];
  /**
   * Requests to summarize older turns (compaction), kept apart and answered
   * with `summaryStep` so they neither take a scripted step nor shift
   * `requests`.
   */
  readonly summaryRequests: ChatRequest[] = [];
  summaryStep: ScriptStep = { text: 'So far: the earlier turns, summarized.' };
  aborted = 0;
  private readonly steps: ScriptStep[];
  private readonly waiters: Array<{ count: number; resolve: () => void }> = [];
  private readonly abortWaiters: Array<() => void> = [];
  models = ['scripted-small', 'scripted-large'];

  constructor(steps: ScriptStep[] = [], private readonly fallback: ScriptStep = { text: 'ok' }) {
    this.steps = [...steps];
  }

  get calls(): number {
    return this.requests.length;
  }

  push(...steps: ScriptStep[]): void {
    this.steps.push(...steps);
  }

  /** Resolves once `count` requests have arrived. */
  waitForCalls(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Resolves on the next aborted request. */
  waitForAbort(): Promise<void> {
    return new Promise((resolve) => this.abortWaiters.push(resolve));
  }

  async listModels(): Promise<string[]> {
    return this.models;
  }

  async complete(request: ChatRequest, onDelta: (text: string) => void, observer?: StreamObserver): Promise<ChatResponse> {
    const first = request.messages[0];
    if (!request.tools && first?.role === 'user' && first.content.startsWith(SUMMARY_PROMPT_HEAD)) {
      this.summaryRequests.push({ ...request, messages: structuredClone(request.messages) });
      return this.play(this.summaryStep, request, onDelta, observer);
    }
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    for (const waiter of this.waiters.filter((w) => this.requests.length >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const step = this.steps.shift() ?? this.fallback;
    return this.play(step, request, onDelta, observer);
  }

  private async play(step: ScriptStep, request: ChatRequest, onDelta: (text: string) => void, observer?: StreamObserver): Promise<ChatResponse> {
    if ('fail' in step) throw step.fail;
    if ('block' in step) {
      for (const delta of step.deltasBefore ?? []) {
        if (step.separateReads) await nextRead();
        onDelta(delta);
      }
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.aborted++;
          for (const w of this.abortWaiters.splice(0)) w();
          reject(new ModelError('cancelled', 'The request was cancelled.'));
        };
        if (request.signal.aborted) return onAbort();
        request.signal.addEventListener('abort', onAbort, { once: true });
        step.block.opened.then(() => {
          request.signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
      return this.play(step.then ?? { text: (step.deltasBefore ?? []).join('') }, request, onDelta, observer);
    }
    if (step.retracted) {
      for (const delta of step.retracted) onDelta(delta);
      observer?.onAnswerRetracted?.();
    }
    for (const r of step.reasoning ?? []) {
      if (step.separateReads) await nextRead();
      observer?.onReasoning?.(r);
    }
    const deltas = step.deltas ?? (step.text ? [step.text] : []);
    for (const delta of deltas) {
      if (step.separateReads) await nextRead();
      onDelta(delta);
    }
    const toolCalls = (step.toolCalls ?? []).map((call, i) => ({
      id: call.id ?? `call_${this.requests.length}_${i}`,
      name: call.name,
      arguments: call.arguments,
    }));
    return {
      content: step.text,
      toolCalls,
      finishReason: step.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
      ...(step.usage ? { usage: step.usage } : {}),
    };
  }
}

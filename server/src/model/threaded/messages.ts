/**
 * What the main thread and the model thread (modelWorker.ts) say to each
 * other. A request travels without its AbortSignal (an abort is a message of
 * its own) and with the model's settings as read at the moment it is made:
 * the thread's one model reads them once, as a call starts, and keeps what
 * it learns of each endpoint by the endpoint (chatModel.ts), so models
 * with different settings can share it.
 */
import type { ChatRequest, ChatResponse, ModelErrorKind, ModelSettings, RetryNotice } from '../types';
import type { RemedyCode } from '../../../../shared/protocol';
import type { OpenAIModelOptions } from '../openai/chatModel';

export type ToModelThread =
  | { kind: 'complete'; id: number; settings: ModelSettings; request: Omit<ChatRequest, 'signal'> }
  | { kind: 'list'; id: number; settings: ModelSettings }
  | { kind: 'abort'; id: number }
  /** Tokens in each text, by the o200k tokenizer (tokenizer.ts). */
  | { kind: 'count'; id: number; texts: string[] }
  /** Runs the model's code once against a loopback endpoint of the thread's own (warmup.ts). */
  | { kind: 'warm'; id: number };

/** What the thread is started with. */
export interface ModelThreadData {
  /** The model's retries and timeouts (tests shorten them). */
  modelOptions?: OpenAIModelOptions;
}

/** What a reply streamed, in the order it streamed it. */
export type StreamItem =
  | { kind: 'delta'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'retracted' }
  | { kind: 'retry'; notice: RetryNotice };

export interface ThreadError {
  message: string;
  /** Set for a ModelError, which is made again on the main thread. */
  modelError?: { kind: ModelErrorKind; status?: number; remedy?: RemedyCode };
}

export type FromModelThread =
  /** What a request streamed since the last message: gathered per turn of the thread's event loop. */
  | { kind: 'stream'; id: number; items: StreamItem[] }
  | { kind: 'completed'; id: number; response: ChatResponse }
  | { kind: 'listed'; id: number; models: string[] }
  | { kind: 'counted'; id: number; counts: number[] }
  | { kind: 'warmed'; id: number }
  | { kind: 'failed'; id: number; error: ThreadError };

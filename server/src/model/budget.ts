/**
 * Keeps a model request within the model's context window. Pure: the caller
 * passes the whole history and gets back what to send; the history itself is
 * never changed (the saved discussion keeps everything).
 *
 * Order of sacrifice, oldest first: tool results are replaced by a stub that
 * says how to get them again, then whole turns are dropped. The system prompt,
 * the latest user message and everything after it (the current turn's tool
 * exchange) are never touched.
 */
import { shortLine } from '../../../shared/oneLine';
import type { ChatMessage, ToolCall, ToolSpec } from './types';

export interface BudgetOptions {
  /** The model's context window, in tokens (see `contextWindowFor`). */
  contextTokens: number;
  /** Tokens kept free for the reply (see `reserveForReplyFor`). */
  reserveForReply: number;
  /**
   * Tokens in `text`, synchronously. Without it the counts come from
   * `counted` (made ahead in the model thread), and a message it does not
   * hold is taken at its UTF-8 bytes, never fewer than its tokens.
   */
  countTokens?: (text: string) => number;
  /** Counts made ahead off the main thread (see `PrecountedTokens`). */
  counted?: PrecountedTokens;
  /** Index of the latest user message: it and everything after it are never elided. */
  protectFrom: number;
  /** Tokens the request spends outside the messages and `tools`. */
  extraTokens?: number;
  /** The tool definitions the request carries: what they cost comes out of the room for messages. */
  tools?: ToolSpec[];
}

export interface BudgetResult {
  /** What to send: the same message objects, except stubs for elided tool results. */
  messages: ChatMessage[];
  /** Tool results replaced by a stub. */
  elidedToolResults: number;
  /** Whole turns left out (a user message and what followed it up to the next one). */
  droppedTurns: number;
  /**
   * Estimate for the request's prompt, messages, tools and `extraTokens`
   * included. When the request fits at a glance (see `fitToBudget`) this is
   * the byte bound, an overestimate; otherwise the tokenizer's count (bytes
   * for anything `counted` does not hold).
   */
  estimatedTokens: number;
  /**
   * False when even the protected part (system prompt, latest user message and
   * the current turn) does not fit: `messages` is then as small as allowed, and
   * the endpoint may still refuse it.
   */
  fits: boolean;
}

/** Role markers and separators around each message in the chat template (OpenAI counts 3–4). */
const MESSAGE_OVERHEAD = 4;
/** A tool call's id, type and function wrapper. */
const TOOL_CALL_OVERHEAD = 12;
/** A tool result's `tool_call_id`. */
const TOOL_RESULT_OVERHEAD = 10;
/** The template's priming of the assistant's reply. */
const REPLY_PRIMING = 3;
/** A tool call's arguments shown in a stub are cut to this many characters. */
const STUB_ARGUMENTS_LIMIT = 160;

/**
 * Fits `messages` into `contextTokens - reserveForReply - extraTokens`.
 * Linear in the number of messages; each message object is counted once per
 * `countTokens` function and the count is remembered for later calls.
 */
export function fitToBudget(messages: ChatMessage[], options: BudgetOptions): BudgetResult {
  // Everything the prompt holds (messages, tools and extraTokens) must leave the reply its room.
  const available = Math.max(0, Math.floor(options.contextTokens - options.reserveForReply));
  const protectFrom = Math.max(0, Math.min(messages.length, Math.floor(options.protectFrom)));
  // The system prompt stays; so does anything before protectFrom when protectFrom is 0 or 1.
  const first = Math.min(messages[0]?.role === 'system' ? 1 : 0, protectFrom);

  // At a glance: an o200k token covers at least one byte of UTF-8, so a request
  // whose bytes fit, fits in tokens. Most requests pass here and never pay for
  // the tokenizer: about 200 ms to load on the first reply, tens of MB, and a
  // count of every new message on every model call. Counts made ahead are
  // looked at directly instead: they fall back to these bytes where missing, so
  // they fit whatever the bytes fit, and a new discussion's first request, which
  // a small window does not fit by bytes, measured its tools for nothing (its
  // budget took 0.05 ms that way, 0.03 ms without).
  if (!options.countTokens && !options.counted) {
    const bytesOf = messageCounter(utf8Bytes);
    const bound = bytesBound(messages, options.tools, options.extraTokens);
    if (bound <= available) {
      const repaired = repairPairs(messages, first, protectFrom, bytesOf);
      return {
        messages: repaired ? repaired.messages : messages.slice(),
        elidedToolResults: 0,
        droppedTurns: 0,
        estimatedTokens: bound + (repaired?.tokenChange ?? 0),
        fits: true,
      };
    }
  }

  const { tokensOf, toolTokens } = countersFor(options);
  const working = messages.slice();
  let total = REPLY_PRIMING + (options.extraTokens ?? 0) + toolTokens;
  for (const message of working) total += tokensOf(message);

  // 1. Stub the oldest tool results. A result is worth the least once read and answered,
  //    and a stub keeps the exchange (and its call/result pairing) readable.
  let elided = 0;
  if (total > available) {
    const callsById = new Map<string, ToolCall>();
    for (let i = first; i < protectFrom; i++) {
      const message = working[i];
      if (message.role === 'assistant') for (const call of message.toolCalls ?? []) callsById.set(call.id, call);
    }
    for (let i = first; i < protectFrom && total > available; i++) {
      const message = working[i];
      if (message.role !== 'tool') continue;
      const stub = stubFor(message, callsById.get(message.toolCallId));
      const saved = tokensOf(message) - tokensOf(stub);
      if (saved <= 0) continue;
      working[i] = stub;
      total -= saved;
      elided++;
    }
  }

  // 2. Drop the oldest whole turns. A turn runs from a user message to the next one, so an
  //    assistant's tool calls and their results always go together.
  const dropped = new Uint8Array(working.length);
  let droppedTurns = 0;
  for (let start = first; start < protectFrom && total > available; ) {
    let end = start + 1;
    while (end < protectFrom && working[end].role !== 'user') end++;
    for (let i = start; i < end; i++) {
      dropped[i] = 1;
      total -= tokensOf(working[i]);
    }
    droppedTurns++;
    start = end;
  }

  let kept = droppedTurns > 0 ? working.filter((_, i) => !dropped[i]) : working;
  const keptProtectFrom = protectFrom - countDropped(dropped, protectFrom);
  const repaired = repairPairs(kept, first, keptProtectFrom, tokensOf);
  if (repaired) {
    kept = repaired.messages;
    total += repaired.tokenChange;
  }
  return { messages: kept, elidedToolResults: elided, droppedTurns, estimatedTokens: total, fits: total <= available };
}

function countDropped(dropped: Uint8Array, before: number): number {
  let count = 0;
  for (let i = 0; i < before; i++) count += dropped[i];
  return count;
}

/**
 * Makes every tool call in [from, to) have its result and every result its
 * call, as OpenAI-compatible endpoints refuse orphans with a 400. A history
 * cut by a cancel or an old bug can hold them even before any trimming.
 * Returns undefined when nothing needed repair (the usual case).
 */
function repairPairs(
  messages: ChatMessage[],
  from: number,
  to: number,
  tokensOf: (message: ChatMessage) => number,
): { messages: ChatMessage[]; tokenChange: number } | undefined {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (let i = from; i < to; i++) {
    const message = messages[i];
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) calls.add(call.id);
    if (message.role === 'tool') results.add(message.toolCallId);
  }
  let broken = false;
  for (const id of calls) if (!results.has(id)) broken = true;
  for (const id of results) if (!calls.has(id)) broken = true;
  if (!broken) return undefined;

  let tokenChange = 0;
  const out: ChatMessage[] = messages.slice(0, from);
  for (let i = from; i < to; i++) {
    const message = messages[i];
    if (message.role === 'tool' && !calls.has(message.toolCallId)) {
      tokenChange -= tokensOf(message);
      continue;
    }
    if (message.role === 'assistant' && message.toolCalls?.some((call) => !results.has(call.id))) {
      tokenChange -= tokensOf(message);
      const answered = message.toolCalls.filter((call) => results.has(call.id));
      if (answered.length === 0 && message.content === '') continue;
      const fixed: ChatMessage = {
        role: 'assistant',
        content: message.content,
        ...(answered.length > 0 ? { toolCalls: answered } : {}),
      };
      tokenChange += tokensOf(fixed);
      out.push(fixed);
      continue;
    }
    out.push(message);
  }
  for (let i = to; i < messages.length; i++) out.push(messages[i]);
  return { messages: out, tokenChange };
}

/** One stub per original message object, so repeated budgeting reuses (and never recounts) it. */
const stubs = new WeakMap<ChatMessage, ChatMessage>();

function stubFor(message: Extract<ChatMessage, { role: 'tool' }>, call: ToolCall | undefined): ChatMessage {
  const known = stubs.get(message);
  if (known) return known;
  const what = call ? `the result of ${call.name} ${shortLine(call.arguments, STUB_ARGUMENTS_LIMIT)}`.trimEnd() : 'the result of an earlier tool call';
  const stub: ChatMessage = {
    role: 'tool',
    toolCallId: message.toolCallId,
    content: `[elided to fit the context window: ${what} — call the tool again if you need it]`,
  };
  stubs.set(message, stub);
  return stub;
}

// ---------------------------------------------------------------------------
// Counting

/** Per counting function, per message object: a history is counted once, however often it is budgeted. */
const countCaches = new WeakMap<(text: string) => number, WeakMap<ChatMessage, number>>();

function messageCounter(countTokens: (text: string) => number): (message: ChatMessage) => number {
  let cache = countCaches.get(countTokens);
  if (!cache) {
    cache = new WeakMap();
    countCaches.set(countTokens, cache);
  }
  const counts = cache;
  return (message) => {
    let count = counts.get(message);
    if (count === undefined) {
      count = countMessage(message, countTokens);
      counts.set(message, count);
    }
    return count;
  };
}

/** One `countTokens` call per message: its text and its tool calls' names and arguments together. */
function countMessage(message: ChatMessage, countTokens: (text: string) => number): number {
  return messageOverhead(message) + countTokens(messageText(message));
}

/** The text of a message that is counted: its content, and its tool calls' names and arguments. */
function messageText(message: ChatMessage): string {
  if (message.role !== 'assistant') return message.content;
  const calls = message.toolCalls ?? [];
  return [message.content, ...calls.map((call) => `${call.name}\n${call.arguments}`)].join('\n');
}

/** What the chat template adds around a message's counted text. */
function messageOverhead(message: ChatMessage): number {
  switch (message.role) {
    case 'system':
    case 'user':
      return MESSAGE_OVERHEAD;
    case 'tool':
      return MESSAGE_OVERHEAD + TOOL_RESULT_OVERHEAD;
    case 'assistant':
      return MESSAGE_OVERHEAD + (message.toolCalls?.length ?? 0) * TOOL_CALL_OVERHEAD;
  }
}

function countersFor(options: Pick<BudgetOptions, 'countTokens' | 'counted' | 'tools'>): { tokensOf: (message: ChatMessage) => number; toolTokens: number } {
  if (options.countTokens) {
    return { tokensOf: messageCounter(options.countTokens), toolTokens: toolsCost(options.tools, options.countTokens) };
  }
  const bytesOf = messageCounter(utf8Bytes);
  const counted = options.counted;
  if (!counted) return { tokensOf: bytesOf, toolTokens: toolsCost(options.tools, utf8Bytes) };
  return {
    tokensOf: (message) => counted.message(message) ?? bytesOf(message),
    toolTokens: (options.tools && counted.tools(options.tools)) ?? toolsCost(options.tools, utf8Bytes),
  };
}

/** How many system prompts' (and tool sets') counts are kept by text: a few folders' worth. */
const KEPT_SYSTEM_PROMPTS = 8;

/** Sets `key` as the most recently used entry of `kept`, dropping the least recently used past the bound. */
function keepRecent(kept: Map<string, number>, key: string, count: number): void {
  kept.delete(key);
  kept.set(key, count);
  if (kept.size > KEPT_SYSTEM_PROMPTS) kept.delete(kept.keys().next().value as string);
}

/**
 * Token counts made ahead, asynchronously (in the model thread), and kept
 * per message object and per tool set: each message is counted once in its
 * life, however often it is budgeted. `fitToBudget` then only looks them up.
 */
export class PrecountedTokens {
  private readonly messages = new WeakMap<ChatMessage, number>();
  private readonly toolSets = new WeakMap<ToolSpec[], number>();
  /** Counts asked for and not in yet: a second prepare waits for them instead of counting again. */
  private readonly counting = new WeakMap<ChatMessage, Promise<unknown>>();
  /** Tool sets asked for and not in yet, likewise. */
  private readonly countingTools = new WeakMap<ToolSpec[], Promise<unknown>>();
  /**
   * System prompts by their text, the most recent few: every discussion of a
   * folder starts with the same one (instructions, repo map), a new message
   * object each time, and counting it again was on each first question's path.
   */
  private readonly systemPrompts = new Map<string, number>();
  /** Tool sets by their JSON, for the same reason: every discussion's tools are counted once for all. */
  private readonly toolSetsByText = new Map<string, number>();
  private readonly toolSetTexts = new WeakMap<ToolSpec[], string>();

  constructor(private readonly countAsync: (texts: string[]) => Promise<number[]>) {}

  /** Counts whatever of `messages` (and the stubs their tool results would become) and `tools` is not counted yet. */
  async prepare(messages: ChatMessage[], tools?: ToolSpec[]): Promise<void> {
    const callsById = new Map<string, ToolCall>();
    for (const message of messages) if (message.role === 'assistant') for (const call of message.toolCalls ?? []) callsById.set(call.id, call);
    const missing: ChatMessage[] = [];
    const waits = new Set<Promise<unknown>>();
    for (const message of messages) {
      if (this.message(message) !== undefined) continue;
      const inFlight = this.counting.get(message);
      if (inFlight) {
        waits.add(inFlight);
        continue;
      }
      missing.push(message);
      if (message.role === 'tool') missing.push(stubFor(message, callsById.get(message.toolCallId)));
    }
    const toolsInFlight = tools && this.countingTools.get(tools);
    if (toolsInFlight) waits.add(toolsInFlight);
    const toolSet = tools && tools.length > 0 && !toolsInFlight && this.tools(tools) === undefined ? tools : undefined;
    const texts = missing.map(messageText);
    if (toolSet) for (const tool of toolSet) texts.push(JSON.stringify(tool));
    if (texts.length === 0) {
      // A count that failed elsewhere leaves its messages to be counted by bytes.
      await Promise.allSettled(waits);
      return;
    }
    const counted = this.countAsync(texts);
    for (const message of missing) this.counting.set(message, counted);
    if (toolSet) this.countingTools.set(toolSet, counted);
    try {
      // Recorded in the first reaction to the count (this await is registered
      // before anyone else can find the promise in the maps; countAsync must
      // return a native promise), so whoever else waits on it finds the counts
      // made.
      const counts = await counted;
      missing.forEach((message, i) => {
        const count = messageOverhead(message) + counts[i];
        this.messages.set(message, count);
        if (message.role === 'system') keepRecent(this.systemPrompts, message.content, count);
      });
      if (toolSet) {
        let total = 0;
        for (let i = missing.length; i < counts.length; i++) total += TOOL_CALL_OVERHEAD + counts[i];
        this.toolSets.set(toolSet, total);
        // Tool sets differ by the tools a policy denies: a handful in a process, yet never without bound.
        keepRecent(this.toolSetsByText, this.toolSetText(toolSet), total);
      }
    } finally {
      for (const message of missing) this.counting.delete(message);
      if (toolSet) this.countingTools.delete(toolSet);
    }
    await Promise.allSettled(waits);
  }

  /**
   * Waits for the counts already asked for of these messages and tools, and
   * counts nothing itself: the count made ahead of a new discussion's first
   * question may be all its request needs, and counting the question beside
   * it cost that request 7-16 ms more.
   */
  async countsUnderWay(messages: ChatMessage[], tools?: ToolSpec[]): Promise<void> {
    const waits = new Set<Promise<unknown>>();
    for (const message of messages) {
      const inFlight = this.counting.get(message);
      if (inFlight) waits.add(inFlight);
    }
    const toolsInFlight = tools && this.countingTools.get(tools);
    if (toolsInFlight) waits.add(toolsInFlight);
    await Promise.allSettled(waits);
  }

  message(message: ChatMessage): number | undefined {
    const counted = this.messages.get(message);
    if (counted !== undefined || message.role !== 'system') return counted;
    const byText = this.systemPrompts.get(message.content);
    if (byText === undefined) return undefined;
    // Kept by the object from now on: a long system prompt is not hashed again for each later look.
    keepRecent(this.systemPrompts, message.content, byText);
    this.messages.set(message, byText);
    return byText;
  }

  tools(tools: ToolSpec[]): number | undefined {
    const counted = this.toolSets.get(tools);
    if (counted !== undefined) return counted;
    const text = this.toolSetText(tools);
    const byText = this.toolSetsByText.get(text);
    if (byText === undefined) return undefined;
    keepRecent(this.toolSetsByText, text, byText);
    this.toolSets.set(tools, byText);
    return byText;
  }

  /** A tool set's JSON, made once per array: each discussion has its own array of the same tools. */
  private toolSetText(tools: ToolSpec[]): string {
    let text = this.toolSetTexts.get(tools);
    if (text === undefined) {
      text = JSON.stringify(tools);
      this.toolSetTexts.set(tools, text);
    }
    return text;
  }
}

/**
 * At least the request's tokens, as `fitToBudget` counts them: the counts
 * `counted` holds, and the UTF-8 bytes of whatever it does not. Once the
 * history is counted, a new question fits by this bound without waiting for
 * the model thread to count it: that round trip was half the server's time
 * from a question to its request.
 */
export function countedBound(messages: ChatMessage[], tools: ToolSpec[] | undefined, counted: PrecountedTokens): number {
  const { tokensOf, toolTokens } = countersFor({ tools, counted });
  let bound = REPLY_PRIMING + toolTokens;
  for (const message of messages) bound += tokensOf(message);
  return bound;
}

/** UTF-8 bytes of everything `fitToBudget` would count: at least the request's tokens. */
export function bytesBound(messages: ChatMessage[], tools?: ToolSpec[], extraTokens = 0): number {
  const bytesOf = messageCounter(utf8Bytes);
  let bound = REPLY_PRIMING + extraTokens + toolsCost(tools, utf8Bytes);
  for (const message of messages) bound += bytesOf(message);
  return bound;
}

/** Tokens the tool definitions add to every request (their JSON, a conservative stand-in for the template's rendering). */
export function countToolTokens(tools: ToolSpec[], countTokens: (text: string) => number): number {
  let total = 0;
  for (const tool of tools) total += TOOL_CALL_OVERHEAD + countTokens(JSON.stringify(tool));
  return total;
}

/** A discussion's tools are one fixed array: counted once per counting function. */
const toolCosts = new WeakMap<(text: string) => number, WeakMap<ToolSpec[], number>>();

function toolsCost(tools: ToolSpec[] | undefined, countTokens: (text: string) => number): number {
  if (!tools || tools.length === 0) return 0;
  let cache = toolCosts.get(countTokens);
  if (!cache) {
    cache = new WeakMap();
    toolCosts.set(countTokens, cache);
  }
  let cost = cache.get(tools);
  if (cost === undefined) {
    cost = countToolTokens(tools, countTokens);
    cache.set(tools, cost);
  }
  return cost;
}

/** Bytes of `text` in UTF-8: never fewer than its o200k tokens. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

// ---------------------------------------------------------------------------
// Context windows

/** For a model nobody told us about: small enough for nearly any server's default. */
export const DEFAULT_CONTEXT_TOKENS = 8_192;

/**
 * Context windows by model family, first match wins. Ids are matched after
 * dropping a provider prefix (`openai/`, `Qwen/`) and lower-casing, so
 * Ollama tags (`qwen2.5-coder:14b`) and hub names (`Qwen/Qwen2.5-7B-Instruct`)
 * both match. Where input and output share the window, this is the input limit.
 */
const CONTEXT_WINDOWS: Array<[RegExp, number]> = [
  // OpenAI
  [/^gpt-5.*-chat/, 128_000],
  [/^gpt-5/, 272_000],
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-4\.5/, 128_000],
  [/^(gpt-4o|chatgpt-4o)/, 128_000],
  [/^gpt-4-(turbo|1106|0125)/, 128_000],
  [/^gpt-4-32k/, 32_768],
  [/^gpt-4/, 8_192],
  [/^gpt-3\.5-turbo/, 16_385],
  [/^gpt-oss/, 131_072],
  [/^o1-(mini|preview)/, 128_000],
  [/^o[134](-|$)/, 200_000],
  // Meta
  [/^llama-?4/, 131_072],
  [/^(meta-)?llama-?3\.[123]/, 131_072],
  [/^(meta-)?llama-?3/, 8_192],
  [/^(meta-)?llama-?2/, 4_096],
  [/^codellama/, 16_384],
  // Qwen
  [/^qwen3-coder/, 262_144],
  [/^qwen3.*2507/, 262_144],
  [/^qwen3/, 32_768],
  [/^(qwen2\.5|qwen2|qwq)/, 32_768],
  // Mistral
  [/^(mistral-large|mistral-medium|mistral-small|mistral-nemo|ministral|devstral|magistral|pixtral)/, 131_072],
  [/^codestral/, 262_144],
  [/^(mixtral|mistral)/, 32_768],
  // Google
  [/^gemma-?3n/, 32_768],
  [/^gemma-?3/, 131_072],
  [/^gemma/, 8_192],
  [/^gemini/, 1_048_576],
  // DeepSeek
  [/^deepseek-coder-v2/, 131_072],
  [/^deepseek-coder/, 16_384],
  [/^deepseek-(r1|v3|v2|chat|reasoner)/, 131_072],
  [/^deepseek/, 65_536],
  // Microsoft
  [/^phi-?4-mini/, 131_072],
  [/^phi-?4/, 16_384],
  [/^phi-?3\.5/, 131_072],
  [/^phi-?3/, 4_096],
  // Others often reached through gateways
  [/^claude/, 200_000],
  [/^(granite3|granite-3)/, 131_072],
  [/^command-r/, 131_072],
];

/**
 * The context window to budget for `modelId`: `override` when it is a
 * positive number (a user setting), else the window of a known family, else
 * DEFAULT_CONTEXT_TOKENS. A size in the id (`phi-3-mini-128k`, `gpt-4-32k`)
 * wins over the family's default.
 *
 * Local servers often load a model with less than its trained window (Ollama
 * and LM Studio default to 4,096, llama.cpp to its `-c`); the override is how
 * a user says so, and without it a long discussion there gets truncated by the
 * server or refused.
 */
export function contextWindowFor(modelId: string, override?: number): number {
  if (override !== undefined && Number.isFinite(override) && override > 0) return Math.floor(override);
  const id = modelId.trim().toLowerCase();
  const name = id.slice(id.lastIndexOf('/') + 1);
  const sized = /(?:^|[-_:.])(\d{1,4})k(?:$|[-_:.])/.exec(name);
  if (sized) return Number(sized[1]) * 1024;
  for (const [pattern, tokens] of CONTEXT_WINDOWS) if (pattern.test(name)) return tokens;
  return DEFAULT_CONTEXT_TOKENS;
}

/** The repository map's share of the prompt: an eighth of the window, 1,000 to 4,000 tokens. */
export function repoMapTokensFor(contextTokens: number): number {
  return Math.max(1_000, Math.min(4_000, Math.floor(contextTokens / 8)));
}

/** Room left for the reply: a quarter of a small window, at most 4,096 tokens. */
export function reserveForReplyFor(contextTokens: number): number {
  return Math.max(0, Math.min(4_096, Math.floor(contextTokens * 0.25)));
}

import * as assert from 'node:assert/strict';
import {
  bytesBound,
  contextWindowFor,
  countedBound,
  countToolTokens,
  DEFAULT_CONTEXT_TOKENS,
  fitToBudget,
  PrecountedTokens,
  reserveForReplyFor,
  utf8Bytes,
} from '../../../server/src/model/budget';
import { countTextTokens } from '../../../server/src/model/tokenizer';
import type { ChatMessage } from '../../../server/src/model/types';

/** A stand-in tokenizer: one token per four characters, rounded up. */
const quarter = (text: string) => Math.ceil(text.length / 4);

/** A counting tokenizer, fresh per test so nothing is cached from elsewhere. */
function countingTokenizer(): { count: (text: string) => number; calls: () => number } {
  let calls = 0;
  return {
    count: (text: string) => {
      calls++;
      return Math.ceil(text.length / 4);
    },
    calls: () => calls,
  };
}

/**
 * A grounded discussion: per turn a question, a read_file call, its (large)
 * result and an answer; then the latest question and its tool exchange.
 */
function discussion(turns: number, resultChars = 4000): { messages: ChatMessage[]; protectFrom: number } {
  const messages: ChatMessage[] = [{ role: 'system', content: 'You discuss this repository. '.repeat(20) }];
  for (let turn = 0; turn < turns; turn++) {
    messages.push(
      { role: 'user', content: `Question ${turn}: what does module ${turn} do?` },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: `call_${turn}`, name: 'read_file', arguments: JSON.stringify({ path: `src/module${turn}.ts` }) }],
      },
      { role: 'tool', toolCallId: `call_${turn}`, content: `// module ${turn}\n${'x'.repeat(resultChars)}` },
      { role: 'assistant', content: `Module ${turn} does thing ${turn}. `.repeat(10) },
    );
  }
  const protectFrom = messages.length;
  messages.push(
    { role: 'user', content: 'And how do they fit together?' },
    {
      role: 'assistant',
      content: 'Let me look at the index.',
      toolCalls: [{ id: 'call_now', name: 'read_file', arguments: '{"path":"src/index.ts"}' }],
    },
    { role: 'tool', toolCallId: 'call_now', content: `// index\n${'y'.repeat(3000)}` },
  );
  return { messages, protectFrom };
}

/** Every tool call has its result after it, and every result a call before it. */
function assertPairsConsistent(messages: ChatMessage[]): void {
  const open = new Set<string>();
  const answered = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) open.add(call.id);
    if (message.role === 'tool') {
      assert.ok(open.has(message.toolCallId), `tool result ${message.toolCallId} has no call before it`);
      answered.add(message.toolCallId);
    }
  }
  for (const id of open) assert.ok(answered.has(id), `tool call ${id} has no result`);
}

function estimate(messages: ChatMessage[]): number {
  return fitToBudget(messages, { contextTokens: Number.MAX_SAFE_INTEGER, reserveForReply: 0, protectFrom: messages.length, countTokens: quarter })
    .estimatedTokens;
}

describe('token budget', () => {
  it('trims a discussion several times larger than the budget until the request fits under it', () => {
    const { messages, protectFrom } = discussion(40);
    const options = { contextTokens: 8192, reserveForReply: 2048, protectFrom, countTokens: quarter };
    assert.ok(estimate(messages) > 5 * (8192 - 2048), 'the discussion should be several times the budget');

    const result = fitToBudget(messages, options);
    assert.equal(result.fits, true);
    assert.ok(result.estimatedTokens <= 8192 - 2048, `estimated ${result.estimatedTokens}`);
    assert.equal(estimate(result.messages), result.estimatedTokens, 'the estimate is that of the messages returned');
    assert.ok(result.droppedTurns > 0);
    assertPairsConsistent(result.messages);
  });

  it('keeps a long discussion under the budget with o200k counts made ahead', async () => {
    const { messages, protectFrom } = discussion(30, 6000);
    const counted = new PrecountedTokens(async (texts) => texts.map(countTextTokens));
    await counted.prepare(messages);
    const result = fitToBudget(messages, { contextTokens: 8192, reserveForReply: reserveForReplyFor(8192), protectFrom, counted });
    assert.equal(result.fits, true);
    assert.ok(result.estimatedTokens <= 8192 - 2048);
    const recount = fitToBudget(result.messages, { contextTokens: Number.MAX_SAFE_INTEGER, reserveForReply: 0, protectFrom: 0, countTokens: countTextTokens });
    assert.equal(recount.estimatedTokens, result.estimatedTokens);
    assertPairsConsistent(result.messages);
  });

  it('leaves a history that fits as it is', () => {
    const { messages, protectFrom } = discussion(2, 100);
    const result = fitToBudget(messages, { contextTokens: 100_000, reserveForReply: 4096, protectFrom, countTokens: quarter });
    assert.deepEqual(
      { elided: result.elidedToolResults, dropped: result.droppedTurns, fits: result.fits },
      { elided: 0, dropped: 0, fits: true },
    );
    assert.equal(result.messages.length, messages.length);
    result.messages.forEach((message, i) => assert.equal(message, messages[i]));
  });

  it('elides the oldest tool results first, with a stub that names the call and how to get it again, before dropping any turn', () => {
    const { messages, protectFrom } = discussion(10);
    const full = estimate(messages);
    // Room for everything but about two and a half tool results (each stub saves about 970 tokens).
    const result = fitToBudget(messages, { contextTokens: full - 2500 + 10, reserveForReply: 10, protectFrom, countTokens: quarter });

    assert.equal(result.droppedTurns, 0);
    assert.equal(result.elidedToolResults, 3);
    assert.equal(result.messages.length, messages.length);
    const tools = result.messages.map((message, i) => ({ message, original: messages[i] })).filter(({ message }) => message.role === 'tool');
    const elided = tools.map(({ message, original }) => message !== original);
    assert.deepEqual(elided, [true, true, true, false, false, false, false, false, false, false, false]);
    const stub = tools[0].message;
    assert.equal(stub.role === 'tool' && stub.toolCallId, 'call_0');
    assert.equal(
      stub.content,
      '[elided to fit the context window: the result of read_file {"path":"src/module0.ts"} — call the tool again if you need it]',
    );
  });

  it('drops the oldest whole turns only once every older tool result is elided', () => {
    const { messages, protectFrom } = discussion(10);
    const result = fitToBudget(messages, { contextTokens: 1500, reserveForReply: 0, protectFrom, countTokens: quarter });
    assert.ok(result.droppedTurns > 0);
    assert.equal(result.elidedToolResults, 10);
    // The first kept message after the system prompt starts a turn, and it is a later one than the first.
    assert.equal(result.messages[1].role, 'user');
    assert.match(result.messages[1].content, new RegExp(`^Question ${result.droppedTurns}:`));
    assertPairsConsistent(result.messages);
  });

  it('never touches the system prompt, the latest user message or the current turn, even when they alone are over budget', () => {
    const { messages, protectFrom } = discussion(5);
    const result = fitToBudget(messages, { contextTokens: 500, reserveForReply: 100, protectFrom, countTokens: quarter });
    assert.equal(result.fits, false);
    assert.equal(result.droppedTurns, 5);
    assert.deepEqual(result.messages, [messages[0], ...messages.slice(protectFrom)]);
    result.messages.slice(1).forEach((message, i) => assert.equal(message, messages[protectFrom + i]));
    assert.equal(result.messages[0], messages[0]);
  });

  it('keeps every tool call with its result at any budget', () => {
    const { messages, protectFrom } = discussion(12, 1500);
    // Parallel calls in one turn, too.
    messages.splice(
      5,
      0,
      {
        role: 'assistant',
        content: 'Two more.',
        toolCalls: [
          { id: 'call_p1', name: 'search', arguments: '{"query":"a"}' },
          { id: 'call_p2', name: 'list_dir', arguments: '{"path":"."}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_p1', content: 'z'.repeat(900) },
      { role: 'tool', toolCallId: 'call_p2', content: 'w'.repeat(900) },
    );
    const shifted = protectFrom + 3;
    const full = estimate(messages);
    for (let contextTokens = 200; contextTokens <= full + 200; contextTokens += 97) {
      const result = fitToBudget(messages, { contextTokens, reserveForReply: 0, protectFrom: shifted, countTokens: quarter });
      assertPairsConsistent(result.messages);
      assert.equal(result.fits, result.estimatedTokens <= contextTokens);
      assert.equal(estimate(result.messages), result.estimatedTokens);
    }
  });

  it('removes tool calls without results and results without calls from the older history', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'lost', name: 'read_file', arguments: '{"path":"a"}' }] },
      { role: 'tool', toolCallId: 'stray', content: 'a result nobody asked for' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'lost2', name: 'read_file', arguments: '{"path":"b"}' }] },
      { role: 'user', content: 'second question ' + 'q'.repeat(400) },
    ];
    const result = fitToBudget(messages, { contextTokens: 10_000, reserveForReply: 0, protectFrom: 5, countTokens: quarter });
    assertPairsConsistent(result.messages);
    assert.deepEqual(
      result.messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal(result.messages[2].content, 'Looking.');
    assert.equal(estimate(result.messages), result.estimatedTokens);
  });

  it('counts each of 5,000 messages once, and none again when the same history is budgeted again', () => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'sys' }];
    for (let i = 0; i < 1_249; i++) {
      messages.push(
        { role: 'user', content: `q${i}` },
        { role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'read_file', arguments: `{"path":"f${i}"}` }] },
        { role: 'tool', toolCallId: `c${i}`, content: 'r'.repeat(400) },
        { role: 'assistant', content: `a${i}` },
      );
    }
    messages.push({ role: 'user', content: 'one more' }, { role: 'assistant', content: 'answer' }, { role: 'user', content: 'latest' });
    assert.equal(messages.length, 5_000);
    const protectFrom = messages.length - 1;
    const tokenizer = countingTokenizer();
    const options = { contextTokens: 20_000, reserveForReply: 2_000, protectFrom, countTokens: tokenizer.count };

    const first = fitToBudget(messages, options);
    assert.ok(first.fits);
    assert.ok(first.elidedToolResults > 0 && first.droppedTurns > 0);
    assert.equal(tokenizer.calls(), messages.length + first.elidedToolResults, 'one count per message and per stub');
    assertPairsConsistent(first.messages);

    const before = tokenizer.calls();
    const second = fitToBudget(messages, options);
    assert.equal(tokenizer.calls(), before);
    assert.deepEqual(second.messages, first.messages);
  });

  it('takes extraTokens (tool definitions) out of the room for messages', () => {
    const { messages, protectFrom } = discussion(6, 800);
    const without = fitToBudget(messages, { contextTokens: 3000, reserveForReply: 500, protectFrom, countTokens: quarter });
    const withTools = fitToBudget(messages, { contextTokens: 3000, reserveForReply: 500, protectFrom, countTokens: quarter, extraTokens: 1000 });
    assert.ok(withTools.estimatedTokens <= 2500);
    assert.ok(withTools.messages.length < without.messages.length || withTools.elidedToolResults > without.elidedToolResults);
  });

  it('sends a request whose bytes fit as it is, with an estimate no lower than the tokenizer would give', () => {
    const { messages, protectFrom } = discussion(3, 500);
    const tools = [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object' } }];
    const glance = fitToBudget(messages, { contextTokens: 128_000, reserveForReply: 4096, protectFrom, tools });
    const counted = fitToBudget(messages, { contextTokens: 128_000, reserveForReply: 4096, protectFrom, tools, countTokens: countTextTokens });
    assert.deepEqual(glance.messages, messages);
    assert.equal(glance.fits, true);
    assert.ok(glance.estimatedTokens >= counted.estimatedTokens, `${glance.estimatedTokens} < ${counted.estimatedTokens}`);
  });

  it('budgets by counts made ahead once the bytes no longer fit, and trims nothing that the tokens let through', async () => {
    // 60,000 bytes of text that o200k packs into far fewer tokens.
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You discuss this repository.' },
      { role: 'user', content: 'Summarize this.' },
      { role: 'assistant', content: 'the same words again and again '.repeat(2000) },
      { role: 'user', content: 'And now?' },
    ];
    const counted = new PrecountedTokens(async (texts) => texts.map(countTextTokens));
    await counted.prepare(messages);
    const result = fitToBudget(messages, { contextTokens: 40_000, reserveForReply: 4096, protectFrom: 3, counted });
    assert.ok(utf8Bytes(messages[2].content) > 40_000);
    assert.equal(result.droppedTurns, 0);
    assert.deepEqual(result.messages, messages);
    assert.equal(result.estimatedTokens, fitToBudget(messages, { contextTokens: 40_000, reserveForReply: 4096, protectFrom: 3, countTokens: countTextTokens }).estimatedTokens);
  });

  it('fits a request by the counts made ahead of it without measuring its tools again, whether or not its bytes would fit', async () => {
    let serialized = 0;
    const tool = { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } };
    const tools = [{ ...tool, toJSON: () => (serialized++, tool) }];
    const messages: ChatMessage[] = [
      { role: 'system', content: 'the same words again and again '.repeat(400) },
      { role: 'user', content: 'And now?' },
    ];
    const counted = new PrecountedTokens(async (texts) => texts.map(countTextTokens));
    await counted.prepare(messages, tools);
    // 6,000 tokens leave less room than the request's bytes, more than its tokens.
    assert.ok(utf8Bytes(messages[0].content) > 6_000 - 500);
    for (const contextTokens of [6_000, 100_000]) {
      serialized = 0;
      const result = fitToBudget(messages, { contextTokens, reserveForReply: 500, protectFrom: 1, tools, counted });
      assert.equal(result.fits, true);
      assert.equal(serialized, 0, `${contextTokens} tokens: the tools were serialized ${serialized} times`);
    }
  });

  it('counts each message and tool set ahead once, however often it is prepared', async () => {
    const counted: string[] = [];
    const precounted = new PrecountedTokens(async (texts) => (counted.push(...texts), texts.map((text) => text.length)));
    const tools = [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } }];
    const first: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q1' },
    ];
    await precounted.prepare(first, tools);
    const next: ChatMessage[] = [...first, { role: 'assistant', content: 'a1' }];
    await precounted.prepare(next, tools);
    assert.deepEqual(counted, ['sys', 'q1', JSON.stringify(tools[0]), 'a1']);
  });

  it('counts a system prompt and a tool set once for every discussion that starts with the same ones, though each has its own objects', async () => {
    const counted: string[] = [];
    const precounted = new PrecountedTokens(async (texts) => (counted.push(...texts), texts.map((text) => text.length)));
    const toolsOf = () => [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } }];
    await precounted.prepare([{ role: 'system', content: 'instructions and repo map' }, { role: 'user', content: 'q1' }], toolsOf());
    const another: ChatMessage[] = [{ role: 'system', content: 'instructions and repo map' }, { role: 'user', content: 'q2' }];
    const theirTools = toolsOf();
    assert.equal(precounted.message(another[0]), precounted.message({ role: 'system', content: 'instructions and repo map' }));
    assert.notEqual(precounted.tools(theirTools), undefined, 'the same tools in a new array are known');
    await precounted.prepare(another, theirTools);
    assert.deepEqual(counted, ['instructions and repo map', 'q1', JSON.stringify(toolsOf()[0]), 'q2']);
  });

  it('waits for the counts already asked for and counts nothing itself, so a request the count ahead of it covers asks for no count of its own', async () => {
    const counted: string[] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const precounted = new PrecountedTokens(async (texts) => (counted.push(...texts), await gate, texts.map((text) => text.length)));
    const tools = [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } }];
    const system: ChatMessage = { role: 'system', content: 'instructions and repo map' };
    const ahead = precounted.prepare([system], tools);
    let settled = false;
    // Read the moment the wait ends, before the prepare that counted has settled.
    const known = precounted
      .countsUnderWay([system, { role: 'user', content: 'the question' }], tools)
      .then(() => ((settled = true), { system: precounted.message(system), tools: precounted.tools(tools) }));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'settled before the count under way came in');
    release();
    const seen = await known;
    assert.notEqual(seen.system, undefined, 'the system prompt is known when the wait ends');
    assert.notEqual(seen.tools, undefined, 'the tool set is known when the wait ends');
    await ahead;
    assert.deepEqual(counted, ['instructions and repo map', JSON.stringify(tools[0])], 'the question was not counted');
  });

  it('does not count a tool set again while its count is under way', async () => {
    const counted: string[] = [];
    const precounted = new PrecountedTokens(async (texts) => (counted.push(...texts), texts.map((text) => text.length)));
    const tools = [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } }];
    await Promise.all([precounted.prepare([{ role: 'user', content: 'q1' }], tools), precounted.prepare([{ role: 'user', content: 'q2' }], tools)]);
    assert.deepEqual(counted, ['q1', JSON.stringify(tools[0]), 'q2']);
    assert.notEqual(precounted.tools(tools), undefined);
  });

  it('keeps system prompts by text for the most recent few only', async () => {
    const precounted = new PrecountedTokens(async (texts) => texts.map((text) => text.length));
    for (let i = 0; i < 20; i++) await precounted.prepare([{ role: 'system', content: `prompt ${i}` }]);
    assert.equal(precounted.message({ role: 'system', content: 'prompt 0' }), undefined);
    assert.notEqual(precounted.message({ role: 'system', content: 'prompt 19' }), undefined);
  });

  it('keeps the system prompt a folder keeps using, though more than the kept number of others were counted since', async () => {
    const precounted = new PrecountedTokens(async (texts) => texts.map((text) => text.length));
    await precounted.prepare([{ role: 'system', content: 'the folder in use' }]);
    for (let i = 0; i < 20; i++) {
      await precounted.prepare([{ role: 'system', content: `prompt ${i}` }]);
      assert.notEqual(precounted.message({ role: 'system', content: 'the folder in use' }), undefined, `after ${i + 1} others`);
    }
  });

  it('bounds the tools by their count when counted and by their bytes when not, never below what fitToBudget counts', async () => {
    const tools = [{ name: 'read_file', description: 'Read a file '.repeat(40), parameters: { type: 'object', properties: {} } }];
    const messages: ChatMessage[] = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'q' }];
    const precounted = new PrecountedTokens(async (texts) => texts.map(countTextTokens));
    const withoutTools = countedBound(messages, undefined, precounted);
    const uncounted = countedBound(messages, tools, precounted);
    assert.ok(uncounted - withoutTools >= utf8Bytes(JSON.stringify(tools[0])), 'tools not counted yet weigh their bytes');
    await precounted.prepare(messages, tools);
    const counted = countedBound(messages, tools, precounted);
    const exact = fitToBudget(messages, { contextTokens: 1_000_000, reserveForReply: 0, protectFrom: 1, tools, countTokens: countTextTokens }).estimatedTokens;
    assert.ok(counted >= exact && counted < uncounted, `${exact} <= ${counted} < ${uncounted}`);
  });

  it('bounds a request by the counts it holds and the bytes of the rest, so a new question after a counted history fits without a count', async () => {
    const history: ChatMessage[] = [
      { role: 'system', content: 'You discuss this repository.' },
      { role: 'user', content: 'Summarize this.' },
      { role: 'assistant', content: 'the same words again and again '.repeat(300) },
    ];
    const precounted = new PrecountedTokens(async (texts) => texts.map(countTextTokens));
    await precounted.prepare(history);
    const request: ChatMessage[] = [...history, { role: 'user', content: 'And now, in short?' }];
    const bound = countedBound(request, undefined, precounted);
    const exact = fitToBudget(request, { contextTokens: 1_000_000, reserveForReply: 0, protectFrom: 3, countTokens: countTextTokens }).estimatedTokens;
    assert.ok(bound >= exact, `never fewer than the tokens: ${bound} < ${exact}`);
    assert.ok(bound < bytesBound(request) / 2, `far below the bytes of the whole: ${bound} against ${bytesBound(request)}`);
  });

  it('has a prepare made while a count is out wait for that count instead of counting the same messages again', async () => {
    const counted: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const precounted = new PrecountedTokens(async (texts) => {
      counted.push(...texts);
      await held;
      return texts.map((text) => text.length);
    });
    const history: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a long reply' },
    ];
    const ahead = precounted.prepare(history);
    const request = precounted.prepare([...history, { role: 'user', content: 'q2' }]);
    let requestDone = false;
    void request.then(() => (requestDone = true));
    await Promise.resolve();
    assert.equal(requestDone, false, 'the request waits for the count already out');
    release();
    await Promise.all([ahead, request]);
    assert.deepEqual(counted, ['sys', 'q1', 'a long reply', 'q2'], 'each message counted once');
    assert.notEqual(precounted.message(history[2]), undefined, 'the reply is counted for the request');
  });

  it('budgets a message the counts made ahead do not hold by its bytes, never fewer than its tokens', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'the same words again and again '.repeat(100) },
    ];
    const counted = new PrecountedTokens(async () => []);
    const result = fitToBudget(messages, { contextTokens: 100, reserveForReply: 0, protectFrom: 1, counted });
    assert.ok(result.estimatedTokens >= utf8Bytes(messages[1].content));
  });

  it('repairs orphaned tool calls and results even when the request fits at a glance', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'lost', name: 'read_file', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'stray', content: 'no call' },
      { role: 'user', content: 'q2' },
    ];
    const result = fitToBudget(messages, { contextTokens: 128_000, reserveForReply: 4096, protectFrom: 4 });
    assertPairsConsistent(result.messages);
    assert.deepEqual(result.messages.map((m) => m.role), ['system', 'user', 'user']);
  });

  it('does not change the array or the messages it is given', () => {
    const { messages, protectFrom } = discussion(8);
    const snapshot = structuredClone(messages);
    const identities = messages.slice();
    fitToBudget(messages, { contextTokens: 3000, reserveForReply: 500, protectFrom, countTokens: quarter });
    assert.deepEqual(messages, snapshot);
    messages.forEach((message, i) => assert.equal(message, identities[i]));
  });
});

describe('countToolTokens', () => {
  it('counts tool definitions from their JSON', () => {
    const tools = [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object' } }];
    assert.ok(countToolTokens(tools, countTextTokens) > countTextTokens('read_file Read a file'));
  });
});

describe('contextWindowFor', () => {
  it('knows the windows of well-known model families, however the id is spelled', () => {
    const cases: Array<[string, number]> = [
      ['gpt-4o', 128_000],
      ['gpt-4o-mini-2024-07-18', 128_000],
      ['gpt-4.1-mini', 1_047_576],
      ['gpt-5', 272_000],
      ['gpt-5-chat-latest', 128_000],
      ['o3-mini', 200_000],
      ['o1-mini', 128_000],
      ['llama3.1:8b', 131_072],
      ['meta-llama/Llama-3.3-70B-Instruct', 131_072],
      ['lmstudio-community/meta-llama-3.1-8b-instruct', 131_072],
      ['llama3:8b', 8_192],
      ['qwen2.5-coder:14b', 32_768],
      ['Qwen/Qwen3-8B', 32_768],
      ['qwen3-coder:30b', 262_144],
      ['mistral:7b', 32_768],
      ['mistral-small3.1:24b', 131_072],
      ['gemma3:12b', 131_072],
      ['gemma2:9b', 8_192],
      ['deepseek-r1:7b', 131_072],
      ['deepseek-coder:6.7b', 16_384],
      ['phi4', 16_384],
      ['phi3:mini', 4_096],
      ['phi-3-mini-128k-instruct', 131_072],
      ['gpt-4-32k', 32_768],
    ];
    for (const [id, tokens] of cases) assert.equal(contextWindowFor(id), tokens, id);
  });

  it('falls back to a conservative window for an unknown model, and lets an override win', () => {
    assert.equal(contextWindowFor('my-azure-deployment'), DEFAULT_CONTEXT_TOKENS);
    assert.equal(DEFAULT_CONTEXT_TOKENS, 8_192);
    assert.equal(contextWindowFor('gpt-4o', 16_000), 16_000);
    assert.equal(contextWindowFor('gpt-4o', 0), 128_000);
    assert.equal(contextWindowFor('gpt-4o', Number.NaN), 128_000);
  });

  it('reserves a quarter of a small window for the reply, and at most 4,096 tokens', () => {
    assert.equal(reserveForReplyFor(8_192), 2_048);
    assert.equal(reserveForReplyFor(4_096), 1_024);
    assert.equal(reserveForReplyFor(128_000), 4_096);
  });
});

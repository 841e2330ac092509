import { strict as assert } from 'node:assert';
import type { ChatRequest, ChatResponse } from '../../../server/src/model/types';
import { countToolTokens } from '../../../server/src/model/budget';
import { countTextTokens } from '../../../server/src/model/tokenizer';
import { boundaryAfterTurns } from '../../../server/src/core/compaction';
import { EventLog, harness, makeTempFolder, type Harness } from '../../support/coreHarness';
import { FileStore } from '../../../server/src/store/fileStore';
import * as fs from 'node:fs';

const WINDOW = 3_000;
const TURNS = 60;
/** Turns at which the model records a constraint, and what it records. */
const CONSTRAINTS = new Map([1, 12, 25, 38, 51].map((turn) => [turn, `Constraint from turn ${turn}: keep module m${turn} free of I/O.`]));

/** About 250 tokens of distinct words, so a turn costs what it looks like it costs. */
function filler(turn: number, who: string): string {
  return Array.from({ length: 120 }, (_, i) => `${who}${turn}w${i}`).join(' ');
}

/** Every token a request carries: its messages and its tools. */
function requestTokens(request: ChatRequest): number {
  let total = request.tools ? countToolTokens(request.tools, countTextTokens) : 0;
  for (const m of request.messages) {
    const calls = m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => `${c.name}\n${c.arguments}`).join('\n') : '';
    total += 4 + countTextTokens(`${m.content}\n${calls}`);
  }
  return total;
}

describe('compaction: a discussion ten times the context window', function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(() => h?.cleanup());

  it('summarizes the oldest turns instead of dropping them: every request stays under the window and carries every recorded constraint', async () => {
    h = harness([], { contextTokens: WINDOW });
    const requests: ChatRequest[] = [];
    const summaryRequests: ChatRequest[] = [];
    // The model answers by what it is asked: a summary request (no tools) gets a short note; a turn
    // whose message names a constraint turn records it first; every other turn gets a long answer.
    h.model.complete = async (request, onDelta): Promise<ChatResponse> => {
      requests.push({ ...request, messages: structuredClone(request.messages) });
      if (!request.tools) {
        summaryRequests.push(request);
        const text = `So far: ${summaryRequests.length} summaries of earlier turns about modules.`;
        onDelta(text);
        return { content: text, toolCalls: [], finishReason: 'stop', usage: { promptTokens: 100, completionTokens: 10 } };
      }
      const last = request.messages[request.messages.length - 1];
      const turn = Number(/^turn (\d+)/.exec(last.role === 'user' ? last.content : '')?.[1]);
      if (CONSTRAINTS.has(turn)) {
        return {
          content: '',
          toolCalls: [{ id: `rec${turn}`, name: 'record_decision', arguments: JSON.stringify({ kind: 'constraint', text: CONSTRAINTS.get(turn) }) }],
          finishReason: 'tool_calls',
        };
      }
      const text = filler(turn, 'a');
      onDelta(text);
      return { content: text, toolCalls: [], finishReason: 'stop' };
    };
    const log = new EventLog();
    const { discussionId } = await h.service.start({ folder: h.folder });
    h.service.subscribe(discussionId, 'test', log.sink);
    for (let turn = 0; turn < TURNS; turn++) {
      h.service.send(discussionId, `turn ${turn} ${filler(turn, 'u')}`);
      await log.turnsComplete(turn + 1);
    }
    const discussion = h.service.find(discussionId)!;
    const historyTokens = discussion.history.reduce((sum, m) => sum + countTextTokens(m.content), 0);
    assert.ok(historyTokens > 10 * WINDOW, `the discussion is ten times the window (${historyTokens} tokens)`);
    assert.equal(log.of('error').length, 0);

    assert.ok(summaryRequests.length > 0, 'the summary request is made');
    for (const [i, request] of requests.entries()) {
      assert.ok(requestTokens(request) < WINDOW, `request ${i} carries ${requestTokens(request)} tokens, within ${WINDOW}`);
    }
    // Every turn request made after a constraint was recorded carries it, in the system message.
    const recordedAt = new Map<string, number>();
    for (const [i, request] of requests.entries()) {
      if (!request.tools) continue;
      const system = String(request.messages[0].content);
      for (const text of CONSTRAINTS.values()) {
        if (system.includes(text) && !recordedAt.has(text)) recordedAt.set(text, i);
        if (recordedAt.has(text)) assert.ok(system.includes(text), `request ${i} still carries "${text}"`);
      }
    }
    assert.equal(recordedAt.size, CONSTRAINTS.size, 'every constraint reached the requests');
    // What replaced the oldest turns is the note, and the summary requests never saw the log.
    const lastTurnRequest = requests.filter((r) => r.tools).at(-1)!;
    assert.match(String(lastTurnRequest.messages[0].content), /## So far \(a summary of the earlier turns[^\n]*\nSo far: \d+ summaries/);
    assert.ok(!lastTurnRequest.messages.some((m) => m.role === 'user' && m.content.startsWith('turn 0 ')), 'the first turn is no longer sent');
    for (const request of summaryRequests) assert.doesNotMatch(String(request.messages[0].content), /Decision log/);
    // The saved history keeps everything; the note is saved with the discussion; its cost is reported.
    assert.equal(discussion.history.filter((m) => m.role === 'user').length, TURNS);
    assert.ok(discussion.snapshot().summary!.upTo > 0);
    assert.ok(log.of('usage').some((u) => u.promptTokens >= 100));
  });

  it('the kept part starts at a user message, so a tool call never loses its result', () => {
    const history = [
      { role: 'user' as const, content: 'a' },
      { role: 'assistant' as const, content: '', toolCalls: [{ id: 'c', name: 'read_file', arguments: '{}' }] },
      { role: 'tool' as const, toolCallId: 'c', content: 'x' },
      { role: 'assistant' as const, content: 'done' },
      { role: 'user' as const, content: 'b' },
      { role: 'assistant' as const, content: 'ok' },
    ];
    assert.equal(boundaryAfterTurns(history, 0, 1), 4);
    assert.equal(boundaryAfterTurns(history, 0, 5), 6);
  });

  it('tells clients where the summary ends (history_summarized at the first kept turn), and a resumed discussion replays it', async () => {
    const storage = makeTempFolder('rd-store-');
    const folder = makeTempFolder();
    h = harness([], { contextTokens: WINDOW, store: await FileStore.open(storage), folder });
    const answer = async (request: ChatRequest, onDelta: (text: string) => void): Promise<ChatResponse> => {
      const text = request.tools ? filler(request.messages.length, 'a') : 'So far: the user asked about modules.';
      onDelta(text);
      return { content: text, toolCalls: [], finishReason: 'stop' };
    };
    h.model.complete = answer;
    const log = new EventLog();
    const { discussionId } = await h.service.start({ folder });
    h.service.subscribe(discussionId, 'test', log.sink);
    for (let turn = 0; turn < 12; turn++) {
      h.service.send(discussionId, `turn ${turn} ${filler(turn, 'u')}`);
      await log.turnsComplete(turn + 1);
    }
    const discussion = h.service.find(discussionId)!;
    const { upTo, note } = discussion.snapshot().summary!;
    const latest = log.of('history_summarized').at(-1)!;
    assert.equal(latest.note, note);
    const firstKept = log.of('user_message').find((e) => e.seq === latest.firstKeptSeq)!;
    assert.ok(firstKept, 'firstKeptSeq names a user_message');
    assert.ok(String(discussion.history[upTo].content).startsWith(firstKept.text), 'the one that opened the first turn still sent whole');
    await h.service.dispose();

    const again = harness([], { contextTokens: WINDOW, store: await FileStore.open(storage), folder });
    again.model.complete = answer;
    await again.service.start({ folder, resumeId: discussionId });
    const replay = new EventLog();
    again.service.subscribe(discussionId, 'test', replay.sink);
    const replayed = replay.of('history_summarized');
    assert.equal(replayed.length, 1, 'only the newest note is replayed');
    assert.deepEqual({ note: replayed[0].note, seq: replayed[0].firstKeptSeq }, { note, seq: latest.firstKeptSeq });
    await again.service.dispose();
    fs.rmSync(storage, { recursive: true, force: true });
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { INTERRUPTED_REPLY_NOTE } from '../../../server/src/core/turn';
import { DiscussError } from '../../../server/src/core/errors';
import {
  DELTA_COALESCE_MAX_CHARS,
  DISTILL_WINDOW_TURNS,
  EVENT_BUFFER_MAX,
  IDLE_TTL_MS,
  MAX_MODEL_CALLS_PER_REPLY,
  MAX_OPEN_DISCUSSIONS,
  MESSAGE_MAX_BYTES,
  TRANSCRIPT_MAX_TURNS,
} from '../../../server/src/core/limits';
import { EventStream } from '../../../server/src/core/eventStream';
import { memoryStore } from '../../../server/src/store/memoryStore';
import type { DiscussionSnapshot } from '../../../server/src/core/discussion';
import { countTextTokens } from '../../../server/src/model/tokenizer';
import { sharedModelThread } from '../../../server/src/model/threaded/threadedModel';
import type { DiscussionEvent } from '../../../shared/protocol';
import { EventLog, harness, type Harness } from '../../support/coreHarness';
import { Gate } from '../../support/scriptedModel';

async function rejects(promise: Promise<unknown> | (() => unknown), phrase: string | RegExp): Promise<DiscussError> {
  let error: unknown;
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    error = err;
  }
  assert.ok(error instanceof DiscussError, `expected a DiscussError, got ${String(error)}`);
  if (typeof phrase === 'string') assert.ok(error.message.includes(phrase), `"${error.message}" lacks "${phrase}"`);
  else assert.match(error.message, phrase);
  return error;
}

describe('a discussion', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.service.dispose();
    h?.cleanup();
  });

  async function open(): Promise<{ id: string; log: EventLog }> {
    const { discussionId } = await h.service.start({ folder: h.folder });
    const log = new EventLog();
    h.service.subscribe(discussionId, 'test', log.sink, 0);
    return { id: discussionId, log };
  }

  describe('starting', () => {
    it('opens any existing directory, git or not, and answers its real path', async () => {
      h = harness();
      const linked = h.folder + '-link';
      fs.symlinkSync(h.folder, linked);
      try {
        const result = await h.service.start({ folder: linked });
        assert.match(result.discussionId, /^disc-[0-9a-f]{32}$/);
        assert.equal(result.repo, h.folder);
        assert.equal(result.resumed, false);
        assert.equal(result.persistent, false);
        assert.equal(result.repoSummary, 'a small test folder');
      } finally {
        fs.unlinkSync(linked);
      }
    });

    it('accepts the folder as a file: URI', async () => {
      h = harness();
      const result = await h.service.start({ folder: pathToFileURL(h.folder).href });
      assert.equal(result.repo, h.folder);
    });

    it('refuses a folder that does not exist, a file, and a relative path, with clear errors', async () => {
      h = harness();
      await rejects(h.service.start({ folder: path.join(h.folder, 'missing') }), 'does not exist');
      fs.writeFileSync(path.join(h.folder, 'a.txt'), 'x');
      await rejects(h.service.start({ folder: path.join(h.folder, 'a.txt') }), 'not a folder');
      await rejects(h.service.start({ folder: 'relative/dir' }), 'absolute path');
      await rejects(h.service.start({} as never), 'Say which folder');
      assert.equal(h.service.openCount, 0);
    });

    it(`caps open discussions at ${MAX_OPEN_DISCUSSIONS}`, async () => {
      h = harness();
      for (let i = 0; i < MAX_OPEN_DISCUSSIONS; i++) await h.service.start({ folder: h.folder });
      await rejects(h.service.start({ folder: h.folder }), 'already open');
      const { discussions } = await h.service.list();
      await h.service.close(discussions[0].discussionId);
      await h.service.start({ folder: h.folder });
    });

    it('cannot exceed the cap with concurrent starts, because the slot is reserved before any async work', async () => {
      const gate = new Gate();
      h = harness([], { bindGate: gate.opened });
      const starts = Array.from({ length: MAX_OPEN_DISCUSSIONS + 4 }, () =>
        h.service.start({ folder: h.folder }).then(
          () => 'ok',
          (err: Error) => err.message,
        ),
      );
      gate.open();
      const outcomes = await Promise.all(starts);
      assert.equal(outcomes.filter((o) => o === 'ok').length, MAX_OPEN_DISCUSSIONS);
      assert.ok(outcomes.filter((o) => o !== 'ok').every((o) => o.includes('already open')));
      assert.equal(h.service.openCount, MAX_OPEN_DISCUSSIONS);
    });

    it('gives the slot back when a start fails part way', async () => {
      h = harness();
      for (let i = 0; i < MAX_OPEN_DISCUSSIONS + 2; i++) {
        await rejects(h.service.start({ folder: path.join(h.folder, 'nope') }), 'does not exist');
      }
      await h.service.start({ folder: h.folder });
    });

    it('closes discussions idle for an hour on the next start', async () => {
      h = harness();
      const { discussionId: old } = await h.service.start({ folder: h.folder });
      h.clock.advance(IDLE_TTL_MS + 1);
      const { discussionId: fresh } = await h.service.start({ folder: h.folder });
      const { discussions } = await h.service.list();
      assert.deepEqual(discussions.map((d) => d.discussionId), [fresh]);
      await rejects(() => h.service.send(old, 'hello?'), old);
    });

    it('keeps a discussion used within the hour', async () => {
      h = harness();
      const { id, log } = await open();
      h.clock.advance(IDLE_TTL_MS - 1000);
      h.service.send(id, 'still here');
      await log.turnsComplete(1);
      h.clock.advance(IDLE_TTL_MS - 1000);
      await h.service.reapIdle();
      assert.ok(h.service.find(id));
    });
  });

  describe('sending', () => {
    it('streams a reply: user_message, deltas, assistant_message, turn_complete, in seq order from 0', async () => {
      h = harness([{ text: 'Hello there', deltas: ['Hel', 'lo ', 'there'], separateReads: true }]);
      const { id, log } = await open();
      const { seq } = h.service.send(id, 'hi');
      assert.equal(seq, 0);
      await log.turnsComplete(1);
      assert.deepEqual(log.types(), ['user_message', 'assistant_delta', 'assistant_delta', 'assistant_delta', 'assistant_message', 'turn_complete']);
      assert.deepEqual(log.events.map((e) => e.seq), [0, 1, 2, 3, 4, 5]);
      assert.equal(log.of('assistant_message')[0].text, 'Hello there');
      assert.ok(log.events.every((e) => e.discussionId === id && e.ts === h.clock.now()));
    });

    it('emits the user message before any delta, and answers its seq', async () => {
      h = harness([{ text: 'a', deltas: ['a'] }, { text: 'b', deltas: ['b'] }]);
      const { id, log } = await open();
      h.service.send(id, 'one');
      await log.turnsComplete(1);
      const { seq } = h.service.send(id, 'two');
      await log.turnsComplete(2);
      const first = log.events.find((e) => e.seq === seq)!;
      assert.equal(first.type, 'user_message');
      assert.equal((first as { text: string }).text, 'two');
      assert.equal(log.events[seq + 1].type, 'assistant_delta');
    });

    it('refuses an empty message and records nothing', async () => {
      h = harness();
      const { id, log } = await open();
      await rejects(() => h.service.send(id, '   '), 'empty');
      assert.equal(log.events.length, 0);
      assert.equal(h.model.calls, 0);
    });

    it(`refuses a message over ${MESSAGE_MAX_BYTES} bytes before recording anything`, async () => {
      h = harness();
      const { id, log } = await open();
      await rejects(() => h.service.send(id, 'é'.repeat(MESSAGE_MAX_BYTES / 2 + 1)), 'the limit is');
      assert.equal(log.events.length, 0);
      assert.equal(h.model.calls, 0);
      assert.deepEqual(h.service.find(id)!.snapshot().transcript, []);
      h.service.send(id, 'x'.repeat(MESSAGE_MAX_BYTES));
      await log.turnsComplete(1);
    });

    it('runs one turn at a time: a second send and a promote are refused while a turn runs, not queued', async () => {
      const gate = new Gate();
      h = harness([{ block: gate, then: { text: 'done' } }]);
      const { id, log } = await open();
      h.service.send(id, 'first');
      await h.model.waitForCalls(1);
      await rejects(() => h.service.send(id, 'second'), 'still answering');
      await rejects(h.service.promote(id), 'still answering');
      gate.open();
      await log.turnsComplete(1);
      assert.equal(log.of('user_message').length, 1);
      assert.equal(h.model.calls, 1);
      h.service.send(id, 'second');
      await log.turnsComplete(2);
    });

    it('a refused send leaves no unanswered question in the transcript', async () => {
      const gate = new Gate();
      h = harness([{ block: gate, then: { text: 'answer' } }]);
      const { id, log } = await open();
      h.service.send(id, 'question');
      await h.model.waitForCalls(1);
      await rejects(() => h.service.send(id, 'stranded'), 'still answering');
      gate.open();
      await log.turnsComplete(1);
      const transcript = h.service.find(id)!.snapshot().transcript;
      assert.deepEqual(transcript.map((t) => t.text), ['question', 'answer']);
    });

    it('cancel aborts the model request and still ends the turn, leaving the discussion usable', async () => {
      const gate = new Gate();
      h = harness([{ block: gate, deltasBefore: ['partial '] }, { text: 'next answer' }]);
      const { id, log } = await open();
      h.service.send(id, 'long question');
      await h.model.waitForCalls(1);
      const aborted = h.model.waitForAbort();
      h.service.cancel(id);
      await aborted;
      await log.turnsComplete(1);
      assert.equal(h.model.aborted, 1);
      assert.equal(log.of('error').length, 0, 'a cancel is not an error');
      assert.equal(log.of('assistant_message')[0].text, 'partial');
      h.service.send(id, 'next');
      await log.turnsComplete(2);
      const last = h.model.requests[1].messages;
      assert.deepEqual(last.slice(-3).map((m) => m.role), ['user', 'assistant', 'user']);
      // The model is told its earlier answer stopped part-way, not left to take it as finished.
      assert.equal(last[last.length - 2].content, `partial \n\n${INTERRUPTED_REPLY_NOTE}`);
    });

    it('close aborts an in-flight model request and the discussion is gone', async () => {
      const gate = new Gate();
      h = harness([{ block: gate }]);
      const { id } = await open();
      h.service.send(id, 'question');
      await h.model.waitForCalls(1);
      await h.service.close(id);
      assert.equal(h.model.aborted, 1);
      await rejects(() => h.service.send(id, 'again'), id);
      assert.equal(h.service.openCount, 0);
    });

    it('a subscriber watching a turn that a close cuts short still receives its turn_complete', async () => {
      const gate = new Gate();
      h = harness([{ block: gate, deltasBefore: ['part'] }]);
      const slow = new EventLog();
      const { discussionId: id } = await h.service.start({ folder: h.folder });
      // A subscriber whose deliveries lag: everything is still queued when the close lands.
      const queued: Array<() => void> = [];
      h.service.subscribe(id, 'slow', {
        deliver: (event) =>
          new Promise<void>((resolve) =>
            queued.push(() => {
              slow.sink.deliver(event);
              resolve();
            }),
          ),
      });
      h.service.send(id, 'question');
      await h.model.waitForCalls(1);
      await h.service.close(id);
      while (queued.length) {
        queued.shift()!();
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(slow.types().pop(), 'turn_complete');
    });

    it('a close racing a dispatching send never reaches the model', async () => {
      h = harness();
      const { id } = await open();
      h.service.send(id, 'question');
      await h.service.close(id);
      assert.equal(h.model.calls, 0);
    });

    it('a close between a tool call and the next model call stops the turn there', async () => {
      h = harness([{ text: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }] }], { files: { 'a.txt': 'A' } });
      const { id } = await open();
      const discussion = h.service.find(id)!;
      const closing = new Promise<void>((resolve) =>
        discussion.stream.onEvent((e) => {
          if (e.type === 'tool_result') void h.service.close(id).then(resolve);
        }),
      );
      h.service.send(id, 'read it');
      await closing;
      assert.equal(h.model.calls, 1);
    });

    it('an error from the model ends the turn with error then turn_complete, and the next message is accepted', async () => {
      h = harness([{ fail: new Error('The endpoint rejected the API key (401). Set a valid key.') }, { text: 'fine now' }]);
      const { id, log } = await open();
      h.service.send(id, 'hello');
      await log.turnsComplete(1);
      assert.deepEqual(log.types().slice(-2), ['error', 'turn_complete']);
      assert.match(log.of('error')[0].message, /Set a valid key/);
      h.service.send(id, 'again');
      await log.turnsComplete(2);
      assert.equal(log.of('assistant_message')[0].text, 'fine now');
    });

    it('asks its toolbox for a ready search thread when a message is sent, not when the discussion starts', async () => {
      h = harness([{ text: 'ok' }]);
      const { id, log } = await open();
      assert.equal(h.toolbox.warmed, 0);
      h.service.send(id, 'go');
      assert.equal(h.toolbox.warmed, 1);
      await log.turnsComplete(1);
    });

    it('joins the deltas that arrive in one tick into one event, sent before anything that follows', async () => {
      h = harness([
        {
          text: '',
          reasoning: ['Think ', 'first.'],
          deltas: ['Read ', 'it'],
          toolCalls: [{ name: 'list_dir', arguments: '{}' }],
        },
        { text: 'Done.', deltas: ['Do', 'ne.'] },
      ]);
      const { id, log } = await open();
      h.service.send(id, 'go');
      await log.turnsComplete(1);
      assert.deepEqual(
        log.events.map((e) => [e.type, 'text' in e ? e.text : undefined]),
        [
          ['user_message', 'go'],
          ['reasoning_delta', 'Think first.'],
          ['assistant_delta', 'Read it'],
          ['tool_call', undefined],
          ['tool_result', undefined],
          ['assistant_delta', '\n\nDone.'],
          ['assistant_message', 'Read it\n\nDone.'],
          ['turn_complete', undefined],
        ],
      );
      assert.deepEqual(log.events.map((e) => e.seq), [0, 1, 2, 3, 4, 5, 6, 7]);
    });

    it('keeps deltas that arrive in separate ticks as separate events, so text shows as it comes', async () => {
      h = harness([{ text: 'abc', deltas: ['a', 'b', 'c'], separateReads: true }]);
      const { id, log } = await open();
      h.service.send(id, 'go');
      await log.turnsComplete(1);
      assert.deepEqual(log.of('assistant_delta').map((e) => e.text), ['a', 'b', 'c']);
    });

    it('caps one joined event at DELTA_COALESCE_MAX_CHARS, so a flood never makes one huge event', async () => {
      const piece = 'x'.repeat(1000);
      const deltas = Array.from({ length: 40 }, () => piece);
      h = harness([{ text: deltas.join(''), deltas }]);
      const { id, log } = await open();
      h.service.send(id, 'go');
      await log.turnsComplete(1);
      const texts = log.of('assistant_delta').map((e) => e.text);
      assert.ok(texts.length >= 3, `${texts.length} events`);
      assert.ok(texts.every((t) => t.length <= DELTA_COALESCE_MAX_CHARS + piece.length));
      assert.equal(texts.join(''), deltas.join(''));
    });

    it('shows reasoning as reasoning_delta and keeps it out of the answer, the history and the transcript', async () => {
      h = harness([{ text: 'Use a cache.', reasoning: ['The user wants ', 'speed.'] }]);
      const { id, log } = await open();
      h.service.send(id, 'faster?');
      await log.turnsComplete(1);
      assert.equal(log.of('reasoning_delta').map((e) => e.text).join(''), 'The user wants speed.');
      assert.equal(log.of('assistant_message')[0].text, 'Use a cache.');
      const snapshot = h.service.find(id)!.snapshot();
      assert.ok(!JSON.stringify(snapshot.history).includes('The user wants'));
      assert.ok(!JSON.stringify(snapshot.transcript).includes('The user wants'));
    });

    it('takes streamed text the model retracts as reasoning out of the answer, the history and the transcript', async () => {
      h = harness([
        { text: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }] },
        { text: 'Use a cache.', retracted: ['The user wants ', 'speed.\n'], reasoning: ['The user wants speed.'] },
      ], { files: { 'a.txt': 'A' } });
      const { id, log } = await open();
      h.service.send(id, 'faster?');
      await log.turnsComplete(1);
      assert.equal(log.of('reasoning_delta').map((e) => e.text).join(''), 'The user wants speed.');
      assert.equal(log.of('assistant_message')[0].text, 'Use a cache.');
      const snapshot = h.service.find(id)!.snapshot();
      assert.ok(!JSON.stringify(snapshot.history).includes('The user wants'));
      assert.ok(!JSON.stringify(snapshot.transcript).includes('The user wants'));
    });

    it('reports one usage event per turn, summed over its model calls, only when the endpoint reports usage', async () => {
      h = harness(
        [
          { text: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }], usage: { promptTokens: 100, completionTokens: 10 } },
          { text: 'A.', usage: { promptTokens: 150, completionTokens: 5 } },
          { text: 'no usage here' },
        ],
        { files: { 'a.txt': 'A' } },
      );
      const { id, log } = await open();
      h.service.send(id, 'read a');
      await log.turnsComplete(1);
      assert.deepEqual(log.of('usage').map(({ promptTokens, completionTokens }) => ({ promptTokens, completionTokens })), [
        { promptTokens: 250, completionTokens: 15 },
      ]);
      assert.equal(log.types().indexOf('usage'), log.types().indexOf('turn_complete') - 1);
      h.service.send(id, 'again');
      await log.turnsComplete(2);
      assert.equal(log.of('usage').length, 1);
    });

    it(`stops a reply after ${MAX_MODEL_CALLS_PER_REPLY} model calls`, async () => {
      h = harness([], { files: { 'a.txt': 'A' } });
      h.model.push(
        ...Array.from({ length: 30 }, () => ({ text: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }] })),
      );
      const { id, log } = await open();
      h.service.send(id, 'loop forever');
      await log.turnsComplete(1);
      assert.equal(h.model.calls, MAX_MODEL_CALLS_PER_REPLY);
      assert.match(log.of('error')[0].message, new RegExp(`${MAX_MODEL_CALLS_PER_REPLY} calls`));
    });
  });

  describe('tools', () => {
    it('runs read tools and returns their output to the model as the tool result', async () => {
      h = harness(
        [{ text: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}' }] }, { text: 'It says A.' }],
        { files: { 'a.txt': 'A' } },
      );
      const { id, log } = await open();
      h.service.send(id, 'what is in a.txt?');
      await log.turnsComplete(1);
      assert.deepEqual(log.types(), ['user_message', 'tool_call', 'tool_result', 'assistant_delta', 'assistant_message', 'turn_complete']);
      assert.deepEqual(log.of('tool_call')[0], { ...log.of('tool_call')[0], tool: 'read_file', paramsPreview: '{"path":"a.txt"}' });
      assert.equal(log.of('tool_result')[0].ok, true);
      const second = h.model.requests[1].messages;
      assert.deepEqual(second[second.length - 1], { role: 'tool', toolCallId: 'c1', content: 'A' });
      assert.ok(h.model.requests[0].tools!.some((t) => t.name === 'prepare_coding_task'));
    });

    it('answers every mutating or invented tool call with a refusal the model sees, and runs nothing', async () => {
      const names = ['write_file', 'edit_file', 'shell', 'apply_patch', 'rm_rf_everything'];
      h = harness([
        { text: '', toolCalls: names.map((name, i) => ({ id: `m${i}`, name, arguments: '{"path":"x","content":"y"}' })) },
        { text: 'I cannot change files here.' },
      ]);
      const { id, log } = await open();
      h.service.send(id, 'please edit x');
      await log.turnsComplete(1);
      const results = log.of('tool_result');
      assert.equal(results.length, names.length);
      assert.ok(results.every((r) => !r.ok && /read-only/.test(r.preview)));
      const toolMessages = h.model.requests[1].messages.filter((m) => m.role === 'tool');
      assert.equal(toolMessages.length, names.length);
      assert.deepEqual(fs.readdirSync(h.folder), []);
    });

    it('prepare_coding_task records the task and emits task_prepared, starting nothing', async () => {
      h = harness([
        {
          text: '',
          toolCalls: [{ name: 'prepare_coding_task', arguments: JSON.stringify({ intent: 'Add a --json flag to the CLI.', constraints: ['Keep text output the default'] }) }],
        },
        { text: 'The task is ready for your review.' },
      ]);
      const { id, log } = await open();
      h.service.send(id, 'ok, implement it');
      await log.turnsComplete(1);
      const prepared = log.of('task_prepared')[0];
      assert.equal(prepared.intent, 'Add a --json flag to the CLI.');
      assert.deepEqual(prepared.constraints, ['Keep text output the default']);
      assert.deepEqual(h.service.find(id)!.task, { intent: 'Add a --json flag to the CLI.', constraints: ['Keep text output the default'] });
      assert.equal(log.of('tool_result')[0].ok, true);
      assert.deepEqual(fs.readdirSync(h.folder), []);
    });

    it('prepare_coding_task with no intent is answered with what it needs', async () => {
      h = harness([{ text: '', toolCalls: [{ name: 'prepare_coding_task', arguments: '{"constraints":[]}' }] }, { text: 'sorry' }]);
      const { id, log } = await open();
      h.service.send(id, 'go');
      await log.turnsComplete(1);
      assert.equal(log.of('task_prepared').length, 0);
      assert.match(log.of('tool_result')[0].preview, /intent/);
    });

    it('a project policy that denies prepare_coding_task hides and refuses it', async () => {
      h = harness(
        [{ text: '', toolCalls: [{ name: 'prepare_coding_task', arguments: '{"intent":"x","constraints":[]}' }] }, { text: 'ok' }],
        { denied: ['prepare_coding_task'] },
      );
      const { id, log } = await open();
      h.service.send(id, 'go');
      await log.turnsComplete(1);
      assert.ok(!h.model.requests[0].tools!.some((t) => t.name === 'prepare_coding_task'));
      assert.equal(log.of('task_prepared').length, 0);
      assert.equal(log.of('tool_result')[0].ok, false);
    });

    it('a cancelled tool exchange is reconciled so the next request has a result for every call', async () => {
      const gate = new Gate();
      h = harness(
        [
          { text: '', toolCalls: [{ id: 't1', name: 'read_file', arguments: '{"path":"a.txt"}' }, { id: 't2', name: 'read_file', arguments: '{"path":"a.txt"}' }] },
          { block: gate },
          { text: 'fresh' },
        ],
        { files: { 'a.txt': 'A' } },
      );
      const { id, log } = await open();
      h.service.send(id, 'read twice');
      await h.model.waitForCalls(2);
      h.service.cancel(id);
      await log.turnsComplete(1);
      h.service.send(id, 'again');
      await log.turnsComplete(2);
      const messages = h.model.requests[2].messages;
      const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
      const answered = messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
      assert.deepEqual([...calls].sort(), [...answered].sort());
    });
  });

  describe('the context window', () => {
    it('keeps answering a discussion many times larger than the window, each request within it', async () => {
      const big = 'word '.repeat(900);
      h = harness([], { files: { 'big.txt': big }, contextTokens: 4000 });
      const { id, log } = await open();
      for (let turn = 0; turn < 20; turn++) {
        h.model.push({ text: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"big.txt"}' }] }, { text: `answer ${turn}` });
        h.service.send(id, `question ${turn}`);
        await log.turnsComplete(turn + 1);
      }
      assert.equal(log.of('error').length, 0);
      const history = h.service.find(id)!.snapshot().history;
      const total = history.reduce((n, m) => n + countTextTokens(m.content), 0);
      assert.ok(total > 4 * 4000, `the saved history (${total} tokens) is several windows long and keeps everything`);
      for (const request of h.model.requests.slice(-4)) {
        const used = request.messages.reduce((n, m) => n + countTextTokens(m.content) + 4, 0);
        assert.ok(used <= 4000, `a request used ${used} tokens`);
        assert.equal(request.messages[0].role, 'system');
      }
      const last = h.model.requests[h.model.requests.length - 1].messages;
      assert.ok(last.some((m) => m.role === 'user' && m.content === 'question 19'), 'the latest question is never elided');
      assert.equal(last[last.length - 1].role, 'tool', "this turn's tool exchange is kept");
      assert.equal(last[last.length - 1].content, big);
    });

    /** Records the texts sent to the shared model thread to count while `body` runs. */
    async function withCountsRecorded(body: (asked: string[]) => Promise<void>): Promise<void> {
      const counter = sharedModelThread();
      const asked: string[] = [];
      const count = counter.count;
      counter.count = (texts) => (asked.push(...texts), count.call(counter, texts));
      try {
        await body(asked);
      } finally {
        counter.count = count;
      }
    }
    const withLongInstructions = { contextTokens: 4000, instructions: () => [{ path: 'AGENTS.md', text: 'Keep the build green. '.repeat(200) }] };

    it("counts a new discussion's system prompt and tools and readies its search thread when asked ahead of its first question, so that question's request waits for neither", async () => {
      h = harness([{ text: 'ok' }], withLongInstructions);
      const { id, log } = await open();
      await withCountsRecorded(async (asked) => {
        await h.service.prepareAhead(id);
        assert.ok(asked.some((text) => text.includes('Keep the build green.')), 'the system prompt was counted ahead');
        assert.equal(h.toolbox.warmed, 1, 'the search thread and index readied ahead');
        asked.length = 0;
        h.service.send(id, 'a short question');
        await h.model.waitForCalls(1);
        assert.deepEqual(asked, [], 'counts asked for on the way to the first request');
        await log.turnsComplete(1);
      });
    });

    it('leaves a discussion closed before its preparation ahead, or one it does not know, alone', async () => {
      h = harness([], withLongInstructions);
      const { id } = await open();
      const discussion = h.service.find(id)!;
      await h.service.close(id);
      await withCountsRecorded(async (asked) => {
        await h.service.prepareAhead(id);
        await discussion.prepareAhead();
        await h.service.prepareAhead('disc-00000000000000000000000000000000');
        assert.deepEqual(asked, [], 'counts asked for');
        assert.equal(h.toolbox.warmed, 0, 'search threads readied');
      });
    });
  });

  describe('promote', () => {
    it('distills an intent and constraints at temperature 0, and starts nothing', async () => {
      h = harness([
        { text: 'We could add caching.' },
        { text: '```json\n{"proposed_intent":"Cache parsed configs in memory.","constraints":["No new dependencies"]}\n```' },
      ]);
      const { id, log } = await open();
      h.service.send(id, 'how to make startup faster?');
      await log.turnsComplete(1);
      const result = await h.service.promote(id);
      assert.deepEqual(result, { discussionId: id, intent: 'Cache parsed configs in memory.', constraints: ['No new dependencies'] });
      const request = h.model.requests[1];
      assert.equal(request.temperature, 0);
      assert.equal(request.tools, undefined);
      assert.match(request.messages[0].content as string, /User: how to make startup faster\?/);
      assert.equal(log.of('task_prepared')[0].intent, 'Cache parsed configs in memory.');
      assert.deepEqual(fs.readdirSync(h.folder), []);
    });

    it('retries malformed JSON and succeeds within three attempts', async () => {
      h = harness([{ text: 'answer' }, { text: 'not json' }, { text: '{"proposed_intent": ' }, { text: '{"proposed_intent":"Do it.","constraints":[]}' }]);
      const { id, log } = await open();
      h.service.send(id, 'q');
      await log.turnsComplete(1);
      const result = await h.service.promote(id);
      assert.equal(result.intent, 'Do it.');
      assert.equal(h.model.calls, 4);
    });

    it('gives up after three malformed replies with a clear error', async () => {
      h = harness([{ text: 'answer' }, { text: 'no' }, { text: 'nope' }, { text: '{"constraints":[]}' }, { text: '{"proposed_intent":"late"}' }]);
      const { id, log } = await open();
      h.service.send(id, 'q');
      await log.turnsComplete(1);
      await rejects(h.service.promote(id), /after 3 attempts/);
      assert.equal(h.model.calls, 4);
    });

    it('a message sent while distilling makes that distillation stale instead of a pending task', async () => {
      const gate = new Gate();
      h = harness([{ text: 'answer' }, { block: gate, then: { text: '{"proposed_intent":"Old idea.","constraints":[]}' } }, { text: 'new answer' }]);
      const { id, log } = await open();
      h.service.send(id, 'q');
      await log.turnsComplete(1);
      const promoting = h.service.promote(id);
      await h.model.waitForCalls(2);
      gate.open();
      h.service.send(id, 'actually, something else');
      await rejects(promoting, 'moved on');
      await log.turnsComplete(2);
      assert.equal(h.service.find(id)!.task, null);
      assert.equal(log.of('task_prepared').length, 0);
    });

    it('close aborts a distillation in flight', async () => {
      const gate = new Gate();
      h = harness([{ text: 'answer' }, { block: gate }]);
      const { id, log } = await open();
      h.service.send(id, 'q');
      await log.turnsComplete(1);
      const promoting = h.service.promote(id);
      await h.model.waitForCalls(2);
      await h.service.close(id);
      await assert.rejects(promoting);
      assert.equal(h.model.aborted, 1);
      assert.equal(h.model.calls, 2, 'no retry after the abort');
    });

    it('is refused before any turn', async () => {
      h = harness();
      const { id } = await open();
      await rejects(h.service.promote(id), 'no turns yet');
      assert.equal(h.model.calls, 0);
    });

    it(`keeps ${TRANSCRIPT_MAX_TURNS} transcript turns and distills the last ${DISTILL_WINDOW_TURNS}`, async () => {
      h = harness([], {});
      const { id, log } = await open();
      for (let i = 0; i < 25; i++) {
        h.model.push({ text: `answer ${i}` });
        h.service.send(id, `question ${i}`);
        await log.turnsComplete(i + 1);
      }
      assert.equal(h.service.find(id)!.snapshot().transcript.length, TRANSCRIPT_MAX_TURNS);
      h.model.push({ text: '{"proposed_intent":"x","constraints":[]}' });
      await h.service.promote(id);
      const prompt = h.model.requests[h.model.calls - 1].messages[0].content as string;
      assert.ok(prompt.includes('User: question 24'));
      assert.ok(prompt.includes('User: question 19'));
      assert.ok(!prompt.includes('question 18'));
    });
  });

  describe('events', () => {
    it("replays a finished reply as its assistant_message, without the deltas it streamed in, and keeps its reasoning", async () => {
      const gate = new Gate();
      h = harness(
        [
          { text: 'First ', toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }] },
          { text: 'then A.', reasoning: ['Read it.'] },
          { block: gate, deltasBefore: ['Still ', 'streaming'], separateReads: true, then: { text: '' } },
        ],
        { files: { 'a.txt': 'A' } },
      );
      const { id, log } = await open();
      h.service.send(id, 'what is in a.txt?');
      await log.turnsComplete(1);
      const streamed = log.of('assistant_delta').map((e) => e.text).join('');
      assert.match(streamed, /^First \s*then A\.$/, 'a live subscriber saw the deltas');
      const replay = new EventLog();
      // What a live subscriber saw, less the reply's deltas (reasoning included, where the model source streams it).
      const expected = log.events.filter((e) => e.type !== 'assistant_delta');
      assert.equal(h.service.subscribe(id, 'late', replay.sink, 0), expected.length);
      await replay.turnsComplete(1);
      assert.deepEqual(replay.events, expected);
      assert.deepEqual(replay.types().filter((type) => type !== 'reasoning_delta'), ['user_message', 'tool_call', 'tool_result', 'assistant_message', 'turn_complete']);
      assert.equal(replay.of('assistant_message')[0].text, streamed.trim());

      // A reply still streaming keeps its deltas: they are all a replay has of it yet.
      h.service.send(id, 'and now?');
      await log.until((events) => events.filter((e) => e.type === 'assistant_delta').map((e) => e.text).join('').endsWith('Still streaming'));
      const midway = new EventLog();
      h.service.subscribe(id, 'midway', midway.sink, 0);
      await midway.until((events) => events.filter((e) => e.type === 'assistant_delta').map((e) => e.text).join('') === 'Still streaming');
      gate.open();
      await log.turnsComplete(2);
    });

    it('a subscriber receives every seq exactly once across its attach', async () => {
      h = harness();
      const { discussionId: id } = await h.service.start({ folder: h.folder });
      const stream = h.service.find(id)!.stream;
      for (let i = 0; i < 20; i++) stream.emit({ type: 'assistant_delta', text: String(i) });
      const log = new EventLog();
      const replayed = h.service.subscribe(id, 'late', log.sink, 17);
      assert.equal(replayed, 3);
      for (let i = 20; i < 50; i++) stream.emit({ type: 'assistant_delta', text: String(i) });
      await log.until((e) => e.length === 33);
      assert.deepEqual(log.events.map((e) => e.seq), Array.from({ length: 33 }, (_, i) => i + 17));
    });

    it('an unsubscribed subscriber receives nothing more, while others keep streaming', async () => {
      h = harness([{ text: 'first' }, { text: 'second' }]);
      const { id, log } = await open();
      const leaving = new EventLog();
      h.service.subscribe(id, 'leaving', leaving.sink);
      h.service.send(id, 'one');
      await leaving.turnsComplete(1);
      const before = leaving.events.length;
      h.service.unsubscribe(id, 'leaving');
      h.service.send(id, 'two');
      await log.turnsComplete(2);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(leaving.events.length, before);
      assert.ok(log.events.length > before);
    });

    it(`keeps the last ${EVENT_BUFFER_MAX} events and replays what survives`, () => {
      const stream = new EventStream({ discussionId: 'disc-x', now: () => 0 });
      for (let i = 0; i < EVENT_BUFFER_MAX + 500; i++) stream.emit({ type: 'assistant_delta', text: 'x' });
      const events = stream.events();
      assert.equal(events.length, EVENT_BUFFER_MAX);
      assert.equal(events[0].seq, 500);
      const log = new EventLog();
      assert.equal(stream.subscribe('s', log.sink, 0), EVENT_BUFFER_MAX);
    });

    it('a subscriber that stops reading is shed and the turn still completes', async () => {
      h = harness([{ text: 'many', deltas: Array.from({ length: 300 }, () => 'd') }]);
      const { discussionId: id } = await h.service.start({ folder: h.folder });
      const discussion = h.service.find(id)!;
      // Rebuild the stream with a small queue so the wedge shows quickly.
      const wedged = { deliver: () => new Promise<void>(() => undefined) };
      const healthy = new EventLog();
      const small = new EventStream({ discussionId: id, now: () => 0, queueMax: 10 });
      small.subscribe('wedged', wedged);
      small.subscribe('healthy', healthy.sink);
      for (let i = 0; i < 100; i++) small.emit({ type: 'assistant_delta', text: 'x' });
      assert.equal(small.subscriberCount, 1);
      await healthy.until((e) => e.length === 100);
      // And at the discussion level: a wedged subscriber never stalls the turn.
      discussion.stream.subscribe('wedged', wedged);
      const log = new EventLog();
      discussion.stream.subscribe('healthy', log.sink);
      h.service.send(id, 'go');
      await log.turnsComplete(1);
    });

    it('saves each event before any subscriber can see it, as a transport that writes in the call would send it', () => {
      const stream = new EventStream({ discussionId: 'd', now: () => 0 });
      const saved = new Set<number>();
      stream.onEvent((event) => saved.add(event.seq));
      const seenUnsaved: number[] = [];
      // A sink that writes in the call, as node-ipc and the stdio writer do.
      stream.subscribe('client', { deliver: (event) => void (saved.has(event.seq) || seenUnsaved.push(event.seq)) });
      stream.emit({ type: 'user_message', text: 'q' });
      stream.emit({ type: 'turn_complete' });
      assert.deepEqual(seenUnsaved, [], 'a client saw an event before the log kept it');
    });

    it('saves a reply in the history before announcing it, so a crash cannot leave an answer the client saw that the model is not sent', async () => {
      let saved: DiscussionSnapshot | undefined;
      h = harness([{ text: 'The answer.' }], { store: { ...memoryStore(), save: (snapshot) => void (saved = snapshot) } });
      const { discussionId: id } = await h.service.start({ folder: h.folder });
      const historyWhenAnnounced: string[] = [];
      const log = new EventLog();
      h.service.subscribe(id, 'client', {
        deliver: (event) => {
          // Runs in the emit, as a transport that writes in the call sends it.
          if (event.type === 'assistant_message') historyWhenAnnounced.push(...(saved?.history ?? []).map((m) => String(m.content ?? '')));
          log.sink.deliver(event);
        },
      });
      h.service.send(id, 'question');
      await log.turnsComplete(1);
      assert.ok(historyWhenAnnounced.includes('The answer.'), `saved history when the reply was announced: ${JSON.stringify(historyWhenAnnounced)}`);
    });

    it('a subscriber whose sends time out is shed', async () => {
      const stream = new EventStream({ discussionId: 'd', now: () => 0, sendTimeoutMs: 1 });
      const shed = new Promise<string>((resolve) => ((stream as unknown as { options: { onShed: (id: string) => void } }).options.onShed = resolve));
      stream.subscribe('hung', { deliver: () => new Promise<void>(() => undefined) });
      stream.emit({ type: 'turn_complete' });
      assert.equal(await shed, 'hung');
      assert.equal(stream.subscriberCount, 0);
    });

    it('a failure while emitting held text at the end of a tick is reported, not thrown out of the process', async () => {
      const reported = new Promise<unknown>((resolve) => {
        const stream = new EventStream({ discussionId: 'd', now: () => 0, onFlushError: resolve });
        stream.onEvent(() => {
          throw new Error('observer broke');
        });
        stream.emitText('assistant_delta', 'held');
      });
      assert.match(String(await reported), /observer broke/);
    });

    it('sends held text before a subscriber attaches and before the stream is disposed', () => {
      const stream = new EventStream({ discussionId: 'd', now: () => 0 });
      stream.emitText('assistant_delta', 'before');
      const early = new EventLog();
      assert.equal(stream.subscribe('early', early.sink, 0), 1, 'the held text is replayed, not lost between replay and live');
      stream.emitText('assistant_delta', 'after');
      stream.dispose();
      // Delivered by the close itself: a disposed stream takes no new subscribers to replay it to.
      assert.deepEqual(early.events.map((e) => 'text' in e && e.text), ['before', 'after']);
    });

    it('emits stay in seq order in the buffer, whatever order subscribers drain in', async () => {
      const stream = new EventStream({ discussionId: 'd', now: () => 0 });
      const slow: DiscussionEvent[] = [];
      stream.subscribe('slow', { deliver: async (e) => { await Promise.resolve(); slow.push(e); } });
      await Promise.all(Array.from({ length: 200 }, async (_, i) => {
        await Promise.resolve();
        stream.emit({ type: 'assistant_delta', text: String(i) });
      }));
      assert.deepEqual(stream.events().map((e) => e.seq), Array.from({ length: 200 }, (_, i) => i));
      while (slow.length < 200) await new Promise((r) => setImmediate(r));
      assert.deepEqual(slow.map((e) => e.seq), Array.from({ length: 200 }, (_, i) => i));
    });
  });

  describe('listing and closing', () => {
    it('list and close track open discussions, and unknown ids are clear errors naming the id', async () => {
      h = harness([{ text: 'answer' }]);
      const { id, log } = await open();
      const { discussionId: other } = await h.service.start({ folder: h.folder });
      h.service.send(id, 'Why is the build slow?\nMore detail.');
      await log.turnsComplete(1);
      const { discussions, saved } = await h.service.list();
      assert.equal(discussions.length, 2);
      const row = discussions.find((d) => d.discussionId === id)!;
      assert.equal(row.turns, 1);
      assert.equal(row.title, 'Why is the build slow?');
      assert.equal(row.repo, h.folder);
      assert.deepEqual(saved, []);
      await h.service.close(other);
      assert.deepEqual((await h.service.list()).discussions.map((d) => d.discussionId), [id]);
      for (const call of [
        () => h.service.send('disc-nope', 'x'),
        () => h.service.subscribe('disc-nope', 's', log.sink),
        () => h.service.cancel('disc-nope'),
        () => h.service.promote('disc-nope'),
        () => h.service.close('disc-nope'),
        () => h.service.send(other, 'x'),
      ]) {
        const err = await rejects(call, /disc-nope|disc-/);
        assert.equal(err.kind, 'NotFound');
      }
    });
  });
});

/**
 * Part 5 — crashes. The server process is killed with SIGKILL at many points
 * of a turn, each placed with gates and event counts (never with timing).
 * Every time, a new process on the same storage resumes the discussion with
 * every turn the client saw complete, nothing corrupt, and takes a new
 * message; then that process is killed too, and a third one finds the
 * recovery turn intact.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INTERRUPTED_REPLY_NOTE } from '../../server/src/core/turn';
import type { DiscussionEvent, StartRequest } from '../../shared/protocol';
import { createGate, lastUserMessage, type FakeGate, type FakeStep, type FakeStepScript, type RecordedRequest } from '../support/fakeOpenAI';
import type { ServerProcess } from '../support/serverProcess';
import { Lab, assertValidHistory, messagesOf, recordFigures, runTurn } from './lab';

interface Turn {
  user: string;
  answer: string | null;
}

/** Turns the client saw complete, in order. */
function completedTurns(events: readonly DiscussionEvent[], id: string): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | null = null;
  for (const e of events) {
    if (e.discussionId !== id) continue;
    if (e.type === 'user_message') current = { user: e.text, answer: null };
    else if (e.type === 'assistant_message' && current) current.answer = e.text;
    else if (e.type === 'turn_complete' && current) {
      turns.push(current);
      current = null;
    }
  }
  return turns;
}

/** Events a resume must give back exactly: everything but deltas (never saved) and task cards (superseded ones are dropped). */
function durable(events: readonly DiscussionEvent[], id: string): DiscussionEvent[] {
  return events.filter(
    (e) => e.discussionId === id && e.type !== 'assistant_delta' && e.type !== 'reasoning_delta' && e.type !== 'task_prepared',
  );
}

function discussionDir(lab: Lab, id: string): string {
  return path.join(lab.storage, 'discussions', id);
}

/**
 * The saved files parse: the record whole, every line of the append-only
 * logs, seqs increasing. A fragment a cut-short write left (`torn`) may stay
 * on a line of its own; whatever was written after it must be readable.
 */
function assertStorageSound(lab: Lab, id: string, torn: readonly string[] = []): { events: number; history: number } {
  const dir = discussionDir(lab, id);
  const record = JSON.parse(fs.readFileSync(path.join(dir, 'record.json'), 'utf8')) as { record: { id: string } };
  assert.equal(record.record.id, id);
  const counts = { events: 0, history: 0 };
  for (const [file, key] of [['events.jsonl', 'events'], ['history.jsonl', 'history']] as const) {
    const full = path.join(dir, file);
    if (!fs.existsSync(full)) continue;
    const lines = fs.readFileSync(full, 'utf8').split('\n');
    const last = lines.pop();
    assert.ok(last === '' || torn.includes(last!), `${file} ends with a whole line`);
    let seq = -1;
    for (const [i, line] of lines.entries()) {
      if (torn.includes(line)) continue;
      const glued = torn.find((fragment) => line.startsWith(fragment));
      assert.ok(
        !glued,
        `${file} line ${i + 1} is unreadable: the record written after a torn line was glued onto it, so it is lost on the next resume:\n  ${line.slice(0, 240)}`,
      );
      const value = JSON.parse(line) as { seq?: number };
      if (file === 'events.jsonl') {
        assert.ok((value.seq ?? -1) > seq, `${file} line ${i + 1}: seq goes up`);
        seq = value.seq!;
      }
      counts[key]++;
    }
  }
  return counts;
}

function isSubsequence<T>(needles: readonly T[], haystack: readonly T[], same: (a: T, b: T) => boolean): boolean {
  let at = 0;
  for (const item of haystack) if (at < needles.length && same(needles[at], item)) at++;
  return at === needles.length;
}

/** Resumes `id` on a new process and waits for the whole replay. */
async function resume(lab: Lab, id: string): Promise<{ s: ServerProcess; replay: DiscussionEvent[] }> {
  const s = await lab.server();
  const started = await s.request<StartRequest.Result>('discuss/start', { folder: lab.repo, resumeId: id });
  assert.equal(started.resumed, true);
  assert.equal(started.discussionId, id);
  const { eventsReplayed } = await s.request<{ eventsReplayed: number }>('discuss/subscribe', { discussionId: id, fromSeq: 0 });
  await s.until((events) => events.filter((e) => e.discussionId === id).length >= eventsReplayed);
  return { s, replay: s.events.filter((e) => e.discussionId === id) };
}

/** What a resume must show, given what the client of the dead process saw. */
function assertResumed(replay: DiscussionEvent[], seen: readonly DiscussionEvent[], id: string): void {
  const seqs = replay.map((e) => e.seq);
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `replayed seqs go up (${seqs[i - 1]} then ${seqs[i]})`);
  const acknowledged = completedTurns(seen, id);
  const restored = completedTurns(replay, id);
  assert.ok(
    isSubsequence(acknowledged, restored, (a, b) => a.user === b.user && a.answer === b.answer),
    `every completed turn is back:\n  saw ${JSON.stringify(acknowledged)}\n  got ${JSON.stringify(restored)}`,
  );
  const bySeq = new Map(replay.map((e) => [e.seq, e]));
  for (const e of durable(seen, id)) {
    const back = bySeq.get(e.seq);
    assert.ok(back, `event ${e.seq} (${e.type}) the client saw is back`);
    const { ts: _a, ...want } = e;
    const { ts: _b, ...got } = back!;
    assert.deepEqual(got, want, `event ${e.seq} is unchanged`);
  }
  const users = replay.filter((e) => e.type === 'user_message').length;
  const completes = replay.filter((e) => e.type === 'turn_complete').length;
  assert.equal(completes, users, 'every turn in the log is closed (an interrupted one with an error)');
}

/**
 * Answers after a crash come from this script, chosen by the question, never
 * from queued steps: a request the dead process sent just before dying may
 * still arrive, and must not take an answer meant for its successor. It gets
 * a stream that never ends, which its closed socket ends.
 */
const answerByQuestion: FakeStepScript = (request) => {
  const question = lastUserMessage(request);
  if (question.startsWith('after the')) return { kind: 'text', text: `Answer to ${question}.` };
  if (question === 'was anything handed off?') {
    const system = String(messagesOf(request)[0]?.content ?? '');
    return { kind: 'text', text: /Tasks already handed off[\s\S]*Cache the answer\./.test(system) ? 'handoff-note-present' : 'handoff-note-missing' };
  }
  return { kind: 'hang' };
};

function requestFor(lab: Lab, question: string): RecordedRequest {
  const found = [...lab.fake.completionRequests].reverse().find((r) => lastUserMessage(r) === question);
  assert.ok(found, `a model request for ${JSON.stringify(question)}`);
  return found;
}

/** The resumed discussion answers a new message with a history a provider accepts, carrying every completed turn. */
async function assertTakesNewMessage(lab: Lab, s: ServerProcess, id: string, seen: readonly DiscussionEvent[], text: string): Promise<void> {
  const events = await runTurn(s, lab.fake, id, text);
  assert.equal((events.find((e) => e.type === 'assistant_message') as { text: string } | undefined)?.text, `Answer to ${text}.`);
  const request = requestFor(lab, text);
  assertValidHistory(request);
  const messages = messagesOf(request);
  const users = messages.filter((m) => m.role === 'user').map((m) => String(m.content));
  const wanted = [...completedTurns(seen, id).map((t) => t.user), text];
  assert.ok(isSubsequence(wanted, users, (a, b) => a === b), `the model sees every completed question:\n  want ${JSON.stringify(wanted)}\n  got ${JSON.stringify(users)}`);
  for (const turn of completedTurns(seen, id)) {
    if (!turn.answer) continue;
    assert.ok(
      // A reply that was stopped part-way carries a note saying so after the text the user saw.
      messages.some((m) => m.role === 'assistant' && String(m.content ?? '').replace(INTERRUPTED_REPLY_NOTE, '').trim() === turn.answer),
      `the model sees the completed answer ${JSON.stringify(turn.answer)}`,
    );
  }
}

interface Ctx {
  lab: Lab;
  s: ServerProcess;
  id: string;
  gates: FakeGate[];
  gate(): FakeGate;
  /** Sends and resolves with the acknowledged seq, without waiting for the turn. */
  send(text: string, steps?: FakeStep[]): Promise<number>;
  /** Events of this discussion after `seq` matching `type`. */
  count(type: DiscussionEvent['type'], afterSeq: number): number;
  untilCount(type: DiscussionEvent['type'], afterSeq: number, n: number): Promise<void>;
  /** Until the streamed text after `seq` holds `text` (deltas that arrive together come as one event). */
  untilStreamed(afterSeq: number, text: string): Promise<void>;
}

interface KillPoint {
  name: string;
  /** Leaves the first turn out (the discussion is killed before it has any). */
  fresh?: boolean;
  /** Drives the first process to the point; the kill follows at once. */
  reach(ctx: Ctx): Promise<void>;
  /** Confirms the kill landed where named, from what was saved. */
  placed?(ctx: Ctx): void;
  /** A write the kill cut short, simulated on the files; returns the fragments left. */
  tear?(ctx: Ctx): string[];
  /** Extra checks on the resumed process. */
  resumed?(ctx: Ctx, s: ServerProcess, replay: DiscussionEvent[]): Promise<void>;
}

/** The kill landed inside a round of tool calls: at least `min` and not all of its results were saved. */
function assertMidRound(c: Ctx, min: number): void {
  const lines = fs.readFileSync(path.join(discussionDir(c.lab, c.id), 'events.jsonl'), 'utf8').split('\n');
  const results = lines.filter((l) => l.includes('"type":"tool_result"') && l.includes('"tool":"grep_files"')).length;
  assert.ok(results >= min && results < ROUND, `the kill landed mid-round (${results} of ${ROUND} results saved)`);
}

const BULK_FILES = 300;
const ROUND = 40;

const grepRound = (tag: string): FakeStep => ({
  kind: 'toolCalls',
  calls: Array.from({ length: ROUND }, (_, i) => ({ id: `${tag}-${i}`, name: 'grep_files', arguments: JSON.stringify({ pattern: `needle[0-9]+ ${i}`, path: 'bulk' }) })),
});

const KILL_POINTS: KillPoint[] = [
  {
    name: 'after start, before any message',
    fresh: true,
    reach: async () => undefined,
  },
  {
    name: 'right after send is acknowledged, before the model answers',
    reach: async (c) => {
      // Nothing queued: the request, if it gets out at all, is answered by a stream that never ends.
      await c.send('second question');
    },
  },
  {
    name: 'with the model request open and nothing streamed',
    reach: async (c) => {
      const g = c.gate();
      await c.send('second question', [{ kind: 'gate', gate: g, then: { kind: 'text', text: 'never seen' } }]);
      await g.reached;
    },
  },
  {
    name: 'mid-stream, after the first delta',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'gate', gate: c.gate(), deltas: ['Par'], then: { kind: 'text', text: 'tial' } }]);
      await c.untilCount('assistant_delta', seq, 1);
    },
  },
  {
    name: 'mid-stream, after fifty deltas',
    reach: async (c) => {
      const deltas = Array.from({ length: 50 }, (_, i) => `d${i} `);
      const seq = await c.send('second question', [{ kind: 'gate', gate: c.gate(), deltas, then: { kind: 'text', text: 'end' } }]);
      await c.untilStreamed(seq, deltas.join(''));
    },
  },
  {
    name: 'mid-stream, with text streamed and tool calls still to come',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'gate', gate: c.gate(), deltas: ['Let me look. '], then: grepRound('late') }]);
      await c.untilCount('assistant_delta', seq, 1);
    },
  },
  {
    name: 'when the first tool_call event of a round arrives',
    reach: async (c) => {
      const seq = await c.send('second question', [grepRound('first')]);
      await c.untilCount('tool_call', seq, 1);
    },
    placed: (c) => assertMidRound(c, 0),
  },
  {
    name: 'mid tool round, after ten of forty tool results',
    reach: async (c) => {
      const seq = await c.send('second question', [grepRound('mid')]);
      await c.untilCount('tool_result', seq, 10);
    },
    placed: (c) => assertMidRound(c, 10),
  },
  {
    name: 'after a tool round, with the next model call open',
    reach: async (c) => {
      const g = c.gate();
      await c.send('second question', [
        { kind: 'toolCalls', calls: [{ id: 'r1', name: 'read_file', arguments: '{"path":"README.md"}' }, { id: 'r2', name: 'list_dir', arguments: '{}' }] },
        { kind: 'gate', gate: g, then: { kind: 'text', text: 'never seen' } },
      ]);
      await g.reached;
    },
  },
  {
    name: 'mid-stream of the answer that follows a tool round',
    reach: async (c) => {
      const seq = await c.send('second question', [
        { kind: 'toolCalls', calls: [{ id: 'r1', name: 'read_file', arguments: '{"path":"src/app.ts"}' }] },
        { kind: 'gate', gate: c.gate(), deltas: ['Having read it, '], then: { kind: 'text', text: 'done' } },
      ]);
      await c.untilCount('assistant_delta', seq, 1);
    },
  },
  {
    name: 'mid-stream of the third model call, after two tool rounds',
    reach: async (c) => {
      const seq = await c.send('second question', [
        { kind: 'toolCalls', calls: [{ id: 'a1', name: 'list_dir', arguments: '{"path":"src"}' }] },
        { kind: 'toolCalls', content: 'One more. ', calls: [{ id: 'a2', name: 'read_file', arguments: '{"path":"src/app.ts"}' }] },
        { kind: 'gate', gate: c.gate(), deltas: ['So the answer '], then: { kind: 'text', text: 'is 42' } },
      ]);
      await c.untilCount('tool_result', seq, 2);
      // The third call's own text, not a count of deltas: the second call's content may stream as more than one delta.
      await c.untilStreamed(seq, 'So the answer');
    },
  },
  {
    name: 'when the assistant_message of a turn arrives',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'text', text: 'Second answer.' }]);
      await c.untilCount('assistant_message', seq, 1);
    },
  },
  {
    name: 'when turn_complete arrives',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'text', text: 'Second answer.' }]);
      await c.untilCount('turn_complete', seq, 1);
    },
  },
  {
    name: 'right after a rename is acknowledged',
    reach: async (c) => {
      await c.s.request('discuss/rename', { discussionId: c.id, title: 'Renamed before the crash' });
    },
    resumed: async (c, s) => {
      const list = await s.request<{ discussions: Array<{ discussionId: string; title: string }> }>('discuss/list', {});
      assert.equal(list.discussions.find((d) => d.discussionId === c.id)?.title, 'Renamed before the crash');
    },
  },
  {
    name: 'while promote waits on the model',
    reach: async (c) => {
      const g = c.gate();
      c.lab.fake.push({ kind: 'gate', gate: g, then: { kind: 'text', text: '{"proposed_intent":"x","constraints":[]}' } });
      void c.s.request('discuss/promote', { discussionId: c.id }).catch(() => undefined);
      await g.reached;
    },
  },
  {
    name: 'right after promote answered',
    reach: async (c) => {
      c.lab.fake.push({ kind: 'text', text: '{"proposed_intent":"Cache the answer in src/app.ts.","constraints":["Keep the export"]}' });
      await c.s.request('discuss/promote', { discussionId: c.id });
    },
    resumed: async (c, s, replay) => {
      assert.ok(replay.some((e) => e.type === 'task_prepared' && e.intent === 'Cache the answer in src/app.ts.'), 'the prepared task is offered again');
      const handed = await s.request<{ handoff: { intent: string } }>('discuss/consumeTask', { discussionId: c.id, target: 'markdown' });
      assert.equal(handed.handoff.intent, 'Cache the answer in src/app.ts.');
    },
  },
  {
    name: 'right after a hand-off is recorded',
    reach: async (c) => {
      c.lab.fake.push({ kind: 'text', text: '{"proposed_intent":"Cache the answer.","constraints":[]}' });
      await c.s.request('discuss/promote', { discussionId: c.id });
      await c.s.request('discuss/consumeTask', { discussionId: c.id, target: 'chat' });
    },
    resumed: async (c, s) => {
      const events = await runTurn(s, c.lab.fake, c.id, 'was anything handed off?');
      const answer = events.find((e) => e.type === 'assistant_message') as { text: string } | undefined;
      assert.equal(answer?.text, 'handoff-note-present', 'the resumed system prompt still tells the model about the hand-off');
    },
  },
  {
    name: 'right after cancel is acknowledged',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'hang', deltas: ['Thinking '] }]);
      await c.untilCount('assistant_delta', seq, 1);
      await c.s.request('discuss/cancel', { discussionId: c.id });
    },
  },
  {
    name: 'while waiting out a 429 before retrying',
    reach: async (c) => {
      const before = c.lab.fake.completionRequests.length;
      // Thirty seconds asked: the process sleeps; it is killed long before it would retry.
      await c.send('second question', [{ kind: 'error', status: 429, headers: { 'retry-after-ms': '30000' } }]);
      await c.lab.fake.waitForCompletionRequests(before + 1);
    },
  },
  {
    name: 'during discuss/close of a running turn',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'hang', deltas: ['Thinking '] }]);
      await c.untilCount('assistant_delta', seq, 1);
      void c.s.request('discuss/close', { discussionId: c.id }).catch(() => undefined);
    },
  },
  {
    name: 'while appending an event (the last line of events.jsonl torn)',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'gate', gate: c.gate(), deltas: ['Half'], then: { kind: 'text', text: ' done' } }]);
      await c.untilCount('assistant_delta', seq, 1);
    },
    tear: (c) => {
      const fragment = '{"discussionId":"x","seq":99999,"type":"assis';
      fs.appendFileSync(path.join(discussionDir(c.lab, c.id), 'events.jsonl'), fragment);
      return [fragment];
    },
  },
  {
    name: 'while journaling the record (the last line of record.jsonl torn)',
    reach: async (c) => {
      const seq = await c.send('second question', [{ kind: 'gate', gate: c.gate(), deltas: ['Half'], then: { kind: 'text', text: ' done' } }]);
      await c.untilCount('assistant_delta', seq, 1);
    },
    tear: (c) => {
      const fragment = '{"j":"0123456789ab","set":{"turns":77,"title":"torn';
      fs.appendFileSync(path.join(discussionDir(c.lab, c.id), 'record.jsonl'), fragment);
      return [fragment];
    },
  },
  {
    name: 'while saving the history (a torn line in history.jsonl and a stray temporary record)',
    reach: async (c) => {
      const seq = await c.send('second question', [
        { kind: 'toolCalls', calls: [{ id: 'h1', name: 'read_file', arguments: '{"path":"README.md"}' }] },
        { kind: 'gate', gate: c.gate(), deltas: ['So '], then: { kind: 'text', text: 'there.' } },
      ]);
      await c.untilCount('assistant_delta', seq, 1);
    },
    tear: (c) => {
      const dir = discussionDir(c.lab, c.id);
      const fragment = '{"role":"assistant","content":"half a mess';
      fs.appendFileSync(path.join(dir, 'history.jsonl'), fragment);
      fs.writeFileSync(path.join(dir, 'record.json.4242.tmp'), '{"version":1,"record":{"id":"');
      return [fragment];
    },
  },
];

describe('adversarial: SIGKILL at many points of a turn', function () {
  this.timeout(60_000);
  const placesHeld: string[] = [];
  let restarts = 0;

  after(() => {
    recordFigures('crashes', { killPoints: placesHeld.length, points: placesHeld, serverProcessesKilled: restarts });
  });

  for (const point of KILL_POINTS) {
    it(`killed ${point.name}: a new process resumes with every completed turn and nothing corrupt, takes a new message, and that turn survives the next crash`, async () => {
      const lab = await Lab.create({
        plain: true,
        fake: { fallback: answerByQuestion },
        build: (l) => {
          for (let i = 0; i < BULK_FILES; i++) l.write(`bulk/file-${i}.txt`, `needle${i} ${'x'.repeat(60)}\n`.repeat(60));
        },
      });
      try {
        const first = await lab.server();
        const id = await lab.open(first);
        const gates: FakeGate[] = [];
        const ctx: Ctx = {
          lab,
          s: first,
          id,
          gates,
          gate: () => {
            const g = createGate();
            gates.push(g);
            return g;
          },
          send: async (text, steps = []) => {
            lab.fake.push(...steps);
            return (await first.request<{ seq: number }>('discuss/send', { discussionId: id, text })).seq;
          },
          count: (type, afterSeq) => first.events.filter((e) => e.discussionId === id && e.seq > afterSeq && e.type === type).length,
          untilCount: (type, afterSeq, n) => first.until(() => ctx.count(type, afterSeq) >= n),
          untilStreamed: (afterSeq, text) =>
            first.until(() =>
              first.events
                .filter((e) => e.discussionId === id && e.seq > afterSeq && e.type === 'assistant_delta')
                .map((e) => (e as { text: string }).text)
                .join('')
                .includes(text),
            ),
        };
        if (!point.fresh) {
          await runTurn(first, lab.fake, id, 'first question', [
            { kind: 'toolCalls', calls: [{ id: 'f1', name: 'read_file', arguments: '{"path":"README.md"}' }] },
            { kind: 'text', text: 'First answer.' },
          ]);
        }
        await point.reach(ctx);
        await first.kill();
        lab.drop(first);
        restarts++;
        for (const g of gates) g.release();
        assert.equal(lab.fake.pendingSteps, 0, 'the kill point used up its script');

        assertStorageSound(lab, id);
        point.placed?.(ctx);
        const torn = point.tear?.(ctx) ?? [];

        // Second process: resumes, shows everything the first client saw complete, takes a new message.
        const second = await resume(lab, id);
        assertResumed(second.replay, first.events, id);
        await point.resumed?.(ctx, second.s, second.replay);
        await assertTakesNewMessage(lab, second.s, id, first.events, 'after the crash');
        assertStorageSound(lab, id, torn);
        await second.s.kill();
        lab.drop(second.s);
        restarts++;

        // Third process: the recovery turn, and everything before it, survived a crash of its own.
        const third = await resume(lab, id);
        assertResumed(third.replay, second.s.events, id);
        await assertTakesNewMessage(lab, third.s, id, second.s.events, 'after the second crash');
        await third.s.stop();
        lab.drop(third.s);
        placesHeld.push(point.name);
      } finally {
        await lab.dispose();
      }
    });
  }
});

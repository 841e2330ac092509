import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DiscussionHub, type RpcChannel } from '../../client/src/common/discussionHub';
import type { DiscussionEvent } from '../../shared/protocol';
import { createGate, startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

function channel(server: ServerProcess): RpcChannel {
  return {
    request: (method, params) => server.rpc.sendRequest(method, params),
    onNotification: (method, handler) => server.rpc.onNotification(method, handler),
  };
}

/** Events a view received, with a way to wait for more. */
function view() {
  const seen: DiscussionEvent[] = [];
  let wake: (() => void) | undefined;
  return {
    seen,
    listener: (events: DiscussionEvent[]) => {
      seen.push(...events);
      wake?.();
    },
    async until(test: (events: DiscussionEvent[]) => boolean): Promise<void> {
      while (!test(seen)) await new Promise<void>((resolve) => (wake = resolve));
    },
  };
}

describe('the extension side of a discussion, against the real server', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let repo: string;
  let storage: string;
  const servers: ServerProcess[] = [];

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['m'] });
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-hub-repo-')));
    storage = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-hub-store-')));
    fs.writeFileSync(path.join(repo, 'main.py'), 'print("hi")\n');
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop().catch(() => s.kill());
    await fake.close();
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(storage, { recursive: true, force: true });
  });

  async function server(): Promise<ServerProcess> {
    const s = await ServerProcess.start({ storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'm' } });
    servers.push(s);
    return s;
  }

  it('a view that re-attaches with its cursor sees every event exactly once', async () => {
    fake.push({ kind: 'text', deltas: ['one ', 'two ', 'three'] }, { kind: 'text', deltas: ['four ', 'five'] });
    const hub = new DiscussionHub();
    hub.connect(channel(await server()));
    const discussion = await hub.open({ folder: repo });
    const first = view();
    const detach = discussion.attach(first.listener);
    await hub.send(discussion.id, 'count');
    await first.until((e) => e.some((x) => x.type === 'turn_complete'));
    detach();
    const cursor = first.seen[first.seen.length - 1].seq;
    await hub.send(discussion.id, 'more');
    // The view was away (hidden, reloading) for the whole second turn.
    await new Promise<void>((resolve) => {
      const stop = discussion.attach((events) => {
        if (events.some((x) => x.type === 'turn_complete' && x.seq > cursor)) {
          stop();
          resolve();
        }
      }, cursor);
    });
    const second = view();
    discussion.attach(second.listener, cursor);
    const all = [...first.seen, ...second.seen].map((e) => e.seq);
    assert.deepEqual(all, Array.from({ length: all.length }, (_, i) => i));
    assert.equal(discussion.answering, false);
  });

  it('after the server crashes, reconnecting resumes every discussion from its cursor without duplicates', async () => {
    const gate = createGate();
    fake.push({ kind: 'text', text: 'first reply' }, { kind: 'gate', gate, deltas: ['par'], then: { kind: 'text', text: 'tial' } });
    const hub = new DiscussionHub();
    const a = await server();
    hub.connect(channel(a));
    const discussion = await hub.open({ folder: repo });
    const v = view();
    discussion.attach(v.listener);
    await hub.send(discussion.id, 'hello');
    await v.until((e) => e.some((x) => x.type === 'turn_complete'));
    await hub.send(discussion.id, 'and then?');
    await gate.reached;
    await a.kill();
    servers.splice(servers.indexOf(a), 1);
    gate.release();
    hub.disconnect();

    fake.push({ kind: 'text', text: 'after restart' });
    hub.connect(channel(await server()));
    assert.deepEqual(await hub.reconnectAll(), []);
    await v.until((e) => e.filter((x) => x.type === 'turn_complete').length >= 2);
    assert.equal(discussion.answering, false, 'the interrupted turn is closed');
    await hub.send(discussion.id, 'still there?');
    await v.until((e) => e.filter((x) => x.type === 'turn_complete').length >= 3);
    const seqs = v.seen.map((e) => e.seq);
    assert.deepEqual(seqs, [...new Set(seqs)].sort((x, y) => x - y), 'strictly increasing, no duplicates');
    const messages = v.seen.filter((e) => e.type === 'assistant_message').map((e) => (e as { text: string }).text);
    assert.deepEqual(messages, ['first reply', 'after restart']);
  });

  it('tracks the prepared task and the files the discussion read, and a new turn clears the task', async () => {
    fake.push(
      { kind: 'toolCalls', calls: [{ id: 'r', name: 'read_file', arguments: '{"path":"main.py"}' }] },
      { kind: 'toolCalls', calls: [{ id: 'p', name: 'prepare_coding_task', arguments: '{"intent":"Greet by name.","constraints":["Keep Python 3.8"]}' }] },
      { kind: 'text', text: 'Prepared.' },
      { kind: 'text', text: 'Something else.' },
    );
    const hub = new DiscussionHub();
    hub.connect(channel(await server()));
    const discussion = await hub.open({ folder: repo });
    const v = view();
    discussion.attach(v.listener);
    await hub.send(discussion.id, 'make it greet by name');
    await v.until((e) => e.some((x) => x.type === 'turn_complete'));
    assert.deepEqual(discussion.task, { intent: 'Greet by name.', constraints: ['Keep Python 3.8'] });
    assert.deepEqual([...discussion.groundedFiles], ['main.py']);
    const handoff = await hub.consumeTask(discussion.id, 'clipboard', { intent: 'Greet by name, politely.', constraints: ['Keep Python 3.8'] });
    assert.equal(handoff.handoff.intent, 'Greet by name, politely.');
    await hub.send(discussion.id, 'what next?');
    await v.until((e) => e.filter((x) => x.type === 'turn_complete').length >= 2);
    assert.equal(discussion.task, null);
    const system = (fake.completionRequests[fake.completionRequests.length - 1].body!.messages as Array<{ content: string }>)[0].content;
    assert.match(system, /already handed off[\s\S]*Greet by name, politely\./);
  });
});

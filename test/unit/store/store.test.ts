import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DiscussError } from '../../../server/src/core/errors';
import { defaultStorageDir } from '../../../shared/storageDir';
import { FileStore } from '../../../server/src/store/fileStore';
import { EventLog, harness, makeTempFolder, type Harness } from '../../support/coreHarness';
import { Gate, type ScriptStep } from '../../support/scriptedModel';
import { removeFifo } from '../../support/fifo';
import { within } from '../../support/within';

describe('saved discussions', () => {
  let storage: string;
  let folder: string;
  const harnesses: Harness[] = [];

  beforeEach(() => {
    storage = makeTempFolder('rd-store-');
    folder = makeTempFolder('rd-repo-');
  });
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.service.dispose();
    fs.rmSync(storage, { recursive: true, force: true });
    fs.rmSync(folder, { recursive: true, force: true });
  });

  /** A server over the shared storage folder, as a fresh process would build it. */
  async function server(steps: ScriptStep[] = [], options: Parameters<typeof harness>[1] = {}): Promise<Harness> {
    const h = harness(steps, { ...options, folder, store: await FileStore.open(storage) });
    harnesses.push(h);
    return h;
  }

  async function talk(h: Harness, id: string, log: EventLog, text: string, turn: number): Promise<void> {
    h.service.send(id, text);
    await log.turnsComplete(turn);
  }

  /** A discussion of one turn ("first", answered "One."), closed as a window closes it; its id. */
  async function savedAfterOneTurn(): Promise<string> {
    const first = await server([{ text: 'One.' }]);
    const { discussionId } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(discussionId, 't', log.sink);
    await talk(first, discussionId, log, 'first', 1);
    await first.service.close(discussionId);
    return discussionId;
  }

  it('defaults to the platform user data folder', () => {
    assert.equal(defaultStorageDir({ XDG_DATA_HOME: '/x/data' }, 'linux'), '/x/data/repo-discuss');
    assert.match(defaultStorageDir({}, 'darwin'), /Library\/Application Support\/repo-discuss$/);
    assert.match(defaultStorageDir({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32'), /repo-discuss$/);
  });

  it('resumes with the same id, full model history including tool calls, and a system prompt rebuilt from the folder as it is now', async () => {
    let agents = 'Use tabs.';
    const first = await server(
      [{ text: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}' }] }, { text: 'It says A.' }],
      { files: { 'a.txt': 'A' }, instructions: () => [{ path: 'AGENTS.md', text: agents }] },
    );
    const started = await first.service.start({ folder });
    assert.equal(started.persistent, true);
    const log = new EventLog();
    first.service.subscribe(started.discussionId, 't', log.sink);
    await talk(first, started.discussionId, log, 'what is in a.txt?', 1);
    await first.service.dispose();

    agents = 'Use spaces.';
    const second = await server([{ text: 'Still A.' }], { files: { 'a.txt': 'A' }, instructions: () => [{ path: 'AGENTS.md', text: agents }] });
    const resumed = await second.service.start({ folder, resumeId: started.discussionId });
    assert.equal(resumed.discussionId, started.discussionId);
    assert.equal(resumed.resumed, true);
    const log2 = new EventLog();
    second.service.subscribe(resumed.discussionId, 't', log2.sink);
    const before = log2.events.length;
    await talk(second, resumed.discussionId, log2, 'and now?', 2);
    assert.ok(before > 0);
    const messages = second.model.requests[0].messages;
    assert.deepEqual(messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const system = messages[0].content as string;
    assert.ok(system.includes('Use spaces.'));
    assert.ok(!system.includes('Use tabs.'), 'the old instructions are replaced, not appended');
    assert.equal(system.match(/## Project instructions/g)?.length, 1);
  });

  it('replays the saved history as events with their original seqs, without streaming deltas, and does not run tools again', async () => {
    const first = await server([{ text: '', toolCalls: [{ name: 'read_file', arguments: '{"path":"a.txt"}' }] }, { text: 'Done.', deltas: ['Do', 'ne.'] }], {
      files: { 'a.txt': 'A' },
    });
    const { discussionId: id } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(id, 't', log.sink);
    await talk(first, id, log, 'read a', 1);
    await first.service.dispose();
    const toolRuns = first.toolbox.calls.length;

    const second = await server();
    await second.service.start({ folder, resumeId: id });
    const replay = new EventLog();
    second.service.subscribe(id, 't', replay.sink);
    const expected = log.events.filter((e) => e.type !== 'assistant_delta');
    await replay.until((e) => e.length >= expected.length);
    assert.deepEqual(replay.events, expected);
    assert.equal(second.toolbox.calls.length, 0);
    assert.equal(first.toolbox.calls.length, toolRuns);
    // A cursor from before the restart keeps meaning the same events.
    const cursor = new EventLog();
    second.service.subscribe(id, 'cursor', cursor.sink, log.events[3].seq);
    await cursor.until((e) => e.length >= 1);
    assert.ok(cursor.events.every((e) => e.seq >= log.events[3].seq));
  });

  it('brings back a prepared task, its title and its model choice; "auto" clears the choice', async () => {
    const first = await server([
      { text: '', toolCalls: [{ name: 'prepare_coding_task', arguments: '{"intent":"Add retries.","constraints":["Keep the API"]}' }] },
      { text: 'Prepared.' },
    ]);
    const { discussionId: id } = await first.service.start({ folder, model: 'scripted-large' });
    const log = new EventLog();
    first.service.subscribe(id, 't', log.sink);
    await talk(first, id, log, 'Make the HTTP client retry', 1);
    first.service.rename(id, 'Retries');
    await first.service.dispose();

    const second = await server();
    const resumed = await second.service.start({ folder, resumeId: id });
    assert.equal(resumed.model, 'scripted-large');
    const d = second.service.find(id)!;
    assert.deepEqual(d.task, { intent: 'Add retries.', constraints: ['Keep the API'] });
    assert.equal(d.title, 'Retries');
    const replay = new EventLog();
    second.service.subscribe(id, 't', replay.sink);
    await replay.until((e) => e.some((x) => x.type === 'task_prepared'));
    await second.service.close(id);
    const again = await second.service.start({ folder, resumeId: id, model: 'auto' });
    assert.equal(again.model, null);
  });

  it('replays a task_prepared event saved with the older field name proposedIntent as intent', async () => {
    const first = await server([
      { text: '', toolCalls: [{ name: 'prepare_coding_task', arguments: '{"intent":"Add retries.","constraints":["Keep the API"]}' }] },
      { text: 'Prepared.' },
    ]);
    const { discussionId: id } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(id, 't', log.sink);
    await talk(first, id, log, 'Make the HTTP client retry', 1);
    await first.service.dispose();
    const eventsFile = path.join(storage, 'discussions', id, 'events.jsonl');
    const older = fs
      .readFileSync(eventsFile, 'utf8')
      .split('\n')
      .map((line) => line.replace(/"intent":/g, '"proposedIntent":'))
      .join('\n');
    assert.match(older, /"proposedIntent":"Add retries\."/, 'the log now has the older shape');
    fs.writeFileSync(eventsFile, older);

    const second = await server();
    await second.service.start({ folder, resumeId: id });
    const replay = new EventLog();
    second.service.subscribe(id, 't', replay.sink);
    await replay.until((e) => e.some((x) => x.type === 'task_prepared'));
    const prepared = replay.events.find((e) => e.type === 'task_prepared');
    assert.deepEqual(prepared && { intent: (prepared as { intent?: unknown }).intent, old: 'proposedIntent' in prepared }, { intent: 'Add retries.', old: false });
  });

  it('lists saved discussions newest first, filtered by folder, with titles from the first message', async () => {
    const h = await server();
    const other = makeTempFolder('rd-other-');
    try {
      const a = await h.service.start({ folder });
      const log = new EventLog();
      h.service.subscribe(a.discussionId, 't', log.sink);
      await talk(h, a.discussionId, log, 'First question about caching\nwith details', 1);
      h.clock.advance(1000);
      const b = await h.service.start({ folder: other });
      await h.service.close(a.discussionId);
      await h.service.close(b.discussionId);
      const { discussions, saved } = await h.service.list();
      assert.deepEqual(discussions, []);
      assert.deepEqual(saved.map((s) => s.discussionId), [b.discussionId, a.discussionId]);
      assert.equal(saved[1].title, 'First question about caching');
      assert.equal(saved[1].turns, 1);
      const filtered = await h.service.list({ folder });
      assert.deepEqual(filtered.saved.map((s) => s.discussionId), [a.discussionId]);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('refuses an unknown id, a discussion of another folder, and one already open, clearly', async () => {
    const h = await server();
    const other = makeTempFolder('rd-other-');
    try {
      await assert.rejects(h.service.start({ folder, resumeId: 'disc-0000' }), /No saved discussion "disc-0000"/);
      await assert.rejects(h.service.start({ folder, resumeId: '../../etc' }), /not a discussion id/);
      const { discussionId } = await h.service.start({ folder: other });
      await assert.rejects(h.service.start({ folder, resumeId: discussionId }), /already open/);
      await h.service.close(discussionId);
      await assert.rejects(h.service.start({ folder, resumeId: discussionId }), /belongs to a different repository/);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('refuses a discussion held by another live process, and takes over one whose holder died', async () => {
    const h = await server();
    const { discussionId: id } = await h.service.start({ folder });
    await h.service.close(id);
    const lease = path.join(storage, 'discussions', id, 'lease.json');
    const live = { pid: process.ppid, host: require('node:os').hostname(), acquiredAt: 0 };
    fs.writeFileSync(lease, JSON.stringify(live));
    await assert.rejects(h.service.start({ folder, resumeId: id }), (err: DiscussError) => /already open/.test(err.message));
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    fs.writeFileSync(lease, JSON.stringify({ ...live, pid: Number(dead) }));
    const resumed = await h.service.start({ folder, resumeId: id });
    assert.equal(resumed.resumed, true);
  });

  it('a reply interrupted by a crash is closed on resume, and the discussion takes the next message', async () => {
    const gate = new Gate();
    const first = await server([{ text: '', toolCalls: [{ id: 'x1', name: 'read_file', arguments: '{"path":"a.txt"}' }] }, { block: gate }], {
      files: { 'a.txt': 'A' },
    });
    const { discussionId: id } = await first.service.start({ folder });
    first.service.send(id, 'read a');
    await first.model.waitForCalls(2);
    // The process "dies" here: nothing is closed or released.
    harnesses.splice(harnesses.indexOf(first), 1);
    fs.appendFileSync(path.join(storage, 'discussions', id, 'events.jsonl'), '{"torn":');

    const second = await server([{ text: 'Here it is.' }]);
    await second.service.start({ folder, resumeId: id });
    const log = new EventLog();
    second.service.subscribe(id, 't', log.sink);
    await log.turnsComplete(1);
    assert.deepEqual(log.types().slice(-2), ['error', 'turn_complete']);
    await talk(second, id, log, 'again', 2);
    const messages = second.model.requests[0].messages;
    const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
    const answered = messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
    assert.deepEqual(calls, answered);
    gate.open();
  });

  it('never reuses a seq after a crash, even for streamed deltas that were not saved', async () => {
    const gate = new Gate();
    const first = await server([{ block: gate, deltasBefore: Array.from({ length: 1500 }, () => 'x'), separateReads: true }]);
    const { discussionId: id } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(id, 't', log.sink);
    first.service.send(id, 'stream a lot');
    await log.until((e) => e.length >= 1501);
    const highest = log.events[log.events.length - 1].seq;
    harnesses.splice(harnesses.indexOf(first), 1); // crash: nothing closed

    const second = await server();
    await second.service.start({ folder, resumeId: id });
    const replay = new EventLog();
    second.service.subscribe(id, 't', replay.sink, highest + 1);
    await replay.turnsComplete(1);
    assert.ok(replay.events.every((e) => e.seq > highest), 'the closing events are numbered past every seq handed out');
    assert.deepEqual(replay.types(), ['error', 'turn_complete']);
    gate.open();
  });

  it('a torn last line never swallows the lines written after it', async () => {
    const first = await server([{ text: 'one' }, { text: 'two' }]);
    const { discussionId: id } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(id, 't', log.sink);
    await talk(first, id, log, 'first', 1);
    harnesses.splice(harnesses.indexOf(first), 1);
    const dir = path.join(storage, 'discussions', id);
    fs.appendFileSync(path.join(dir, 'events.jsonl'), '{"seq": 99, "ty');
    fs.appendFileSync(path.join(dir, 'history.jsonl'), '{"role":"us');

    const second = await server([{ text: 'two' }]);
    await second.service.start({ folder, resumeId: id });
    const log2 = new EventLog();
    second.service.subscribe(id, 't', log2.sink);
    await talk(second, id, log2, 'second', 2);
    await second.service.dispose();
    harnesses.splice(harnesses.indexOf(second), 1);

    const third = await server([{ text: 'three' }]);
    await third.service.start({ folder, resumeId: id });
    const log3 = new EventLog();
    third.service.subscribe(id, 't', log3.sink);
    await log3.turnsComplete(2);
    const said = log3.of('user_message').map((e) => e.text);
    assert.deepEqual(said, ['first', 'second']);
    await talk(third, id, log3, 'third', 3);
    const users = third.model.requests[0].messages.filter((m) => m.role === 'user').map((m) => m.content);
    assert.deepEqual(users, ['first', 'second', 'third']);
  });

  it('refuses a second concurrent resume of the same discussion in one server', async () => {
    const h = await server();
    const { discussionId: id } = await h.service.start({ folder });
    await h.service.close(id);
    const outcomes = await Promise.allSettled([h.service.start({ folder, resumeId: id }), h.service.start({ folder, resumeId: id })]);
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    assert.match(refused.reason.message, /already open/);
    assert.equal(h.service.openCount, 1);
  });

  it("a new discussion's logs are made when it opens, so that its first turn only appends to them", async () => {
    const h = await server([{ text: 'One.' }]);
    const { discussionId: id } = await h.service.start({ folder });
    const dir = path.join(storage, 'discussions', id);
    const opened = fs.readdirSync(dir).sort();
    assert.deepEqual(
      opened.filter((name) => name.endsWith('.jsonl')),
      ['events.jsonl', 'history.jsonl', 'record.jsonl'],
    );
    const log = new EventLog();
    h.service.subscribe(id, 't', log.sink);
    await talk(h, id, log, 'first', 1);
    assert.deepEqual(fs.readdirSync(dir).sort(), opened, 'the first turn made no file');
    const loaded = await (await FileStore.open(storage)).load(id);
    assert.deepEqual(loaded?.snapshot.transcript.map((t) => t.text), ['first', 'One.']);
  });

  it('a saved discussion whose log cannot be read is refused with that error, and gives its lease back', async () => {
    const id = await savedAfterOneTurn();
    const dir = path.join(storage, 'discussions', id);
    fs.rmSync(path.join(dir, 'events.jsonl'));
    fs.mkdirSync(path.join(dir, 'events.jsonl'));
    // Not empty: some file systems give an empty directory a size of 0, and an empty log is not read.
    fs.writeFileSync(path.join(dir, 'events.jsonl', 'x'), '');
    const h = await server();
    await assert.rejects(h.service.start({ folder, resumeId: id }), /EISDIR|directory/);
    // Kept, it would refuse every other window this discussion while this process runs.
    assert.equal(fs.existsSync(path.join(dir, 'lease.json')), false);
  });

  it('deletes a saved discussion without opening a log that is there for writing (a FIFO in its place would hold the delete for good)', async function () {
    if (process.platform === 'win32') this.skip();
    const id = await savedAfterOneTurn();
    const dir = path.join(storage, 'discussions', id);
    const fifo = path.join(dir, 'events.jsonl');
    fs.rmSync(fifo);
    if (spawnSync('mkfifo', [fifo]).status !== 0) this.skip();
    try {
      const h = await server();
      await within(10_000, 'the delete', h.service.delete(id));
      assert.equal(fs.existsSync(dir), false);
    } finally {
      // Had the delete opened it for writing, that open would hold a thread for good.
      removeFifo(fifo, 'writer');
    }
  });

  it('a start that fails part way leaves nothing in the store', async () => {
    const h = await server([], { bindError: new DiscussError('InvalidParams', 'fix .repo-discuss/policy.json') });
    await assert.rejects(h.service.start({ folder }), /policy\.json/);
    assert.deepEqual(fs.readdirSync(path.join(storage, 'discussions')), []);
  });

  it('a resume whose folder cannot be bound gives its lease back and leaves the saved discussion as it was', async () => {
    const first = await server([{ text: 'kept' }]);
    const { discussionId: id } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(id, 't', log.sink);
    await talk(first, id, log, 'q', 1);
    await first.service.dispose();
    harnesses.splice(harnesses.indexOf(first), 1);
    const dir = path.join(storage, 'discussions', id);
    const before = fs.readdirSync(dir).sort().map((name) => [name, fs.readFileSync(path.join(dir, name), 'utf8')]);

    const refused = await server([], { bindError: new DiscussError('InvalidParams', 'fix .repo-discuss/policy.json') });
    await assert.rejects(refused.service.start({ folder, resumeId: id }), /policy\.json/);
    assert.deepEqual(fs.readdirSync(dir).sort().map((name) => [name, fs.readFileSync(path.join(dir, name), 'utf8')]), before);

    const again = await server();
    const resumed = await again.service.start({ folder, resumeId: id });
    assert.equal(resumed.resumed, true);
  });

  it('does not save streamed reasoning, only what the turn settled on', async () => {
    const h = await server([{ text: 'Answer.', reasoning: ['thinking hard'] }]);
    const { discussionId: id } = await h.service.start({ folder });
    const log = new EventLog();
    h.service.subscribe(id, 't', log.sink);
    await talk(h, id, log, 'q', 1);
    const saved = fs.readFileSync(path.join(storage, 'discussions', id, 'events.jsonl'), 'utf8');
    assert.ok(!saved.includes('thinking hard'));
    assert.ok(saved.includes('Answer.'));
  });

  it('saves a turn by appending what changed to record.jsonl, leaving record.json as it was, and a crashed process resumes with those changes', async () => {
    const first = await server([{ text: 'One.' }, { text: 'Two.' }, { text: 'Three.' }]);
    const { discussionId } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(discussionId, 't', log.sink);
    const dir = path.join(storage, 'discussions', discussionId);
    await talk(first, discussionId, log, 'first', 1);
    const recordAfterFirst = fs.readFileSync(path.join(dir, 'record.json'), 'utf8');
    await talk(first, discussionId, log, 'second', 2);
    await talk(first, discussionId, log, 'third', 3);
    assert.equal(fs.readFileSync(path.join(dir, 'record.json'), 'utf8'), recordAfterFirst, 'record.json is not rewritten on each turn');
    assert.ok(fs.readFileSync(path.join(dir, 'record.jsonl'), 'utf8').includes('Three.'));

    // As a crash leaves it: no close, so no fold. A fresh store reads record.json and its journal.
    const reader = await FileStore.open(storage);
    const loaded = await reader.load(discussionId);
    assert.equal(loaded?.snapshot.turns, 3);
    assert.deepEqual(loaded?.snapshot.transcript.map((t) => t.text), ['first', 'One.', 'second', 'Two.', 'third', 'Three.']);
    const listed = (await reader.list()).find((row) => row.discussionId === discussionId);
    assert.equal(listed?.turns, 3);
  });

  it('resuming a discussion writes nothing of it until it changes, and its next turn is saved as any other', async () => {
    const id = await savedAfterOneTurn();
    const dir = path.join(storage, 'discussions', id);
    const filesAsClosed = (): Record<string, string> =>
      Object.fromEntries(['record.json', 'record.jsonl', 'history.jsonl', 'events.jsonl'].map((name) => [name, fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '']));
    const closed = filesAsClosed();

    const second = await server([{ text: 'Two.' }]);
    await second.service.start({ folder, resumeId: id });
    const replay = new EventLog();
    second.service.subscribe(id, 't', replay.sink);
    assert.deepEqual(filesAsClosed(), closed, 'a resume alone rewrites none of the saved files');
    await talk(second, id, replay, 'second', 2);
    // As a crash leaves it: the turn after the resume is on disk without a close.
    const loaded = await (await FileStore.open(storage)).load(id);
    assert.equal(loaded?.snapshot.turns, 2);
    assert.deepEqual(loaded?.snapshot.transcript.map((t) => t.text), ['first', 'One.', 'second', 'Two.']);
  });

  it('a crash after a resume that wrote nothing still never reuses a seq, streamed deltas included', async () => {
    const id = await savedAfterOneTurn();

    const gate = new Gate();
    const second = await server([{ block: gate, deltasBefore: Array.from({ length: 1500 }, () => 'x'), separateReads: true }]);
    await second.service.start({ folder, resumeId: id });
    const seen = new EventLog();
    second.service.subscribe(id, 't', seen.sink);
    second.service.send(id, 'stream a lot');
    await seen.until((e) => e.filter((x) => x.type === 'assistant_delta').length >= 1500);
    const highest = Math.max(...seen.events.map((e) => e.seq));
    harnesses.splice(harnesses.indexOf(second), 1); // crash mid-reply: nothing closed, the deltas never saved

    const third = await server();
    await third.service.start({ folder, resumeId: id });
    const after = new EventLog();
    third.service.subscribe(id, 't', after.sink, highest + 1);
    await after.turnsComplete(1);
    assert.deepEqual(after.types(), ['error', 'turn_complete']);
    assert.ok(after.events.every((e) => e.seq > highest), 'the closing events are numbered past every seq handed out');
    gate.open();
  });

  it('a model chosen when resuming is saved at once', async () => {
    const first = await server();
    const { discussionId: id } = await first.service.start({ folder });
    await first.service.close(id);
    const second = await server();
    await second.service.start({ folder, resumeId: id, model: 'scripted-large' });
    const loaded = await (await FileStore.open(storage)).load(id);
    assert.equal(loaded?.snapshot.model, 'scripted-large');
  });

  it('folds the journal into a whole version-1 record.json when the discussion is closed, and skips journal lines of a journal folded since', async () => {
    const first = await server([{ text: 'One.' }, { text: 'Two.' }]);
    const { discussionId } = await first.service.start({ folder });
    const log = new EventLog();
    first.service.subscribe(discussionId, 't', log.sink);
    const dir = path.join(storage, 'discussions', discussionId);
    await talk(first, discussionId, log, 'first', 1);
    await talk(first, discussionId, log, 'second', 2);
    const staleJournal = fs.readFileSync(path.join(dir, 'record.jsonl'), 'utf8');
    await first.service.close(discussionId);
    const whole = JSON.parse(fs.readFileSync(path.join(dir, 'record.json'), 'utf8')) as { version: number; record: { turns: number }; journal?: string };
    assert.equal(whole.version, 1);
    assert.equal(whole.record.turns, 2);
    assert.equal(whole.journal, undefined);
    // A crash between the fold's rename and the journal's emptying leaves the old lines: they must not apply.
    fs.writeFileSync(path.join(dir, 'record.jsonl'), staleJournal.replace(/"turns":2/g, '"turns":99'));
    const loaded = await (await FileStore.open(storage)).load(discussionId);
    assert.equal(loaded?.snapshot.turns, 2);
  });
});

import { strict as assert } from 'node:assert';
import { getEventListeners } from 'node:events';
import * as fs from 'node:fs';
import type { DiscussionEvent } from '../../../shared/protocol';
import { VSCODE_MODEL_PREFIX } from '../../../shared/protocol';
import type { Logger } from '../../../server/src/core/deps';
import { silentLogger } from '../../../server/src/core/deps';
import type { DiscussionSnapshot } from '../../../server/src/core/discussion';
import { FirstTurnRehearsal, type RehearsalOptions, type RehearsalStage } from '../../../server/src/core/rehearsal';
import type { ChatModel } from '../../../server/src/model/types';
import { DiscussionService } from '../../../server/src/core/service';
import { modelSources } from '../../../server/src/model/sources';
import { memoryStore } from '../../../server/src/store/memoryStore';
import type { DiscussionStore } from '../../../server/src/store/types';
import { EventLog, FakeToolbox, ManualClock, harness, makeTempFolder, type Harness } from '../../support/coreHarness';
import { Gate, ScriptedModel } from '../../support/scriptedModel';

/** A store that keeps nothing and records what reached it. */
function recordingStore(): DiscussionStore & { saved: DiscussionSnapshot[]; events: DiscussionEvent[]; leases: { taken: number; released: number } } {
  const record = {
    ...memoryStore(),
    saved: [] as DiscussionSnapshot[],
    events: [] as DiscussionEvent[],
    leases: { taken: 0, released: 0 },
    save: (snapshot: DiscussionSnapshot) => void record.saved.push(snapshot),
    appendEvent: (_id: string, event: DiscussionEvent) => void record.events.push(event),
    acquire: async () => {
      record.leases.taken++;
      return { release: async () => void record.leases.released++ };
    },
  };
  return record;
}

const go = (): RehearsalOptions => ({ signal: new AbortController().signal });

describe('a turn rehearsed on an open discussion', () => {
  let h: Harness;
  let realStore: ReturnType<typeof recordingStore>;
  let discussionId: string;
  let log: EventLog;

  beforeEach(async () => {
    realStore = recordingStore();
    h = harness([], { store: realStore, files: { 'README.md': '# Demo\n' } });
    ({ discussionId } = await h.service.start({ folder: h.folder }));
    log = new EventLog();
    h.service.subscribe(discussionId, 'client', log.sink);
  });
  afterEach(async () => {
    await h.service.dispose();
    h.cleanup();
  });

  it('runs one whole turn in a service of its own: one request carrying the system prompt and the tools, its saves and events in the scratch store, its lease released', async () => {
    const loopback = new ScriptedModel([{ text: 'Hello.', deltas: ['Hel', 'lo.'] }]);
    const scratch = recordingStore();
    assert.equal(await h.service.rehearse(discussionId, loopback, scratch, go()), true);
    assert.equal(loopback.calls, 1);
    const request = loopback.requests[0];
    assert.equal(request.messages[0].role, 'system');
    assert.ok((request.tools ?? []).some((tool) => tool.name === 'read_file'), 'the tools went with it');
    assert.ok(scratch.saved.some((snapshot) => snapshot.repo === h.folder), 'the discussion was saved to the scratch store');
    const types = scratch.events.map((event) => event.type);
    assert.ok(types.includes('assistant_delta') && types.includes('turn_complete'), `events: ${types.join(', ')}`);
    assert.deepEqual(scratch.leases, { taken: 1, released: 1 });
  });

  it('binds the folder no more and leaves the real discussion alone: no event, no save, no request of the real model, nothing more open or listed', async () => {
    const before = { binds: h.binds, events: log.events.length, saves: realStore.saved.length, appended: realStore.events.length };
    await h.service.rehearse(discussionId, new ScriptedModel([{ text: 'Hello.' }]), recordingStore(), go());
    assert.deepEqual({ binds: h.binds, events: log.events.length, saves: realStore.saved.length, appended: realStore.events.length }, before);
    assert.equal(h.model.calls, 0);
    assert.equal(h.service.openCount, 1);
    assert.deepEqual((await h.service.list()).discussions.map((d) => d.discussionId), [discussionId]);
  });

  it('says, before anything is staged, which discussions it would find a turn to rehearse on: an open one, not a closed or unknown one', async () => {
    assert.equal(h.service.canRehearse(discussionId), true);
    assert.equal(h.service.canRehearse('no-such-discussion'), false);
    await h.service.close(discussionId);
    assert.equal(h.service.canRehearse(discussionId), false);
  });

  it('asks with the model the discussion asks with', async () => {
    const chosen = await h.service.start({ folder: h.folder, model: 'scripted-large' });
    const loopback = new ScriptedModel([{ text: 'Hello.' }]);
    await h.service.rehearse(chosen.discussionId, loopback, recordingStore(), go());
    assert.equal(loopback.requests[0].model, 'scripted-large');
  });

  it('rehearses nothing on a discussion whose model is a VS Code one, which only the client could ask and must not see a rehearsal', async () => {
    const service = new DiscussionService({
      model: new ScriptedModel(),
      repos: { bind: async () => ({ toolbox: new FakeToolbox(h.folder), summary: 'a folder', instructions: [] }) },
      clock: new ManualClock(),
      logger: silentLogger,
      defaultModel: () => `${VSCODE_MODEL_PREFIX}copilot/gpt-4o`,
      denyRead: () => [],
    });
    const started = await service.start({ folder: h.folder });
    assert.equal(service.canRehearse(started.discussionId), false, 'the server is told so before it stages one');
    const loopback = new ScriptedModel([{ text: 'Hello.' }]);
    assert.equal(await service.rehearse(started.discussionId, modelSources(loopback), recordingStore(), go()), false);
    assert.equal(loopback.calls, 0);
    await service.dispose();
  });

  it('rejects with the reason when the turn ends in an error, and still releases its discussion', async () => {
    const scratch = recordingStore();
    await assert.rejects(h.service.rehearse(discussionId, new ScriptedModel([{ fail: new Error('loopback refused') }]), scratch, go()), /loopback refused/);
    assert.deepEqual(scratch.leases, { taken: 1, released: 1 });
  });

  it('leaves nothing listening on its signal once done: the shutdown that aborts it later reaches no discussion', async () => {
    const shutdown = new AbortController();
    assert.equal(await h.service.rehearse(discussionId, new ScriptedModel([{ text: 'Hello.' }]), recordingStore(), { signal: shutdown.signal }), true);
    assert.equal(getEventListeners(shutdown.signal, 'abort').length, 0);
  });

  it('is stopped by its signal: the model call is aborted, the turn ends, and it rejects', async () => {
    const loopback = new ScriptedModel([{ block: new Gate() }]);
    const stop = new AbortController();
    const scratch = recordingStore();
    const rehearsed = h.service.rehearse(discussionId, loopback, scratch, { signal: stop.signal });
    await loopback.waitForCalls(1);
    stop.abort(new Error('stopped for this test'));
    await assert.rejects(rehearsed, /stopped for this test/);
    assert.equal(loopback.aborted, 1);
    assert.deepEqual(scratch.leases, { taken: 1, released: 1 });
  });
});

describe("a server's one rehearsal", () => {
  const turnOf = (model: ScriptedModel) => async (_model: unknown, _scratch: DiscussionStore, options: RehearsalOptions) => {
    // Stands in for DiscussionService.rehearse: a held model call that ends when the rehearsal is stopped.
    const response = model.complete({ messages: [{ role: 'user', content: 'Say hello.' }], signal: options.signal }, () => undefined);
    await response.catch(() => undefined);
    options.signal.throwIfAborted();
    return true;
  };
  const stage: RehearsalStage = (turn) => turn(new ScriptedModel(), memoryStore());
  const recording = (): { logger: Logger; infos: string[] } => {
    const infos: string[] = [];
    return { logger: { ...silentLogger, info: (message) => infos.push(message) }, infos };
  };

  it('runs once, whichever discussions ask after, and says so once', async () => {
    const { logger, infos } = recording();
    let staged = 0;
    const rehearsal = new FirstTurnRehearsal((turn) => (staged++, stage(turn)), { logger, clock: new ManualClock() });
    const model = new ScriptedModel([{ text: 'Hello.' }]);
    await Promise.all([rehearsal.run(turnOf(model)), rehearsal.run(turnOf(model))]);
    await rehearsal.run(turnOf(model));
    assert.equal(staged, 1);
    assert.equal(infos.filter((message) => /^Rehearsed a turn ahead of the first question/.test(message)).length, 1);
  });

  it('leaves its one run to the next discussion when a discussion had nothing to rehearse (closed already, or on a VS Code model)', async () => {
    const { logger, infos } = recording();
    let staged = 0;
    const rehearsal = new FirstTurnRehearsal((turn) => (staged++, stage(turn)), { logger, clock: new ManualClock() });
    await rehearsal.run(async () => false);
    await rehearsal.run(turnOf(new ScriptedModel([{ text: 'Hello.' }])));
    await rehearsal.run(turnOf(new ScriptedModel([{ text: 'Hello.' }])));
    assert.equal(staged, 2, 'the second discussion was rehearsed, and none after it');
    assert.equal(infos.filter((message) => /^Rehearsed a turn ahead of the first question/.test(message)).length, 1);

    // Asked while ones with nothing to rehearse are under way, the next in line waits for them and is tried, once.
    const meanwhile = recording();
    const together = new FirstTurnRehearsal((turn) => (staged++, stage(turn)), { logger: meanwhile.logger, clock: new ManualClock() });
    staged = 0;
    const tried: string[] = [];
    const nothing = (name: string) => async () => (tried.push(name), false);
    const something = (name: string) => async (m: ChatModel, scratch: DiscussionStore, options: RehearsalOptions) => (tried.push(name), turnOf(new ScriptedModel([{ text: 'Hello.' }]))(m, scratch, options));
    await Promise.all([together.run(nothing('a')), together.run(nothing('b')), together.run(something('c')), together.run(something('d'))]);
    assert.deepEqual(tried, ['a', 'b', 'c'], 'each tried in turn until one was rehearsed, and none after it');
    assert.equal(staged, 3);
    assert.equal(meanwhile.infos.filter((message) => /^Rehearsed a turn ahead of the first question/.test(message)).length, 1);
  });

  it('logs a stage that fails, and never throws it', async () => {
    const { logger, infos } = recording();
    const rehearsal = new FirstTurnRehearsal(() => Promise.reject(new Error('no loopback here')), { logger, clock: new ManualClock() });
    await rehearsal.run(turnOf(new ScriptedModel()));
    assert.ok(infos.some((message) => /^The first question was not rehearsed \(no loopback here\)/.test(message)), infos.join('\n'));
  });

  it('runs none once a real question has been asked of the server, whose turn ran that code already', async () => {
    let staged = 0;
    const rehearsal = new FirstTurnRehearsal((turn) => (staged++, stage(turn)), { logger: silentLogger, clock: new ManualClock() });
    rehearsal.questionAsked();
    await rehearsal.run(turnOf(new ScriptedModel()));
    assert.equal(staged, 0);
  });

  it('is stopped by a real question asked while it runs', async () => {
    const { logger, infos } = recording();
    const model = new ScriptedModel([{ block: new Gate() }]);
    const rehearsal = new FirstTurnRehearsal(stage, { logger, clock: new ManualClock() });
    const running = rehearsal.run(turnOf(model));
    await model.waitForCalls(1);
    rehearsal.questionAsked();
    await running;
    assert.equal(model.aborted, 1);
    assert.ok(infos.some((message) => /not rehearsed \(a question came first\)/.test(message)), infos.join('\n'));
  });

  it('is stopped at shutdown: the turn under way ends and none starts after', async () => {
    const { logger, infos } = recording();
    const model = new ScriptedModel([{ block: new Gate() }]);
    let staged = 0;
    const rehearsal = new FirstTurnRehearsal((turn) => (staged++, stage(turn)), { logger, clock: new ManualClock() });
    const running = rehearsal.run(turnOf(model));
    await model.waitForCalls(1);
    await rehearsal.stop();
    await running;
    assert.equal(model.aborted, 1);
    assert.ok(infos.some((message) => /not rehearsed \(the server is shutting down\)/.test(message)), infos.join('\n'));

    const after = new FirstTurnRehearsal((turn) => (staged++, stage(turn)), { logger, clock: new ManualClock() });
    await after.stop();
    await after.run(turnOf(new ScriptedModel()));
    assert.equal(staged, 1, 'nothing staged after a stop');
  });

  it('is stopped past its time limit', async () => {
    const { logger, infos } = recording();
    const model = new ScriptedModel([{ block: new Gate() }]);
    const rehearsal = new FirstTurnRehearsal(stage, { logger, clock: new ManualClock(), limitMs: 1 });
    await rehearsal.run(turnOf(model));
    assert.equal(model.aborted, 1);
    assert.ok(infos.some((message) => /not rehearsed \(it took over 0.001 s\)/.test(message)), infos.join('\n'));
  });
});

describe('a service, told of each question before anything else is done with it', () => {
  it('tells onQuestion of every question sent, with or without attachments, refused or not, and the understudy of a rehearsal never', async () => {
    let told = 0;
    const model = new ScriptedModel([{ text: 'One.' }, { text: 'Two.' }]);
    const folder = makeTempFolder('rd-questions-');
    const service = new DiscussionService({
      model,
      repos: { bind: async () => ({ toolbox: new FakeToolbox(folder), summary: 'a folder', instructions: [] }) },
      clock: new ManualClock(),
      logger: silentLogger,
      defaultModel: () => undefined,
      denyRead: () => [],
      onQuestion: () => told++,
    });
    try {
      const { discussionId } = await service.start({ folder });
      const log = new EventLog();
      service.subscribe(discussionId, 'client', log.sink);
      assert.throws(() => service.send(discussionId, ''));
      assert.equal(told, 1, 'a refused question was still a question');
      service.send(discussionId, 'first');
      await log.turnsComplete(1);
      await service.sendWithAttachments(discussionId, 'second', []);
      await log.turnsComplete(2);
      assert.equal(told, 3);
      await service.rehearse(discussionId, new ScriptedModel([{ text: 'Hello.' }]), memoryStore(), { signal: new AbortController().signal });
      assert.equal(told, 3, "the rehearsal's own question is none");
    } finally {
      await service.dispose();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

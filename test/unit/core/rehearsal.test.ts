import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import type { DiscussionEvent } from '../../../shared/protocol';
import type { CoreDeps, Logger, RepoAccess } from '../../../server/src/core/deps';
import { silentLogger } from '../../../server/src/core/deps';
import type { DiscussionSnapshot } from '../../../server/src/core/discussion';
import { rehearseOnce, rehearseTurn, type RehearsalStage } from '../../../server/src/core/rehearsal';
import { memoryStore } from '../../../server/src/store/memoryStore';
import { modelSources } from '../../../server/src/model/sources';
import { VSCODE_MODEL_PREFIX } from '../../../shared/protocol';
import type { DiscussionStore } from '../../../server/src/store/types';
import { EventLog, FakeToolbox, ManualClock, harness, makeTempFolder } from '../../support/coreHarness';
import { ScriptedModel } from '../../support/scriptedModel';

/** A store that keeps nothing and records what reached it. */
function recordingStore(): DiscussionStore & { saved: DiscussionSnapshot[]; events: DiscussionEvent[]; leases: { taken: number; released: number } } {
  const base = memoryStore();
  const record = {
    ...base,
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

function coreDeps(folder: string, model: ScriptedModel, logger: Logger = silentLogger): CoreDeps {
  const toolbox = new FakeToolbox(folder, { 'README.md': '# Demo\n' });
  const repos: RepoAccess = { bind: async () => ({ toolbox, summary: 'a small test folder', instructions: [] }) };
  return { model, repos, clock: new ManualClock(), logger, defaultModel: () => undefined, denyRead: () => [] };
}

describe('a turn rehearsed ahead of the first question', () => {
  let folder: string;
  beforeEach(() => (folder = makeTempFolder('rd-rehearsal-')));
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it('runs one whole turn on the folder through a discussion of its own: one request carrying the system prompt and the tools, its saves and events in the scratch store, its lease released', async () => {
    const configured = new ScriptedModel();
    const loopback = new ScriptedModel([{ text: 'Hello.', deltas: ['Hel', 'lo.'] }]);
    const scratch = recordingStore();
    await rehearseTurn(coreDeps(folder, configured), folder, loopback, scratch);
    assert.equal(configured.calls, 0, 'the configured model is never asked');
    assert.equal(loopback.calls, 1);
    const request = loopback.requests[0];
    assert.equal(request.messages[0].role, 'system');
    assert.ok((request.tools ?? []).some((tool) => tool.name === 'read_file'), 'the tools went with it');
    assert.ok(scratch.saved.some((snapshot) => snapshot.repo === folder), 'the discussion was saved to the scratch store');
    const types = scratch.events.map((event) => event.type);
    assert.ok(types.includes('assistant_delta') && types.includes('turn_complete'), `events: ${types.join(', ')}`);
    assert.deepEqual(scratch.leases, { taken: 1, released: 1 });
  });

  it('leaves the real discussions alone: none opened, listed or sent an event, and the real store untouched', async () => {
    const realStore = recordingStore();
    const real = harness([], { folder, store: realStore });
    try {
      const { discussionId } = await real.service.start({ folder });
      const log = new EventLog();
      real.service.subscribe(discussionId, 'client', log.sink);
      const before = { events: log.events.length, saves: realStore.saved.length, appended: realStore.events.length };
      await rehearseTurn(coreDeps(folder, real.model), folder, new ScriptedModel([{ text: 'Hello.' }]), recordingStore());
      assert.equal(real.service.openCount, 1);
      assert.deepEqual((await real.service.list()).discussions.map((d) => d.discussionId), [discussionId]);
      assert.deepEqual({ events: log.events.length, saves: realStore.saved.length, appended: realStore.events.length }, before);
      assert.equal(real.model.calls, 0);
    } finally {
      await real.service.dispose();
    }
  });

  it('rehearses through the endpoint\'s path when the default model is a VS Code one, which only the client could ask', async () => {
    const loopback = new ScriptedModel([{ text: 'Hello.' }]);
    const deps = { ...coreDeps(folder, new ScriptedModel()), defaultModel: () => `${VSCODE_MODEL_PREFIX}copilot/gpt-4o` };
    await rehearseTurn(deps, folder, modelSources(loopback), recordingStore());
    assert.equal(loopback.calls, 1);
    assert.equal(loopback.requests[0].model, undefined, "asked of the endpoint's default model");
  });

  it('rejects with the reason when the turn ends in an error, and still releases its discussion', async () => {
    const scratch = recordingStore();
    await assert.rejects(
      rehearseTurn(coreDeps(folder, new ScriptedModel()), folder, new ScriptedModel([{ fail: new Error('loopback refused') }]), scratch),
      /loopback refused/,
    );
    assert.deepEqual(scratch.leases, { taken: 1, released: 1 });
  });

  it('is rehearsed once per server, whichever discussions ask after, and a stage that fails is logged, never thrown', async () => {
    const infos: string[] = [];
    const logger: Logger = { ...silentLogger, info: (message) => infos.push(message) };
    let staged = 0;
    const stage: RehearsalStage = async (turn) => {
      staged++;
      await turn(new ScriptedModel([{ text: 'Hello.' }]), recordingStore());
    };
    const rehearse = rehearseOnce(stage, { logger, clock: new ManualClock(), asked: () => false });
    const deps = coreDeps(folder, new ScriptedModel());
    await Promise.all([rehearse(deps, folder), rehearse(deps, folder)]);
    await rehearse(deps, folder);
    assert.equal(staged, 1);
    assert.equal(infos.filter((message) => /^Rehearsed a turn ahead of the first question/.test(message)).length, 1);

    const failing = rehearseOnce(async () => Promise.reject(new Error('no loopback here')), { logger, clock: new ManualClock(), asked: () => false });
    await failing(deps, folder);
    assert.ok(infos.some((message) => /^The first question was not rehearsed \(no loopback here\)/.test(message)), infos.join('\n'));
  });

  it('is not rehearsed once a real question has been asked of the server, whose turn ran that code already, nor later', async () => {
    let staged = 0;
    let asked = true;
    const rehearse = rehearseOnce(async () => void staged++, { logger: silentLogger, clock: new ManualClock(), asked: () => asked });
    const deps = coreDeps(folder, new ScriptedModel());
    await rehearse(deps, folder);
    asked = false;
    await rehearse(deps, folder);
    assert.equal(staged, 0);
  });
});

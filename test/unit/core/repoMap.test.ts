import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../../server/src/core/deps';
import { DiscussionService } from '../../../server/src/core/service';
import { createRepoAccess } from '../../../server/src/read/repoAccess';
import { sharedModelThread } from '../../../server/src/model/threaded/threadedModel';
import type { FileIndex } from '../../../server/src/symbols/indexer';
import { BuiltMap, estimateTokens, MapBuilder, RepoMaps } from '../../../server/src/symbols/repoMap';
import { EventLog, makeTempFolder, ManualClock } from '../../support/coreHarness';
import { Gate, ScriptedModel } from '../../support/scriptedModel';

/** `count` files of four functions each, ranked in order. */
function builtMap(count: number): BuiltMap {
  const files = new Map<string, FileIndex>();
  for (let i = 0; i < count; i++) {
    const relativePath = `src/module${i}.ts`;
    const symbols = Array.from({ length: 4 }, (_, k) => ({ name: `run${i}x${k}`, kind: 'function' as const, line: k + 1, startLine: k + 1, endLine: k + 1, text: `export function run${i}x${k}(input: string): number {` }));
    files.set(relativePath, { relativePath, realPath: relativePath, stamp: '1:1', symbols, problems: [], moreProblems: 0, imports: [], reexports: [] });
  }
  return { ranked: [...files.keys()].map((relativePath, i) => ({ relativePath, rank: 1 / (i + 1) })), files };
}

const MAP_HEADING = '## Repository map';

describe('the repository map in a discussion', () => {
  let folder: string;
  let service: DiscussionService | undefined;
  let model: ScriptedModel;
  afterEach(async () => {
    await service?.dispose();
    service = undefined;
    fs.rmSync(folder, { recursive: true, force: true });
  });

  /** The service of the test (serviceWith made it). */
  function discussions(): DiscussionService {
    assert.ok(service, 'serviceWith was called');
    return service;
  }

  function serviceWith(build: MapBuilder, contextTokens?: number): RepoMaps {
    folder = makeTempFolder('rd-map-core-');
    model = new ScriptedModel();
    const maps = new RepoMaps(build);
    service = new DiscussionService({
      model,
      repos: createRepoAccess({ ripgrepPath: null, repoMaps: maps }),
      clock: new ManualClock(),
      logger: silentLogger,
      defaultModel: () => undefined,
      denyRead: () => [],
      contextTokens: () => contextTokens,
    });
    return maps;
  }

  async function ask(discussionId: string, log: EventLog, text: string, turn: number): Promise<string> {
    discussions().send(discussionId, text);
    await log.turnsComplete(turn);
    return model.requests[model.requests.length - 1].messages[0].content as string;
  }

  it('neither holds discuss/start for the map nor builds it then; a question asked first starts it, goes without it, and the next model call after it is built carries it', async () => {
    const gate = new Gate();
    let builds = 0;
    const maps = serviceWith(async () => {
      builds++;
      await gate.opened;
      return builtMap(3);
    });
    // The builder cannot finish before the gate opens, and the gate opens only after start answers: a start that waited would never answer.
    const { discussionId } = await discussions().start({ folder });
    assert.equal(builds, 0, 'no build while the discussion opens');
    const log = new EventLog();
    discussions().subscribe(discussionId, 'test', log.sink, 0);

    const before = await ask(discussionId, log, 'What is here?', 1);
    assert.equal(builds, 1);
    assert.ok(!before.includes(MAP_HEADING), before);
    assert.equal(log.of('error').length, 0);

    gate.open();
    await maps.settled(folder, []);
    const after = await ask(discussionId, log, 'And now?', 2);
    assert.ok(after.includes(`${MAP_HEADING}\n`), after);
    assert.match(after, /^src\/module0\.ts:\n {2}function run0x0\(input: string\): number$/m);
    assert.ok(after.startsWith(before.trimEnd()), 'the map is added after the prompt, which is otherwise unchanged');
  });

  it("starts the map's build from the binding's prepare, which waits for it, and the first question after carries it", async () => {
    const gate = new Gate();
    let builds = 0;
    folder = makeTempFolder('rd-map-prepare-');
    const access = createRepoAccess({
      ripgrepPath: null,
      mapWaitMs: 60_000,
      repoMaps: new RepoMaps(async () => {
        builds++;
        await gate.opened;
        return builtMap(3);
      }),
    });
    const binding = await access.bind(folder, []);
    assert.equal(builds, 0, 'no build while binding');
    let prepared = false;
    const preparing = binding.prepare!().then(() => (prepared = true));
    assert.equal(builds, 1);
    await binding.toolbox.warm?.();
    assert.equal(prepared, false, 'prepare waits for the map');
    assert.equal(binding.repoMap!(4_000), undefined);
    gate.open();
    await preparing;
    assert.match(binding.repoMap!(4_000) ?? '', /^src\/module0\.ts:$/m);
  });

  it('stops waiting for a map that takes longer than its wait, which then joins the prompt when built', async () => {
    const gate = new Gate();
    folder = makeTempFolder('rd-map-slow-');
    const maps = new RepoMaps(async () => {
      await gate.opened;
      return builtMap(3);
    });
    const binding = await createRepoAccess({ ripgrepPath: null, mapWaitMs: 0, repoMaps: maps }).bind(folder, []);
    await binding.prepare!();
    assert.equal(binding.repoMap!(4_000), undefined);
    gate.open();
    await maps.settled(folder, []);
    assert.ok(binding.repoMap!(4_000));
  });

  it('builds no map, in prepare or at a read, for a policy that denies list_symbols', async () => {
    let builds = 0;
    folder = makeTempFolder('rd-map-denied-');
    fs.mkdirSync(path.join(folder, '.repo-discuss'));
    fs.writeFileSync(path.join(folder, '.repo-discuss', 'policy.json'), JSON.stringify({ denyTools: ['list_symbols'] }));
    const binding = await createRepoAccess({
      ripgrepPath: null,
      repoMaps: new RepoMaps(async () => {
        builds++;
        return builtMap(3);
      }),
    }).bind(folder, []);
    await binding.prepare?.();
    assert.equal(binding.repoMap, undefined);
    assert.equal(builds, 0);
  });

  it('counts the system prompt with the map built during the preparation ahead, so the first question does not count it again', async () => {
    serviceWith(async () => builtMap(40), 4_096);
    const { discussionId } = await discussions().start({ folder });
    const counter = sharedModelThread();
    const asked: string[] = [];
    const count = counter.count;
    counter.count = (texts) => (asked.push(...texts), count.call(counter, texts));
    try {
      await discussions().prepareAhead(discussionId);
      assert.ok(asked.some((text) => text.includes(MAP_HEADING)), 'the prompt with its map counted ahead');
      asked.length = 0;
      const log = new EventLog();
      discussions().subscribe(discussionId, 'test', log.sink, 0);
      assert.ok((await ask(discussionId, log, 'Map?', 1)).includes(MAP_HEADING));
      assert.ok(!asked.some((text) => text.includes(MAP_HEADING)), 'the system prompt was counted again for the first question');
    } finally {
      counter.count = count;
    }
  });

  it('goes without a map, and without an error, when building it fails', async () => {
    serviceWith(async () => {
      throw new Error('grammar failed to load');
    });
    const { discussionId } = await discussions().start({ folder });
    await discussions().prepareAhead(discussionId);
    const log = new EventLog();
    discussions().subscribe(discussionId, 'test', log.sink, 0);
    const system = await ask(discussionId, log, 'Hello?', 1);
    assert.ok(!system.includes(MAP_HEADING));
    assert.deepEqual(log.of('error'), []);
  });

  for (const [window, budget] of [[4_096, 1_000], [16_000, 2_000], [200_000, 4_000]] as const) {
    it(`gives the map ${budget} tokens of a ${window}-token window (an eighth, clamped to 1,000–4,000)`, async () => {
      serviceWith(async () => builtMap(400), window);
      const { discussionId } = await discussions().start({ folder });
      await discussions().prepareAhead(discussionId);
      const log = new EventLog();
      discussions().subscribe(discussionId, 'test', log.sink, 0);
      const system = await ask(discussionId, log, 'Map?', 1);
      const map = system.slice(system.indexOf(MAP_HEADING)).split('\n').slice(2).join('\n');
      assert.ok(estimateTokens(map) <= budget, `${estimateTokens(map)} > ${budget}`);
      assert.ok(estimateTokens(map) > budget * 0.8, `${estimateTokens(map)} of ${budget}`);
    });
  }
});

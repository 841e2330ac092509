import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashOf } from '../../../server/src/core/decisions';
import type { ChatMessage } from '../../../server/src/model/types';
import { EventLog, harness, type Harness } from '../../support/coreHarness';
import type { ScriptStep } from '../../support/scriptedModel';
import { testGit } from '../../support/testGit';

const git = testGit;

function record(args: Record<string, unknown>): ScriptStep {
  return { text: '', toolCalls: [{ name: 'record_decision', arguments: JSON.stringify(args) }] };
}

function systemOf(messages: ChatMessage[]): string {
  const first = messages[0];
  assert.equal(first.role, 'system');
  return String(first.content);
}

const CONFIG = ['export const config = {', '  retries: 3,', '  timeoutMs: 500,', '};', ''].join('\n');

describe('the decision log', () => {
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

  function gitFolder(): void {
    fs.writeFileSync(path.join(h.folder, 'config.ts'), CONFIG);
    fs.writeFileSync(path.join(h.folder, '.env'), 'TOKEN=1\n');
    fs.writeFileSync(path.join(h.folder, '.gitignore'), '.env\n');
    git(h.folder, 'init', '-q');
    git(h.folder, 'add', '-A');
    git(h.folder, 'commit', '-q', '-m', 'start');
  }

  it('record_decision gives the entry an id, emits decision_recorded, and stores the cited line, its hash and HEAD', async () => {
    h = harness(
      [record({ kind: 'constraint', text: 'Keep three retries.', evidence: [{ path: 'config.ts', line: 2 }] }), { text: 'Noted.' }],
      { realReads: true },
    );
    gitFolder();
    const head = git(h.folder, 'rev-parse', 'HEAD').trim();
    const { id, log } = await open();
    h.service.send(id, 'Retries must stay at three.');
    await log.turnsComplete();
    const [event] = log.of('decision_recorded');
    assert.ok(event, `no decision_recorded in ${log.types().join(',')}`);
    assert.equal(event.decision.id, 'd1');
    assert.equal(event.decision.kind, 'constraint');
    assert.deepEqual(event.decision.evidence, [{ path: 'config.ts', line: 2, hash: hashOf('  retries: 3,'), text: '  retries: 3,', commit: head }]);
    assert.deepEqual(h.service.decisions(id).map((d) => d.id), ['d1']);
    const answer = h.model.requests[1].messages.at(-1);
    assert.match(String(answer?.content), /Recorded as d1/);
  });

  it('refuses evidence a read would refuse (a secret, a path outside the folder) and records nothing', async () => {
    h = harness(
      [
        record({ kind: 'constraint', text: 'Token stays.', evidence: [{ path: '.env' }] }),
        record({ kind: 'constraint', text: 'Outside.', evidence: [{ path: '../../etc/passwd', line: 1 }] }),
        { text: 'ok' },
      ],
      { realReads: true },
    );
    gitFolder();
    const { id, log } = await open();
    h.service.send(id, 'go');
    await log.turnsComplete();
    assert.equal(log.of('decision_recorded').length, 0);
    assert.deepEqual(h.service.decisions(id), []);
    const results = log.of('tool_result');
    assert.equal(results.length, 2);
    assert.ok(results.every((r) => !r.ok), JSON.stringify(results));
  });

  it('rides in every request, even when old turns no longer fit the window', async () => {
    const long = 'x'.repeat(6000);
    h = harness([record({ kind: 'constraint', text: 'Never change the public API.' }), { text: long }], { contextTokens: 4000 });
    const { id, log } = await open();
    h.service.send(id, 'Agree: never change the public API.');
    await log.turnsComplete(1);
    for (let turn = 2; turn <= 6; turn++) {
      h.model.push({ text: long });
      h.service.send(id, `${long} question ${turn}`);
      await log.turnsComplete(turn);
    }
    for (const request of h.model.requests.slice(1)) {
      assert.match(systemOf(request.messages), /\[d1\] Never change the public API\./);
    }
    // The window really was exceeded: the first turn was trimmed from the last request.
    const last = h.model.requests.at(-1)!.messages;
    assert.ok(!last.some((m) => m.role === 'user' && String(m.content).startsWith('Agree')), 'the first turn should have been trimmed');
  });

  it("the user's edit and delete reach the model on its next call and are events", async () => {
    h = harness([record({ kind: 'constraint', text: 'Use tabs.' }), { text: 'ok' }, record({ kind: 'question', text: 'Which Node?' }), { text: 'ok' }]);
    const { id, log } = await open();
    h.service.send(id, 'first');
    await log.turnsComplete(1);
    h.service.send(id, 'second');
    await log.turnsComplete(2);
    const edited = h.service.editDecision(id, 'd1', { text: 'Use two spaces.' });
    assert.equal(edited.by, 'user');
    h.service.deleteDecision(id, 'd2');
    h.service.send(id, 'third');
    await log.turnsComplete(3);
    const system = systemOf(h.model.requests.at(-1)!.messages);
    assert.match(system, /\[d1\] Use two spaces\./);
    assert.doesNotMatch(system, /Use tabs|Which Node/);
    assert.deepEqual(log.of('decision_recorded').map((e) => [e.decision.id, e.decision.text]), [
      ['d1', 'Use tabs.'],
      ['d2', 'Which Node?'],
      ['d1', 'Use two spaces.'],
    ]);
    assert.deepEqual(log.of('decision_deleted').map((e) => e.id), ['d2']);
  });

  it('"replaces" supersedes an entry: a resolved question leaves the open questions', async () => {
    h = harness([
      record({ kind: 'question', text: 'Support Windows?' }),
      record({ kind: 'resolved', text: 'Windows is out of scope.', replaces: 'd1' }),
      { text: 'ok' },
    ]);
    const { id, log } = await open();
    h.service.send(id, 'go');
    await log.turnsComplete();
    assert.deepEqual(h.service.decisions(id).map((d) => [d.id, d.kind, d.replaces]), [['d2', 'resolved', 'd1']]);
  });

  it('"Prepare coding task" starts from the log: its constraints first, what the distillation added marked, open questions listed', async () => {
    h = harness([
      record({ kind: 'constraint', text: 'Keep the CLI flags.' }),
      record({ kind: 'question', text: 'Should --quiet imply --json?' }),
      record({ kind: 'rejected', text: 'A config file: too heavy for one flag.' }),
      { text: 'ok' },
      { text: JSON.stringify({ proposed_intent: 'Add a --json flag.', constraints: ['keep the CLI flags.', 'Write a test.'] }) },
    ]);
    const { id, log } = await open();
    h.service.send(id, 'plan it');
    await log.turnsComplete();
    const task = await h.service.promote(id);
    assert.deepEqual(task.constraints, ['Keep the CLI flags.', 'Write a test.']);
    assert.deepEqual(task.constraintSources?.map((s) => [s.source, s.decisionId]), [
      ['decision', 'd1'],
      ['distilled', undefined],
    ]);
    assert.deepEqual(task.openQuestions, ['Should --quiet imply --json?']);
    const [card] = log.of('task_prepared');
    assert.deepEqual(card.openQuestions, ['Should --quiet imply --json?']);
  });

  it('marks a constraint stale at hand-off when its cited line was edited, with the diff of that line', async () => {
    h = harness(
      [
        record({ kind: 'constraint', text: 'Keep three retries.', evidence: [{ path: 'config.ts', line: 2 }] }),
        record({ kind: 'constraint', text: 'Timeout stays.', evidence: [{ path: 'config.ts', line: 3 }] }),
        { text: 'ok' },
      ],
      { realReads: true },
    );
    gitFolder();
    const { id, log } = await open();
    h.service.send(id, 'go');
    await log.turnsComplete();
    fs.writeFileSync(path.join(h.folder, 'config.ts'), CONFIG.replace('retries: 3', 'retries: 5'));
    const handoff = await h.service.consumeTask(id, 'markdown', { intent: 'Tune it.', constraints: ['Keep three retries.', 'Timeout stays.'] });
    const [retries, timeout] = handoff.constraintSources!;
    assert.deepEqual(retries.evidence, ['config.ts:2']);
    assert.equal(retries.stale?.length, 1);
    assert.equal(retries.stale![0].diff, '-   retries: 3,\n+   retries: 5,');
    assert.equal(timeout.stale, undefined);
  });

  it('marks a constraint stale after a commit changed its cited line, naming both commits', async () => {
    h = harness([record({ kind: 'constraint', text: 'Keep three retries.', evidence: [{ path: 'config.ts', line: 2 }] }), { text: 'ok' }], {
      realReads: true,
    });
    gitFolder();
    const recorded = git(h.folder, 'rev-parse', 'HEAD').trim();
    const { id, log } = await open();
    h.service.send(id, 'go');
    await log.turnsComplete();
    fs.writeFileSync(path.join(h.folder, 'config.ts'), '// header\n' + CONFIG);
    git(h.folder, 'commit', '-q', '-am', 'header');
    const current = git(h.folder, 'rev-parse', 'HEAD').trim();
    const handoff = await h.service.consumeTask(id, 'markdown', { intent: 'Tune it.', constraints: ['Keep three retries.'] });
    const stale = handoff.constraintSources![0].stale!;
    assert.equal(stale.length, 1);
    assert.equal(stale[0].recordedCommit, recorded);
    assert.equal(stale[0].currentCommit, current);
    assert.equal(handoff.commit, current);
  });

  it('a policy that denies record_decision leaves it unadvertised and refused', async () => {
    h = harness([record({ kind: 'constraint', text: 'x' }), { text: 'ok' }], { denied: ['record_decision'] });
    const { id, log } = await open();
    h.service.send(id, 'go');
    await log.turnsComplete();
    assert.ok(!h.model.requests[0].tools!.some((t) => t.name === 'record_decision'));
    assert.equal(log.of('decision_recorded').length, 0);
    assert.equal(log.of('tool_result')[0].ok, false);
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Decision, DiscussionEvent, Handoff, PromoteRequest, StartRequest } from '../../shared/protocol';
import { createGate, startFakeOpenAI, type FakeOpenAI, type FakeStep, type RecordedRequest } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

function recordStep(id: string, args: Record<string, unknown>): FakeStep {
  return { kind: 'toolCalls', calls: [{ id, name: 'record_decision', arguments: JSON.stringify(args) }] };
}

function systemPromptOf(request: RecordedRequest): string {
  const first = request.body?.messages?.[0];
  assert.equal(first?.role, 'system');
  return String(first?.content);
}

const APP = 'export const answer = 42;\n\nexport function greet(name: string): string {\n  return `hello ${name}`;\n}\n';

describe('the decision log, against the real server process', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let work: string;
  let repo: string;
  const servers: ServerProcess[] = [];

  const server = async (): Promise<ServerProcess> => {
    const s = await ServerProcess.start({ storageDir: path.join(work, 'storage'), model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'm' } });
    servers.push(s);
    return s;
  };
  const open = async (s: ServerProcess, resumeId?: string): Promise<{ id: string; replayed: number }> => {
    const started = await s.request<StartRequest.Result>('discuss/start', { folder: repo, ...(resumeId ? { resumeId } : {}) });
    const { eventsReplayed } = await s.request<{ eventsReplayed: number }>('discuss/subscribe', { discussionId: started.discussionId, fromSeq: 0 });
    await s.until((events) => events.filter((e) => e.discussionId === started.discussionId).length >= eventsReplayed);
    return { id: started.discussionId, replayed: eventsReplayed };
  };
  const decisionEvents = (s: ServerProcess, id: string): Array<Omit<DiscussionEvent, 'ts'>> =>
    s.events.filter((e) => e.discussionId === id && (e.type === 'decision_recorded' || e.type === 'decision_deleted')).map(({ ts: _ts, ...rest }) => rest);

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['m'], fallback: { kind: 'text', text: 'ok' } });
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-decisions-')));
    repo = path.join(work, 'repo');
    fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), APP);
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop().catch(() => s.kill());
    await fake.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('a decision recorded mid-turn survives SIGKILL: replayed with the same seq, listed, and in the resumed request', async () => {
    const first = await server();
    const { id } = await open(first);
    const gate = createGate();
    fake.push(
      recordStep('r1', { kind: 'constraint', text: 'greet keeps its signature.', evidence: [{ path: 'src/app.ts', line: 3 }] }),
      { kind: 'gate', gate, then: { kind: 'text', text: 'never sent' } },
    );
    await first.request('discuss/send', { discussionId: id, text: 'greet must keep its signature' });
    await gate.reached;
    // The event travels on the client connection, the request on HTTP: wait for it, not for the gate alone.
    await first.until(() => decisionEvents(first, id).length >= 1);
    const seen = decisionEvents(first, id);
    assert.equal(seen.length, 1);
    const recorded = (seen[0] as unknown as { decision: Decision }).decision;
    assert.equal(recorded.id, 'd1');
    assert.deepEqual(recorded.evidence.map((e) => [e.path, e.line, e.text]), [['src/app.ts', 3, 'export function greet(name: string): string {']]);
    await first.kill();
    servers.splice(servers.indexOf(first), 1);

    const second = await server();
    await open(second, id);
    assert.deepEqual(decisionEvents(second, id), seen, 'the decision_recorded event is replayed unchanged');
    const listed = await second.request<{ decisions: Decision[] }>('discuss/decisions', { discussionId: id });
    assert.deepEqual(listed.decisions, [recorded]);
    const before = fake.completionRequests.length;
    await second.request('discuss/send', { discussionId: id, text: 'and now?' });
    await second.turnsComplete(id, second.of(id, 'turn_complete').length + 1);
    assert.match(systemPromptOf(fake.completionRequests[before]), /\[d1\] greet keeps its signature\.\n {2}- evidence: src\/app\.ts:3$/m);
  });

  it("the user's edit and delete are events, saved, and what the model reads on its next call", async () => {
    const s = await server();
    const { id } = await open(s);
    fake.push(recordStep('r1', { kind: 'constraint', text: 'Use tabs.' }), recordStep('r2', { kind: 'question', text: 'Which Node version?' }), {
      kind: 'text',
      text: 'Recorded.',
    });
    await s.request('discuss/send', { discussionId: id, text: 'tabs, and which Node?' });
    await s.turnsComplete(id, 1);
    await s.request('discuss/editDecision', { discussionId: id, id: 'd1', text: 'Use two spaces.' });
    await s.request('discuss/deleteDecision', { discussionId: id, id: 'd2' });
    const before = fake.completionRequests.length;
    await s.request('discuss/send', { discussionId: id, text: 'go on' });
    await s.turnsComplete(id, 2);
    const system = systemPromptOf(fake.completionRequests[before]);
    assert.match(system, /\[d1\] Use two spaces\./);
    assert.doesNotMatch(system, /Use tabs|Which Node/);
    await s.request('discuss/close', { discussionId: id });

    const again = await server();
    await open(again, id);
    const listed = await again.request<{ decisions: Decision[] }>('discuss/decisions', { discussionId: id });
    assert.deepEqual(listed.decisions.map((d) => [d.id, d.text, d.by]), [['d1', 'Use two spaces.', 'user']]);
    assert.deepEqual(decisionEvents(again, id).map((e) => e.type), ['decision_recorded', 'decision_recorded', 'decision_recorded', 'decision_deleted']);
  });

  it('"Prepare coding task" starts from the log, and the hand-off marks a constraint whose cited line changed', async () => {
    const s = await server();
    const { id } = await open(s);
    fake.push(
      recordStep('r1', { kind: 'constraint', text: 'greet keeps its signature.', evidence: [{ path: 'src/app.ts', line: 3 }] }),
      recordStep('r2', { kind: 'question', text: 'Localize the greeting?' }),
      { kind: 'text', text: 'Noted.' },
      { kind: 'text', text: JSON.stringify({ proposed_intent: 'Make greet polite.', constraints: ['Add a test.'] }) },
    );
    await s.request('discuss/send', { discussionId: id, text: 'plan' });
    await s.turnsComplete(id, 1);
    const task = await s.request<PromoteRequest.Result>('discuss/promote', { discussionId: id });
    assert.deepEqual(task.constraints, ['greet keeps its signature.', 'Add a test.']);
    assert.deepEqual(task.constraintSources?.map((c) => c.source), ['decision', 'distilled']);
    assert.deepEqual(task.openQuestions, ['Localize the greeting?']);
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), APP.replace('name: string): string', 'name: string, polite = true): string'));
    const { handoff } = await s.request<{ handoff: Handoff }>('discuss/consumeTask', { discussionId: id, target: 'markdown' });
    const stale = handoff.constraintSources?.[0].stale;
    assert.equal(stale?.length, 1);
    assert.equal(stale![0].diff, '- export function greet(name: string): string {\n+ export function greet(name: string, polite = true): string {');
    assert.equal(handoff.constraintSources?.[1].stale, undefined);
  });
});

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscussionEvent, Handoff, Review, StartRequest } from '../../shared/protocol';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

const APP = 'export const answer = 42;\n\nexport function greet(name: string): string {\n  return `hello ${name}`;\n}\n';
const TASK = {
  intent: 'Make greet polite.',
  constraints: ['greet keeps its signature.', 'answer stays 42.'],
};

/** What the scripted model answers: the first constraint kept, the second broken, one change nobody asked for. */
const STRUCTURED = {
  constraints: [
    { index: 1, status: 'met', evidence: ['src/app.ts:3'], note: 'The signature is unchanged.' },
    { index: 2, status: 'not met', evidence: ['src/app.ts:1'], note: 'answer became 43.' },
  ],
  unrequested: [{ text: 'Adds a README line.', evidence: ['README.md:1'] }],
};

describe('discuss/review, against the real server process', function () {
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
  const open = async (s: ServerProcess, resumeId?: string): Promise<string> => {
    const started = await s.request<StartRequest.Result>('discuss/start', { folder: repo, ...(resumeId ? { resumeId } : {}) });
    const { eventsReplayed } = await s.request<{ eventsReplayed: number }>('discuss/subscribe', { discussionId: started.discussionId, fromSeq: 0 });
    await s.until((events) => events.filter((e) => e.discussionId === started.discussionId).length >= eventsReplayed);
    return started.discussionId;
  };
  const reviewEvents = (s: ServerProcess, id: string): Review[] =>
    s.events.filter((e): e is Extract<DiscussionEvent, { type: 'review' }> => e.discussionId === id && e.type === 'review').map((e) => e.review);
  /** The implementation: the signature kept, `answer` changed (committed), a README line added (uncommitted). */
  const implement = (): void => {
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), APP.replace('answer = 42', 'answer = 43').replace('`hello ${name}`', '`hello, dear ${name}`'));
    git(repo, ['commit', '-qam', 'polite greet']);
    fs.writeFileSync(path.join(repo, 'README.md'), 'A polite app.\n');
    git(repo, ['add', 'README.md']);
  };

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['m'], fallback: { kind: 'text', text: 'ok' } });
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-review-')));
    repo = path.join(work, 'repo');
    fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), APP);
    git(repo, ['init', '-q']);
    git(repo, ['add', '.']);
    git(repo, ['commit', '-qm', 'start']);
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop().catch(() => s.kill());
    await fake.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('compares the diff since the hand-off commit with each constraint: one met, one not met, the unasked change listed; saved and replayed; no file changed', async () => {
    const s = await server();
    const id = await open(s);
    const { handoff } = await s.request<{ handoff: Handoff }>('discuss/consumeTask', { discussionId: id, target: 'markdown', task: TASK });
    assert.equal(handoff.commit, git(repo, ['rev-parse', 'HEAD']).trim());
    implement();
    const before = git(repo, ['status', '--porcelain']) + git(repo, ['rev-parse', 'HEAD']);

    fake.push({ kind: 'text', text: '```json\n' + JSON.stringify(STRUCTURED) + '\n```' });
    const requestsBefore = fake.completionRequests.length;
    const { review } = await s.request<{ review: Review }>('discuss/review', { discussionId: id });

    assert.deepEqual(
      review.items.map((i) => [i.constraint, i.status, i.evidence]),
      [
        ['greet keeps its signature.', 'met', ['src/app.ts:3']],
        ['answer stays 42.', 'not met', ['src/app.ts:1']],
      ],
    );
    assert.deepEqual(review.unrequested, [{ text: 'Adds a README line.', evidence: ['README.md:1'] }]);
    assert.equal(review.base, handoff.commit);
    assert.equal(review.intent, TASK.intent);

    const sent = fake.completionRequests[requestsBefore].body!;
    assert.equal(sent.temperature, 0);
    assert.equal(sent.tools, undefined, 'the review request offers no tools');
    const prompt = String(sent.messages?.[0]?.content);
    assert.match(prompt, /-export const answer = 42;\n\+export const answer = 43;/, 'the committed change is in the diff');
    assert.match(prompt, /\+A polite app\./, 'the uncommitted change is in the diff');
    assert.match(prompt, /1\. greet keeps its signature\.\n2\. answer stays 42\./);
    assert.equal(git(repo, ['status', '--porcelain']) + git(repo, ['rev-parse', 'HEAD']), before, 'the review changed no file');

    await s.until(() => reviewEvents(s, id).length === 1);
    assert.deepEqual(reviewEvents(s, id), [review]);
    await s.request('discuss/close', { discussionId: id });
    const again = await server();
    await open(again, id);
    assert.deepEqual(reviewEvents(again, id), [review], 'the review is saved and replayed on resume');
  });

  it('a hand-off is an event (task_handed_off, with the commit the review diffs from), so a client knows it may offer a review, also after resume', async () => {
    const s = await server();
    const id = await open(s);
    const handedOff = (p: ServerProcess) => p.events.filter((e) => e.discussionId === id && e.type === 'task_handed_off');
    assert.equal(handedOff(s).length, 0);
    const { handoff } = await s.request<{ handoff: Handoff }>('discuss/consumeTask', { discussionId: id, target: 'markdown', task: TASK });
    await s.until(() => handedOff(s).length === 1);
    assert.deepEqual(
      handedOff(s).map((e) => e.type === 'task_handed_off' && { target: e.target, commit: e.commit }),
      [{ target: 'markdown', commit: handoff.commit }],
    );
    await s.request('discuss/close', { discussionId: id });
    const again = await server();
    await open(again, id);
    assert.equal(handedOff(again).length, 1, 'replayed on resume');
  });

  it('a malformed answer is asked for once more; unknown statuses and skipped constraints read as "cannot tell"', async () => {
    const s = await server();
    const id = await open(s);
    await s.request('discuss/consumeTask', { discussionId: id, task: TASK });
    implement();
    fake.push(
      { kind: 'text', text: 'Looks fine to me!' },
      { kind: 'text', text: JSON.stringify({ constraints: [{ index: 1, status: 'probably', evidence: ['src/app.ts:3', 7] }] }) },
    );
    const requestsBefore = fake.completionRequests.length;
    const { review } = await s.request<{ review: Review }>('discuss/review', { discussionId: id });
    assert.equal(fake.completionRequests.length - requestsBefore, 2);
    assert.deepEqual(review.items.map((i) => [i.status, i.evidence]), [
      ['cannot tell', ['src/app.ts:3']],
      ['cannot tell', []],
    ]);
  });

  it('two malformed answers end in a clear error and no review event', async () => {
    const s = await server();
    const id = await open(s);
    await s.request('discuss/consumeTask', { discussionId: id, task: TASK });
    fake.push({ kind: 'text', text: 'no json' }, { kind: 'text', text: '{"constraints": "all good"}' }, { kind: 'text', text: JSON.stringify(STRUCTURED) });
    const requestsBefore = fake.completionRequests.length;
    await assert.rejects(s.request('discuss/review', { discussionId: id }), /review could not be read after 2 attempts: the reply had no "constraints" list/);
    assert.equal(fake.completionRequests.length - requestsBefore, 2, 'never asked a third time');
    assert.deepEqual(reviewEvents(s, id), []);
  });

  it('before any hand-off the review is refused plainly, and the model is not asked', async () => {
    const s = await server();
    const id = await open(s);
    const requestsBefore = fake.completionRequests.length;
    await assert.rejects(s.request('discuss/review', { discussionId: id }), /Nothing has been handed off in this discussion yet/);
    assert.equal(fake.completionRequests.length, requestsBefore);
  });

  it('with "base" it diffs from there, and a base that reads as an option is refused', async () => {
    const s = await server();
    const id = await open(s);
    await s.request('discuss/consumeTask', { discussionId: id, task: TASK });
    implement();
    const first = git(repo, ['rev-list', '--max-parents=0', 'HEAD']).trim();
    fake.push({ kind: 'text', text: JSON.stringify(STRUCTURED) });
    const requestsBefore = fake.completionRequests.length;
    const { review } = await s.request<{ review: Review }>('discuss/review', { discussionId: id, base: first });
    assert.equal(review.base, first);
    assert.match(String(fake.completionRequests[requestsBefore].body!.messages?.[0]?.content), /\+export const answer = 43;/);
    await assert.rejects(s.request('discuss/review', { discussionId: id, base: '--output=/tmp/x' }), /Invalid base/);
  });

  it('a hand-off with no commit (a repository with none yet) is reviewed against the working tree', async () => {
    fs.rmSync(path.join(repo, '.git'), { recursive: true, force: true });
    git(repo, ['init', '-q']);
    const s = await server();
    const id = await open(s);
    const { handoff } = await s.request<{ handoff: Handoff }>('discuss/consumeTask', { discussionId: id, task: TASK });
    assert.equal(handoff.commit, undefined);
    git(repo, ['add', '.']);
    fake.push({ kind: 'text', text: JSON.stringify(STRUCTURED) });
    const requestsBefore = fake.completionRequests.length;
    const { review } = await s.request<{ review: Review }>('discuss/review', { discussionId: id });
    assert.equal(review.base, undefined);
    assert.match(review.compared, /uncommitted changes/);
    assert.match(String(fake.completionRequests[requestsBefore].body!.messages?.[0]?.content), /\+export function greet\(name: string\): string \{/);
  });
});

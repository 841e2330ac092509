import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGate, echoLastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import type { ListRequest } from '../../shared/protocol';
import { testGit } from '../support/testGit';
import { PROMPT, Sandbox, TerminalProcess, countOf, runClient, stripAnsi } from './terminalProcess';

const scriptAvailable = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;

describe('repo-discuss, interactive', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let sandbox: Sandbox;
  const clients: TerminalProcess[] = [];

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['fake-model'] });
    sandbox = new Sandbox();
    fs.writeFileSync(path.join(sandbox.repo, 'main.py'), 'print("hello")\n');
    fs.writeFileSync(path.join(sandbox.repo, '.env'), 'TOKEN=do-not-show\n');
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const c of clients) console.log(c.transcript());
    for (const c of clients.splice(0)) {
      c.kill();
      await c.exited;
    }
    await fake.close();
    sandbox.remove();
  });

  function env(extra: Record<string, string | undefined> = {}) {
    return sandbox.env({ OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'fake-model', ...extra });
  }

  function start(args: string[] = [], extraEnv: Record<string, string | undefined> = {}): TerminalProcess {
    const client = TerminalProcess.start(['--storage-dir', sandbox.storage, ...args, sandbox.repo], { env: env(extraEnv), cwd: sandbox.repo });
    clients.push(client);
    return client;
  }

  it('streams the reply as it arrives and shows each tool call as one line with its result', async () => {
    const gate = createGate();
    fake.push(
      {
        kind: 'toolCalls',
        calls: [
          { id: 'r1', name: 'read_file', arguments: '{"path":"main.py"}' },
          { id: 'r2', name: 'read_file', arguments: '{"path":".env"}' },
        ],
      },
      { kind: 'gate', gate, deltas: ['It prints ', 'a greeting'], then: { kind: 'text', deltas: [' and exits.'] } },
    );
    const client = start();
    await client.untilPrompts(1);
    assert.match(client.stdout, /New discussion disc-\w+ · model fake-model/);

    client.line('What does main.py do?');
    await gate.reached;
    await client.untilStdout('It prints a greeting');
    assert.ok(!client.stdout.includes('and exits.'), 'the first words show before the reply has finished');
    gate.release();
    await client.untilPrompts(2);

    assert.match(client.stdout, /^ {2}· read main\.py → ok$/m);
    assert.match(client.stdout, /^ {2}· read \.env → refused — .*credentials/m, 'a refused read is marked as refused');
    assert.match(client.stdout, /It prints a greeting and exits\./);
    assert.ok(!client.stdout.includes('do-not-show'));
    assert.ok(!client.stdout.includes('\x1b['), 'no colour codes when stdout is not a terminal');

    client.endInput();
    assert.deepEqual(await client.exited, { code: 0, signal: null });
    assert.match(client.stdout, /Saved\. Continue with: repo-discuss --resume disc-\w+/);
  });

  it('/add PATH attaches a file to the next message only, @path in a message attaches too, and both show as chips', async () => {
    fake.setFallback(echoLastUserMessage);
    const client = start();
    await client.untilPrompts(1);
    client.line('/add main.py');
    await client.untilStdout('goes with your next message');
    client.line('What about @.env?');
    await client.untilPrompts(3);
    client.line('And now?');
    await client.untilPrompts(4);

    const [first, second] = fake.completionRequests.map((r) => r.body!.messages!.filter((m) => m.role === 'user').pop()!.content as string);
    assert.match(first, /<<<attachment main\.py:1-1 \(file/);
    assert.match(first, /\[Attachment \.env was not attached/);
    assert.ok(!second.includes('<<<attachment'), 'a /add goes with one message only');
    assert.match(client.stdout, /^ {2}@ main\.py:1-1$/m);
    assert.match(client.stdout, /^ {2}@ \.env — not attached: may hold credentials/m);
    assert.ok(!client.stdout.includes('do-not-show'));
    client.endInput();
    await client.exited;
  });

  it('Ctrl+C during a reply stops it, the endpoint sees the request dropped, and the prompt comes back', async () => {
    fake.push({ kind: 'hang', deltas: ['Let me think about'] });
    fake.setFallback(echoLastUserMessage);
    const client = start();
    await client.untilPrompts(1);
    client.line('A long question');
    await client.untilStdout('Let me think about');

    client.interrupt();
    await client.untilStdout('(stopped)');
    await fake.waitForDisconnect();
    await client.untilPrompts(2);

    client.line('Still there?');
    await client.untilStdout('Echo: Still there?');
    await client.untilPrompts(3);

    // Idle, a Ctrl+C quits.
    client.interrupt();
    assert.deepEqual(await client.exited, { code: 0, signal: null });
  });

  it('/promote prints the task, edits it in $EDITOR, writes it to a file and records the hand-off', async () => {
    fake.push(
      { kind: 'text', text: 'Yes: read the name from argv and print it.' },
      { kind: 'text', text: JSON.stringify({ proposed_intent: 'Greet the user by name in main.py.', constraints: ['Keep Python 3.8 support'] }) },
    );
    fake.setFallback(echoLastUserMessage);
    const editorScript = path.join(sandbox.root, 'edit.js');
    fs.writeFileSync(
      editorScript,
      "const fs = require('fs'); const f = process.argv[2]; fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('Greet the user', 'Welcome the user'));\n",
    );
    const taskFile = path.join(sandbox.root, 'TASK.md');
    const client = start([], { EDITOR: `"${process.execPath}" "${editorScript}"` });
    await client.untilPrompts(1);
    client.line('Can it greet people by name?');
    await client.untilPrompts(2);

    client.line('/promote');
    await client.untilStdout('Edit it in');
    assert.match(client.stdout, /Task prepared[\s\S]*Greet the user by name in main\.py\.[\s\S]*Keep Python 3\.8 support/);
    client.line('y');
    await client.untilStdout('Hand it off');
    assert.match(client.stdout, /The edited task:[\s\S]*Welcome the user by name in main\.py\./);
    client.line('f');
    await client.untilStdout('File to write');
    client.line(taskFile);
    await client.untilStdout('Wrote the task to');

    const written = fs.readFileSync(taskFile, 'utf8');
    assert.match(written, /^# Coding task/);
    assert.match(written, /Welcome the user by name in main\.py\./);
    assert.match(written, /## Constraints\n\n- Keep Python 3\.8 support/);
    assert.match(written, /`main\.py`|Repository/);

    // The server was told: the next turn's instructions name the handed-off task.
    await client.untilPrompts(3);
    client.line('What next?');
    await client.untilStdout('Echo: What next?');
    const requests = fake.completionRequests;
    const system = String(requests[requests.length - 1].body!.messages![0].content);
    assert.match(system, /already handed off[\s\S]*Welcome the user by name/);
    client.endInput();
    assert.equal((await client.exited).code, 0);
  });

  it('/promote stdout prints the task for copying and /export prints the discussion as Markdown', async () => {
    fake.push(
      { kind: 'toolCalls', calls: [{ id: 'p', name: 'prepare_coding_task', arguments: '{"intent":"Log each greeting.","constraints":[]}' }] },
      { kind: 'text', text: 'The task is ready.' },
    );
    const client = start();
    await client.untilPrompts(1);
    client.line('Should greetings be logged?');
    await client.untilPrompts(2);
    assert.match(client.stdout, /Task prepared[\s\S]*Log each greeting\.[\s\S]*\/promote to review it/);

    // The task the model prepared is used as is: no distillation request.
    const before = fake.completionRequests.length;
    client.line('/promote stdout');
    await client.untilStdout('Recorded the hand-off.');
    assert.equal(fake.completionRequests.length, before);
    assert.match(client.stdout, /─+\nLog each greeting\.\n\nRepository: /);

    client.line('/export');
    await client.untilStdout('## Handed off');
    assert.match(client.stdout, /# Should greetings be logged\?[\s\S]*## You\n\nShould greetings be logged\?/);
    client.line('/close');
    assert.equal((await client.exited).code, 0);
    assert.match(client.stdout, /Closed disc-\w+\. It stays saved/);
  });

  it('/review offers its follow-up to /promote: the unmet constraint with its evidence, edited and handed back only when asked', async () => {
    testGit(sandbox.repo, 'init', '-q');
    testGit(sandbox.repo, 'add', 'main.py');
    testGit(sandbox.repo, 'commit', '-qm', 'start');
    fake.push(
      { kind: 'toolCalls', calls: [{ id: 'p', name: 'prepare_coding_task', arguments: '{"intent":"Greet politely.","constraints":["main.py keeps printing hello."]}' }] },
      { kind: 'text', text: 'The task is ready.' },
    );
    const client = start();
    await client.untilPrompts(1);
    client.line('Should the greeting be polite?');
    await client.untilPrompts(2);
    client.line('/promote stdout');
    await client.untilStdout('Recorded the hand-off.');

    // The coding agent's change breaks the one constraint.
    fs.writeFileSync(path.join(sandbox.repo, 'main.py'), 'print("good day")\n');
    testGit(sandbox.repo, 'commit', '-qam', 'polite');
    const verdict = { constraints: [{ index: 1, status: 'not met', evidence: ['main.py:1'], note: 'hello is gone.' }], unrequested: [] };
    fake.push({ kind: 'text', text: JSON.stringify(verdict) });
    client.line('/review');
    await client.untilStdout("/promote to edit this review's follow-up task");
    const requests = fake.completionRequests.length;

    client.line('/promote stdout');
    await client.until(() => countOf(client.stdout, 'Recorded the hand-off.') >= 2, 'the follow-up handed off');
    const handedBack = stripAnsi(client.stdout).slice(stripAnsi(client.stdout).lastIndexOf('/promote stdout'));
    // The follow-up's intent runs over several lines, so it is handed back behind quote marks (taskText.ts).
    assert.match(handedBack, /> Not met:\n> - main\.py keeps printing hello\. \(main\.py:1\) — hello is gone\./);
    assert.equal(fake.completionRequests.length, requests, 'the follow-up is drafted from the review: no model request');
    client.line('/close');
    assert.equal((await client.exited).code, 0);
  });

  it('/model resumes the discussion with another model, and refuses one the endpoint does not offer', async () => {
    fake.setModels(['fake-model', 'other-model']);
    fake.setFallback(echoLastUserMessage);
    const client = start();
    await client.untilPrompts(1);
    client.line('/model no-such-model');
    await client.until((p) => p.stderr.includes('does not offer model "no-such-model"'), 'the refusal is shown');
    await client.untilPrompts(2);
    client.line('/model other-model');
    await client.untilStdout('Continuing with model other-model');
    await client.untilPrompts(3);
    client.line('Which model?');
    await client.untilStdout('Echo: Which model?');
    const requests = fake.completionRequests;
    assert.equal(requests[requests.length - 1].body!.model, 'other-model');
    client.endInput();
    assert.equal((await client.exited).code, 0);
  });

  it('/resume switches to a saved discussion by id prefix, and a new discussion left unused is not kept', async () => {
    fake.setFallback(echoLastUserMessage);
    const asked = await runClient(['--storage-dir', sandbox.storage, 'ask', 'First topic'], { env: env(), cwd: sandbox.repo });
    assert.equal(asked.code, 0, asked.stderr);
    const listed = await runClient(['--storage-dir', sandbox.storage, 'list', '--json'], { env: env(), cwd: sandbox.repo });
    const savedId = (JSON.parse(listed.stdout) as ListRequest.Result).saved[0].discussionId;

    const client = start();
    await client.untilPrompts(1);
    const unusedId = /New discussion (disc-\w+)/.exec(client.stdout)![1];
    client.line('/list');
    await client.untilStdout('/resume ID continues one.');
    assert.match(client.stdout, new RegExp(`${savedId} {2}First topic`));
    assert.match(client.stdout, new RegExp(`${unusedId} {2}\\(untitled\\) {2}\\(this one\\)`));

    client.line(`/resume ${savedId.slice(0, 10)}`);
    await client.untilStdout(`Resumed ${savedId}`);
    await client.untilPrompts(3);
    assert.match(client.stdout, /> First topic\nEcho: First topic/);
    client.line('And a follow-up');
    await client.untilStdout('Echo: And a follow-up');
    client.endInput();
    assert.equal((await client.exited).code, 0);
    assert.match(client.stdout, new RegExp(`Continue with: repo-discuss --resume ${savedId}`));

    const after = await runClient(['--storage-dir', sandbox.storage, 'list', '--json'], { env: env(), cwd: sandbox.repo });
    assert.deepEqual((JSON.parse(after.stdout) as ListRequest.Result).saved.map((s) => [s.discussionId, s.turns]), [[savedId, 2]]);
  });

  async function savedDiscussions(): Promise<Array<[string, number]>> {
    const listed = await runClient(['--storage-dir', sandbox.storage, 'list', '--json'], { env: env(), cwd: sandbox.repo });
    return (JSON.parse(listed.stdout) as ListRequest.Result).saved.map((s) => [s.discussionId, s.turns]);
  }

  const refused = { kind: 'error' as const, status: 400, message: 'this endpoint refuses everything' };

  it('a new discussion whose only question failed before any answer is not kept, whether left by /new or at exit; one answered later is', async () => {
    fake.setFallback(echoLastUserMessage);
    fake.push(refused, refused);
    const client = start();
    await client.untilPrompts(1);
    const firstId = /New discussion (disc-\w+)/.exec(client.stdout)![1];
    client.line('Will this fail?');
    await client.untilPrompts(2);
    client.line('/new');
    await client.until((p) => countOf(p.stdout, 'New discussion') === 2, 'the second discussion is open');
    const secondId = [...client.stdout.matchAll(/New discussion (disc-\w+)/g)][1][1];
    assert.notEqual(secondId, firstId);
    client.line('This one fails too');
    await client.untilPrompts(4);
    client.endInput();
    assert.equal((await client.exited).code, 0);
    assert.equal(countOf(client.stdout, 'The question got no answer, so the discussion was not kept (--keep keeps it).'), 2, client.stdout);
    assert.doesNotMatch(client.stdout, /Continue with: repo-discuss --resume/);
    assert.deepEqual(await savedDiscussions(), []);

    // A failure followed by an answer is a discussion worth keeping.
    fake.push(refused);
    const again = start();
    await again.untilPrompts(1);
    const keptId = /New discussion (disc-\w+)/.exec(again.stdout)![1];
    again.line('Fails first');
    await again.untilPrompts(2);
    again.line('Then answers');
    await again.untilStdout('Echo: Then answers');
    again.endInput();
    assert.equal((await again.exited).code, 0);
    assert.match(again.stdout, new RegExp(`Continue with: repo-discuss --resume ${keptId}`));
    assert.deepEqual(await savedDiscussions(), [[keptId, 2]]);
  });

  it('--keep keeps a new discussion whose only question failed', async () => {
    fake.push(refused);
    const client = start(['--keep']);
    await client.untilPrompts(1);
    const id = /New discussion (disc-\w+)/.exec(client.stdout)![1];
    client.line('Will this fail?');
    await client.untilPrompts(2);
    client.endInput();
    assert.equal((await client.exited).code, 0);
    assert.match(client.stdout, new RegExp(`Continue with: repo-discuss --resume ${id}`));
    assert.deepEqual(await savedDiscussions(), [[id, 1]]);
  });

  (scriptAvailable ? it : it.skip)('in a terminal, a typed Ctrl+C stops the reply without stopping the server, and colours are on', async () => {
    fake.push({ kind: 'hang', deltas: ['Working on it'] });
    fake.setFallback(echoLastUserMessage);
    const client = TerminalProcess.startInPty(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(), cwd: sandbox.repo });
    clients.push(client);
    const plain = () => stripAnsi(client.stdout);
    await client.until(() => plain().includes(PROMPT), 'the first prompt');
    client.write('Why?\r');
    await client.untilStdout('Working on it');

    client.write('\x03');
    await client.until(() => plain().includes('(stopped)'), 'the reply is marked stopped');
    await fake.waitForDisconnect();
    await client.until(() => countOf(plain().slice(plain().indexOf('(stopped)')), PROMPT) >= 1, 'the prompt is back');

    // The server was not hit by the terminal's interrupt: the discussion goes on.
    client.write('And now?\r');
    await client.until(() => plain().includes('Echo: And now?'), 'the next reply');
    assert.ok(client.stdout.includes('\x1b['), 'a terminal gets colours');

    // Ctrl+D typed during a reply is dropped (typing then waits for the next prompt): it is typed at the prompt.
    await client.until(() => countOf(plain().slice(plain().indexOf('Echo: And now?')), PROMPT) >= 1, 'the prompt is back after the reply');
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });
});

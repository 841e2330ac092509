import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DiscussionHub, type RpcChannel } from '../../client/src/common/discussionHub';
import type { DiscussionEvent, ListRequest } from '../../shared/protocol';
import { echoLastUserMessage, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';
import { waitFor } from '../../client/src/terminal/session';
import { Sandbox, TerminalProcess, runClient } from './terminalProcess';

/** The user messages a completion request carried, oldest first. */
function userMessages(request: RecordedRequest): string[] {
  return (request.body?.messages ?? []).filter((m) => m.role === 'user').map((m) => String(m.content));
}

describe('repo-discuss commands', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let sandbox: Sandbox;
  const clients: TerminalProcess[] = [];
  const servers: ServerProcess[] = [];

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['fake-model'] });
    sandbox = new Sandbox();
    fs.writeFileSync(path.join(sandbox.repo, 'main.py'), 'print("hello")\n');
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const c of clients) console.log(c.transcript());
    for (const c of clients.splice(0)) {
      c.kill();
      await c.exited;
    }
    for (const s of servers.splice(0)) await s.stop().catch(() => s.kill());
    await fake.close();
    sandbox.remove();
  });

  function env(extra: Record<string, string | undefined> = {}) {
    return sandbox.env({ OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'fake-model', ...extra });
  }

  function run(args: string[], options: { input?: string; env?: Record<string, string | undefined> } = {}) {
    return runClient(['--storage-dir', sandbox.storage, ...args], { env: options.env ?? env(), cwd: sandbox.repo, input: options.input });
  }

  describe('ask', () => {
    it('prints only the answer on stdout and exits 0', async () => {
      fake.push(
        { kind: 'toolCalls', calls: [{ id: 'r', name: 'read_file', arguments: '{"path":"main.py"}' }] },
        { kind: 'text', deltas: ['It prints ', 'hello.'] },
      );
      const result = await run(['ask', 'What does main.py print?']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'It prints hello.\n');
      assert.deepEqual(userMessages(fake.completionRequests[0]), ['What does main.py print?']);
    });

    it('turns @path and @path:START-END in the question into attachments the model receives labelled, and shows their chips, a refused one with its reason', async () => {
      fs.writeFileSync(path.join(sandbox.repo, 'main.py'), 'print("hello")\nprint("bye")\nprint("again")\n');
      fs.writeFileSync(path.join(sandbox.repo, '.env'), 'TOKEN=do-not-show\n');
      fake.push({ kind: 'text', text: 'Seen.' });
      const result = await run(['ask', 'Why @main.py:2-3 and @.env? Mail me@example.com']);
      assert.equal(result.code, 0, result.stderr);
      const [seen] = userMessages(fake.completionRequests[0]);
      assert.match(seen, /<<<attachment main\.py:2-3 \(selection/);
      assert.ok(seen.includes('2: print("bye")') && !seen.includes('1: print("hello")'), 'only the range');
      assert.match(seen, /\[Attachment \.env was not attached: Refused/);
      assert.ok(!seen.includes('do-not-show') && !seen.includes('example.com was not'), 'no secret, and an e-mail address is no mention');
      assert.equal(result.stdout, 'Seen.\n', 'stdout is the answer alone');
      assert.match(result.stderr, /@ \.env — not attached: may hold credentials/, 'a refused attachment is told on stderr');
    });

    it('turns @path#Symbol into a symbol attachment: the model gets only that definition, and a symbol the file lacks is refused with its reason', async () => {
      fs.writeFileSync(path.join(sandbox.repo, 'cart.py'), '# header-line\ndef total(items):\n    return sum(items)\n\n# footer-line\n');
      fake.push({ kind: 'text', text: 'Seen.' });
      const result = await run(['ask', 'Why @cart.py#total, and @cart.py#missing?']);
      assert.equal(result.code, 0, result.stderr);
      const [seen] = userMessages(fake.completionRequests[0]);
      assert.match(seen, /<<<attachment cart\.py:2-3 \(symbol "total"/);
      assert.ok(seen.includes('2: def total(items):') && !seen.includes('header-line') && !seen.includes('footer-line'), 'only the definition');
      assert.match(seen, /\[Attachment cart\.py "missing" was not attached: symbol "missing" not found in "cart\.py"/);
      assert.match(result.stderr, /@ cart\.py #missing — not attached: symbol "missing" not found in cart\.py/);
    });

    it('reads the question from stdin when given -', async () => {
      fake.setFallback(echoLastUserMessage);
      const result = await run(['ask', '-'], { input: 'Piped question\n' });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'Echo: Piped question\n');
    });

    it('exits 1 with the remedy on stderr when the endpoint rejects the key', async () => {
      fake.push({ kind: 'error', status: 401, message: 'Incorrect API key provided', code: 'invalid_api_key' });
      const result = await run(['ask', 'Hello?']);
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /error: .*rejected the API key \(401\)/);
      assert.match(result.stderr, /To fix: export OPENAI_API_KEY=<key>, or set "apiKey" in .*config\.json \(the current one came from OPENAI_API_KEY\)/);
    });

    it('exits 3 and shows the refusal as is when the server refuses the request', async () => {
      const result = await run(['ask', '--resume', 'disc-doesnotexist', 'Hello?']);
      assert.equal(result.code, 3);
      assert.match(result.stderr, /^refused: No saved discussion "disc-doesnotexist"/m);
      const missingFolder = await run(['ask', '--folder', path.join(sandbox.root, 'nowhere'), 'Hello?']);
      assert.equal(missingFolder.code, 3);
      assert.match(missingFolder.stderr, /refused: The folder .*nowhere does not exist/);
    });

    it('exits 2 on a wrong command line, naming the command whose help to read', async () => {
      const noQuestion = await run(['ask'], { input: '' });
      assert.equal(noQuestion.code, 2);
      assert.match(noQuestion.stderr, /ask needs a question[\s\S]*repo-discuss ask --help/);
      const unknownFlag = await run(['list', '--bogus']);
      assert.equal(unknownFlag.code, 2);
      assert.match(unknownFlag.stderr, /--bogus[\s\S]*Run 'repo-discuss list --help'/);
    });

    it('--json prints every event of the turn as one valid JSON line', async () => {
      fake.push(
        { kind: 'toolCalls', calls: [{ id: 'r', name: 'read_file', arguments: '{"path":"main.py"}' }] },
        { kind: 'text', deltas: ['Hello ', 'there.'] },
      );
      const result = await run(['ask', '--json', 'Hi']);
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      const events = lines.map((line) => JSON.parse(line) as DiscussionEvent);
      assert.deepEqual(
        [...new Set(events.map((e) => e.type))],
        ['user_message', 'tool_call', 'tool_result', 'assistant_delta', 'assistant_message', 'turn_complete'],
      );
      assert.equal(new Set(events.map((e) => e.discussionId)).size, 1);
      assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i));
      const message = events.find((e) => e.type === 'assistant_message') as Extract<DiscussionEvent, { type: 'assistant_message' }>;
      assert.equal(message.text, 'Hello there.');
    });

    it('--json reports a refused request as a JSON line too', async () => {
      const result = await run(['ask', '--json', '--resume', 'disc-doesnotexist', 'Hi']);
      assert.equal(result.code, 3);
      const line = JSON.parse(result.stdout.trim()) as { type: string; code: number; message: string; exitCode: number };
      assert.equal(line.type, 'refused');
      assert.equal(line.code, -32010);
      assert.equal(line.exitCode, 3);
    });

    it('takes model settings from flags, then the environment, then the config file', async () => {
      fake.setModels(['from-config', 'from-env', 'from-flag']);
      fake.setFallback(echoLastUserMessage);
      const configFile = path.join(sandbox.home, '.config', 'repo-discuss', 'config.json');
      fs.mkdirSync(path.dirname(configFile), { recursive: true });
      fs.writeFileSync(configFile, JSON.stringify({ baseUrl: fake.baseUrl, model: 'from-config' }));
      const noEnv = sandbox.env({ OPENAI_API_KEY: 'sk-test' });

      assert.equal((await run(['ask', 'one'], { env: noEnv })).code, 0);
      assert.equal(fake.completionRequests[0].body!.model, 'from-config');
      assert.equal((await run(['ask', 'two'], { env: { ...noEnv, OPENAI_MODEL: 'from-env' } })).code, 0);
      assert.equal(fake.completionRequests[1].body!.model, 'from-env');
      assert.equal((await run(['ask', '--model', 'from-flag', 'three'], { env: { ...noEnv, OPENAI_MODEL: 'from-env' } })).code, 0);
      assert.equal(fake.completionRequests[2].body!.model, 'from-flag');
    });
  });

  describe('list, promote and export', () => {
    it('list shows saved discussions, as text or JSON, optionally of one folder', async () => {
      fake.setFallback(echoLastUserMessage);
      assert.equal((await run(['ask', 'First question'])).code, 0);
      const other = path.join(sandbox.root, 'other');
      fs.mkdirSync(other);
      assert.equal((await run(['ask', '--folder', other, 'Elsewhere'])).code, 0);

      const text = await run(['list']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /disc-\w+ {2}First question\n {6}1 turn · just now · /);
      assert.match(text.stdout, /Elsewhere/);

      const json = await run(['list', '--json', '--folder', sandbox.repo]);
      assert.equal(json.code, 0, json.stderr);
      const parsed = JSON.parse(json.stdout) as ListRequest.Result;
      assert.deepEqual(parsed.saved.map((s) => s.title), ['First question']);
      assert.equal(parsed.saved[0].repo, sandbox.repo);
    });

    it('promote resumes a saved discussion, prints the task, and can write and record it', async () => {
      fake.setFallback(echoLastUserMessage);
      const asked = await run(['ask', '--json', 'Should it greet by name?']);
      const id = (JSON.parse(asked.stdout.split('\n')[0]) as DiscussionEvent).discussionId;
      fake.push({ kind: 'text', text: '{"proposed_intent":"Greet the user by name.","constraints":["No new dependencies"]}' });

      const json = await run(['promote', id, '--json']);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), { discussionId: id, intent: 'Greet the user by name.', constraints: ['No new dependencies'] });

      fake.push({ kind: 'text', text: '{"proposed_intent":"Greet the user by name.","constraints":[]}' });
      const taskFile = path.join(sandbox.root, 'task.md');
      const written = await run(['promote', id.slice(0, 12), '--output', taskFile, '--handoff']);
      assert.equal(written.code, 0, written.stderr);
      assert.match(written.stdout, /^Greet the user by name\.\n\nRepository: /);
      assert.match(fs.readFileSync(taskFile, 'utf8'), /^# Coding task: Greet the user by name\n/, 'the task is titled by its intent, not by the first question');
      const exported = await run(['export', id]);
      assert.match(exported.stdout, /## Handed off\n\n- .* to file: Greet the user by name\./);
    });

    it('--help works for every command and --version prints the version', async () => {
      for (const command of [[], ['ask'], ['list'], ['promote'], ['export'], ['delete'], ['rename']]) {
        const result = await run([...command, '--help']);
        assert.equal(result.code, 0);
        assert.match(result.stdout, /Usage:/);
        assert.match(result.stdout, /Exit codes:/);
      }
      const version = await run(['--version']);
      assert.match(version.stdout, /^repo-discuss \d+\.\d+\.\d+\n$/);
    });
  });

  describe('errors written for the terminal', () => {
    /** Every saved discussion's id, from the store through the client. */
    async function savedIds(): Promise<string[]> {
      const listed = await run(['list', '--json']);
      const parsed = JSON.parse(listed.stdout) as ListRequest.Result;
      return [...parsed.discussions, ...parsed.saved].map((row) => row.discussionId);
    }

    it('a rejected key names terminal remedies only, never a VS Code command', async () => {
      fake.push({ kind: 'error', status: 401, message: 'Incorrect API key provided.', code: 'invalid_api_key' });
      const result = await run(['ask', 'Hello?']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^error: The model endpoint at \S+ rejected the API key \(401\)\.$/m);
      assert.match(result.stderr, /^To fix: export OPENAI_API_KEY=<key>/m);
      assert.doesNotMatch(result.stderr, /VS Code|Repo Discuss:|for the server/);
      assert.doesNotMatch(result.stderr, /\.\.|\.,/, 'doubled punctuation');
    });

    it('a 404 on both /chat/completions and /models says the base URL is probably missing /v1, and the fix is the base URL, not --model', async () => {
      const withoutV1 = fake.baseUrl.replace(/\/v1$/, '');
      fake.setModels({ kind: 'error', status: 404, message: 'Not Found' });
      fake.push({ kind: 'error', status: 404, message: 'Not Found' });
      const result = await run(['ask', 'Hello?'], { env: env({ OPENAI_BASE_URL: withoutV1 }) });
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        new RegExp(`error: The endpoint at ${withoutV1.replace(/[.]/g, '\\.')} answered a 404 on both /chat/completions and /models: the base URL is probably missing /v1 \\(try ${withoutV1.replace(/[.]/g, '\\.')}/v1\\)\\.`),
      );
      const fix = result.stderr.split('\n').find((line) => line.startsWith('To fix:'));
      assert.ok(fix, result.stderr);
      assert.match(fix, /--base-url URL.*OPENAI_BASE_URL.*\(the current one came from OPENAI_BASE_URL\)/);
      assert.doesNotMatch(fix, /--model/);
    });

    it('a model the endpoint does not offer (its model list answering) still blames the model, with --model as the fix', async () => {
      fake.push({ kind: 'error', status: 404, message: 'The model `nope` does not exist.', code: 'model_not_found' });
      const result = await run(['ask', 'Hello?']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /does not offer the model 'fake-model' \(404\)\. If the name is right, check the base URL/);
      assert.match(result.stderr, /^To fix: pass --model NAME/m);
    });

    it('"refused:" marks only a refusal: a model failure of promote is an "error:"', async () => {
      fake.setFallback(echoLastUserMessage);
      const asked = await run(['ask', '--json', 'Anything?']);
      const id = (JSON.parse(asked.stdout.split('\n')[0]) as DiscussionEvent).discussionId;
      fake.setFallback({ kind: 'text', text: 'no JSON here' });
      const promoted = await run(['promote', id]);
      assert.equal(promoted.code, 1, promoted.stderr);
      assert.match(promoted.stderr, /^error: Could not distill this discussion/m);
      assert.doesNotMatch(promoted.stderr, /refused:/);
      assert.doesNotMatch(promoted.stderr, /\.\.|\.,/);
    });

    it('a new discussion whose only question failed before any answer is not kept, unless --keep', async () => {
      fake.push({ kind: 'error', status: 500, message: 'boom' }, { kind: 'error', status: 500, message: 'boom' }, { kind: 'error', status: 500, message: 'boom' });
      const failed = await run(['ask', 'Will this fail?']);
      assert.equal(failed.code, 1);
      assert.match(failed.stderr, /not kept \(--keep keeps it\)/);
      assert.deepEqual(await savedIds(), []);

      fake.push({ kind: 'error', status: 500, message: 'boom' }, { kind: 'error', status: 500, message: 'boom' }, { kind: 'error', status: 500, message: 'boom' });
      const kept = await run(['ask', '--keep', '--json', 'Keep this failure']);
      assert.equal(kept.code, 1);
      const id = (JSON.parse(kept.stdout.split('\n')[0]) as DiscussionEvent).discussionId;
      assert.deepEqual(await savedIds(), [id]);

      // export keeps the turn's error, so the file never shows "## You" twice with nothing between.
      fake.push({ kind: 'error', status: 500, message: 'boom' }, { kind: 'error', status: 500, message: 'boom' }, { kind: 'error', status: 500, message: 'boom' });
      assert.equal((await run(['ask', '--resume', id, 'Second try'])).code, 1);
      const exported = await run(['export', id]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stdout, /## You\n\nKeep this failure\n\n\*\*Error:\*\* The model endpoint at \S+ failed with a server error \(500\): boom, still after 2 retries\. [^\n]+\n\n## You\n\nSecond try\n\n\*\*Error:\*\* /);
      assert.doesNotMatch(exported.stdout, /## You\n\n[^\n]*\n\n## You/);
    });

    it('a missing --config file is refused rather than ignored', async () => {
      const result = await run(['--config', path.join(sandbox.root, 'no-such.json'), 'list']);
      assert.equal(result.code, 4);
      assert.match(result.stderr, /The config file .*no-such\.json given with --config does not exist/);
    });
  });

  describe('command-line slips', () => {
    it('a near miss of a command is suggested, not taken as a folder; a folder of that name is still discussed', async () => {
      const slip = await run(['lsit']);
      assert.equal(slip.code, 2);
      assert.match(slip.stderr, /unknown command "lsit" — did you mean "list"\?/);
      assert.doesNotMatch(slip.stderr, /does not exist/);
      fs.mkdirSync(path.join(sandbox.repo, 'lsit'));
      const folder = TerminalProcess.start(['--storage-dir', sandbox.storage, 'lsit'], { env: env(), cwd: sandbox.repo });
      clients.push(folder);
      await folder.untilPrompts(1);
      assert.match(folder.stdout, /lsit/);
      folder.endInput();
      assert.equal((await folder.exited).code, 0);
    });

    it('a near miss of an option is suggested instead of the parser\'s own message', async () => {
      const result = await run(['ask', '--modle', 'm', 'Hi']);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^repo-discuss ask: unknown option --modle — did you mean --model\?$/m);
      assert.doesNotMatch(result.stderr, /positional argument|place it at the end/);
      const elsewhere = await run(['list', '--handoff']);
      assert.match(elsewhere.stderr, /unknown option --handoff — it is an option of `repo-discuss promote`/);
    });
  });

  describe('delete, rename and list --folder', () => {
    async function ask(question: string, extra: string[] = []): Promise<string> {
      const asked = await run(['ask', '--json', ...extra, question]);
      assert.equal(asked.code, 0, asked.stderr);
      return (JSON.parse(asked.stdout.split('\n')[0]) as DiscussionEvent).discussionId;
    }

    it('rename retitles a saved discussion and delete removes it, an id prefix doing for either', async () => {
      fake.setFallback(echoLastUserMessage);
      const first = await ask('First question');
      const second = await ask('Second question');
      const renamed = await run(['rename', first.slice(0, 14), 'Caching', 'plan']);
      assert.equal(renamed.code, 0, renamed.stderr);
      assert.match(renamed.stdout, new RegExp(`Renamed ${first} to Caching plan`));
      const listed = JSON.parse((await run(['list', '--json'])).stdout) as ListRequest.Result;
      assert.deepEqual(listed.saved.map((row) => [row.discussionId, row.title]).sort(), [[first, 'Caching plan'], [second, 'Second question']].sort());

      const missing = await run(['delete', second, 'disc-doesnotexist']);
      assert.equal(missing.code, 3);
      assert.match(missing.stderr, /refused: No saved discussion "disc-doesnotexist"/);
      assert.equal((JSON.parse((await run(['list', '--json'])).stdout) as ListRequest.Result).saved.length, 2, 'nothing is deleted when one id is wrong');

      const deleted = await run(['delete', second]);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.match(deleted.stdout, new RegExp(`Deleted ${second}`));
      const after = JSON.parse((await run(['list', '--json'])).stdout) as ListRequest.Result;
      assert.deepEqual(after.saved.map((row) => row.discussionId), [first]);
    });

    it('delete and rename refuse a discussion open elsewhere', async () => {
      fake.setFallback(echoLastUserMessage);
      const open = TerminalProcess.start(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(), cwd: sandbox.repo });
      clients.push(open);
      await open.untilPrompts(1);
      open.line('Hold this open');
      await open.untilStdout('Echo: Hold this open');
      const id = /New discussion (disc-\w+)/.exec(open.stdout)![1];
      const deleted = await run(['delete', id]);
      assert.equal(deleted.code, 3);
      assert.match(deleted.stderr, /refused: Discussion .* is already open in another window/);
      const renamed = await run(['rename', id, 'New name']);
      assert.equal(renamed.code, 3);
      assert.match(renamed.stderr, /refused: Discussion .* is already open in another window/);
      open.endInput();
      await open.exited;
    });

    it('list --folder shows only that folder\'s discussions, the folder given relative to the current one', async () => {
      fake.setFallback(echoLastUserMessage);
      await ask('Here');
      const other = path.join(sandbox.repo, 'sub');
      fs.mkdirSync(other);
      await ask('In sub', ['--folder', other]);
      const here = await runClient(['--storage-dir', sandbox.storage, 'list', '--folder', 'sub'], { env: env(), cwd: sandbox.repo });
      assert.equal(here.code, 0, here.stderr);
      assert.match(here.stdout, /In sub/);
      assert.doesNotMatch(here.stdout, /Here/);
      const none = await run(['list', '--folder', path.join(sandbox.root)]);
      assert.match(none.stdout, /No saved discussions of /);
    });
  });

  describe('token usage', () => {
    it('ask shows the turn\'s and the discussion\'s totals after the reply, dim on stderr, never on stdout', async () => {
      fake.push({ kind: 'text', text: 'First.', usage: { promptTokens: 1200, completionTokens: 30 } });
      const first = await run(['ask', '--verbose', '--json', 'One']);
      const id = (JSON.parse(first.stdout.split('\n')[0]) as DiscussionEvent).discussionId;
      fake.push({ kind: 'text', text: 'Second.', usage: { promptTokens: 1500, completionTokens: 45 } });
      const second = await run(['ask', '--verbose', '--resume', id, 'Two']);
      assert.equal(second.code, 0, second.stderr);
      assert.equal(second.stdout, 'Second.\n');
      assert.match(second.stderr, /tokens: 1,500 in · 45 out this turn · 2,700 in · 75 out in this discussion/);
    });

    it('/usage in a session shows the discussion\'s totals and the last turn\'s', async () => {
      fake.push({ kind: 'text', text: 'Hi there.', usage: { promptTokens: 800, completionTokens: 20 } });
      const session = TerminalProcess.start(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(), cwd: sandbox.repo });
      clients.push(session);
      await session.untilPrompts(1);
      session.line('Hello');
      await session.untilStdout('tokens: 800 in · 20 out this turn · 800 in · 20 out in this discussion');
      await session.untilPrompts(2);
      session.line('/usage');
      await session.untilStdout(/This discussion {2}800 in · 20 out \(820 tokens\)\n {2}Last turn {8}800 in · 20 out/);
      session.endInput();
      await session.exited;
    });
  });

  describe('/endpoint and --context-tokens', () => {
    it('/endpoint moves the session to another endpoint, without sending the key to a different server', async () => {
      const second = await startFakeOpenAI({ models: ['fake-model'] });
      try {
        fake.setFallback(echoLastUserMessage);
        second.setFallback({ kind: 'text', text: 'From the second endpoint.' });
        const session = TerminalProcess.start(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(), cwd: sandbox.repo });
        clients.push(session);
        await session.untilPrompts(1);
        session.line('/endpoint');
        await session.untilStdout(`Endpoint: ${fake.baseUrl}, with an API key.`);
        const otherHost = second.baseUrl.replace('127.0.0.1', 'localhost');
        session.line(`/endpoint ${otherHost}`);
        await session.untilStdout(`Endpoint: ${otherHost}, no API key: the current one is not sent to another server`);
        session.line('Where are you?');
        await session.untilStdout('From the second endpoint.');
        assert.equal(fake.completionRequests.length, 0);
        assert.doesNotMatch(String(second.completionRequests[0].headers?.authorization), /sk-test/, 'the first endpoint\'s key went to the second');
        session.endInput();
        await session.exited;
      } finally {
        await second.close();
      }
    });

    it('--context-tokens and "contextTokens" reach the server as the model\'s window; a bad value is refused', async () => {
      const bad = await run(['--context-tokens', 'lots', 'list']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--context-tokens needs a whole number of tokens/);
      const configFile = path.join(sandbox.root, 'config.json');
      fs.writeFileSync(configFile, JSON.stringify({ contextTokens: 'big' }));
      const badConfig = await run(['--config', configFile, 'list']);
      assert.equal(badConfig.code, 4);
      assert.match(badConfig.stderr, /"contextTokens" must be a whole number of tokens/);
    });
  });

  describe('one discussion, several clients', () => {
    it('a discussion started in one terminal is refused in another while open, then resumes there with its history', async () => {
      fake.setFallback(echoLastUserMessage);
      const first = TerminalProcess.start(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(), cwd: sandbox.repo });
      clients.push(first);
      await first.untilPrompts(1);
      first.line('Remember the word pelican');
      await first.untilStdout('Echo: Remember the word pelican');
      const id = /New discussion (disc-\w+)/.exec(first.stdout)![1];

      const refused = await run(['ask', '--resume', id, 'Which word?']);
      assert.equal(refused.code, 3);
      assert.match(refused.stderr, new RegExp(`refused: Discussion ${id} is already open in another window \\(process \\d+\\)`));

      first.endInput();
      assert.equal((await first.exited).code, 0);
      const resumed = await run(['ask', '--resume', id, 'Which word?']);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(resumed.stdout, 'Echo: Which word?\n');
      const last = fake.completionRequests[fake.completionRequests.length - 1];
      assert.deepEqual(userMessages(last), ['Remember the word pelican', 'Which word?']);

      const again = TerminalProcess.start(['--storage-dir', sandbox.storage, '--resume', id], { env: env(), cwd: sandbox.root });
      clients.push(again);
      await again.untilPrompts(1);
      assert.match(again.stdout, new RegExp(`Resumed ${id} “Remember the word pelican”`));
      assert.match(again.stdout, /> Which word\?\nEcho: Which word\?/, 'the recap shows the last turn');
      again.endInput();
      assert.equal((await again.exited).code, 0);
    });

    it('a discussion opened by the extension is refused in the terminal, and continues in either after the other lets go', async () => {
      fake.setFallback(echoLastUserMessage);
      // The extension's own client code against its own server process, on the same storage.
      const extensionServer = await ServerProcess.start({ storageDir: sandbox.storage, model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'fake-model' } });
      servers.push(extensionServer);
      const hub = new DiscussionHub();
      const channel: RpcChannel = {
        request: (method, params) => extensionServer.rpc.sendRequest(method, params),
        onNotification: (method, handler) => extensionServer.rpc.onNotification(method, handler),
      };
      hub.connect(channel);
      const discussion = await hub.open({ folder: sandbox.repo });
      await hub.send(discussion.id, 'Started in VS Code');
      await waitFor(discussion, (events) => events.some((e) => e.type === 'turn_complete'));

      const refused = await run(['ask', '--resume', discussion.id, 'From the terminal']);
      assert.equal(refused.code, 3);
      assert.match(refused.stderr, /already open in another window/);

      await hub.close(discussion.id);
      const resumed = await run(['ask', '--resume', discussion.id, 'From the terminal']);
      assert.equal(resumed.code, 0, resumed.stderr);

      const back = await hub.open({ folder: sandbox.repo, resumeId: discussion.id });
      const sent = await hub.send(back.id, 'Back in VS Code');
      await waitFor(back, (events) => events.some((e) => e.type === 'turn_complete' && e.seq > sent.seq));
      const last = fake.completionRequests[fake.completionRequests.length - 1];
      assert.deepEqual(userMessages(last), ['Started in VS Code', 'From the terminal', 'Back in VS Code']);
    });
  });
});

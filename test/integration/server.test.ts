import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ResponseError } from 'vscode-jsonrpc';
import type {
  ExportRequest,
  ListRequest,
  ModelsRequest,
  PromoteRequest,
  SendRequest,
  StartRequest,
  SubscribeRequest,
} from '../../shared/protocol';
import { INTERRUPTED_REPLY_NOTE } from '../../server/src/core/turn';
import { DiscussErrorCode } from '../../shared/protocol';
import { createGate, startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { SERVER_ENTRY, ServerProcess } from '../support/serverProcess';
import { BENCH_PROBE_METHOD, type BenchProbeParams } from '../../server/src/benchProbe';
import { SCRATCH_PREFIX } from '../../server/src/store/scratchStore';

const SENTINEL = 'SENTINEL-outside-7f3a9c';

function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

async function refusal(promise: Promise<unknown>): Promise<ResponseError<unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as ResponseError<unknown>;
  }
  assert.fail('the request was expected to be refused');
}

describe('the server process over stdio', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let repo: string;
  let outside: string;
  let storage: string;
  const servers: ServerProcess[] = [];

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['fake-small', 'fake-large'] });
    repo = tempDir('rd-repo-');
    outside = tempDir('rd-outside-');
    storage = tempDir('rd-storage-');
    fs.mkdirSync(path.join(repo, 'src'));
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), 'export const answer = 42;\n');
    fs.writeFileSync(path.join(repo, 'README.md'), '# Demo\n');
    fs.writeFileSync(path.join(repo, '.env'), `TOKEN=${SENTINEL}\n`);
    fs.writeFileSync(path.join(outside, 'secret.txt'), SENTINEL);
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'notes.txt'));
  });

  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop().catch(() => server.kill());
    await fake.close();
    for (const dir of [repo, outside, storage]) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function server(extra: { model?: string } = {}): Promise<ServerProcess> {
    const s = await ServerProcess.start({ storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test-key', model: extra.model ?? 'fake-small' } });
    servers.push(s);
    return s;
  }

  async function open(s: ServerProcess, params: Partial<StartRequest.Params> = {}): Promise<string> {
    const started = await s.request<StartRequest.Result>('discuss/start', { folder: repo, ...params });
    await s.request<SubscribeRequest.Result>('discuss/subscribe', { discussionId: started.discussionId });
    return started.discussionId;
  }

  it('prints its usage and exits when started without a transport', () => {
    const result = spawnSync(process.execPath, [SERVER_ENTRY], { encoding: 'utf8' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--stdio/);
  });

  it('looks for ripgrep once initialized, before any discussion starts, so the first start does not wait for it', async () => {
    const s = await server();
    // Logged with no discussion started, so the lookup cannot have been made by a start.
    assert.match(await s.untilLogged(/^Searching with /), /Searching with (ripgrep|the built-in walk)/);
    await open(s);
    await open(s);
    const lookups = s.stderr.filter((message) => /^Searching with /.test(message));
    assert.equal(lookups.length, 1, 'starts reuse the lookup made at initialization');
  });

  it('sends nothing to the configured endpoint ahead of the first question, which is then answered', async () => {
    fake.push({ kind: 'text', deltas: ['Ready.'] });
    const s = await ServerProcess.start({ storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test-key', model: 'fake-small' } }, { REPO_DISCUSS_BENCH_PROBE: '1' });
    servers.push(s);
    const id = await open(s);
    await s.request(BENCH_PROBE_METHOD, { awaitModelPrepared: true } satisfies BenchProbeParams);
    assert.deepEqual(fake.requests.map((r) => r.path), [], 'requests to the endpoint before the first question');
    await s.request<SendRequest.Result>('discuss/send', { discussionId: id, text: 'Are you there?' });
    await s.turnsComplete(id, 1);
    assert.equal(s.of(id, 'assistant_message')[0].text, 'Ready.');
    assert.equal(fake.completionRequests.length, 1);
  });

  it('rehearses one turn on the first folder opened, against its own loopback endpoint and in a scratch folder under TMPDIR that it removes, so neither the endpoint nor the storage keeps anything of it', async () => {
    const temporary = tempDir('rd-tmp-');
    let watcher: fs.FSWatcher | undefined;
    try {
      const scratchMade = new Promise<string>((resolve) => {
        watcher = fs.watch(temporary, (_, name) => {
          if (name?.startsWith(SCRATCH_PREFIX)) resolve(name);
        });
      });
      const s = await ServerProcess.start(
        { storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test-key', model: 'fake-small' } },
        { REPO_DISCUSS_BENCH_PROBE: '1', TMPDIR: temporary },
      );
      servers.push(s);
      const id = await open(s);
      await s.request(BENCH_PROBE_METHOD, { awaitModelPrepared: true } satisfies BenchProbeParams);
      assert.match(await s.untilLogged(/^(Rehearsed a turn|The first question was not rehearsed)/), /^Rehearsed a turn ahead of the first question/);
      assert.match(await scratchMade, new RegExp(`^${SCRATCH_PREFIX}\\d+-`), 'a scratch folder was made under TMPDIR');
      assert.deepEqual(fs.readdirSync(temporary).filter((name) => name.startsWith(SCRATCH_PREFIX)), [], 'the scratch folder is gone');
      assert.deepEqual(fake.requests.map((r) => r.path), [], 'the configured endpoint was not asked');
      assert.deepEqual(fs.readdirSync(path.join(storage, 'discussions')), [id]);
      const listed = await s.request<ListRequest.Result>('discuss/list', {});
      assert.deepEqual(listed.discussions.map((d) => d.discussionId), [id]);
      assert.deepEqual(s.events.filter((event) => event.discussionId !== id), [], 'no event of another discussion reached the client');

      // Once per server: a second folder's discussion is not rehearsed again.
      await open(s, { folder: outside });
      await s.request(BENCH_PROBE_METHOD, { awaitModelPrepared: true } satisfies BenchProbeParams);
      assert.equal(s.stderr.filter((message) => /^Rehearsed a turn/.test(message)).length, 1);
    } finally {
      watcher?.close();
      fs.rmSync(temporary, { recursive: true, force: true });
    }
  });

  it('rehearses nothing once a real question came first, whose turn ran that code already', async () => {
    fake.push({ kind: 'text', deltas: ['Ready.'] });
    const s = await ServerProcess.start({ storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test-key', model: 'fake-small' } }, { REPO_DISCUSS_BENCH_PROBE: '1' });
    servers.push(s);
    const id = await open(s);
    await s.request<SendRequest.Result>('discuss/send', { discussionId: id, text: 'Are you there?' });
    await s.turnsComplete(id, 1);
    await s.request(BENCH_PROBE_METHOD, { awaitModelPrepared: true } satisfies BenchProbeParams);
    assert.equal(s.logged(/rehearsed/i), false, s.stderr.join('\n'));
    assert.equal(fake.completionRequests.length, 1);
  });

  it('streams a grounded reply from the endpoint as numbered events', async () => {
    fake.push({ kind: 'text', deltas: ['The answer ', 'is 42.'] });
    const s = await server();
    const started = await s.request<StartRequest.Result>('discuss/start', { folder: repo });
    assert.equal(started.repo, repo);
    assert.equal(started.persistent, true);
    assert.equal(started.model, 'fake-small');
    assert.match(started.repoSummary, /src/);
    await s.request('discuss/subscribe', { discussionId: started.discussionId, fromSeq: 0 });
    const sent = await s.request<SendRequest.Result>('discuss/send', { discussionId: started.discussionId, text: 'What is the answer?' });
    assert.deepEqual(sent, { ok: true, seq: 0 });
    await s.turnsComplete(started.discussionId, 1);
    const types = s.events.map((e) => e.type);
    // The two deltas may arrive in one read and then travel as one event.
    const deltas = s.of(started.discussionId, 'assistant_delta');
    assert.ok(deltas.length >= 1 && deltas.length <= 2);
    assert.equal(deltas.map((e) => e.text).join(''), 'The answer is 42.');
    assert.deepEqual(types, ['user_message', ...deltas.map(() => 'assistant_delta'), 'assistant_message', 'turn_complete']);
    assert.deepEqual(s.events.map((e) => e.seq), types.map((_, i) => i));
    assert.equal(s.of(started.discussionId, 'assistant_message')[0].text, 'The answer is 42.');
    const body = fake.completionRequests[0].body!;
    assert.equal(body.model, 'fake-small');
    const toolNames = (body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name).sort();
    assert.deepEqual(toolNames, [
      'find_files', 'find_references', 'find_symbol', 'get_diagnostics', 'git_blame', 'git_diff', 'git_log', 'git_show', 'go_to_definition', 'grep_files', 'list_dir', 'list_symbols', 'prepare_coding_task', 'read_file', 'record_decision',
    ]);
    const system = (body.messages as Array<{ role: string; content: string }>)[0];
    assert.equal(system.role, 'system');
    assert.match(system.content, /read-only/);
  });

  it('reads inside the folder, refuses reads outside it and of secrets, and nothing of them reaches the events, the model or the logs', async () => {
    fake.push(
      {
        kind: 'toolCalls',
        calls: [
          { id: 'a', name: 'read_file', arguments: '{"path":"src/app.ts"}' },
          { id: 'b', name: 'read_file', arguments: JSON.stringify({ path: path.join(outside, 'secret.txt') }) },
          { id: 'c', name: 'read_file', arguments: '{"path":"notes.txt"}' },
          { id: 'd', name: 'read_file', arguments: '{"path":".env"}' },
          { id: 'e', name: 'grep_files', arguments: JSON.stringify({ pattern: 'SENTINEL', path: '..' }) },
          { id: 'f', name: 'grep_files', arguments: '{"pattern":"SENTINEL"}' },
          { id: 'g', name: 'list_dir', arguments: '{"path":"../"}' },
        ],
      },
      { kind: 'text', text: 'Only src/app.ts was readable.' },
    );
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'read everything you can' });
    await s.turnsComplete(id, 1);
    const results = s.of(id, 'tool_result');
    assert.equal(results.length, 7);
    assert.equal(results[0].ok, true);
    assert.match(results[0].preview, /answer = 42/);
    assert.ok(results.slice(1, 5).every((r) => !r.ok), 'outside, symlinked-out and secret reads are refused');
    const everything = JSON.stringify(s.events) + JSON.stringify(fake.requests.map((r) => r.rawBody)) + s.stderr.join('');
    assert.ok(!everything.includes(SENTINEL), 'the sentinel leaked');
  });

  it('answers the symbol tools from the tree-sitter index in the server process, and nothing from the secret or the link out reaches the model', async () => {
    fs.writeFileSync(path.join(repo, 'src', 'use.ts'), "import { answer } from './app';\n\nexport const doubled = answer * 2;\n");
    fs.writeFileSync(path.join(outside, 'leak.ts'), `export const leaked = '${SENTINEL}';\n`);
    fs.symlinkSync(path.join(outside, 'leak.ts'), path.join(repo, 'src', 'leak.ts'));
    fake.push(
      {
        kind: 'toolCalls',
        calls: [
          { id: 's1', name: 'find_symbol', arguments: '{"query":"ans"}' },
          { id: 's2', name: 'go_to_definition', arguments: '{"symbol":"answer","path":"src/use.ts","line":3}' },
          { id: 's3', name: 'find_references', arguments: '{"symbol":"answer"}' },
          { id: 's4', name: 'list_symbols', arguments: '{"path":"src/use.ts"}' },
          { id: 's5', name: 'get_diagnostics', arguments: '{}' },
          { id: 's6', name: 'list_symbols', arguments: '{"path":"src/leak.ts"}' },
          { id: 's7', name: 'find_symbol', arguments: '{"query":"leaked"}' },
        ],
      },
      { kind: 'text', text: 'answer is defined in src/app.ts.' },
    );
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'where is answer defined and used?' });
    await s.turnsComplete(id, 1);
    const tool = new Map(
      (fake.completionRequests[1].body!.messages as Array<{ role: string; content: string; tool_call_id?: string }>)
        .filter((m) => m.role === 'tool')
        .map((m) => [m.tool_call_id, m.content]),
    );
    assert.match(tool.get('s1') ?? '', /src\/app\.ts:1: constant answer — export const answer = 42;/);
    assert.match(tool.get('s2') ?? '', /followed the import from "\.\/app"/);
    assert.match(tool.get('s2') ?? '', /^src\/app\.ts:1-1: constant answer$/m);
    assert.match(tool.get('s3') ?? '', /^src\/use\.ts:3: export const doubled = answer \* 2;$/m);
    assert.match(tool.get('s3') ?? '', /by name, not type-checked/);
    assert.match(tool.get('s4') ?? '', /^constant doubled 3-3: /m);
    assert.match(tool.get('s5') ?? '', /^No syntax errors found in the folder/);
    assert.match(tool.get('s6') ?? '', /outside the folder/);
    assert.match(tool.get('s7') ?? '', /^No symbols match "leaked"/);
    assert.match(tool.get('s7') ?? '', /1 files left out: outside the folder or not readable/);
    const everything = JSON.stringify(s.events) + JSON.stringify(fake.requests.map((r) => r.rawBody)) + s.stderr.join('');
    assert.ok(!everything.includes(SENTINEL), 'the sentinel leaked');
  });

  it('refuses every attempt to write or run, on the spot, and the folder is unchanged', async () => {
    const before = spawnSync('find', [repo, '-printf', '%p %m %s\n'], { encoding: 'utf8' }).stdout;
    fake.push(
      {
        kind: 'toolCalls',
        calls: [
          { id: 'w', name: 'write_file', arguments: '{"path":"src/app.ts","content":"hacked"}' },
          { id: 'x', name: 'shell', arguments: '{"command":"rm -rf ."}' },
          { id: 'y', name: 'apply_patch', arguments: 'not even json' },
        ],
      },
      { kind: 'text', text: 'I cannot change anything here; shall I prepare a task?' },
    );
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'just fix it' });
    await s.turnsComplete(id, 1);
    const results = s.of(id, 'tool_result');
    assert.equal(results.length, 3);
    assert.ok(results.every((r) => !r.ok && /read-only/.test(r.preview) && /prepare_coding_task/.test(r.preview)));
    const toolMessages = (fake.completionRequests[1].body!.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 3);
    const after = spawnSync('find', [repo, '-printf', '%p %m %s\n'], { encoding: 'utf8' }).stdout;
    assert.equal(after, before);
    assert.equal(fs.readFileSync(path.join(repo, 'src', 'app.ts'), 'utf8'), 'export const answer = 42;\n');
  });

  it('cancel aborts the HTTP stream, ends the turn, and the next message is answered', async () => {
    fake.push({ kind: 'hang', deltas: ['Thinking about '] }, { kind: 'text', text: 'Second answer.' });
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'a slow one' });
    await s.until((events) => events.some((e) => e.type === 'assistant_delta'));
    const disconnected = fake.waitForDisconnect();
    assert.deepEqual(await s.request('discuss/cancel', { discussionId: id }), { ok: true });
    await disconnected;
    await s.turnsComplete(id, 1);
    await s.request('discuss/send', { discussionId: id, text: 'next' });
    await s.turnsComplete(id, 2);
    assert.equal(s.of(id, 'assistant_message').pop()!.text, 'Second answer.');
  });

  it('close aborts the HTTP stream of a running turn', async () => {
    fake.push({ kind: 'hang' });
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'a slow one' });
    await fake.waitForCompletionRequests(1);
    const disconnected = fake.waitForDisconnect();
    await s.request('discuss/close', { discussionId: id });
    await disconnected;
    const err = await refusal(s.request('discuss/send', { discussionId: id, text: 'more' }));
    assert.equal(err.code, DiscussErrorCode.NotFound);
    assert.ok(err.message.includes(id));
  });

  it('a rejected key ends the turn with an error that says how to set one, and the discussion goes on', async () => {
    fake.push({ kind: 'error', status: 401, message: 'Incorrect API key provided' }, { kind: 'text', text: 'Now it works.' });
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'hello' });
    await s.turnsComplete(id, 1);
    const types = s.events.filter((e) => e.discussionId === id).map((e) => e.type);
    assert.deepEqual(types.slice(-2), ['error', 'turn_complete']);
    assert.match(s.of(id, 'error')[0].message, /API key/i);
    assert.ok(!s.of(id, 'error')[0].message.includes('sk-test-key'));
    await s.request('discuss/send', { discussionId: id, text: 'again' });
    await s.turnsComplete(id, 2);
  });

  it('a reply cut off mid-stream (no finish reason, no [DONE]) ends the turn with an error that says it is incomplete, keeps the text shown, and the next request carries that text', async () => {
    fake.push({ kind: 'truncated', deltas: ['The total is ', 'computed in'] }, { kind: 'text', text: 'In src/app.ts.' });
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'Where is the total computed?' });
    await s.turnsComplete(id, 1);
    const events = s.events.filter((e) => e.discussionId === id);
    assert.deepEqual(
      events.map((e) => e.type).filter((t) => t !== 'assistant_delta'),
      ['user_message', 'error', 'assistant_message', 'turn_complete'],
    );
    assert.equal(s.of(id, 'assistant_delta').map((e) => e.text).join(''), 'The total is computed in');
    const message = s.of(id, 'error')[0].message;
    assert.match(message, /stopped its reply part-way/);
    assert.match(message, /incomplete/);
    assert.match(message, /Send the message again/);
    assert.equal(s.of(id, 'assistant_message')[0].text, 'The total is computed in');
    assert.equal(fake.completionRequests.length, 1, 'a reply already shown is not asked for again');

    await s.request('discuss/send', { discussionId: id, text: 'Go on.' });
    await s.turnsComplete(id, 2);
    const messages = fake.completionRequests[1].body!.messages as Array<{ role: string; content: unknown }>;
    assert.deepEqual(messages.slice(-3), [
      { role: 'user', content: 'Where is the total computed?' },
      { role: 'assistant', content: `The total is computed in\n\n${INTERRUPTED_REPLY_NOTE}` },
      { role: 'user', content: 'Go on.' },
    ]);
    assert.equal(s.of(id, 'error').length, 1, 'the next turn answers without an error');
  });

  it('refuses bad requests with the documented phrases', async () => {
    const gate = createGate();
    fake.push({ kind: 'gate', gate, deltas: ['Working'], then: { kind: 'text', text: ' done.' } });
    const s = await server();
    const id = await open(s);
    assert.match((await refusal(s.request('discuss/send', { discussionId: id, text: '  ' }))).message, /empty/);
    assert.match((await refusal(s.request('discuss/send', { discussionId: id, text: 'x'.repeat(70_000) }))).message, /the limit is/);
    await s.request('discuss/send', { discussionId: id, text: 'first' });
    await gate.reached;
    assert.match((await refusal(s.request('discuss/send', { discussionId: id, text: 'second' }))).message, /still answering/);
    assert.match((await refusal(s.request('discuss/promote', { discussionId: id }))).message, /still answering/);
    gate.release();
    await s.turnsComplete(id, 1);
    const unknown = await refusal(s.request('discuss/send', { discussionId: 'disc-missing', text: 'x' }));
    assert.ok(unknown.message.includes('disc-missing'));
    assert.match((await refusal(s.request('discuss/start', { folder: path.join(repo, 'nope') }))).message, /does not exist/);
    for (let i = 1; i < 8; i++) await s.request('discuss/start', { folder: repo });
    assert.match((await refusal(s.request('discuss/start', { folder: repo }))).message, /already open/);
    assert.equal(s.events.filter((e) => e.type === 'user_message').length, 1);
  });

  it('promotes a discussion into an intent and constraints, and lists, exports and lists models', async () => {
    fake.push(
      { kind: 'text', text: 'Add a cache in src/app.ts.' },
      { kind: 'text', text: '{"proposed_intent":"Cache the answer in src/app.ts.","constraints":["Keep the export name"]}' },
    );
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'How would we cache this?' });
    await s.turnsComplete(id, 1);
    const promoted = await s.request<PromoteRequest.Result>('discuss/promote', { discussionId: id });
    assert.deepEqual(promoted, { discussionId: id, intent: 'Cache the answer in src/app.ts.', constraints: ['Keep the export name'] });
    assert.equal(fake.completionRequests[1].body!.temperature, 0);
    const list = await s.request<ListRequest.Result>('discuss/list', {});
    assert.equal(list.discussions[0].discussionId, id);
    assert.equal(list.discussions[0].turns, 1);
    assert.equal(list.discussions[0].title, 'How would we cache this?');
    const exported = await s.request<ExportRequest.Result>('discuss/export', { discussionId: id, format: 'markdown' });
    assert.match(exported.text, /How would we cache this\?/);
    assert.match(exported.text, /Cache the answer/);
    const models = await s.request<ModelsRequest.Result>('discuss/models', {});
    assert.deepEqual(models.models, [{ id: 'fake-small' }, { id: 'fake-large' }]);
    const badModel = await refusal(s.request('discuss/start', { folder: repo, model: 'no-such-model' }));
    assert.match(badModel.message, /does not offer model "no-such-model"/);
  });

  it('falls back to OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL when initialization gives no model settings', async () => {
    fake.push({ kind: 'text', text: 'From the environment.' });
    const s = await ServerProcess.start({ storageDir: storage }, { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-env', OPENAI_MODEL: 'fake-large' });
    servers.push(s);
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'hi' });
    await s.turnsComplete(id, 1);
    assert.equal(fake.completionRequests[0].body!.model, 'fake-large');
    assert.equal(fake.completionRequests[0].headers.authorization, 'Bearer sk-env');
  });

  it('survives SIGKILL mid-turn: a new process resumes with every completed turn and goes on', async () => {
    const gate = createGate();
    fake.push({ kind: 'text', text: 'First answer.' }, { kind: 'gate', gate, deltas: ['Half an ans'], then: { kind: 'text', text: 'wer.' } });
    const first = await server();
    const id = await open(first);
    await first.request('discuss/send', { discussionId: id, text: 'first question' });
    await first.turnsComplete(id, 1);
    await first.request('discuss/send', { discussionId: id, text: 'second question' });
    await gate.reached;
    await first.kill();
    servers.splice(servers.indexOf(first), 1);
    gate.release();

    fake.push({ kind: 'text', text: 'Third answer.' });
    const second = await server();
    const resumed = await second.request<StartRequest.Result>('discuss/start', { folder: repo, resumeId: id });
    assert.equal(resumed.resumed, true);
    assert.equal(resumed.discussionId, id);
    await second.request('discuss/subscribe', { discussionId: id, fromSeq: 0 });
    await second.until((events) => events.filter((e) => e.type === 'turn_complete').length >= 2);
    const texts = second.events.filter((e) => e.type === 'user_message' || e.type === 'assistant_message').map((e) => (e as { text: string }).text);
    assert.deepEqual(texts, ['first question', 'First answer.', 'second question']);
    assert.equal(second.of(id, 'error').length, 1, 'the interrupted reply is reported');
    await second.request('discuss/send', { discussionId: id, text: 'third question' });
    await second.turnsComplete(id, 3);
    const messages = fake.completionRequests[fake.completionRequests.length - 1].body!.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(
      messages.filter((m) => m.role === 'user').map((m) => m.content),
      ['first question', 'second question', 'third question'],
    );
  });

  it('refuses to resume a discussion another live server process holds', async () => {
    const a = await server();
    const id = await open(a);
    await a.request('discuss/send', { discussionId: id, text: 'hi' }).catch(() => undefined);
    const b = await server();
    const err = await refusal(b.request('discuss/start', { folder: repo, resumeId: id }));
    assert.match(err.message, /already open/);
    await a.stop();
    servers.splice(servers.indexOf(a), 1);
    const resumed = await b.request<StartRequest.Result>('discuss/start', { folder: repo, resumeId: id });
    assert.equal(resumed.resumed, true);
  });

  it("asks a client that can watch files for every change in its workspace folders, and answers the next symbol query with a reported edit, though the index was fresh", async () => {
    const registrations: Array<{ method: string; registerOptions?: unknown }> = [];
    const settingsAsked: unknown[] = [];
    let registered!: () => void;
    const watcherRegistered = new Promise<void>((resolve) => (registered = resolve));
    const folders = [{ uri: pathToFileURL(repo).href, name: 'repo' }];
    const s = await ServerProcess.start({ storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test-key', model: 'fake-small' } }, {}, folders, SERVER_ENTRY, {
      capabilities: { workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, configuration: true, workspaceFolders: true } },
      answer: (rpc) => {
        rpc.onRequest('client/registerCapability', (params: { registrations: Array<{ method: string; registerOptions?: unknown }> }) => {
          registrations.push(...params.registrations);
          if (params.registrations.some((r) => r.method === 'workspace/didChangeWatchedFiles')) registered();
          return null;
        });
        rpc.onRequest('workspace/configuration', (params: { items: unknown[] }) => {
          settingsAsked.push(...params.items);
          return params.items.map(() => ({ '**/.git/objects/**': true }));
        });
      },
    });
    servers.push(s);
    await watcherRegistered;
    assert.deepEqual(registrations.find((r) => r.method === 'workspace/didChangeWatchedFiles')?.registerOptions, { watchers: [{ globPattern: '**/*' }] });

    const gate = createGate();
    fake.push(
      // After these two the index is complete and walked under the watch; unwatched, it would answer from itself for 2 s after a walk that found nothing changed.
      { kind: 'toolCalls', calls: [{ id: 'w1', name: 'find_symbol', arguments: '{"query":"answer"}' }, { id: 'w2', name: 'find_symbol', arguments: '{"query":"answer"}' }] },
      { kind: 'gate', gate, deltas: [], then: { kind: 'toolCalls', calls: [{ id: 'w3', name: 'find_symbol', arguments: '{"query":"answerEdited"}' }] } },
      { kind: 'text', text: 'Found it.' },
    );
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'where is answer?' });
    await gate.reached;
    fs.writeFileSync(path.join(repo, 'src', 'app.ts'), 'export const answer = 42;\nexport const answerEdited = 43;\n');
    await s.rpc.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: pathToFileURL(path.join(repo, 'src', 'app.ts')).href, type: 2 }] });
    await s.request('discuss/list', {}); // answered after the notification, which was handled first
    gate.release();
    await s.turnsComplete(id, 1);
    assert.deepEqual(settingsAsked, [{ scopeUri: pathToFileURL(repo).href, section: 'files.watcherExclude' }]);
    const tool = new Map(
      (fake.completionRequests[2].body!.messages as Array<{ role: string; content: string; tool_call_id?: string }>)
        .filter((m) => m.role === 'tool')
        .map((m) => [m.tool_call_id, m.content]),
    );
    assert.match(tool.get('w2') ?? '', /src\/app\.ts:1: constant answer/);
    assert.match(tool.get('w3') ?? '', /src\/app\.ts:2: constant answerEdited/);
  });

  it('serves Promote to task on a TODO comment of an open document inside the workspace', async () => {
    const { pathToFileURL } = await import('node:url');
    const s = await ServerProcess.start({ storageDir: storage }, {}, [{ uri: pathToFileURL(repo).href, name: 'repo' }]);
    servers.push(s);
    const uri = pathToFileURL(path.join(repo, 'src', 'app.ts')).href;
    await s.rpc.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'typescript', version: 1, text: 'export const answer = 42;\n// TODO: explain 42\n' },
    });
    const actions = await s.request<Array<{ title: string; command: { command: string; arguments: unknown[] } }>>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line: 1, character: 3 }, end: { line: 1, character: 3 } },
      context: { diagnostics: [] },
    });
    assert.deepEqual(actions.map((a) => a.title), ['Promote TODO to task']);
    assert.equal(actions[0].command.command, 'repoDiscuss.promoteLocation');
    assert.equal((actions[0].command.arguments[0] as { text: string }).text, '// TODO: explain 42');
  });

  it('runs Promote to task itself for editors without the extension, and leaves it to a client that runs commands', async () => {
    const { pathToFileURL } = await import('node:url');
    const folders = [{ uri: pathToFileURL(repo).href, name: 'repo' }];
    fake.push({ kind: 'text', text: 'Let me look at it.' });
    const s = await ServerProcess.start({ storageDir: storage, model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'fake-small' } }, {}, folders);
    servers.push(s);
    const uri = pathToFileURL(path.join(repo, 'src', 'app.ts')).href;
    const location = { uri, range: { start: { line: 1, character: 0 }, end: { line: 1, character: 19 } }, text: '// TODO: explain 42', kind: 'todo' };
    const result = await s.request<{ discussionId: string; seq: number }>('workspace/executeCommand', {
      command: 'repoDiscuss.promoteLocation',
      arguments: [location],
    });
    await s.turnsComplete(result.discussionId, 1);
    const asked = s.of(result.discussionId, 'user_message')[0].text;
    assert.match(asked, /^Prepare a coding task for this TODO in src\/app\.ts:2-2/);
    assert.match(asked, /prepare_coding_task/);

    const vscodeLike = await ServerProcess.start({ storageDir: storage, clientCommands: true }, {}, folders);
    servers.push(vscodeLike);
    const refused = await refusal(vscodeLike.request('workspace/executeCommand', { command: 'repoDiscuss.promoteLocation', arguments: [location] }));
    assert.match(refused.message, /run by this client itself/);
  });

  it('writes nothing inside the folder under discussion', async () => {
    fake.push({ kind: 'text', text: 'ok' });
    const before = fs.readdirSync(repo).sort();
    const s = await server();
    const id = await open(s);
    await s.request('discuss/send', { discussionId: id, text: 'hi' });
    await s.turnsComplete(id, 1);
    await s.request('discuss/close', { discussionId: id });
    assert.deepEqual(fs.readdirSync(repo).sort(), before);
    assert.ok(fs.readdirSync(path.join(storage, 'discussions')).includes(id));
  });
});

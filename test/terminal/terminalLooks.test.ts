import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGate, echoLastUserMessage, lastUserMessage, startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { screenOf } from './screen';
import { PROMPT, Sandbox, TerminalProcess, countOf } from './terminalProcess';

const scriptAvailable = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;
const COLUMNS = 60;
const SIZE = { columns: COLUMNS, rows: 40 };

const REPLY = [
  '## Where the greeting lives\n',
  '\n',
  'The entry point is short:\n\n- `main.py` prints',
  ' the greeting\n- nothing else runs\n\n',
  '```python\nprint("hello")\n```\n\n',
  'This last paragraph is long enough that it has to wrap at the width of the terminal, and no word of it may be cut in two.\n',
];

describe('repo-discuss in a terminal: rendered replies, progress and multi-line input', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let sandbox: Sandbox;
  const clients: TerminalProcess[] = [];

  beforeEach(async function () {
    if (!scriptAvailable) this.skip();
    fake = await startFakeOpenAI({ models: ['fake-model'] });
    sandbox = new Sandbox();
    fs.writeFileSync(path.join(sandbox.repo, 'main.py'), 'print("hello")\n');
  });

  afterEach(async function () {
    if (!scriptAvailable) return;
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

  function startInPty(extraEnv: Record<string, string | undefined> = {}): TerminalProcess {
    const client = TerminalProcess.startInPty(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(extraEnv), cwd: sandbox.repo, size: SIZE });
    clients.push(client);
    return client;
  }

  const screen = (client: TerminalProcess) => screenOf(client.stdout, COLUMNS);
  /** The `count`th prompt is on screen, empty, on the last row: readline redraws a prompt as it edits, so bytes cannot tell. */
  const prompts = (client: TerminalProcess, count: number) =>
    client.until((p) => {
      const rows = screenOf(p.stdout, COLUMNS);
      return rows[rows.length - 1] === PROMPT.trim() && rows.filter((row) => row.startsWith(PROMPT.trim())).length >= count;
    }, `the prompt is back for the ${count}th time`);

  it('renders a streamed reply as Markdown: heading and list marks gone, code highlighted without fences, long lines wrapped at words', async () => {
    fake.push({ kind: 'text', deltas: REPLY });
    const client = startInPty();
    await prompts(client, 1);
    client.write('Where is the greeting?\r');
    await prompts(client, 2);

    const shown = screen(client);
    const text = shown.join('\n');
    assert.ok(shown.includes('Where the greeting lives'), `the heading is shown without its ## (${text})`);
    assert.ok(!text.includes('##') && !text.includes('```'), 'no Markdown marks are left');
    assert.ok(shown.some((row) => /^ *\* main\.py prints the greeting$/.test(row)), 'a list item with its code span rendered');
    assert.ok(shown.some((row) => row.trim() === 'print("hello")'), 'the code block shows its code');
    assert.match(client.stdout, /\x1b\[\d+mprint\x1b\[\d+m/, 'the code is highlighted');
    const paragraph = shown.slice(shown.findIndex((row) => row.startsWith('This last paragraph')));
    const wrapped = paragraph.slice(0, paragraph.findIndex((row) => row.endsWith('two.')) + 1);
    assert.ok(wrapped.length >= 2, 'the long line is wrapped');
    assert.ok(wrapped.every((row) => row.length <= COLUMNS), 'no row is wider than the terminal');
    const words = REPLY[REPLY.length - 1].trim().split(' ');
    assert.deepEqual(wrapped.join(' ').split(' '), words, 'every word whole, in order: none was cut at a row end');
    assert.equal(countOf(text, 'The entry point is short:'), 1, 'a block streamed as plain text is replaced by its rendering, not shown twice');

    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });

  for (const noColor of [false, true]) {
    it(`shows a spinner with what it waits for until the first event, and clears it before the reply${noColor ? ' (NO_COLOR too)' : ''}`, async () => {
      const gate = createGate();
      fake.push({ kind: 'gate', gate, then: { kind: 'text', text: 'Here it is.' } });
      const client = startInPty(noColor ? { NO_COLOR: '1' } : {});
      await prompts(client, 1);
      client.write('Slow one?\r');
      await gate.reached;
      await client.untilStdout('waiting for the model');
      gate.release();
      await prompts(client, 2);
      const shown = screen(client);
      assert.ok(shown.includes('Here it is.'), `the reply has a row of its own:\n${shown.join('\n')}`);
      assert.ok(!shown.join('\n').includes('waiting for the model'), 'the spinner left nothing on screen');
      client.write('\x04');
      assert.equal((await client.exited).code, 0);
    });
  }

  it('counts down a retry in the spinner while the endpoint rate-limits, and clears it when the reply comes', async () => {
    const gate = createGate();
    fake.push({ kind: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '1' } }, { kind: 'gate', gate, then: { kind: 'text', text: 'After the wait.' } });
    const client = startInPty();
    await prompts(client, 1);
    client.write('Busy endpoint?\r');
    await client.untilStdout(/rate-limited \(429\) · retrying in 1 s, 1 of 2/);
    // The second request reaches the gate: the retry was made, after the line was shown.
    await gate.reached;
    gate.release();
    await prompts(client, 2);
    const shown = screen(client);
    assert.ok(shown.includes('After the wait.'), `the reply has a row of its own:\n${shown.join('\n')}`);
    assert.ok(!shown.join('\n').includes('retrying'), 'the retry line left nothing on screen');
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });

  it('ask, on a terminal, shows the spinner until the reply and renders the reply as Markdown', async () => {
    const gate = createGate();
    fake.push({ kind: 'gate', gate, then: { kind: 'text', deltas: REPLY } });
    const client = TerminalProcess.startInPty(['ask', '--storage-dir', sandbox.storage, 'Where is the greeting?'], { env: env(), cwd: sandbox.repo, size: SIZE });
    clients.push(client);
    await gate.reached;
    await client.untilStdout('waiting for the model');
    gate.release();
    assert.equal((await client.exited).code, 0);
    const shown = screen(client);
    const text = shown.join('\n');
    assert.ok(shown.includes('Where the greeting lives'), `the heading is shown without its ## (${text})`);
    assert.ok(!text.includes('##') && !text.includes('```'), 'no Markdown marks are left');
    assert.match(client.stdout, /\x1b\[\d+mprint\x1b\[\d+m/, 'the code is highlighted');
    assert.ok(!text.includes('waiting for the model'), 'the spinner left nothing on screen');
  });

  it('ask, into pipes, writes the reply as plain text: the Markdown as written, no spinner and no escape codes', async () => {
    const gate = createGate();
    fake.push({ kind: 'gate', gate, then: { kind: 'text', deltas: REPLY } });
    const client = TerminalProcess.start(['ask', '--storage-dir', sandbox.storage, 'Where is the greeting?'], { env: env(), cwd: sandbox.repo });
    clients.push(client);
    await gate.reached;
    gate.release();
    assert.equal((await client.exited).code, 0);
    assert.equal(client.stdout, `${REPLY.join('').trimEnd()}\n`, 'stdout is the answer exactly as the model wrote it');
    assert.ok(!/\x1b/.test(client.stdout + client.stderr), 'no escape code on either stream');
    assert.ok(!client.stderr.includes('waiting for the model'), 'no spinner');
  });

  it('sends a bracketed paste of three lines as one message', async () => {
    fake.setFallback(echoLastUserMessage);
    const client = startInPty();
    await prompts(client, 1);
    client.write('\x1b[200~first line\r\nsecond line\r\nthird line\x1b[201~');
    client.write('\r');
    await prompts(client, 2);
    assert.equal(fake.completionRequests.length, 1, 'one message, not three');
    assert.equal(lastUserMessage(fake.completionRequests[0]), 'first line\nsecond line\nthird line');
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });

  it('a trailing backslash and Alt+Enter continue the message on another line', async () => {
    fake.setFallback(echoLastUserMessage);
    const client = startInPty();
    await prompts(client, 1);
    client.write('one\\\r');
    client.write('two\x1b\r');
    client.write('three\r');
    await prompts(client, 2);
    assert.equal(fake.completionRequests.length, 1);
    assert.equal(lastUserMessage(fake.completionRequests[0]), 'one\ntwo\nthree');
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });

  it('holds what is typed during a reply, unechoed and unsent, in the next prompt to edit', async () => {
    const gate = createGate();
    fake.push({ kind: 'gate', gate, deltas: ['Thinking it over'], then: { kind: 'text', text: ' — done.' } });
    fake.setFallback(echoLastUserMessage);
    const client = startInPty();
    await prompts(client, 1);
    client.write('First?\r');
    await client.untilStdout('Thinking it over');
    client.write('follow-up typed early\r');
    gate.release();
    // The next prompt comes with the held text already in it: it is never seen empty.
    await client.until((p) => screenOf(p.stdout, COLUMNS).some((row) => row === `${PROMPT}follow-up typed early`), 'the held text is in the next prompt');
    const reply = screen(client).find((row) => row.startsWith('Thinking it over'));
    assert.equal(reply, 'Thinking it over — done.', 'nothing typed was echoed into the reply');
    assert.equal(fake.completionRequests.length, 1, 'the held text was not sent');

    client.write('\x7f\x7f\x7f\x7f\x7fnow\r');
    await client.until((p) => screenOf(p.stdout, COLUMNS).includes('Echo: follow-up typed now'), 'the edited line is sent');
    await prompts(client, 3);
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });

  it('/edit sends the question written in $EDITOR, every line of it', async () => {
    fake.setFallback(echoLastUserMessage);
    const editorScript = path.join(sandbox.root, 'write-question.js');
    fs.writeFileSync(editorScript, "require('fs').appendFileSync(process.argv[2], 'Why does main.py\\nprint hello?\\n');\n");
    const client = startInPty({ EDITOR: `"${process.execPath}" "${editorScript}"` });
    await prompts(client, 1);
    client.write('/edit\r');
    await prompts(client, 2);
    assert.equal(fake.completionRequests.length, 1);
    assert.equal(lastUserMessage(fake.completionRequests[0]), 'Why does main.py\nprint hello?');
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });

  it("recalls a folder's earlier questions in the next run, from the storage folder and not the repository", async () => {
    fake.setFallback(echoLastUserMessage);
    const first = startInPty();
    await prompts(first, 1);
    first.write('What does main.py print?\r');
    await prompts(first, 2);
    first.write('\x04');
    assert.equal((await first.exited).code, 0);

    const second = startInPty();
    await prompts(second, 1);
    second.write('\x1b[A');
    await second.until((p) => screenOf(p.stdout, COLUMNS).some((row) => row === `${PROMPT}What does main.py print?`), 'Up recalls the last run’s question');
    second.write('\r');
    await second.until((p) => screenOf(p.stdout, COLUMNS).includes('Echo: What does main.py print?'), 'the recalled line is sent');
    // Ctrl+D typed during a reply is dropped (typing waits for the next prompt): it is typed at the prompt.
    await prompts(second, 2);
    second.write('\x04');
    assert.equal((await second.exited).code, 0);

    assert.ok(fs.readdirSync(path.join(sandbox.storage, 'input-history')).length === 1, 'one history file, in the storage folder');
    assert.deepEqual(fs.readdirSync(sandbox.repo), ['main.py'], 'nothing written into the repository');
  });

  it('with NO_COLOR, a terminal gets the reply as plain text: no colour codes and the Markdown as written', async () => {
    fake.push({ kind: 'text', deltas: REPLY });
    const client = startInPty({ NO_COLOR: '1' });
    await prompts(client, 1);
    client.write('Where is the greeting?\r');
    await prompts(client, 2);
    assert.ok(!/\x1b\[[0-9;]*m/.test(client.stdout), 'no colour code at all');
    assert.match(client.stdout, /## Where the greeting lives/);
    assert.match(client.stdout, /```python/);
    client.write('\x04');
    assert.equal((await client.exited).code, 0);
  });
});

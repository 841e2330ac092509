import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { driveHostileSession, driveJsonOutputs } from './hostileSession';
import { HOSTILE_SEQUENCES, judgeTerminalOutput } from './hostileText';
import { Sandbox, TerminalProcess, countOf, stripAnsi } from './terminalProcess';

const scriptAvailable = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;

/** One of each kind: a 7-bit OSC, an 8-bit CSI, a lone CR, a bidi override. */
const SAMPLE = HOSTILE_SEQUENCES.filter((s) => ['osc52bel', 'osc8', 'clear', 'c1csi', 'c1osc', 'cr', 'bs', 'rlo'].includes(s.id));

describe('repo-discuss shows outside text inert', function () {
  this.timeout(60_000);
  let fake: FakeOpenAI;
  let sandbox: Sandbox;
  const clients: TerminalProcess[] = [];

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['fake-model'] });
    sandbox = new Sandbox();
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

  for (const pty of [false, true]) {
    (pty && !scriptAvailable ? it.skip : it)(
      `${pty ? 'in a terminal' : 'into a pipe'}, no path writes a control character from outside text: every ESC starts one of the client's own codes`,
      async () => {
        const run = await driveHostileSession({ pty, fake, sandbox, env: env(), sequences: SAMPLE, clients });
        for (const output of run.processes) {
          assert.deepEqual(judgeTerminalOutput(output, { pty, typed: run.typed }).foreign, [], "only the client's own escape codes");
        }
        for (const { channel, tried, output } of run.channels) {
          const verdict = judgeTerminalOutput(output, { pty, typed: run.typed, tried });
          assert.deepEqual(verdict.reached, [], `${channel}: no hostile sequence reached the terminal`);
          assert.deepEqual(verdict.shown, tried.map((s) => s.id), `${channel}: the text was shown, inert`);
        }
        const all = run.channels.map((c) => c.output).join('');
        if (pty) assert.match(all, /\x1b\[36m/, 'a terminal still gets the colours');
        else assert.ok(!all.includes('\x1b'), 'a pipe gets no escape at all');
        assert.ok(!/␛\[(1|2|22|31|32|33|36|39)m/.test(all), "no colour code of the client's own is shown as a stand-in");
      },
    );
  }

  (scriptAvailable ? it : it.skip)('in a terminal, a Markdown reply cannot smuggle a control through the renderer: character references, code, links and HTML stay inert', async () => {
    const esc = '&#27;';
    const reply = [
      `# [heading]${esc}]0;pwned-title&#7;\n`,
      '\n',
      `[para]${esc}]52;c;Y3VybCBldmlsLnNofHNoCg==&#x07; &#x9b;2J ${esc}[8mconcealed${esc}[28m &#155;H\n`,
      '\n',
      `- [item]${esc}[2J and \`[span]${esc}[2J\`\n`,
      `- [link][click](https://evil.example/${esc}]8;;x) and [file](src/a.ts${esc}[8m#L3)\n`,
      '\n',
      '```\n[code]\x1b]52;c;AAAA\x07 \u009b2J\n```\n',
      '\n',
      `[html]<a href="https://evil.example">x</a>${esc}]8;;https://evil.example/\x1b\\\n`,
    ];
    fake.push({ kind: 'text', deltas: reply });
    const client = TerminalProcess.startInPty(['--storage-dir', sandbox.storage, sandbox.repo], { env: env(), cwd: sandbox.repo });
    clients.push(client);
    await client.untilStdout('› ');
    client.write('Tell me\r');
    await client.until((p) => countOf(stripAnsi(p.stdout), '[html]') >= 1 && p.stdout.lastIndexOf('› ') > p.stdout.lastIndexOf('[html]'), 'the reply is rendered and the prompt is back');
    client.write('\x04');
    await client.exited;

    const output = client.stdout;
    assert.deepEqual(judgeTerminalOutput(output, { pty: true, typed: ['Tell me'] }).foreign, [], "only the client's own escape codes");
    assert.ok(!output.includes('\x1b[8m'), 'no conceal code made from a character reference');
    assert.ok(!output.includes('\x1b]'), 'no OSC (clipboard, title, hyperlink)');
    assert.ok(!/[\u0080-\u009f]/.test(output), 'no 8-bit control');
    for (const tag of ['heading', 'para', 'item', 'span', 'link', 'code', 'html']) assert.ok(output.includes(`[${tag}]`), `the ${tag} text was shown`);
    assert.ok(stripAnsi(output).includes('␛[8mconcealed'), 'a decoded reference shows as a stand-in, so the reader sees something was there');
    assert.match(output, /\x1b\[1m/, 'it was rendered, in colour');
  });

  it('--json output holds no raw control character and parses back to the very strings the endpoint sent', async () => {
    const run = await driveHostileSession({ pty: false, fake, sandbox, env: env(), sequences: SAMPLE, clients });
    const outputs = await driveJsonOutputs({ fake, sandbox, env: env(), sequences: SAMPLE, discussionId: run.discussionId });
    for (const { channel, output } of outputs) {
      assert.deepEqual(judgeTerminalOutput(output, { tried: SAMPLE }).foreign, [], channel);
      const values = output.trim().startsWith('{\n') || channel === 'export --json' ? [JSON.parse(output)] : output.trim().split('\n').map((line) => JSON.parse(line));
      const strings = JSON.stringify(values);
      for (const s of SAMPLE) assert.ok(strings.includes(JSON.stringify(s.text).slice(1, -1)) || channel === 'list --json', `${channel} keeps ${s.id} exactly`);
    }
  });
});

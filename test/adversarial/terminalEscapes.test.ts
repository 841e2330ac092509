/**
 * Adversarial: terminal escapes. A hostile model, endpoint and repository put
 * every control sequence of the catalogue (test/terminal/hostileText.ts)
 * into every path by which outside text reaches the terminal client's output
 * (test/terminal/hostileSession.ts), into a pipe and into a pseudo-terminal,
 * with the real client running the real server. Each sequence tried on each
 * path is counted, as is each that reached the terminal (must be none) and
 * each whose text was shown inert (proving the path carried it at all).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { driveHostileSession, driveJsonOutputs } from '../terminal/hostileSession';
import { HOSTILE_SEQUENCES, judgeTerminalOutput } from '../terminal/hostileText';
import { Sandbox, type TerminalProcess } from '../terminal/terminalProcess';
import { recordFigures } from './lab';

const scriptAvailable = process.platform === 'linux' && spawnSync('script', ['--version']).status === 0;

interface PathFigures {
  tried: number;
  reached: number;
  shown: number;
}

describe('adversarial: control sequences aimed at the terminal', function () {
  this.timeout(120_000);
  let fake: FakeOpenAI;
  let sandbox: Sandbox;
  const clients: TerminalProcess[] = [];
  const figures: Record<string, unknown> = { sequences: HOSTILE_SEQUENCES.length };

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

  after(() => recordFigures('terminalEscapes', figures));

  const env = () => sandbox.env({ OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'fake-model' });

  for (const pty of [false, true]) {
    const mode = pty ? 'pty' : 'pipe';
    (pty && !scriptAvailable ? it.skip : it)(
      `${pty ? 'in a pseudo-terminal' : 'into a pipe'}: none of ${HOSTILE_SEQUENCES.length} hostile sequences on any output path reaches the terminal, and each path shows every one of them inert`,
      async () => {
        const run = await driveHostileSession({ pty, fake, sandbox, env: env(), sequences: HOSTILE_SEQUENCES, clients });
        const paths: Record<string, PathFigures> = {};
        const total: PathFigures = { tried: 0, reached: 0, shown: 0 };
        const reachedOn: string[] = [];
        for (const { channel, tried, output } of run.channels) {
          if (!tried.length) continue;
          const verdict = judgeTerminalOutput(output, { pty, typed: run.typed, tried });
          const counts = (paths[channel] ??= { tried: 0, reached: 0, shown: 0 });
          for (const figures of [counts, total]) {
            figures.tried += tried.length;
            figures.reached += verdict.reached.length;
            figures.shown += verdict.shown.length;
          }
          reachedOn.push(...verdict.reached.map((id) => `${channel}: ${id}`));
        }
        const foreign = [...new Set(run.processes.flatMap((output) => judgeTerminalOutput(output, { pty, typed: run.typed }).foreign))];
        const escapes = run.processes.join('').split('\x1b').length - 1;
        figures[mode] = { ...total, paths: Object.keys(paths).length, foreignCharacters: foreign, clientEscapeSequences: escapes, byPath: paths };

        assert.deepEqual(reachedOn, [], 'no hostile sequence reached the terminal');
        assert.deepEqual(foreign, [], "every escape written is the client's own");
        for (const [channel, counts] of Object.entries(paths)) assert.equal(counts.shown, counts.tried, `${channel} carried every hostile text to the output, inert`);
        assert.ok(total.tried >= HOSTILE_SEQUENCES.length * 10, `tried ${total.tried}`);
      },
    );
  }

  it(`--json output escapes all ${HOSTILE_SEQUENCES.length} sequences and still parses back to the exact strings sent`, async () => {
    const run = await driveHostileSession({ pty: false, fake, sandbox, env: env(), sequences: HOSTILE_SEQUENCES, clients });
    const outputs = await driveJsonOutputs({ fake, sandbox, env: env(), sequences: HOSTILE_SEQUENCES, discussionId: run.discussionId });
    const json: Record<string, PathFigures> = {};
    for (const { channel, output } of outputs) {
      const verdict = judgeTerminalOutput(output, { tried: HOSTILE_SEQUENCES });
      assert.deepEqual(verdict.foreign, [], channel);
      const values = channel === 'ask --json' ? output.trim().split('\n').map((line) => JSON.parse(line) as unknown) : [JSON.parse(output) as unknown];
      const strings = JSON.stringify(values);
      const kept = HOSTILE_SEQUENCES.filter((s) => strings.includes(JSON.stringify(s.text).slice(1, -1)));
      json[channel] = { tried: channel === 'list --json' ? 0 : HOSTILE_SEQUENCES.length, reached: verdict.reached.length, shown: kept.length };
      if (channel !== 'list --json') assert.equal(kept.length, HOSTILE_SEQUENCES.length, `${channel} keeps every string exactly`);
    }
    figures.json = json;
  });
});

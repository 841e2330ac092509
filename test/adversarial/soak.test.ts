/**
 * Part 7 — soak. 1,000 turns across 8 discussions, each turn a round of tool
 * calls and an answer, with the fake model answering at once. The server's
 * resident memory is sampled from /proc/<pid>/status as it goes.
 *
 * Run twice: with the V8 heap capped, so garbage is collected and only what
 * the server retains shows (a leak runs out of heap or lifts the resident
 * memory); and as shipped, where V8 lets garbage pile up in the main thread
 * and the search workers for a long while, which is measured and reported.
 * `SOAK_TURNS` changes the number of turns.
 */
import { strict as assert } from 'node:assert';
import type { DiscussionEvent } from '../../shared/protocol';
import type { FakeStepScript, RecordedRequest } from '../support/fakeOpenAI';
import type { ServerProcess } from '../support/serverProcess';
import { Lab, messagesOf, recordFigures, residentKiB } from './lab';

const TURNS = Number(process.env.SOAK_TURNS ?? 1000);
const DISCUSSIONS = 8;
const RSS_BOUND_MIB = 300;
/** Old-space cap of the leak run: ample for what a server needs to hold, far below what a leak over 1,000 turns needs. */
const HEAP_CAP_MIB = 96;
/** As shipped, only a runaway is asserted against; the figures are reported. */
const RUNAWAY_MIB = 1024;

/** One round of tool calls for a question, then an answer once the results are in. */
function instantModel(): FakeStepScript {
  let calls = 0;
  return (request: RecordedRequest) => {
    const messages = messagesOf(request);
    const last = messages[messages.length - 1];
    if (last?.role === 'user') {
      calls++;
      return {
        kind: 'toolCalls',
        calls: [
          { id: `soak-${calls}-a`, name: 'read_file', arguments: '{"path":"src/app.ts"}' },
          { id: `soak-${calls}-b`, name: 'grep_files', arguments: '{"pattern":"answer"}' },
        ],
      };
    }
    return { kind: 'text', text: `Answered after ${messages.filter((m) => m.role === 'tool').length} tool results.` };
  };
}

interface SoakFigures {
  turns: number;
  seconds: number;
  peakKiB: number;
  samples: Array<{ turns: number; rssKiB: number }>;
  exitCode: number | null;
}

const mib = (kib: number) => Math.round((kib / 1024) * 10) / 10;

async function soak(lab: Lab, env: Record<string, string>): Promise<SoakFigures> {
  const s: ServerProcess = await lab.server({}, env);
  const pid = s.child.pid!;
  const ids: string[] = [];
  for (let i = 0; i < DISCUSSIONS; i++) ids.push(await lab.open(s));

  // Counted incrementally: re-filtering every event on every notification is quadratic.
  const completes = new Map<string, number>();
  const toolResults = new Map<string, number>();
  let cursor = 0;
  const scan = (events: DiscussionEvent[]) => {
    for (; cursor < events.length; cursor++) {
      const e = events[cursor];
      if (e.type === 'turn_complete') completes.set(e.discussionId, (completes.get(e.discussionId) ?? 0) + 1);
      if (e.type === 'tool_result' && e.ok) toolResults.set(e.discussionId, (toolResults.get(e.discussionId) ?? 0) + 1);
      if (e.type === 'error') assert.fail(`turn failed in ${e.discussionId}: ${e.message}`);
    }
  };

  const samples: Array<{ turns: number; rssKiB: number }> = [{ turns: 0, rssKiB: residentKiB(pid) }];
  let done = 0;
  // A server that dies (out of memory, say) fails the soak at once instead of leaving it waiting.
  const died = s.exited.then((code) => {
    throw new Error(`the server process exited (code ${code}) after ${done} turns; last resident memory ${mib(samples[samples.length - 1].rssKiB)} MiB; stderr: ${s.stderr.join('').slice(-400)}`);
  });
  died.catch(() => undefined);
  const alive = <T>(p: Promise<T>): Promise<T> => Promise.race([p, died]);
  const perDiscussion = Math.ceil(TURNS / DISCUSSIONS);
  const started = Date.now();
  await Promise.all(
    ids.map(async (id, d) => {
      const turns = Math.min(perDiscussion, TURNS - d * perDiscussion);
      for (let t = 0; t < turns; t++) {
        await alive(s.request('discuss/send', { discussionId: id, text: `question ${t} in discussion ${d}` }));
        await alive(
          s.until((events) => {
            scan(events);
            return (completes.get(id) ?? 0) >= t + 1;
          }),
        );
        done++;
        if (done % 50 === 0) samples.push({ turns: done, rssKiB: residentKiB(pid) });
        // The fake keeps every request it sees; the soak does not need them.
        if (lab.fake.requests.length > 400) (lab.fake.requests as RecordedRequest[]).splice(0, 200);
        // Drop our copy of old events too (the counters already have them).
        if (cursor > 5000) {
          s.events.splice(0, cursor);
          cursor = 0;
        }
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  samples.push({ turns: done, rssKiB: residentKiB(pid) });

  assert.equal(done, TURNS);
  assert.equal(s.child.exitCode, null, 'the server is still running');
  const list = await s.request<{ discussions: Array<{ discussionId: string; turns: number }> }>('discuss/list', {});
  for (const id of ids) {
    const expected = list.discussions.find((d) => d.discussionId === id)!.turns;
    assert.equal(completes.get(id), expected, 'every turn completed');
    assert.equal(toolResults.get(id), expected * 2, 'every turn ran its two tool calls');
  }
  const exitCode = s.child.exitCode;
  await s.stop();
  lab.drop(s);
  return { turns: done, seconds, peakKiB: Math.max(...samples.map((x) => x.rssKiB)), samples, exitCode };
}

function figures(f: SoakFigures, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    turns: f.turns,
    discussions: DISCUSSIONS,
    toolCalls: f.turns * 2,
    modelRequests: f.turns * 2,
    seconds: Math.round(f.seconds),
    rssStartMiB: mib(f.samples[0].rssKiB),
    rssPeakMiB: mib(f.peakKiB),
    rssEndMiB: mib(f.samples[f.samples.length - 1].rssKiB),
    samplesMiB: f.samples.filter((_, i) => i % 4 === 0 || i === f.samples.length - 1).map((x) => `${x.turns}:${mib(x.rssKiB)}`),
    ...extra,
  };
}

describe('adversarial: soak', function () {
  this.timeout(Math.max(300_000, TURNS * 300));
  let lab: Lab;

  before(async () => {
    lab = await Lab.create({ plain: true, fake: { fallback: instantModel() } });
  });
  after(() => lab.dispose());

  it(`retains nothing per turn: with the V8 heap capped at ${HEAP_CAP_MIB} MiB the server completes ${TURNS} turns with tool calls across ${DISCUSSIONS} discussions and its resident memory stays under ${RSS_BOUND_MIB} MiB`, async () => {
    const f = await soak(lab, { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MIB}` });
    recordFigures('soak', { heapCapped: figures(f, { heapCapMiB: HEAP_CAP_MIB, boundMiB: RSS_BOUND_MIB }) });
    assert.ok(f.peakKiB < RSS_BOUND_MIB * 1024, `resident memory peaked at ${mib(f.peakKiB)} MiB`);
  });

  it(`as shipped (no heap cap), the server completes ${TURNS} turns and its resident memory is measured and reported (asserted only below ${RUNAWAY_MIB} MiB)`, async () => {
    const f = await soak(lab, {});
    recordFigures('soak', { asShipped: figures(f, { runawayBoundMiB: RUNAWAY_MIB }) });
    assert.ok(f.peakKiB < RUNAWAY_MIB * 1024, `resident memory peaked at ${mib(f.peakKiB)} MiB`);
  });
});

/**
 * The warm file index (server/src/search/fileIndex.ts) against the real
 * server process. Once a folder is warm, find_files answers from the index
 * and grep_files reads only the index's candidates: the index must never
 * widen what is readable. Each hostile change made while warm — a link out
 * of the folder added, a `.gitignore` or policy change, a FIFO and a huge
 * ignore file, a secret renamed to an ordinary name and back, thousands of
 * files at once — must end in the very answers a cold search gives (a second
 * server with the index off), and no answer on the way may show what the
 * cold one would not read.
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ServerProcess } from '../support/serverProcess';
import { Lab, SEARCH_ENGINES, assertNoLeak, recordFigures, runTurn, scanForLeaks, toolOutputs } from './lab';

/** In a secret's body: its name hides it, so a search must not show it unless the name changes. */
const RENAMED_MARKER = 'RENAMED-MARKER-7f3a';
/** How many searches a change may take to show up: the watcher reports a moment after the change. */
const MAX_ATTEMPTS = 40;
const BURST_FILES = 3000;

const QUERIES: Array<{ name: string; args: Record<string, unknown> }> = [
  { name: 'find_files', args: { pattern: '**/*' } },
  { name: 'find_files', args: { pattern: '**/*.txt' } },
  { name: 'grep_files', args: { pattern: '[Z]QXJ.sentinel' } },
  { name: 'grep_files', args: { pattern: 'INSIDE-MARKER' } },
  { name: 'grep_files', args: { pattern: 'RENAMED-[M]ARKER' } },
  { name: 'grep_files', args: { pattern: 'burst file', glob: 'burst/**' } },
];

interface Side {
  server: ServerProcess;
  discussion: string;
}

describe('adversarial: the warm file index answers as a cold search does', function () {
  this.timeout(240_000);
  const figures: Record<string, unknown> = {};
  let calls = 0;

  after(() => recordFigures('warmIndex', figures));

  it('ends the server process on shutdown and exit while a watcher subscription is live', async () => {
    const lab = await Lab.create({ plain: true, fake: { fallback: () => ({ kind: 'text', text: 'Looked.' }) } });
    try {
      const s = await lab.server({}, { REPO_DISCUSS_FILE_INDEX: 'on' });
      const id = await lab.open(s);
      const warmed = s.untilLogged(/from its warm file index/);
      let isWarm = false;
      void warmed.then(() => (isWarm = true));
      for (let i = 0; i < MAX_ATTEMPTS && !isWarm; i++) {
        await runTurn(s, lab.fake, id, `find ${i}`, [
          { kind: 'toolCalls', calls: [{ id: `exit-${i}`, name: 'find_files', arguments: JSON.stringify({ pattern: '**/*.ts' }) }] },
          { kind: 'text', text: 'Looked.' },
        ]);
      }
      assert.ok(isWarm, 'the folder is watched and warm');
      const started = performance.now();
      // stop() sends shutdown then exit and waits for the process to end: a live subscription must not hold it.
      await s.stop();
      lab.drop(s);
      assert.equal(s.child.exitCode, 0);
      figures.exitWithLiveWatcher = { exitMs: Math.round(performance.now() - started) };
    } finally {
      await lab.dispose();
    }
  });

  for (const config of SEARCH_ENGINES) {
    const run = config.available ? it : it.skip;
    run(`after links out, ignore and policy changes, a FIFO, a huge ignore file, a secret renamed and back and a burst of ${BURST_FILES} files, every warm answer ends equal to the cold one and none shows more (${config.name})`, async () => {
      const lab = await Lab.create({ fake: { fallback: () => ({ kind: 'text', text: 'Looked.' }) } });
      try {
        for (let i = 0; i < 40; i++) lab.write(`bulk/file${i}.txt`, `bulk ${i}\n`);
        lab.write('vault/.env.staging', `TOKEN=${RENAMED_MARKER}\n`);
        const warm: Side = { server: await lab.server(config.init, { ...config.env(lab), REPO_DISCUSS_FILE_INDEX: 'on' }), discussion: '' };
        const cold: Side = { server: await lab.server(config.init, { ...config.env(lab), REPO_DISCUSS_FILE_INDEX: 'off' }), discussion: '' };
        warm.discussion = await lab.open(warm.server);
        cold.discussion = await lab.open(cold.server);

        /** Runs every query in one turn; the outputs in query order. */
        const ask = async (side: Side): Promise<string[]> => {
          const ids = QUERIES.map(() => `${config.tag}-q${++calls}`);
          await runTurn(side.server, lab.fake, side.discussion, `search ${ids[0]}`, [
            { kind: 'toolCalls', calls: QUERIES.map((q, i) => ({ id: ids[i], name: q.name, arguments: JSON.stringify(q.args) })) },
            { kind: 'text', text: 'Looked.' },
          ]);
          const outputs = toolOutputs(lab.fake.requests);
          return ids.map((id) => outputs.get(id) ?? '(no output)');
        };

        // The first searches run cold while the index builds; the server logs when one is answered warm.
        const warmed = warm.server.untilLogged(/from its warm file index/);
        let warmingSearches = 0;
        let isWarm = false;
        void warmed.then(() => (isWarm = true));
        while (!isWarm && warmingSearches < MAX_ATTEMPTS) {
          await ask(warm);
          warmingSearches += 1;
          await Promise.race([warmed, Promise.resolve()]);
        }
        assert.ok(isWarm, 'the folder went warm');

        const attemptsByChange: Record<string, number> = {};
        /** Asks the cold side, then the warm side until it gives the same answers; `check` sees every warm answer on the way. */
        const converge = async (change: string, check?: (answers: string[]) => void): Promise<void> => {
          const expected = await ask(cold);
          let answers: string[] = [];
          for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            answers = await ask(warm);
            check?.(answers);
            if (answers.every((answer, i) => answer === expected[i])) {
              attemptsByChange[change] = attempt;
              return;
            }
          }
          assert.deepEqual(answers, expected, `${change}: the warm answers never became the cold ones`);
        };

        await converge('warm, before any change');

        lab.link('added-out.txt', path.join(lab.outside, 'secret.txt'));
        lab.link('src/added-dir', lab.outside);
        lab.link('src/added-up', '../..');
        lab.link('added-in.txt', 'docs/inside.txt');
        await converge('links out of the folder added', (answers) => {
          assert.doesNotMatch(answers[0], /^added-out\.txt$|^src\/added-dir\/|^src\/added-up\//m, 'a link out is never listed');
        });

        lab.write('.gitignore', 'docs/\n');
        await converge('.gitignore now ignores docs/');

        execFileSync('mkfifo', [path.join(lab.repo, 'src', 'fifo.txt')]);
        execFileSync('mkfifo', [path.join(lab.repo, 'src', 'util', '.gitignore')]);
        lab.write('bulk/.ignore', Array.from({ length: 200_000 }, (_, i) => `never-${i}.txt`).join('\n') + '\nfile1*.txt\n');
        await converge('a FIFO file, a FIFO .gitignore and a huge .ignore');

        fs.renameSync(path.join(lab.repo, 'vault/.env.staging'), path.join(lab.repo, 'vault/staging-notes.txt'));
        await converge('a secret renamed to an ordinary name');
        fs.renameSync(path.join(lab.repo, 'vault/staging-notes.txt'), path.join(lab.repo, 'vault/.env.staging'));
        await converge('and renamed back', (answers) => {
          // Until the watcher reports the rename, the index names a file that is gone: never read, never shown.
          assert.doesNotMatch(answers[4], new RegExp(RENAMED_MARKER), 'the secret is not shown once its name hides it again');
        });

        // The policy is read when a discussion starts: new discussions on both sides.
        lab.write('.repo-discuss/policy.json', JSON.stringify({ denyRead: ['private/**', 'bulk/**'] }));
        warm.discussion = await lab.open(warm.server);
        cold.discussion = await lab.open(cold.server);
        await converge('the policy now denies bulk/', (answers) => {
          assert.doesNotMatch(answers[3] + answers[2], /^bulk\//m, 'a file the policy denies is never searched');
        });

        // A burst of files from another process while the server is asked to answer.
        const burst = spawn(process.execPath, [
          '-e',
          `const fs=require('fs');fs.mkdirSync(process.argv[1]+'/burst',{recursive:true});for(let i=0;i<${BURST_FILES};i++)fs.writeFileSync(process.argv[1]+'/burst/f'+i+'.ts','burst file '+i+'\\n');`,
          lab.repo,
        ]);
        const burstDone = new Promise<void>((resolve) => burst.once('exit', () => resolve()));
        let burstOver = false;
        void burstDone.then(() => (burstOver = true));
        const roundTrips: number[] = [];
        while (!burstOver || roundTrips.length < 20) {
          const started = performance.now();
          await warm.server.request('discuss/list', {});
          roundTrips.push(performance.now() - started);
          if (roundTrips.length > 5000) break;
        }
        await burstDone;
        await converge(`a burst of ${BURST_FILES} new files`);
        // The watcher's batches reach the server's main thread, which only forwards them: it must keep answering.
        const afterBurst: number[] = [];
        for (let i = 0; i < 20; i++) {
          const started = performance.now();
          await warm.server.request('discuss/list', {});
          afterBurst.push(performance.now() - started);
        }

        assertNoLeak(scanForLeaks(lab));
        assert.ok(warm.server.stderr.some((line) => /from its warm file index/.test(line)));
        assert.ok(!cold.server.stderr.some((line) => /from its warm file index/.test(line)), 'the cold side never used an index');
        const sorted = [...roundTrips].sort((a, b) => a - b);
        figures[config.name] = {
          searchesBeforeWarm: warmingSearches,
          searchesUntilEqualByChange: attemptsByChange,
          burst: {
            files: BURST_FILES,
            listRoundTrips: roundTrips.length,
            listRoundTripMedianMs: Math.round(sorted[Math.floor(sorted.length / 2)] * 10) / 10,
            listRoundTripMaxMs: Math.round(sorted[sorted.length - 1] * 10) / 10,
            listRoundTripMaxAfterMs: Math.round(Math.max(...afterBurst) * 10) / 10,
          },
          leaks: 0,
        };
      } finally {
        await lab.dispose();
      }
    });
  }
});

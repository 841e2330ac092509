/**
 * The warm file index (server/src/search/fileIndex.ts) against the real
 * server process. Once a folder is warm, find_files answers from the index
 * and grep_files reads only the index's candidates: the index must never
 * widen what is readable. Each hostile change made while warm — a link out
 * of the folder added, a `.gitignore` or policy change, a FIFO and a huge
 * ignore file, a secret renamed to an ordinary name and back, thousands of
 * files at once — must be answered by the very next warm search as a cold
 * search answers it (a second server with the index off).
 */
import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { untilPastRacyWindow } from '../support/racyWindow';
import type { ServerProcess } from '../support/serverProcess';
import { Lab, SEARCH_ENGINES, assertNoLeak, recordFigures, runTurn, scanForLeaks, toolOutputs } from './lab';

/** In the files a warm server keeps in memory (server/src/search/contentCache.ts). */
const KEPT_MARKER = 'KEPT-MARKER-51c2';
/** In a secret's body: its name hides it, so a search must not show it unless the name changes. */
const RENAMED_MARKER = 'RENAMED-MARKER-7f3a';
/** How many searches the folder may take to go warm (the first ones run cold while the index builds). */
const MAX_ATTEMPTS = 40;
const BURST_FILES = 3000;

type Query = { name: string; args: Record<string, unknown> };

const QUERIES: Query[] = [
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

let calls = 0;

/** Runs every query in one turn of the side's discussion; the outputs in query order. */
async function askAll(lab: Lab, side: Side, queries: readonly Query[], tag: string): Promise<string[]> {
  const ids = queries.map(() => `${tag}-q${++calls}`);
  await runTurn(side.server, lab.fake, side.discussion, `search ${ids[0]}`, [
    { kind: 'toolCalls', calls: queries.map((q, i) => ({ id: ids[i], name: q.name, arguments: JSON.stringify(q.args) })) },
    { kind: 'text', text: 'Looked.' },
  ]);
  const outputs = toolOutputs(lab.fake.requests);
  return ids.map((id) => outputs.get(id) ?? '(no output)');
}

describe('adversarial: the warm file index answers as a cold search does', function () {
  this.timeout(240_000);
  const figures: Record<string, unknown> = {};

  after(() => recordFigures('warmIndex', figures));

  it("builds a folder's index when a question is sent, so the model's first search of it is already warm", async () => {
    const lab = await Lab.create({ plain: true, fake: { fallback: () => ({ kind: 'text', text: 'Looked.' }) } });
    try {
      const s = await lab.server();
      const id = await lab.open(s);
      const indexed = s.untilLogged(/warm file index of .* is ready/);
      await runTurn(s, lab.fake, id, 'a question without a search', [{ kind: 'text', text: 'Answered.' }]);
      await indexed;
      await runTurn(s, lab.fake, id, 'now search', [
        { kind: 'toolCalls', calls: [{ id: 'first-find', name: 'find_files', arguments: JSON.stringify({ pattern: '**/*.txt' }) }] },
        { kind: 'text', text: 'Looked.' },
      ]);
      // Logged before the tool result, which the turn waited for: already in by now if it was warm.
      assert.ok(s.logged(/from its warm file index/), 'the first search was answered from the index');
      assert.match(toolOutputs(lab.fake.requests).get('first-find') ?? '', /\.txt/);
      await s.stop();
      lab.drop(s);
    } finally {
      await lab.dispose();
    }
  });

  for (const config of SEARCH_ENGINES) {
    const run = config.available ? it : it.skip;
    run(`after links out, ignore and policy changes, a FIFO, a huge ignore file, a secret renamed and back and a burst of ${BURST_FILES} files, the very next warm answer equals the cold one (${config.name})`, async () => {
      const lab = await Lab.create({ fake: { fallback: () => ({ kind: 'text', text: 'Looked.' }) } });
      try {
        for (let i = 0; i < 40; i++) lab.write(`bulk/file${i}.txt`, `bulk ${i}\n`);
        lab.write('vault/.env.staging', `TOKEN=${RENAMED_MARKER}\n`);
        const warm: Side = { server: await lab.server(config.init, config.env(lab)), discussion: '' };
        const cold: Side = { server: await lab.server(config.init, { ...config.env(lab), REPO_DISCUSS_FILE_INDEX: 'off' }), discussion: '' };
        warm.discussion = await lab.open(warm.server);
        cold.discussion = await lab.open(cold.server);

        const ask = (side: Side): Promise<string[]> => askAll(lab, side, QUERIES, config.tag);

        // The first searches run cold while the index builds; the server logs when one is answered warm.
        let warmingSearches = 0;
        while (!warm.server.logged(/from its warm file index/) && warmingSearches < MAX_ATTEMPTS) {
          await ask(warm);
          warmingSearches += 1;
        }
        assert.ok(warm.server.logged(/from its warm file index/), 'the folder went warm');

        const changes: string[] = [];
        /** Asks the cold side, then the warm side once: the warm answers must already be the cold ones. */
        const converge = async (change: string, check?: (answers: string[]) => void): Promise<void> => {
          const expected = await ask(cold);
          const answers = await ask(warm);
          check?.(answers);
          assert.deepEqual(answers, expected, `${change}: the next warm search answers as the cold one`);
          changes.push(change);
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
        await new Promise<void>((resolve) => burst.once('exit', () => resolve()));
        await converge(`a burst of ${BURST_FILES} new files`);

        assertNoLeak(scanForLeaks(lab));
        assert.ok(warm.server.stderr.some((line) => /from its warm file index/.test(line)));
        assert.ok(!cold.server.stderr.some((line) => /from its warm file index/.test(line)), 'the cold side never used an index');
        figures[config.name] = {
          searchesBeforeWarm: warmingSearches,
          changesAnsweredByTheNextSearch: changes,
          leaks: 0,
        };
      } finally {
        await lab.dispose();
      }
    });
  }
  for (const config of SEARCH_ENGINES) {
    const run = config.available ? it : it.skip;
    run(`a grep answered from the file contents kept in memory answers as a cold one after an edit of the same size, a truncation, a file and a directory swapped for links out, and a secret renamed to an ordinary name and back (${config.name})`, async () => {
      const lab = await Lab.create({ fake: { fallback: () => ({ kind: 'text', text: 'Looked.' }) } });
      try {
        lab.write('kept/a.txt', `${KEPT_MARKER} alpha 1\n`);
        lab.write('kept/b.txt', `${KEPT_MARKER} beta 2\n`);
        lab.write('kept/sub/deeper.txt', `${KEPT_MARKER} inside deeper\n`);
        lab.write('kept/.env.kept', `TOKEN=${KEPT_MARKER} secret\n`);
        // Kept only once past the racy window: a file read just after it changed is read from the disk each time.
        const everyEntry = (directory: string): string[] =>
          fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
            const entryPath = path.join(directory, entry.name);
            return entry.isDirectory() && entry.name !== '.git' ? [entryPath, ...everyEntry(entryPath)] : [entryPath];
          });
        await untilPastRacyWindow(everyEntry(lab.repo));
        const warm: Side = { server: await lab.server(config.init, config.env(lab)), discussion: '' };
        const cold: Side = { server: await lab.server(config.init, { ...config.env(lab), REPO_DISCUSS_FILE_INDEX: 'off' }), discussion: '' };
        warm.discussion = await lab.open(warm.server);
        cold.discussion = await lab.open(cold.server);
        const queries = [
          { name: 'grep_files', args: { pattern: 'KEPT-[M]ARKER' } },
          { name: 'grep_files', args: { pattern: '[Z]QXJ.sentinel' } },
          { name: 'find_files', args: { pattern: 'kept/**' } },
        ];
        const ask = (side: Side): Promise<string[]> => askAll(lab, side, queries, config.tag);
        const fromMemory = /from the file contents kept in memory/;
        let warmingSearches = 0;
        while (!warm.server.logged(fromMemory) && warmingSearches < MAX_ATTEMPTS) {
          await ask(warm);
          warmingSearches += 1;
        }
        assert.ok(warm.server.logged(fromMemory), 'the warm side grepped from memory');

        const changes: string[] = [];
        const converge = async (change: string, check?: (answers: string[]) => void): Promise<void> => {
          const expected = await ask(cold);
          const answers = await ask(warm);
          check?.(answers);
          assert.deepEqual(answers, expected, `${change}: the next grep from memory answers as the cold one`);
          changes.push(change);
        };

        await converge('kept, before any change', (answers) => assert.match(answers[0], /kept\/a\.txt:1: KEPT-MARKER-51c2 alpha 1/));

        fs.writeFileSync(path.join(lab.repo, 'kept/a.txt'), `${KEPT_MARKER} gamma 1\n`);
        await converge('an edit of the same size', (answers) => assert.match(answers[0], /gamma 1/));

        fs.writeFileSync(path.join(lab.repo, 'kept/a.txt'), '');
        await converge('a truncation', (answers) => assert.doesNotMatch(answers[0], /kept\/a\.txt/));

        fs.rmSync(path.join(lab.repo, 'kept/b.txt'));
        fs.symlinkSync(path.join(lab.outside, 'secret.txt'), path.join(lab.repo, 'kept/b.txt'));
        await converge('a kept file swapped for a link out', (answers) => assert.doesNotMatch(answers[0], /kept\/b\.txt/));

        fs.renameSync(path.join(lab.repo, 'kept/sub'), path.join(lab.repo, 'kept/sub.old'));
        fs.symlinkSync(path.join(lab.outside, 'nested'), path.join(lab.repo, 'kept/sub'));
        await converge('the directory above a kept file swapped for a link out');

        fs.renameSync(path.join(lab.repo, 'kept/.env.kept'), path.join(lab.repo, 'kept/notes.txt'));
        await converge('a secret renamed to an ordinary name', (answers) => assert.match(answers[0], /kept\/notes\.txt/));
        fs.renameSync(path.join(lab.repo, 'kept/notes.txt'), path.join(lab.repo, 'kept/.env.kept'));
        await converge('and renamed back', (answers) => assert.doesNotMatch(answers[0], /secret/));

        assertNoLeak(scanForLeaks(lab));
        figures[`${config.name}, from memory`] = { searchesBeforeKept: warmingSearches, changesAnsweredByTheNextSearch: changes, leaks: 0 };
      } finally {
        await lab.dispose();
      }
    });
  }
});

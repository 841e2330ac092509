import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as ParcelWatcher from '@parcel/watcher';
import { FolderWatches, loadFileWatcher, overflowSuspectedAt, type FileEvent } from '../../client/src/terminal/folderWatcher';
import { Refusal, Session, waitFor } from '../../client/src/terminal/session';
import { CloseRequest } from '../../shared/protocol';
import { createGate, startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { Sandbox, tempDir } from './terminalProcess';

/**
 * The terminal client's file watcher (client/src/terminal/folderWatcher.ts):
 * what VS Code's watcher is to the extension. The server is told of every
 * change in a discussed folder, so its symbol index answers a query with an
 * edit made a moment before, without walking the folder first.
 */

const watcher = loadFileWatcher();

/** A watcher library whose watches start, and then deliver a batch of events, or fail (as on a full event queue), when the test says: the last watch started, or the one of `dir`. */
function scriptedWatcher(): { library: typeof ParcelWatcher; deliver: (events: ParcelWatcher.Event[], dir?: string) => void; fail: (err: Error) => void } {
  const callbacks = new Map<string, ParcelWatcher.SubscribeCallback>();
  const library = {
    ...watcher!,
    subscribe: async (dir: string, received: ParcelWatcher.SubscribeCallback) => {
      callbacks.delete(dir); // re-inserted: the last watch started is the last entry
      callbacks.set(dir, received);
      return { unsubscribe: async () => undefined };
    },
  } as typeof ParcelWatcher;
  const last = (): ParcelWatcher.SubscribeCallback | undefined => [...callbacks.values()].at(-1);
  return { library, deliver: (events, dir) => (dir === undefined ? last() : callbacks.get(dir))?.(null, events), fail: (err) => last()?.(err, []) };
}

/** Resolves once `test` holds for something `subscribe` hands it. */
function until<T>(subscribe: (listener: (value: T) => void) => void, test: (value: T) => boolean): Promise<T> {
  return new Promise((resolve) => subscribe((value) => test(value) && resolve(value)));
}

describe('the terminal client watching the folder it discusses', function () {
  this.timeout(30_000);

  before(function () {
    // Only a platform without a prebuilt watcher lacks one; there the server walks, as the other tests show.
    if (!watcher) this.skip();
  });

  describe('the watches (FolderWatches)', () => {
    let base: string;
    let events: FileEvent[];
    let listeners: Array<(batch: FileEvent[]) => void>;
    let lost: Array<{ folder: string; reason: string }>;

    beforeEach(() => {
      base = tempDir('rd-watch-');
      events = [];
      listeners = [];
      lost = [];
    });
    afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

    const watches = (library: typeof ParcelWatcher = watcher!) =>
      new FolderWatches(library, {
        report: (batch) => {
          events.push(...batch);
          for (const listener of listeners) listener(batch);
        },
        lost: (folder, reason) => lost.push({ folder, reason }),
      });
    const seen = (relativePath: string) => until<FileEvent[]>((listener) => listeners.push(listener), (batch) => batch.some((event) => fileURLToPath(event.uri) === path.join(base, 'repo', relativePath)));

    it('reports files made, changed and deleted in the folder, and nothing under node_modules or behind a link out of it', async () => {
      const repo = path.join(base, 'repo');
      const outside = path.join(base, 'outside');
      for (const dir of [path.join(repo, 'src'), path.join(repo, 'node_modules', 'pkg'), outside]) fs.mkdirSync(dir, { recursive: true });
      fs.symlinkSync(outside, path.join(repo, 'out'));
      fs.symlinkSync('/', path.join(repo, 'root'));
      const folder = watches();
      try {
        assert.equal(await folder.watch(repo), true);
        assert.equal(folder.watching(repo), true);
        fs.writeFileSync(path.join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
        await seen('src/a.ts');
        fs.writeFileSync(path.join(repo, 'node_modules', 'pkg', 'index.js'), 'x\n');
        fs.writeFileSync(path.join(outside, 'secret.ts'), 'x\n');
        fs.appendFileSync(path.join(repo, 'src', 'a.ts'), 'export const b = 2;\n');
        fs.rmSync(path.join(repo, 'src', 'a.ts'));
        // Written last: once it is reported, so would anything before it have been.
        fs.writeFileSync(path.join(repo, 'last.ts'), '\n');
        await seen('last.ts');
        const reported = events.map((event) => `${event.type} ${path.relative(repo, fileURLToPath(event.uri))}`);
        assert.equal(reported[0], '1 src/a.ts', 'created');
        assert.ok(reported.includes('3 src/a.ts'), `deleted: ${reported.join(', ')}`);
        assert.deepEqual(
          reported.filter((line) => /node_modules|secret|out\/|root\//.test(line)),
          [],
        );
      } finally {
        await folder.close();
      }
    });

    it('watches a folder once however often it is asked, and reports nothing after it is closed', async () => {
      const repo = path.join(base, 'repo');
      fs.mkdirSync(repo);
      let subscriptions = 0;
      const counting = { ...watcher!, subscribe: (...args: Parameters<typeof ParcelWatcher.subscribe>) => (subscriptions++, watcher!.subscribe(...args)) } as typeof ParcelWatcher;
      const folder = watches(counting);
      assert.deepEqual(await Promise.all([folder.watch(repo), folder.watch(repo)]), [true, true]);
      assert.equal(subscriptions, 1);
      await folder.close();
      assert.equal(folder.watching(repo), false);
      fs.writeFileSync(path.join(repo, 'after.ts'), '\n');
      // A second watch of the same folder, opened after, sees the write: the closed one would have by then.
      const other = new FolderWatches(watcher!, { report: (batch) => listeners.forEach((listener) => listener(batch)), lost: () => undefined });
      try {
        assert.equal(await other.watch(repo), true);
        fs.writeFileSync(path.join(repo, 'later.ts'), '\n');
        await seen('later.ts');
      } finally {
        await other.close();
      }
      assert.deepEqual(events, []);
    });

    it('stops a watch asked to stop while it was still starting, and starts it afresh when asked again', async () => {
      const repo = path.join(base, 'repo');
      fs.mkdirSync(repo);
      const folder = watches();
      try {
        const starting = folder.watch(repo);
        await folder.unwatch(repo);
        assert.equal(await starting, false, 'not reported as watched');
        assert.equal(folder.watching(repo), false);
        fs.writeFileSync(path.join(repo, 'before.ts'), '\n');
        assert.equal(await folder.watch(repo), true);
        fs.writeFileSync(path.join(repo, 'after.ts'), '\n');
        await seen('after.ts');
        assert.deepEqual(
          events.map((event) => path.basename(fileURLToPath(event.uri))),
          ['after.ts'],
        );
      } finally {
        await folder.close();
      }
    });

    it('stops trusting a watch that fails, says so, and watches the folder again when asked', async () => {
      const repo = path.join(base, 'repo');
      fs.mkdirSync(repo);
      const { library: failing, fail } = scriptedWatcher();
      const folder = watches(failing);
      assert.equal(await folder.watch(repo), true);
      fail(new Error('Event queue overflowed'));
      assert.equal(folder.watching(repo), false);
      assert.deepEqual(lost, [{ folder: repo, reason: 'Event queue overflowed' }]);
      assert.equal(await folder.watch(repo), true, 'watched afresh');
      await folder.close();
    });

    it('reports every watched folder changed after a batch as large as a full inotify queue leaves, whose overflow the library passes over, so the server walks them again', async function () {
      if (process.platform !== 'linux') this.skip();
      const repo = path.join(base, 'repo');
      const other = path.join(base, 'other');
      fs.mkdirSync(repo);
      fs.mkdirSync(other);
      const { library, deliver } = scriptedWatcher();
      const folder = new FolderWatches(library, { report: (batch) => events.push(...batch), lost: () => undefined, inotifyQueueSize: 16 });
      assert.equal(await folder.watch(repo), true);
      assert.equal(await folder.watch(other), true);
      const created = (count: number, from: number): ParcelWatcher.Event[] => Array.from({ length: count }, (_, i) => ({ type: 'create', path: path.join(repo, `f${from + i}.ts`) }));
      const changed = (dir: string): boolean => events.some((event) => event.uri === pathToFileURL(dir).href && event.type === 2);
      deliver(created(3, 0), repo);
      assert.equal(events.length, 3);
      assert.equal(changed(repo) || changed(other), false, 'a batch smaller than a quarter of the queue is taken as it is');
      deliver(created(4, 3), repo);
      assert.equal(events.length, 9);
      assert.equal(changed(repo), true, 'a batch of a quarter of the queue may have lost events');
      // The queue is the process's: another folder's events went with it.
      assert.equal(changed(other), true, 'every folder watched shares the queue');
      await folder.close();
    });

    it('suspects an overflow at a quarter of the inotify queue, and at most 1,000 events, whatever the queue', () => {
      assert.deepEqual([16_384, 1_024, 256, 16, 2].map(overflowSuspectedAt), [1_000, 256, 64, 4, 1]);
    });

    it('says a folder it cannot watch is not watched, and why', async () => {
      const folder = watches();
      assert.equal(await folder.watch(path.join(base, 'missing')), false);
      assert.equal(folder.watching(path.join(base, 'missing')), false);
      assert.equal(lost.length, 1);
      assert.equal(lost[0].folder, path.join(base, 'missing'));
      assert.ok(lost[0].reason.length > 0);
      await folder.close();
    });
  });

  describe('a discussion in the terminal client', () => {
    let fake: FakeOpenAI;
    let sandbox: Sandbox;
    let session: Session | undefined;

    beforeEach(async () => {
      fake = await startFakeOpenAI({ models: ['fake-model'] });
      sandbox = new Sandbox();
      fs.mkdirSync(path.join(sandbox.repo, 'src'));
      fs.writeFileSync(path.join(sandbox.repo, 'src', 'app.ts'), 'export const answer = 42;\n');
    });
    afterEach(async () => {
      await session?.stop();
      session = undefined;
      await fake.close();
      sandbox.remove();
    });

    it('answers a symbol query with an edit made during the turn, though the index was fresh, once the watcher has reported it', async () => {
      const logs: Array<(line: string) => void> = [];
      const reports: Array<(changes: FileEvent[]) => void> = [];
      session = await Session.start({
        initializationOptions: { client: 'terminal', storageDir: sandbox.storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test', model: 'fake-model' } },
        clientVersion: 'test',
        onLog: (line) => logs.forEach((listener) => listener(line)),
        onFileChangesReported: (changes) => reports.forEach((listener) => listener(changes)),
      });
      const watchTold = until<string>((listener) => logs.push(listener), (line) => line.includes(`file changes in ${sandbox.repo} are reported`));
      const { discussion, watched } = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.equal(await watched, true);
      await watchTold;

      const gate = createGate();
      fake.push(
        // After these two the index is complete and walked under the watch; unwatched, it would answer from itself for 2 s after a walk that found nothing changed.
        { kind: 'toolCalls', calls: [{ id: 'w1', name: 'find_symbol', arguments: '{"query":"answer"}' }, { id: 'w2', name: 'find_symbol', arguments: '{"query":"answer"}' }] },
        { kind: 'gate', gate, deltas: [], then: { kind: 'toolCalls', calls: [{ id: 'w3', name: 'find_symbol', arguments: '{"query":"answerEdited"}' }] } },
        { kind: 'text', text: 'Found it.' },
      );
      await session.hub.send(discussion.id, 'where is answer?');
      await gate.reached;
      const edited = path.join(sandbox.repo, 'src', 'app.ts');
      const reported = until<FileEvent[]>((listener) => reports.push(listener), (changes) => changes.some((change) => fileURLToPath(change.uri) === edited));
      fs.writeFileSync(edited, 'export const answer = 42;\nexport const answerEdited = 43;\n');
      await reported;
      await session.list(); // answered after the report, which the server handled first
      gate.release();
      await waitFor(discussion, (events) => events.some((event) => event.type === 'turn_complete'));

      const tool = new Map(
        (fake.completionRequests[2].body!.messages as Array<{ role: string; content: string; tool_call_id?: string }>)
          .filter((message) => message.role === 'tool')
          .map((message) => [message.tool_call_id, message.content]),
      );
      assert.match(tool.get('w2') ?? '', /src\/app\.ts:1: constant answer/);
      assert.match(tool.get('w3') ?? '', /src\/app\.ts:2: constant answerEdited/);
    });

    /**
     * The real watcher, counting the watches it starts and resolving `stopped` when one is stopped; `stopsWait`, when
     * given, holds each stop until it resolves.
     */
    function countingWatcher(stopsWait?: Promise<void>): { library: typeof ParcelWatcher; started: () => number; stopped: Promise<void>; stops: () => number } {
      let started = 0;
      let stops = 0;
      let onStop!: () => void;
      const stopped = new Promise<void>((resolve) => (onStop = resolve));
      const library = {
        ...watcher!,
        subscribe: async (...args: Parameters<typeof ParcelWatcher.subscribe>) => {
          started++;
          const subscription = await watcher!.subscribe(...args);
          return {
            unsubscribe: async () => {
              stops++;
              await stopsWait;
              await subscription.unsubscribe();
              onStop();
            },
          };
        },
      } as typeof ParcelWatcher;
      return { library, started: () => started, stopped, stops: () => stops };
    }

    const startWith = async (library: typeof ParcelWatcher, logs: Array<(line: string) => void>) =>
      Session.start({
        initializationOptions: { client: 'terminal', storageDir: sandbox.storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test', model: 'fake-model' } },
        clientVersion: 'test',
        onLog: (line) => logs.forEach((listener) => listener(line)),
        fileWatcher: library,
      });

    it('stops watching a folder once the last discussion open in it closes, and tells the server', async () => {
      const logs: Array<(line: string) => void> = [];
      const counting = countingWatcher();
      session = await startWith(counting.library, logs);
      const watchTold = until<string>((listener) => logs.push(listener), (line) => line.includes(`file changes in ${sandbox.repo} are reported`));
      const first = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      const second = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.deepEqual(await Promise.all([first.watched, second.watched]), [true, true]);
      await watchTold;
      await session.hub.close(first.discussion.id);
      await session.list(); // answered after anything the close set off here
      assert.equal(counting.stops(), 0, 'the other discussion still holds the folder');

      const unwatchedTold = until<string>((listener) => logs.push(listener), (line) => line.includes('no folder has its file changes reported'));
      await session.hub.close(second.discussion.id);
      await counting.stopped;
      await unwatchedTold;
      assert.equal(counting.started(), 1);
    });

    it('stops watching a folder whose discussion the server had already closed, though it refuses the close', async () => {
      const logs: Array<(line: string) => void> = [];
      const counting = countingWatcher();
      session = await startWith(counting.library, logs);
      const opened = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.equal(await opened.watched, true);
      // As the server's idle close does: the discussion is gone before this client closes it.
      await session.server.channel().request(CloseRequest.method, { discussionId: opened.discussion.id });
      await assert.rejects(session.hub.close(opened.discussion.id), Refusal);
      await counting.stopped;
    });

    it('tells the server a folder is watched again when a new discussion watches it while the old watch is still stopping', async () => {
      const logs: Array<(line: string) => void> = [];
      const told: string[] = [];
      logs.push((line) => {
        if (line.includes(`file changes in ${sandbox.repo} are reported`) || line.includes('no folder has its file changes reported')) told.push(line);
      });
      let letStop!: () => void;
      const counting = countingWatcher(new Promise<void>((resolve) => (letStop = resolve)));
      session = await startWith(counting.library, logs);
      const first = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.equal(await first.watched, true);
      await until<string>((listener) => logs.push(listener), (line) => line.includes('are reported'));
      await session.hub.close(first.discussion.id);
      const second = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.equal(await second.watched, true);
      letStop();
      await counting.stopped;
      await session.list(); // answered after anything the server logged for what came before
      assert.equal(counting.started(), 2);
      assert.match(told[told.length - 1], /are reported/, `the server's last word on the folder: ${told.join(' | ')}`);
    });

    it('keeps the watch of a folder whose discussion is closed and opened again under a hold, as a model switch does', async () => {
      const logs: Array<(line: string) => void> = [];
      const counting = countingWatcher();
      session = await startWith(counting.library, logs);
      const opened = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.equal(await opened.watched, true);
      const hold = session.keepWatching(sandbox.repo);
      await session.hub.close(opened.discussion.id);
      const again = await session.open({ folder: sandbox.repo, resumeId: opened.discussion.id }, { watchFiles: true });
      hold.dispose();
      assert.equal(await again.watched, true);
      await session.list();
      assert.equal(counting.stops(), 0);
      assert.equal(counting.started(), 1);
    });

    it('tells the server a folder is no longer watched when its watch fails, and says so in its log', async () => {
      const logs: Array<(line: string) => void> = [];
      const { library: failing, fail } = scriptedWatcher();
      session = await Session.start({
        initializationOptions: { client: 'terminal', storageDir: sandbox.storage, model: { baseUrl: fake.baseUrl, apiKey: 'sk-test', model: 'fake-model' } },
        clientVersion: 'test',
        onLog: (line) => logs.forEach((listener) => listener(line)),
        fileWatcher: failing,
      });
      const watchTold = until<string>((listener) => logs.push(listener), (line) => line.includes(`file changes in ${sandbox.repo} are reported`));
      const { watched } = await session.open({ folder: sandbox.repo }, { watchFiles: true });
      assert.equal(await watched, true);
      await watchTold;
      const clientSaid = until<string>((listener) => logs.push(listener), (line) => line.includes(`file watching of ${sandbox.repo} is off (Event queue overflowed)`));
      const unwatched = until<string>((listener) => logs.push(listener), (line) => line.includes('no folder has its file changes reported'));
      fail(new Error('Event queue overflowed'));
      await clientSaid;
      await unwatched;
    });
  });
});

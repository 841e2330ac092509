import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FilesRequest, StartRequest } from '../../shared/protocol';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

describe('discuss/files, the panel’s @ completion, against the real server process', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let work: string;
  let repo: string;
  let server: ServerProcess;
  let id: string;

  const write = (relative: string, content = 'x\n'): void => {
    const file = path.join(repo, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  };
  const files = async (query: string): Promise<string[]> =>
    (await server.request<FilesRequest.Result>('discuss/files', { discussionId: id, query })).files;

  before(async () => {
    fake = await startFakeOpenAI({ models: ['m'], fallback: { kind: 'text', text: 'Noted.' } });
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-files-')));
    repo = path.join(work, 'repo');
    fs.mkdirSync(repo);
    fs.mkdirSync(path.join(work, 'outside'));
    fs.writeFileSync(path.join(work, 'outside', 'envelope.ts'), 'outside\n');
    write('src/http.ts');
    write('src/httpClient.ts');
    write('test/http.test.ts');
    write('docs/overview.md');
    write('src/billing/ledger.ts');
    write('.env');
    write('config/.env.production');
    write('keys/server.pem');
    write('private/envoy.ts');
    write('.gitignore', 'ignored/\n');
    write('ignored/env.ts');
    for (let i = 0; i < 80; i++) write(`many/file${i}.ts`);
    fs.symlinkSync(path.join(work, 'outside'), path.join(repo, 'linked'));
    server = await ServerProcess.start({ storageDir: path.join(work, 'storage'), denyRead: ['private/**'], model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'm' } });
    id = (await server.request<StartRequest.Result>('discuss/start', { folder: repo })).discussionId;
  });
  after(async () => {
    await server.stop().catch(() => server.kill());
    await fake.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('ranks the folder’s files by a fuzzy match on the query, the base name first', async () => {
    const found = await files('http');
    assert.deepEqual(found.slice(0, 3).sort(), ['src/http.ts', 'src/httpClient.ts', 'test/http.test.ts']);
    assert.equal(found[0], 'src/http.ts', 'the shortest exact base-name match leads');
    assert.deepEqual(await files('htcl'), ['src/httpClient.ts']);
    assert.deepEqual(await files('HTTPCL'), ['src/httpClient.ts'], 'case does not matter');
  });

  it('a directory typed by name offers the files under it', async () => {
    assert.deepEqual(await files('bill'), ['src/billing/ledger.ts']);
    assert.deepEqual(await files('billing'), ['src/billing/ledger.ts']);
  });

  it('never lists a secret, a denied or an ignored file, nor anything through a link out of the folder', async () => {
    const found = await files('env');
    for (const hidden of ['.env', 'config/.env.production', 'private/envoy.ts', 'ignored/env.ts', 'linked/envelope.ts']) {
      assert.ok(!found.includes(hidden), `${hidden} is not offered`);
    }
    const everything = await files('');
    assert.ok(everything.every((file) => !file.startsWith('linked/') && !file.endsWith('.pem') && !file.startsWith('private/') && file !== '.env'), everything.join(', '));
  });

  it('answers at most 50 names', async () => {
    assert.equal((await files('file')).length, 50);
    assert.equal((await files('')).length, 50);
  });

  it('refuses an unknown discussion and a query that is not a string', async () => {
    await assert.rejects(server.request('discuss/files', { discussionId: 'nope', query: 'x' }));
    await assert.rejects(server.request('discuss/files', { discussionId: id, query: 42 }));
  });
});

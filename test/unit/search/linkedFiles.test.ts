import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { performance } from 'node:perf_hooks';
import { linkedFiles } from '../../../server/src/search/linkedFiles';
import { censusWithRipgrep } from '../../../server/src/search/searchJobs';
import { findRipgrep } from '../../../server/src/search/locateRipgrep';

describe('the symlinked files a ripgrep search adds (linkedFiles.ts)', () => {
  let root: string;
  let outside: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-linked-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-linked-out-')));
    fs.writeFileSync(path.join(root, 'target.ts'), 'export const x = 1;\n');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside\n');
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('in a search thread resolves each link with blocking calls, in order, and lets other work in every few milliseconds', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `link${String(i).padStart(2, '0')}.ts`);
    for (const name of names) fs.symlinkSync('target.ts', path.join(root, name));
    const boundary = await ReadBoundary.create(root);
    boundary.resolve = () => Promise.reject(new Error('an awaited resolution in a search thread'));
    const resolveSync = boundary.resolveSync.bind(boundary);
    let resolved = 0;
    let resolvedWhenOtherWorkRan: number | undefined;
    boundary.resolveSync = (requested) => {
      // A slow file system: 1 ms a link, 40 ms in all.
      const until = performance.now() + 1;
      while (performance.now() < until);
      resolved += 1;
      return resolveSync(requested);
    };
    setImmediate(() => (resolvedWhenOtherWorkRan = resolved));
    const found = await linkedFiles(boundary, 'blocking', () => true, names, false);
    assert.deepEqual(found.map((candidate) => candidate.relativePath), names);
    assert.ok(found.every((candidate) => candidate.realPath === path.join(root, 'target.ts')));
    assert.ok(resolvedWhenOtherWorkRan !== undefined && resolvedWhenOtherWorkRan < names.length, `other work ran after ${resolvedWhenOtherWorkRan} of ${names.length} links`);
  });

  it('on the main thread resolves with awaited calls only', async () => {
    fs.symlinkSync('target.ts', path.join(root, 'kept.ts'));
    const boundary = await ReadBoundary.create(root);
    boundary.resolveSync = () => {
      throw new Error('a blocking resolution on the main thread');
    };
    assert.deepEqual(await linkedFiles(boundary, 'awaited', () => true, ['kept.ts'], false), [{ relativePath: 'kept.ts', realPath: path.join(root, 'target.ts') }]);
  });

  it('in the census, which runs on the main thread, resolves the links ripgrep passes over with awaited calls only', async function () {
    const ripgrep = await findRipgrep(undefined);
    if (!ripgrep) this.skip();
    fs.symlinkSync('target.ts', path.join(root, 'kept.ts'));
    const boundary = await ReadBoundary.create(root);
    boundary.resolveSync = () => {
      throw new Error('a blocking resolution on the main thread');
    };
    const job = { kind: 'census' as const, root, denyRead: [], scope: { kind: 'directory' as const, realPath: root, relativePath: '.' }, ripgrep, maxEntries: 100, timeMs: 10_000, extensions: 5 };
    const census = await censusWithRipgrep(job, boundary, { shouldStop: () => false, onSpawn: () => undefined });
    assert.equal(census?.fileCount, 2, 'the file and the link to it are counted');
  });

  for (const how of ['blocking', 'awaited'] as const) {
    it(`leaves out a link out of the folder, one to a secret, one to a directory, one the listing check refuses, and a dangling one (${how})`, async () => {
      fs.writeFileSync(path.join(root, '.env'), 'TOKEN=1\n');
      fs.mkdirSync(path.join(root, 'src'));
      fs.symlinkSync('src', path.join(root, 'dir.ts'));
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'out.ts'));
      fs.symlinkSync('.env', path.join(root, 'env.ts'));
      fs.symlinkSync('missing.ts', path.join(root, 'dangling.ts'));
      fs.symlinkSync('target.ts', path.join(root, 'refused.ts'));
      fs.symlinkSync('target.ts', path.join(root, 'kept.ts'));
      const boundary = await ReadBoundary.create(root);
      const found = await linkedFiles(boundary, how, (relativePath) => relativePath !== 'refused.ts', ['out.ts', 'env.ts', 'dir.ts', 'dangling.ts', 'refused.ts', 'kept.ts'], false);
      assert.deepEqual(found, [{ relativePath: 'kept.ts', realPath: path.join(root, 'target.ts') }]);
    });
  }
});

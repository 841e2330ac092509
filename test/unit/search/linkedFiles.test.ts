import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { linkedFiles, LINKS_RESOLVED_AT_ONCE } from '../../../server/src/search/linkedFiles';

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

  it(`resolves a folder of many links ${LINKS_RESOLVED_AT_ONCE} at a time, keeping their order, so they never fill the thread pool`, async () => {
    const names = Array.from({ length: 40 }, (_, i) => `link${String(i).padStart(2, '0')}.ts`);
    for (const name of names) fs.symlinkSync('target.ts', path.join(root, name));
    const boundary = await ReadBoundary.create(root);
    let inFlight = 0;
    let most = 0;
    const resolve = boundary.resolve.bind(boundary);
    boundary.resolve = async (requested) => {
      most = Math.max(most, ++inFlight);
      try {
        return await resolve(requested);
      } finally {
        inFlight -= 1;
      }
    };
    const found = await linkedFiles(boundary, () => true, names, false);
    assert.deepEqual(found.map((candidate) => candidate.relativePath), names);
    assert.ok(found.every((candidate) => candidate.realPath === path.join(root, 'target.ts')));
    assert.equal(most, LINKS_RESOLVED_AT_ONCE);
  });

  it('leaves out a link out of the folder, one to a secret, one to a directory, one the listing check refuses, and a dangling one', async () => {
    fs.writeFileSync(path.join(root, '.env'), 'TOKEN=1\n');
    fs.mkdirSync(path.join(root, 'src'));
    fs.symlinkSync('src', path.join(root, 'dir.ts'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'out.ts'));
    fs.symlinkSync('.env', path.join(root, 'env.ts'));
    fs.symlinkSync('missing.ts', path.join(root, 'dangling.ts'));
    fs.symlinkSync('target.ts', path.join(root, 'refused.ts'));
    fs.symlinkSync('target.ts', path.join(root, 'kept.ts'));
    const boundary = await ReadBoundary.create(root);
    const found = await linkedFiles(boundary, (relativePath) => relativePath !== 'refused.ts', ['out.ts', 'env.ts', 'dir.ts', 'dangling.ts', 'refused.ts', 'kept.ts'], false);
    assert.deepEqual(found, [{ relativePath: 'kept.ts', realPath: path.join(root, 'target.ts') }]);
  });
});

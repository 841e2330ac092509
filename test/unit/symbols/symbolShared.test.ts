import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { inertBoundedLine, pathOfFileUri } from '../../../server/src/symbols/symbolShared';
import { writeTree } from '../../support/toolFixture';

/** What the editor or the index supplies (a name, a kind, a message) as one line that cannot act on a reader. */
describe("the symbol tools' inert line", () => {
  it('escapes line breaks and bidi controls, then keeps max characters and marks the cut after them', () => {
    assert.equal(inertBoundedLine('a\nb\u202ec', 80), 'a\\u000ab\\u202ec');
    assert.equal(inertBoundedLine('x'.repeat(45), 40), `${'x'.repeat(40)}…`);
  });

  it('gives an empty line for anything but a string', () => {
    assert.equal(inertBoundedLine(undefined, 40), '');
    assert.equal(inertBoundedLine({ name: 'x' }, 40), '');
  });
});

/** A file the editor names by URI, as a path in the folder. */
describe('the path of an editor URI', () => {
  let base: string;
  let boundary: ReadBoundary;

  before(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-uri-')));
    writeTree(base, { 'repo/src/a.ts': 'a\n', 'repo/.env': 'TOKEN=x\n', 'outside.ts': 'o\n' });
    boundary = await ReadBoundary.create(path.join(base, 'repo'));
  });
  after(() => fs.rmSync(base, { recursive: true, force: true }));

  const uriOf = (relative: string) => pathToFileURL(path.join(base, relative)).href;

  it('is the folder-relative path of a readable file in the folder', async () => {
    assert.equal(await pathOfFileUri(boundary, new Map(), uriOf('repo/src/a.ts')), 'src/a.ts');
  });

  it('is undefined for a directory, a secret, a file outside the folder, a URI of another scheme and anything but a string', async () => {
    for (const uri of [uriOf('repo/src'), uriOf('repo/.env'), uriOf('outside.ts'), 'untitled:Untitled-1', 'git:/a.ts', 'file://remote-host/a.ts', 42]) {
      assert.equal(await pathOfFileUri(boundary, new Map(), uri), undefined, String(uri));
    }
  });

  it('resolves each URI once per cache', async () => {
    const counting = Object.create(boundary) as ReadBoundary;
    let asked = 0;
    counting.resolve = (requested: string) => (asked++, boundary.resolve(requested));
    const cache = new Map<string, Promise<string | undefined>>();
    await Promise.all([pathOfFileUri(counting, cache, uriOf('repo/src/a.ts')), pathOfFileUri(counting, cache, uriOf('repo/src/a.ts'))]);
    await pathOfFileUri(counting, cache, uriOf('repo/src/a.ts'));
    assert.equal(asked, 1);
  });
});

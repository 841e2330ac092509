import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadBoundary } from '../../../server/src/access/boundary';
import { crawlLinksAndRules, ruleNamesIn } from '../../../server/src/search/linkCrawl';
import { walkVerdicts } from '../../../server/src/search/walk';
import { writeTree } from '../../support/toolFixture';

/** Every file under `root` but those in .git/, root-relative. */
function allFiles(root: string, relative = ''): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
    const entryPath = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== '.git') found.push(...allFiles(root, entryPath));
    } else {
      found.push(entryPath);
    }
  }
  return found;
}

describe("the crawl's ignore files, handed to the check of ripgrep's listing", () => {
  let root: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-crawl-')));
    writeTree(root, {
      '.gitignore': 'build/\n*.log\n!keep.log\n',
      'a.log': '',
      'keep.log': '',
      'build/out.ts': '',
      'src/.gitignore': 'gen-*.ts\n',
      'src/gen-a.ts': '',
      'src/main.ts': '',
      'src/debug.log': '',
      'src/deep/.ignore': 'skip.ts\nalso.ts\n',
      'src/deep/.rgignore': '!also.ts\n',
      'src/deep/skip.ts': '',
      'src/deep/also.ts': '',
      'src/deep/plain/x.ts': '',
      'vendor/lib/.git/info/exclude': 'local-*.ts\n',
      'vendor/lib/.gitignore': '!gen-b.ts\n',
      'vendor/lib/local-x.ts': '',
      'vendor/lib/gen-b.ts': '',
      'vendor/lib/kept.ts': '',
    });
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('gives every file the verdict that reading the ignore files from disk gives, below a crawled scope and above it', async () => {
    const boundary = await ReadBoundary.create(root, []);
    const fromDisk = walkVerdicts(boundary);
    const files = allFiles(root);
    const expected = files.filter(fromDisk).sort();
    // Not a vacuous comparison: each kind of rule decides something here.
    assert.deepEqual(
      ['a.log', 'keep.log', 'build/out.ts', 'src/debug.log', 'src/gen-a.ts', 'src/deep/skip.ts', 'src/deep/also.ts', 'vendor/lib/local-x.ts', 'vendor/lib/kept.ts'].map((file) => expected.includes(file)),
      [false, true, false, false, false, false, true, false, true],
    );
    for (const scope of ['.', 'src', 'vendor/lib']) {
      const crawl = await crawlLinksAndRules(root, scope, 10_000, () => false);
      const fromCrawl = walkVerdicts(boundary, new Set(), ruleNamesIn(crawl));
      const inScope = scope === '.' ? files : files.filter((file) => file.startsWith(`${scope}/`));
      assert.deepEqual(inScope.filter(fromCrawl).sort(), expected.filter((file) => inScope.includes(file)), `crawled from ${scope}`);
    }
  });

  it('takes the ignore files of a crawled directory from the crawl, without looking for them on disk', async () => {
    const boundary = await ReadBoundary.create(root, []);
    const crawl = await crawlLinksAndRules(root, '.', 10_000, () => false);
    // Written after the crawl: only a verdict that looks on disk sees it.
    fs.writeFileSync(path.join(root, 'src', 'deep', 'plain', '.gitignore'), 'x.ts\n');
    assert.equal(walkVerdicts(boundary, new Set(), ruleNamesIn(crawl))('src/deep/plain/x.ts'), true);
    assert.equal(walkVerdicts(boundary)('src/deep/plain/x.ts'), false);
  });

  it('knows nothing of a directory it did not read, so that one is looked at on disk', async () => {
    const crawl = await crawlLinksAndRules(root, 'src', 10_000, () => false);
    const names = ruleNamesIn(crawl);
    assert.equal(names(''), undefined, 'the root, above the scope');
    assert.deepEqual([...(names('src/deep') ?? [])].sort(), ['.ignore', '.rgignore']);
    assert.deepEqual([...(names('src/deep/plain') ?? ['not read'])], [], 'read, and holding none');
  });
});

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { changedNames, isRacy, listingText, LOOK_AGAIN, RACY_WINDOW_NS, sameStamp, stampOf, withEntryKind } from '../../../server/src/search/directoryStamps';

/**
 * The stamps the warm file index trusts (server/src/search/directoryStamps.ts):
 * what makes it look at a directory again.
 */
describe('directory stamps', function () {
  let base: string;
  beforeEach(() => (base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-stamps-')))));
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('changes when an entry is added to, removed from or renamed in a directory', () => {
    const before = stampOf(base);
    fs.writeFileSync(path.join(base, 'a'), '');
    const added = stampOf(base);
    assert.ok(!sameStamp(before, added), 'added');
    fs.renameSync(path.join(base, 'a'), path.join(base, 'b'));
    const renamed = stampOf(base);
    assert.ok(!sameStamp(added, renamed), 'renamed');
    fs.rmSync(path.join(base, 'b'));
    assert.ok(!sameStamp(renamed, stampOf(base)), 'removed');
  });

  it('tells a directory made again under the same name from the one before it', () => {
    const directory = path.join(base, 'd');
    fs.mkdirSync(directory);
    const first = stampOf(directory);
    fs.rmdirSync(directory);
    fs.mkdirSync(directory);
    assert.ok(!sameStamp(first, stampOf(directory)));
  });

  it('calls a stamp racy while a change in the same clock tick could leave it as it is, and not after', () => {
    const stamp = stampOf(base);
    assert.ok(stamp);
    const changedAt = stamp.ctimeNs > stamp.mtimeNs ? stamp.ctimeNs : stamp.mtimeNs;
    assert.equal(isRacy(stamp, changedAt), true, 'taken in the tick of the change');
    assert.equal(isRacy(stamp, changedAt + RACY_WINDOW_NS - 1n), true, 'taken within the window');
    assert.equal(isRacy(stamp, changedAt + RACY_WINDOW_NS), false, 'taken after the window');
    assert.equal(isRacy(stamp, changedAt - 1_000_000_000n), true, 'a change time ahead of the clock is not trusted');
    assert.ok(RACY_WINDOW_NS >= 20_000_000n, 'the window outlasts the coarsest common kernel tick (10 ms) with room');
  });

  it('names what was added, removed or changed kind between two listings, and every link in the new one', () => {
    const entries = (spec: Record<string, 'file' | 'dir' | 'link'>): fs.Dirent[] =>
      Object.entries(spec).map(([name, kind]) => ({ name, isFile: () => kind === 'file', isDirectory: () => kind === 'dir', isSymbolicLink: () => kind === 'link' }) as fs.Dirent);
    const before = listingText(entries({ 'a.ts': 'file', src: 'dir', gone: 'file', swapped: 'dir', pointer: 'link' }));
    const after = listingText(entries({ 'a.ts': 'file', src: 'dir', swapped: 'link', pointer: 'link', fresh: 'file' }));
    const { changed, links } = changedNames(before, after);
    assert.deepEqual(changed.sort(), ['fresh', 'gone', 'swapped']);
    assert.deepEqual(links.sort(), ['pointer', 'swapped']);
    assert.deepEqual(changedNames(after, after).changed, [], 'an unchanged listing names nothing');
  });

  it('names an entry marked to be looked at again as changed, whether the next listing has it or not', () => {
    const entries = (names: string[]): fs.Dirent[] => names.map((name) => ({ name, isFile: () => true, isDirectory: () => false, isSymbolicLink: () => false }) as fs.Dirent);
    const marked = withEntryKind(listingText(entries(['kept.ts', 'unsettled.ts'])), 'unsettled.ts', LOOK_AGAIN);
    assert.deepEqual(changedNames(marked, listingText(entries(['kept.ts', 'unsettled.ts']))).changed, ['unsettled.ts'], 'still there');
    assert.deepEqual(changedNames(marked, listingText(entries(['kept.ts']))).changed, ['unsettled.ts'], 'gone since');
  });
});

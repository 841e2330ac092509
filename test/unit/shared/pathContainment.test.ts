import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { isSameOrInside, relativeStaysInside } from '../../../shared/pathContainment';

/** One containment check for the boundary, the panel's links, code actions and watcher reports: by path segments, never by string prefix. */
describe('path containment', () => {
  it('takes a relative path as inside when it is the base itself or a name below it, `..notes` included', () => {
    for (const inside of ['', 'a', `a${path.sep}b`, '..notes', `..notes${path.sep}a`, '...']) assert.equal(relativeStaysInside(inside), true, inside);
  });

  it('takes a relative path as outside when it climbs out or is absolute (another drive on Windows)', () => {
    for (const outside of ['..', `..${path.sep}a`, `..${path.sep}..${path.sep}a`, path.resolve('/elsewhere')]) assert.equal(relativeStaysInside(outside), false, outside);
  });

  it('answers for two absolute paths as for their relative path: a sibling sharing the name prefix is not inside', () => {
    assert.equal(isSameOrInside('/x/repo', '/x/repo'), true);
    assert.equal(isSameOrInside('/x/repo', '/x/repo/..other'), true);
    assert.equal(isSameOrInside('/x/repo', '/x/repo-other/a'), false);
    assert.equal(isSameOrInside('/x/repo', '/x'), false);
  });
});

import * as assert from 'node:assert/strict';
import { worthReadingOn, worthWalkingOn } from '../../../server/src/search/searchJobs';

/**
 * The rules that keep the ordered search of a capped grep_files going past
 * its head start rather than starting ripgrep, which lists the whole tree
 * first and, for a common word, is stopped past its candidate limit for the
 * walk to start over. They are asked with the search's own clock; here the
 * clock is given, so that a slow machine can be stood in for.
 */
describe('the ordered search past its head start (searchJobs.ts)', () => {
  describe('the cold walk (worthWalkingOn)', () => {
    it('goes on when, at its rate, the cap is reached within its bound: a common word on a machine at half speed, a tenth of the cap found in the first 10 ms', () => {
      assert.equal(worthWalkingOn(10, 0.001, 0.1), true);
      assert.equal(worthWalkingOn(50, 0.005, 0.6), true);
    });

    it('hands over when the cap is out of reach in time or in the tree: a rare word\'s few matches, or a rate that runs past the tree\'s end', () => {
      assert.equal(worthWalkingOn(10, 0.01, 0.005), false);
      assert.equal(worthWalkingOn(10, 0.6, 0.5), false);
      assert.equal(worthWalkingOn(10, 0.01, 0), false);
    });

    it('never goes on past its bound, whatever its rate', () => {
      assert.equal(worthWalkingOn(101, 0.01, 0.99), false);
    });
  });

  describe("the warm index's head start (worthReadingOn)", () => {
    it('reads on past the head start while the cap is in reach within the bound', () => {
      assert.equal(worthReadingOn(12, 10, 0.05, 0.2), true);
    });

    it('reads on within the head start while the last candidate is in reach, and gives way to ripgrep for a rare word after two milliseconds', () => {
      assert.equal(worthReadingOn(1, 10, 0, 0), true);
      assert.equal(worthReadingOn(5, 10, 0.6, 0), true);
      assert.equal(worthReadingOn(3, 10, 0.05, 0.005), false);
      assert.equal(worthReadingOn(12, 10, 0.9, 0), false);
    });

    it('reads nothing on with no head start, and never past the bound', () => {
      assert.equal(worthReadingOn(0, 0, 0.5, 0.5), false);
      assert.equal(worthReadingOn(101, 10, 0.5, 0.99), false);
    });
  });
});

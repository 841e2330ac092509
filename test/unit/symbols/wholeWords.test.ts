import * as assert from 'node:assert/strict';
import { WORD, wholeWordAt, wholeWordPattern } from '../../../server/src/symbols/wholeWords';

/**
 * The reference search counts a name's identifiers from the parse and its
 * matches from a pattern, and skips the parse when the two agree: they agree
 * only if both read a word's edges by the same rule.
 */
describe('what the reference search counts as a whole word', () => {
  const text = 'options(options2, $options, _options, éoptions, options$, options.x, [options], 9options)';

  it('matches a name only where no letter, digit, underscore or dollar sign touches it', () => {
    const starts = [...text.matchAll(wholeWordPattern('options'))].map((match) => match.index);
    assert.deepEqual(starts, [0, text.indexOf('options.x'), text.indexOf('[options]') + 1]);
  });

  it('agrees with the position test the index counts identifiers by, at every occurrence', () => {
    const matched = new Set([...text.matchAll(wholeWordPattern('options'))].map((match) => match.index));
    for (let at = text.indexOf('options'); at !== -1; at = text.indexOf('options', at + 1)) {
      assert.equal(wholeWordAt(text, at, at + 'options'.length), matched.has(at), `at ${at}`);
    }
  });

  it('reads a name with a dollar sign literally, not as a pattern', () => {
    const source = 'const $scope = a$scope + $scope;';
    assert.deepEqual([...source.matchAll(wholeWordPattern('$scope'))].map((match) => match.index), [6, source.lastIndexOf('$scope')]);
  });

  it('counts letters of any script, digits, underscores and dollar signs as characters of a word, and nothing else', () => {
    for (const char of ['a', 'é', 'ж', '7', '_', '$']) assert.ok(WORD.test(char), char);
    for (const char of ['.', '-', ' ', '(', '#', '@']) assert.ok(!WORD.test(char), char);
  });
});

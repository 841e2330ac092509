import assert from 'node:assert/strict';
import { settledWithin } from '../../../server/src/settledWithin';

describe('a wait bounded in time (settledWithin)', () => {
  it('resolves with the work\'s value when the work settles first', async () => {
    assert.equal(await settledWithin(Promise.resolve(42), 60_000), 42);
  });

  it('resolves undefined once the bound has passed, for work that never settles', async () => {
    assert.equal(await settledWithin(new Promise<number>(() => undefined), 1), undefined);
  });

  it('passes on a rejection that comes before the bound', async () => {
    await assert.rejects(settledWithin(Promise.reject(new Error('failed')), 60_000), /failed/);
  });

});

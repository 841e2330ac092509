import { strict as assert } from 'node:assert';
import { WarmGate } from '../../../server/src/model/warmGate';

/** A warm-up that ends when the test says so. */
function heldWarmUp(): { warmUp: () => Promise<void>; finish: () => void; runs: () => number } {
  let runs = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    warmUp: () => {
      runs += 1;
      return done;
    },
    finish: () => finish(),
    runs: () => runs,
  };
}

const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('warm gate (a fresh server\'s first questions)', () => {
  it('holds questions that come before the warm-up until it ends, running it once for all of them', async () => {
    const warm = heldWarmUp();
    const gate = new WarmGate(warm.warmUp, 60_000);
    let passed = 0;
    const questions = [1, 2, 3].map(() => gate.pass().then(() => (passed += 1)));
    for (let i = 0; i < 5; i++) await nextTick();
    assert.equal(passed, 0);
    warm.finish();
    await Promise.all(questions);
    assert.equal(passed, 3);
    assert.equal(warm.runs(), 1);
  });

  it('lets the held questions go one per tick, not all in the tick the warm-up ends in', async () => {
    const warm = heldWarmUp();
    const gate = new WarmGate(warm.warmUp, 60_000);
    const order: string[] = [];
    const questions = [1, 2, 3].map((n) => gate.pass().then(() => order.push(`question ${n}`)));
    warm.finish();
    await gate.start();
    // Each tick marks where it ended: two questions in one tick would show no mark between them.
    const marks = (async () => {
      for (let i = 0; i < 6; i++) {
        await nextTick();
        order.push('tick');
      }
    })();
    await Promise.all([...questions, marks]);
    const between = order.join(' ').split('question').slice(1, -1);
    assert.ok(between.every((gap) => gap.includes('tick')), order.join(', '));
  });

  it('lets a question go at once when the warm-up ran ahead of need', async () => {
    const gate = new WarmGate(async () => undefined, 60_000);
    await gate.start();
    let passed = false;
    const question = gate.pass().then(() => (passed = true));
    await Promise.resolve();
    await Promise.resolve();
    assert.equal(passed, true);
    await question;
  });

  it('holds a question no longer than its bound when the warm-up hangs, and a failed warm-up holds nothing', async () => {
    const hung = new WarmGate(() => new Promise<void>(() => undefined), 20);
    await hung.pass();
    const failed = new WarmGate(() => Promise.reject(new Error('no loopback here')), 60_000);
    await failed.pass();
    await failed.pass();
  });
});

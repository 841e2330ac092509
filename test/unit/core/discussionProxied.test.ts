import { useModelSource } from '../../support/coreHarness';

/**
 * The whole discussion suite again, with every model request going through
 * the proxied model to fake VS Code language models: the core's guarantees
 * (streaming, tool calls, refusals, cancellation, errors, persistence) must
 * not depend on which source answers.
 */
/**
 * Left out, each for a reason of the source rather than the core: VS Code's
 * API streams no reasoning and reports no usage; and a proxied reply's parts
 * reach the server a few hops after the fake produced them, so tests that pin
 * which event-loop tick a delta lands in (coalescing, text present at the
 * instant of a cancel) do not describe it. Proxied cancellation has its own
 * tests in test/unit/model/proxiedModel.test.ts.
 */
const NOT_OF_THIS_SOURCE = [
  'shows reasoning as reasoning_delta',
  'takes streamed text the model retracts as reasoning',
  'reports one usage event per turn',
  'joins the deltas that arrive in one tick into one event',
  'keeps deltas that arrive in separate ticks as separate events',
  'streams a reply: user_message, deltas, assistant_message, turn_complete',
  'cancel aborts the model request and still ends the turn',
];

describe('over VS Code language models (proxied through the client)', () => {
  before(() => useModelSource('proxied'));
  beforeEach(function () {
    if (NOT_OF_THIS_SOURCE.some((title) => this.currentTest?.title.startsWith(title))) this.skip();
  });
  after(() => useModelSource('scripted'));
  const suite = require.resolve('./discussion.test');
  // Loaded fresh here and forgotten after, so mocha's own load of the file registers it once more, unwrapped.
  delete require.cache[suite];
  require(suite);
  delete require.cache[suite];
});

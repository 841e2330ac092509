import { strict as assert } from 'node:assert';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EventStream } from '../../../server/src/core/eventStream';
import { runTurn, type TurnHost } from '../../../server/src/core/turn';
import type { ChatMessage, ChatModel } from '../../../server/src/model/types';
import { silentLogger } from '../../../server/src/core/deps';

/** A full collection, so the heap in use is what is still held. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const REPLY_PIECES = 64;
const PIECE_CHARS = 8 * 1024;
const TURNS = 64;

/**
 * Streams each reply in pieces made afresh and returns its content joined
 * apart from them, as a real source builds it: nothing here keeps a copy.
 */
const freshReplies: ChatModel = {
  async complete(_request, onDelta) {
    const pieces = Array.from({ length: REPLY_PIECES }, (_, i) => `${String.fromCharCode(97 + (i % 26)).repeat(PIECE_CHARS - 1)}\n`);
    for (const piece of pieces) onDelta(piece);
    return { content: pieces.join(''), toolCalls: [], finishReason: 'stop' };
  },
  async listModels() {
    return [];
  },
};

function host(history: ChatMessage[], stream: EventStream): TurnHost {
  return {
    id: 'disc-memory',
    model: freshReplies,
    stream,
    logger: silentLogger,
    history,
    effectiveModel: null,
    isClosed: () => false,
    tools: () => [],
    requestMessages: async () => ({ messages: history }),
    runTool: async () => ({ ok: false, output: 'refused' }),
    saveProgress: () => undefined,
    finish: () => undefined,
  };
}

describe('the memory a finished reply holds', () => {
  it('holds each reply once: the history and its assistant_message share one string', async () => {
    const history: ChatMessage[] = [];
    const stream = new EventStream({ discussionId: 'disc-memory', now: () => 0 });
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    for (let turn = 0; turn < TURNS; turn++) {
      history.push({ role: 'user', content: `question ${turn}` });
      await runTurn(host(history, stream), new AbortController().signal);
    }
    collectGarbage();
    const grown = process.memoryUsage().heapUsed - before;
    const oneCopy = TURNS * REPLY_PIECES * PIECE_CHARS;
    // Still held, and equal: the history and the buffered messages.
    assert.equal(history.filter((m) => m.role === 'assistant').length, TURNS);
    assert.equal(stream.events().filter((e) => e.type === 'assistant_message').length, TURNS);
    // Two copies would be twice `oneCopy`; the rest of what a turn keeps is small beside it.
    assert.ok(grown < oneCopy * 1.5, `the heap grew by ${(grown / 2 ** 20).toFixed(1)} MB for ${(oneCopy / 2 ** 20).toFixed(1)} MB of replies`);
  });
});

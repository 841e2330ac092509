import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { silentLogger, type RepoAccess } from '../../../server/src/core/deps';
import { DiscussionService } from '../../../server/src/core/service';
import type { ChatModel } from '../../../server/src/model/types';
import type { ProgressNotification } from '../../../shared/protocol';
import { EventLog, FakeToolbox, ManualClock, makeTempFolder } from '../../support/coreHarness';

/** A model whose first try fails and is retried: it tells its observer so, then answers. */
const retryingModel: ChatModel = {
  async complete(_request, onDelta, observer) {
    observer?.onRetry?.({ retryInMs: 2_000, attempt: 1, of: 2, reason: 'rate-limited (429)' });
    onDelta('answered after the wait');
    return { content: 'answered after the wait', toolCalls: [], finishReason: 'stop' };
  },
  async listModels() {
    return [];
  },
};

describe("a turn's transient progress", () => {
  let folder: string;
  let service: DiscussionService;
  afterEach(async () => {
    await service?.dispose();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('reaches the injected callback as a retry notice naming the discussion and the turn, and never becomes an event', async () => {
    folder = makeTempFolder();
    const repos: RepoAccess = { bind: async () => ({ toolbox: new FakeToolbox(folder), summary: 'a folder', instructions: [] }) };
    const progress: ProgressNotification.Params[] = [];
    service = new DiscussionService({
      model: retryingModel,
      repos,
      clock: new ManualClock(),
      logger: silentLogger,
      defaultModel: () => undefined,
      denyRead: () => [],
      onProgress: (notice) => progress.push(notice),
    });
    const { discussionId } = await service.start({ folder });
    const log = new EventLog();
    service.subscribe(discussionId, 'test', log.sink, 0);
    const { seq } = service.send(discussionId, 'Why is it slow?');
    await log.turnsComplete(1);

    assert.deepEqual(progress, [
      { discussionId, turnSeq: seq, kind: 'retrying', retryInMs: 2_000, attempt: 1, of: 2, reason: 'rate-limited (429)' },
    ]);
    assert.deepEqual(log.types(), ['user_message', 'assistant_delta', 'assistant_message', 'turn_complete'], 'no event carries the retry');
  });
});

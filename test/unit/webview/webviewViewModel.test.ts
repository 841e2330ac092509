import assert from 'node:assert/strict';
import type { DiscussionEvent, DiscussionEventBody, ExtensionToWebview } from '../../../shared/protocol';
import {
  discussionUsage,
  ConversationModel,
  describeParams,
  fixForError,
  isRefusal,
  type ConversationSnapshot,
} from '../../../client/src/webview/viewModel';

const DISCUSSION = 'disc-1';

/** Numbers event bodies from `firstSeq`, as the server's single writer does. */
function numbered(bodies: DiscussionEventBody[], firstSeq = 0, discussionId = DISCUSSION): DiscussionEvent[] {
  return bodies.map((body, i) => ({ discussionId, seq: firstSeq + i, ts: 1_700_000_000_000 + firstSeq + i, ...body }) as DiscussionEvent);
}

function events(list: DiscussionEvent[]): ExtensionToWebview {
  return { type: 'events', events: list };
}

function attached(reset: boolean, discussionId = DISCUSSION): ExtensionToWebview {
  return { type: 'attached', discussionId, repo: '/work/repo', model: 'model-a', reset };
}

/** One complete turn: question, a tool round trip, streamed reply, final message. */
const FULL_TURN: DiscussionEventBody[] = [
  { type: 'user_message', text: 'Where is the config read?' },
  { type: 'tool_call', tool: 'grep', paramsPreview: '{"pattern":"readConfig"}' },
  { type: 'tool_result', tool: 'grep', ok: true, preview: 'src/config.ts:12: export function readConfig' },
  { type: 'assistant_delta', text: 'In `src/config.ts`' },
  { type: 'assistant_delta', text: ', line 12.' },
  { type: 'assistant_message', text: 'In `src/config.ts`, line 12.' },
  { type: 'turn_complete' },
];

function stateOf(model: ConversationModel): ConversationSnapshot {
  return JSON.parse(JSON.stringify(model.snapshot())) as ConversationSnapshot;
}

describe('the webview conversation model', () => {
  describe('building turns from events', () => {
    it('groups a question, its tool calls and its reply into one completed turn', () => {
      const model = ConversationModel.empty();
      model.apply(attached(true));
      model.apply(events(numbered(FULL_TURN)));

      const { turns, lastSeq, answering } = model.state;
      assert.equal(turns.length, 1);
      assert.deepEqual(turns[0].user, { text: 'Where is the config read?', ts: 1_700_000_000_000 });
      assert.equal(turns[0].reply, 'In `src/config.ts`, line 12.');
      assert.equal(turns[0].replyFinal, true);
      assert.equal(turns[0].complete, true);
      assert.deepEqual(turns[0].tools, [
        { id: 1, tool: 'grep', params: '{"pattern":"readConfig"}', ok: true, preview: 'src/config.ts:12: export function readConfig', refused: false },
      ]);
      assert.equal(lastSeq, FULL_TURN.length - 1);
      assert.equal(answering, false);
    });

    it('streams deltas into the open turn and reports each one as an append to that turn only', () => {
      const model = ConversationModel.empty();
      model.apply(events(numbered(FULL_TURN.slice(0, 1))));
      const changes = model.apply(events(numbered([{ type: 'assistant_delta', text: 'Hel' }], 1)));
      assert.deepEqual(changes, [{ kind: 'replyAppended', turnId: 0, text: 'Hel' }]);
      model.apply(events(numbered([{ type: 'assistant_delta', text: 'lo' }], 2)));
      assert.equal(model.state.turns[0].reply, 'Hello');
      assert.equal(model.state.turns[0].replyFinal, false);
      assert.equal(model.state.answering, true);
    });

    it('lets the final assistant_message supersede the deltas of its turn', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'q' },
            { type: 'assistant_delta', text: 'partial and garbled' },
            { type: 'assistant_message', text: 'The whole answer.' },
          ]),
        ),
      );
      assert.equal(model.state.turns[0].reply, 'The whole answer.');
      assert.equal(model.state.turns[0].replyFinal, true);
    });

    it('keeps a reply whose question was before the replay window in a turn without a user message', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered(
            [
              { type: 'assistant_delta', text: 'tail of a reply' },
              { type: 'assistant_message', text: 'whole reply' },
              { type: 'turn_complete' },
              { type: 'user_message', text: 'next' },
            ],
            500,
          ),
        ),
      );
      assert.equal(model.state.turns.length, 2);
      assert.equal(model.state.turns[0].user, null);
      assert.equal(model.state.turns[0].reply, 'whole reply');
      assert.equal(model.state.turns[1].user?.text, 'next');
    });

    it('closes a turn whose turn_complete never came when the next question arrives', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'first' },
            { type: 'assistant_delta', text: 'cut off' },
            { type: 'user_message', text: 'second' },
            { type: 'assistant_delta', text: 'answer two' },
          ]),
        ),
      );
      assert.equal(model.state.turns.length, 2);
      assert.equal(model.state.turns[0].complete, true);
      assert.equal(model.state.turns[0].reply, 'cut off');
      assert.equal(model.state.turns[1].reply, 'answer two');
    });

    it('matches each tool result to the earliest unanswered call of that tool', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'q' },
            { type: 'tool_call', tool: 'read_file', paramsPreview: '{"path":"a.ts"}' },
            { type: 'tool_call', tool: 'read_file', paramsPreview: '{"path":"b.ts"}' },
            { type: 'tool_result', tool: 'read_file', ok: true, preview: 'A' },
            { type: 'tool_result', tool: 'read_file', ok: false, preview: 'No such file: b.ts' },
          ]),
        ),
      );
      const [first, second] = model.state.turns[0].tools;
      assert.deepEqual([first.params, first.ok, first.preview], ['{"path":"a.ts"}', true, 'A']);
      assert.deepEqual([second.params, second.ok, second.preview, second.refused], ['{"path":"b.ts"}', false, 'No such file: b.ts', false]);
    });

    it('marks a failed call as refused when its result says the conversation is read-only or the path is denied', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'q' },
            { type: 'tool_call', tool: 'write_file', paramsPreview: '{}' },
            { type: 'tool_result', tool: 'write_file', ok: false, preview: 'This conversation is read-only: it cannot write or edit files' },
            { type: 'tool_call', tool: 'read_file', paramsPreview: '{"path":".env"}' },
            { type: 'tool_result', tool: 'read_file', ok: false, preview: 'Refused: ".env" may hold credentials' },
          ]),
        ),
      );
      assert.deepEqual(
        model.state.turns[0].tools.map((chip) => chip.refused),
        [true, true],
      );
    });

    it('leaves a call without a result unanswered when its turn ends (the reply was stopped)', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'q' },
            { type: 'tool_call', tool: 'list_dir', paramsPreview: '{}' },
            { type: 'turn_complete' },
          ]),
        ),
      );
      assert.equal(model.state.turns[0].tools[0].ok, null);
      assert.equal(model.state.turns[0].complete, true);
    });

    it('keeps reasoning beside the reply, never in it, and sums the usage of a turn', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'faster?' },
            { type: 'reasoning_delta', text: 'The user wants ' },
            { type: 'reasoning_delta', text: 'speed.' },
            { type: 'assistant_delta', text: 'Use a cache.' },
            { type: 'assistant_message', text: 'Use a cache.' },
            { type: 'usage', promptTokens: 250, completionTokens: 15 },
            { type: 'turn_complete' },
          ]),
        ),
      );
      const [turn] = model.state.turns;
      assert.equal(turn.reasoning, 'The user wants speed.');
      assert.equal(turn.reply, 'Use a cache.');
      assert.deepEqual(turn.usage, { promptTokens: 250, completionTokens: 15 });
    });

    it('tracks the answering state from user_message to turn_complete, and from status messages', () => {
      const model = ConversationModel.empty();
      model.apply(events(numbered([{ type: 'user_message', text: 'q' }])));
      assert.equal(model.state.answering, true);
      model.apply(events(numbered([{ type: 'turn_complete' }], 1)));
      assert.equal(model.state.answering, false);
      assert.deepEqual(model.apply({ type: 'status', answering: true, model: 'model-b' }), [{ kind: 'header' }, { kind: 'answering' }]);
      assert.equal(model.state.answering, true);
      assert.equal(model.state.model, 'model-b');
    });
  });

  describe('replays and deduplication', () => {
    it('ignores every event at or below the last seq it applied', () => {
      const model = ConversationModel.empty();
      const all = numbered(FULL_TURN);
      model.apply(events(all.slice(0, 4)));
      const changes = model.apply(events(all.slice(0, 4)));
      assert.deepEqual(changes, []);
      assert.equal(model.state.turns[0].reply, 'In `src/config.ts`');
    });

    it('ends in the same state whatever overlapping batches a replay arrives in', () => {
      const all = numbered([...FULL_TURN, ...FULL_TURN.map((body) => (body.type === 'user_message' ? { ...body, text: 'again' } : body))]);
      const reference = ConversationModel.empty();
      reference.apply(events(all));
      const expected = stateOf(reference);

      // Every split point, each batch re-sending a few events the panel already has.
      for (let split = 0; split <= all.length; split++) {
        for (const overlap of [0, 1, 3, all.length]) {
          const model = ConversationModel.empty();
          model.apply(events(all.slice(0, split)));
          model.apply(events(all.slice(Math.max(0, split - overlap))));
          assert.deepEqual(stateOf(model), expected, `split ${split}, overlap ${overlap}`);
        }
      }
    });

    it('continues after a reload from the saved snapshot with neither a gap nor a duplicate', () => {
      const all = numbered(FULL_TURN);
      const live = ConversationModel.empty();
      live.apply(attached(true));
      live.apply(events(all.slice(0, 4)));

      // The panel is reloaded: state comes back through JSON, then the extension replays from the start.
      const reloaded = ConversationModel.restore(JSON.parse(JSON.stringify(live.snapshot())));
      assert.equal(reloaded.state.lastSeq, 3);
      reloaded.apply(attached(false));
      reloaded.apply(events(all));

      const fresh = ConversationModel.empty();
      fresh.apply(attached(true));
      fresh.apply(events(all));
      assert.deepEqual(stateOf(reloaded), stateOf(fresh));
    });

    it('accepts seq gaps, since the server drops superseded events without reusing their numbers', () => {
      const model = ConversationModel.empty();
      model.apply(events([...numbered([{ type: 'user_message', text: 'q' }], 0), ...numbered([{ type: 'turn_complete' }], 7)]));
      assert.equal(model.state.lastSeq, 7);
      assert.equal(model.state.turns[0].complete, true);
    });

    it('clears history and the seq cursor when attached with reset', () => {
      const model = ConversationModel.empty();
      model.apply(attached(true));
      model.apply(events(numbered(FULL_TURN)));
      model.apply(events(numbered([{ type: 'task_prepared', intent: 'x', constraints: [] }], FULL_TURN.length)));
      const changes = model.apply(attached(true, 'disc-2'));
      assert.deepEqual(changes, [{ kind: 'reset' }]);
      assert.equal(model.state.turns.length, 0);
      assert.equal(model.state.lastSeq, -1);
      assert.equal(model.state.task, null);
      assert.equal(model.state.discussionId, 'disc-2');
    });

    it('keeps history when re-attached to the same discussion without reset', () => {
      const model = ConversationModel.empty();
      model.apply(attached(true));
      model.apply(events(numbered(FULL_TURN)));
      assert.deepEqual(model.apply(attached(false)), [{ kind: 'header' }]);
      assert.equal(model.state.turns.length, 1);
    });

    it('never shows two discussions in one transcript: a different id clears and asks for a full replay', () => {
      const model = ConversationModel.empty();
      model.apply(attached(true));
      model.apply(events(numbered(FULL_TURN)));
      assert.deepEqual(model.apply(attached(false, 'disc-other')), [{ kind: 'reset' }, { kind: 'resync' }]);
      assert.equal(model.state.turns.length, 0);
      assert.equal(model.state.lastSeq, -1);
    });

    it('ignores events of a discussion other than the attached one', () => {
      const model = ConversationModel.empty();
      model.apply(attached(true));
      assert.deepEqual(model.apply(events(numbered(FULL_TURN, 0, 'disc-stray'))), []);
      assert.equal(model.state.turns.length, 0);
    });
  });

  describe('cost per event', () => {
    it('applies a delta without touching any earlier turn', () => {
      const history = ConversationModel.empty();
      for (let turn = 0; turn < 200; turn++) history.apply(events(numbered(FULL_TURN, turn * FULL_TURN.length)));
      history.apply(events(numbered([{ type: 'user_message', text: 'open' }], 200 * FULL_TURN.length)));

      // Earlier turns frozen deep: any write to them would throw in strict mode.
      const saved = JSON.parse(JSON.stringify(history.snapshot())) as ConversationSnapshot;
      saved.turns.slice(0, -1).forEach(deepFreeze);
      const model = ConversationModel.restore(saved);
      let seq = model.state.lastSeq + 1;
      for (let i = 0; i < 100; i++) {
        const changes = model.apply(events(numbered([{ type: 'assistant_delta', text: `${i} ` }], seq++)));
        assert.equal(changes.length, 1);
      }
      model.apply(events(numbered([{ type: 'tool_call', tool: 'grep', paramsPreview: '{}' }], seq++)));
      model.apply(events(numbered([{ type: 'tool_result', tool: 'grep', ok: true, preview: '' }], seq++)));
      model.apply(events(numbered([{ type: 'turn_complete' }], seq++)));
      assert.ok(model.state.turns[200].reply.startsWith('0 1 2 '));
    });
  });

  describe('errors and their fixes', () => {
    const cases: Array<[string, string | undefined]> = [
      ["The model endpoint at https://api.example.com/v1 rejected the API key (401). Set a valid key with 'Repo Discuss: Set API key' in VS Code.", 'setApiKey'],
      ['The model endpoint at http://localhost:11434/v1 needs an API key (401) and none is set.', 'setApiKey'],
      ["The model endpoint at https://api.example.com/v1 does not offer the model 'gpt-9' (404). Pick one it offers with 'Repo Discuss: Select model'.", 'selectModel'],
      ["The endpoint at http://localhost:11434 answered a 404 on both /chat/completions and /models: the base URL is probably missing /v1 (try http://localhost:11434/v1). Set it with 'Repo Discuss: Select endpoint' in VS Code, or OPENAI_BASE_URL for the server.", 'openSettings'],
      ['Unknown model: gpt-9', 'selectModel'],
      ['Could not reach the model endpoint at http://localhost:1234/v1 (connection refused). Check the base URL and that the server is running.', 'openSettings'],
      ['Cannot reach the model endpoint.', 'openSettings'],
      ['The model endpoint at x failed with a server error (502). Try again shortly.', 'showLogs'],
      ['This reply was interrupted when the server stopped. Send your message again to continue.', undefined],
    ];
    for (const [message, command] of cases) {
      it(`offers ${command ?? 'no fix'} for "${message.slice(0, 60)}…"`, () => {
        assert.equal(fixForError(message)?.command, command);
      });
    }

    it('records an error in its turn and raises a banner with the fix', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'q' },
            { type: 'error', message: 'The model endpoint at x rejected the API key (401).' },
            { type: 'turn_complete' },
          ]),
        ),
      );
      assert.deepEqual(model.state.turns[0].errors, [
        { message: 'The model endpoint at x rejected the API key (401).', fix: { command: 'setApiKey', label: 'Set API key' } },
      ]);
      assert.equal(model.state.banner?.level, 'error');
      assert.equal(model.state.banner?.fix?.command, 'setApiKey');
    });

    it('clears the error banner when the next question is asked, keeping the error in its turn', () => {
      const model = ConversationModel.empty();
      model.apply(
        events(
          numbered([
            { type: 'user_message', text: 'q' },
            { type: 'error', message: 'Could not reach the model endpoint' },
            { type: 'turn_complete' },
            { type: 'user_message', text: 'again' },
          ]),
        ),
      );
      assert.equal(model.state.banner, null);
      assert.equal(model.state.turns[0].errors.length, 1);
    });

    it('uses the action a notice names, and derives one for an error notice that names none', () => {
      const model = ConversationModel.empty();
      model.apply({ type: 'notice', level: 'error', message: 'Something', action: { type: 'runCommand', command: 'showLogs' } });
      assert.deepEqual(model.state.banner?.fix, { command: 'showLogs', label: 'Show logs' });
      model.apply({ type: 'notice', level: 'error', message: 'No model is set' });
      assert.equal(model.state.banner?.fix?.command, 'selectModel');
      model.apply({ type: 'notice', level: 'info', message: 'Handed off.' });
      assert.equal(model.state.banner?.fix, undefined);
      assert.deepEqual(model.dismissBanner(), [{ kind: 'banner' }]);
      assert.equal(model.state.banner, null);
    });

    it('stops answering and keeps the reason when detached', () => {
      const model = ConversationModel.empty();
      model.apply(events(numbered([{ type: 'user_message', text: 'q' }])));
      model.apply({ type: 'detached', message: 'The server stopped.' });
      assert.equal(model.state.detached, 'The server stopped.');
      assert.equal(model.state.answering, false);
    });
  });

  describe('the prepared task', () => {
    it('takes the task from a task_prepared event, and a later one replaces it', () => {
      const model = ConversationModel.empty();
      model.apply(events(numbered([{ type: 'task_prepared', intent: 'Add retries', constraints: ['Keep the API'] }])));
      assert.deepEqual(model.state.task, { intent: 'Add retries', constraints: ['Keep the API'] });
      model.apply(events(numbered([{ type: 'task_prepared', intent: 'Add backoff', constraints: [] }], 1)));
      assert.deepEqual(model.state.task, { intent: 'Add backoff', constraints: [] });
    });

    it('drops the task when a new question moves the discussion on, as the server does', () => {
      const model = ConversationModel.empty();
      model.apply(events(numbered([{ type: 'task_prepared', intent: 'Add retries', constraints: [] }])));
      const changes = model.apply(events(numbered([{ type: 'user_message', text: 'Actually, what about timeouts?' }], 1)));
      assert.equal(model.state.task, null);
      assert.ok(changes.some((change) => change.kind === 'task'));
    });

    it('clears the task once the hand-off is confirmed, and keeps it when the hand-off fails', () => {
      const model = ConversationModel.empty();
      model.apply(events(numbered([{ type: 'task_prepared', intent: 'Add retries', constraints: [] }])));
      model.startHandOff({ intent: 'Add retries now', constraints: ['Keep the API'] });
      assert.equal(model.state.handingOff, true);
      model.apply({ type: 'notice', level: 'info', message: 'Something unrelated.' });
      assert.equal(model.state.handingOff, true, 'an unrelated notice is not the hand-off answer');
      model.apply({ type: 'handOffResult', requestId: model.handOffRequestId, ok: false, message: 'The clipboard is not available.' });
      assert.deepEqual(model.state.task, { intent: 'Add retries now', constraints: ['Keep the API'] });
      assert.equal(model.state.handingOff, false);
      assert.equal(model.state.banner?.level, 'error');

      const first = model.handOffRequestId;
      model.startHandOff({ intent: 'Add retries now', constraints: ['Keep the API'] });
      model.apply({ type: 'handOffResult', requestId: first, ok: true, message: 'Task copied to the clipboard.' });
      assert.equal(model.state.handingOff, true, 'the answer to the earlier, failed hand-off does not settle the new one');
      model.apply({ type: 'handOffResult', requestId: model.handOffRequestId, ok: true, message: 'Task copied to the clipboard.' });
      assert.equal(model.state.task, null);
      assert.equal(model.state.handingOff, false);
    });

    it('keeps the user edits across a reload, and a replayed old task_prepared does not overwrite them', () => {
      const model = ConversationModel.empty();
      const taskEvent = numbered([{ type: 'task_prepared', intent: 'Add retries', constraints: ['Keep the API'] }]);
      model.apply(events(taskEvent));
      model.editTask({ intent: 'Add retries with jitter', constraints: ['Keep the API', 'No new dependency'] });

      const reloaded = ConversationModel.restore(JSON.parse(JSON.stringify(model.snapshot())));
      reloaded.apply(events(taskEvent));
      assert.deepEqual(reloaded.state.task, { intent: 'Add retries with jitter', constraints: ['Keep the API', 'No new dependency'] });
    });
  });

  describe('saved state', () => {
    it('starts empty from saved state it does not recognize', () => {
      for (const saved of [undefined, null, 42, 'x', {}, { version: 99, lastSeq: 3, turns: [] }, { version: 1, lastSeq: 'x', turns: [] }, { version: 1, lastSeq: 1, turns: [{}] }]) {
        const model = ConversationModel.restore(saved);
        assert.equal(model.state.lastSeq, -1);
        assert.deepEqual(model.state.turns, []);
      }
    });
  });

  describe('helpers', () => {
    it('shows tool parameters as key: value pairs, or as sent when they are not a JSON object', () => {
      assert.equal(describeParams('{"path":"src/a.ts","line":3}'), 'path: src/a.ts, line: 3');
      assert.equal(describeParams('{"path":"src/a.t…'), '{"path":"src/a.t…');
      assert.equal(describeParams('[1,2]'), '[1,2]');
    });

    it('shows a parameter holding a line break, control or bidi character quoted and escaped, and an ordinary one as is', () => {
      assert.equal(describeParams(JSON.stringify({ path: 'a.txt\nauth.ts:12: x' })), 'path: "a.txt\\nauth.ts:12: x"');
      assert.equal(describeParams(JSON.stringify({ path: 'gnp.\u202ets', 'k\u2067': ['\u202d'] })), 'path: "gnp.\\u202ets", k\\u2067: ["\\u202d"]');
      assert.equal(describeParams('{"path":"a\u202eb'), '{"path":"a\\u202eb');
      assert.equal(describeParams('{"path":"src/a.ts"}'), 'path: src/a.ts');
    });

    it('does not take an ordinary failure for a refusal', () => {
      assert.equal(isRefusal('ENOENT: no such file'), false);
      assert.equal(isRefusal("That tool is denied by this project's policy"), true);
    });
  });
});

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

describe('token usage', () => {
  it('adds up the usage of every turn into the discussion total, and has none until a turn reports it', () => {
    assert.equal(discussionUsage([{ usage: null }, {}]), null);
    assert.deepEqual(
      discussionUsage([{ usage: { promptTokens: 100, completionTokens: 20 } }, { usage: null }, { usage: { promptTokens: 50, completionTokens: 5 } }]),
      { promptTokens: 150, completionTokens: 25 },
    );
  });
});

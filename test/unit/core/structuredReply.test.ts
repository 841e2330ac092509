import { strict as assert } from 'node:assert';
import { ModelError } from '../../../server/src/model/types';
import { extractJsonObject, parseJsonObjectReply, requestStructured } from '../../../server/src/core/structuredReply';
import { Gate, ScriptedModel } from '../../support/scriptedModel';

/** Reads `{"n": …}` as its number, anything else as what was wrong with it. */
const parseN = (text: string): number | string => {
  const record = parseJsonObjectReply(text);
  if (typeof record === 'string') return record;
  return typeof record.n === 'number' ? record.n : 'the reply had no n';
};

const request = (signal = new AbortController().signal) => ({ prompt: 'Answer in JSON.', model: 'scripted-small', maxTokens: 64, attempts: 3, signal, parse: parseN });

describe('a structured answer from the model', () => {
  it('asks once more after a reply that does not read, and answers with the first that does', async () => {
    const model = new ScriptedModel([{ text: 'Sure!' }, { text: '```json\n{"n": 7}\n```' }]);
    assert.deepEqual(await requestStructured(model, request()), { ok: true, value: 7 });
    assert.equal(model.calls, 2);
    assert.deepEqual(
      model.requests.map((r) => ({ messages: r.messages, model: r.model, temperature: r.temperature, maxTokens: r.maxTokens, tools: r.tools })),
      Array(2).fill({ messages: [{ role: 'user', content: 'Answer in JSON.' }], model: 'scripted-small', temperature: 0, maxTokens: 64, tools: undefined }),
    );
  });

  it('makes at most the attempts it is given, then says what was wrong with the last one', async () => {
    const model = new ScriptedModel([], { text: '{"m": 1}' });
    assert.deepEqual(await requestStructured(model, request()), { ok: false, problem: 'the reply had no n', remedy: undefined });
    assert.equal(model.calls, 3);
  });

  it("keeps a failed call's remedy only while that failure is the last problem", async () => {
    const keyFailure = { fail: new ModelError('auth', 'The API key was refused.', 401, 'api_key') };
    assert.deepEqual(await requestStructured(new ScriptedModel([], keyFailure), request()), { ok: false, problem: 'The API key was refused.', remedy: 'api_key' });
    assert.deepEqual(await requestStructured(new ScriptedModel([keyFailure, keyFailure, { text: 'no JSON' }]), request()), {
      ok: false,
      problem: 'the reply held no JSON object',
      remedy: undefined,
    });
  });

  it('stops at a cancel: no further call, and the problem is still the last one seen', async () => {
    const controller = new AbortController();
    const gate = new Gate();
    const model = new ScriptedModel([{ text: 'no JSON' }, { block: gate }]);
    const answer = requestStructured(model, request(controller.signal));
    await model.waitForCalls(2);
    controller.abort();
    assert.deepEqual(await answer, { ok: false, problem: 'the reply held no JSON object', remedy: undefined });
    assert.equal(model.calls, 2);
    const cancelledFirst = new ScriptedModel();
    assert.deepEqual(await requestStructured(cancelledFirst, request(AbortSignal.abort())), { ok: false, problem: 'no attempt was made', remedy: undefined });
    assert.equal(cancelledFirst.calls, 0);
  });

  it("reports each call's cost, the unreadable ones too", async () => {
    const model = new ScriptedModel([
      { text: 'no JSON', usage: { promptTokens: 10, completionTokens: 2 } },
      { text: '{"n": 1}', usage: { promptTokens: 11, completionTokens: 3 } },
    ]);
    const costs: number[] = [];
    await requestStructured(model, { ...request(), onUsage: (usage) => costs.push(usage.promptTokens + usage.completionTokens) });
    assert.deepEqual(costs, [12, 14]);
  });

  it('reads the first balanced object, past prose and fences, with braces inside strings not counted', () => {
    assert.equal(extractJsonObject('Here: ```json\n{"a": "}{", "b": {"c": 1}} trailing }'), '{"a": "}{", "b": {"c": 1}}');
    assert.equal(extractJsonObject('{"open": 1'), undefined);
    assert.equal(parseJsonObjectReply('[1, 2]'), 'the reply held no JSON object');
    assert.match(parseJsonObjectReply('{a: 1}') as string, /^the reply's JSON did not parse \(/);
  });
});

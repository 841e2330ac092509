import { strict as assert } from 'node:assert';
import { ProxiedChatModel } from '../../../server/src/model/proxied/chatModel';
import { NO_MODELS_REMEDY } from '../../../server/src/model/proxied/failures';
import { modelSources } from '../../../server/src/model/sources';
import { ModelError } from '../../../server/src/model/types';
import { FakeLanguageModelError, FakeLanguageModels } from '../../support/fakeLanguageModels';
import { Gate, ScriptedModel, type ScriptStep } from '../../support/scriptedModel';

function proxied(steps: ScriptStep[]) {
  const scripted = new ScriptedModel(steps);
  const fake = new FakeLanguageModels(scripted);
  return { scripted, fake, model: new ProxiedChatModel(fake) };
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ModelError, `expected a ModelError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}

const ask = (signal = new AbortController().signal) => ({ messages: [{ role: 'user' as const, content: 'q' }], model: 'scripted-small', signal });

describe('the proxied model (VS Code language models through the client)', () => {
  it('streams text parts as deltas and returns them as the reply', async () => {
    const { model } = proxied([{ text: 'Hello there', deltas: ['Hel', 'lo ', 'there'], separateReads: true }]);
    const deltas: string[] = [];
    const reply = await model.complete(ask(), (d) => deltas.push(d));
    assert.deepEqual(deltas, ['Hel', 'lo ', 'there']);
    assert.equal(reply.content, 'Hello there');
    assert.equal(reply.finishReason, 'stop');
  });

  it('returns text and tool-call parts of one reply as its content and tool calls, arguments as JSON text', async () => {
    const { model } = proxied([{ text: 'Looking.', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] }]);
    const reply = await model.complete(ask(), () => {});
    assert.equal(reply.content, 'Looking.');
    assert.deepEqual(reply.toolCalls, [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }]);
    assert.equal(reply.finishReason, 'tool_calls');
  });

  it('sends the mapped messages to the VS Code model: tool call, then its result, under the same id', async () => {
    const { model, fake } = proxied([{ text: 'ok' }]);
    await model.complete(
      {
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'Reading.', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }] },
          { role: 'tool', toolCallId: 'c1', content: 'A' },
        ],
        model: 'scripted-small',
        signal: new AbortController().signal,
      },
      () => {},
    );
    assert.deepEqual(fake.sent[0].map((m) => [m.role, m.parts.map((p) => p.type)]), [
      ['user', ['text']],
      ['user', ['text']],
      ['assistant', ['text', 'toolCall']],
      ['user', ['toolResult']],
    ]);
  });

  it('on abort rejects at once as cancelled, and the cancellation reaches the VS Code request', async () => {
    const gate = new Gate();
    const { model, fake, scripted } = proxied([{ block: gate, deltasBefore: ['partial'] }]);
    const controller = new AbortController();
    const seen: string[] = [];
    let firstDelta!: () => void;
    const streamed = new Promise<void>((resolve) => (firstDelta = resolve));
    const reply = model.complete(ask(controller.signal), (d) => (seen.push(d), firstDelta()));
    await streamed;
    const aborted = scripted.waitForAbort();
    controller.abort();
    assert.equal((await failure(reply)).kind, 'cancelled');
    await aborted;
    assert.equal(fake.cancelled, 1);
    assert.deepEqual(seen, ['partial']);
  });

  it('says how to get models when VS Code offers none', async () => {
    const { model, scripted } = proxied([]);
    scripted.models = [];
    const error = await failure(model.complete(ask(), () => {}));
    assert.equal(error.kind, 'not_configured');
    assert.ok(error.message.includes(NO_MODELS_REMEDY), error.message);
  });

  it('names the models still offered when the discussion\'s model was withdrawn', async () => {
    const { model } = proxied([]);
    const error = await failure(model.complete({ ...ask(), model: 'gone-model' }, () => {}));
    assert.equal(error.kind, 'unknown_model');
    assert.match(error.message, /no longer available/);
    assert.match(error.message, /Scripted scripted-small, Scripted scripted-large/);
  });

  it('says to allow access when consent was refused (LanguageModelError NoPermissions)', async () => {
    const { model } = proxied([{ fail: new FakeLanguageModelError('NoPermissions', 'The user did not consent') }]);
    const error = await failure(model.complete(ask(), () => {}));
    assert.equal(error.kind, 'auth');
    assert.match(error.message, /Allow/);
    assert.match(error.message, /The user did not consent/);
  });

  it('reports a quota or rate limit (LanguageModelError Blocked) as rate_limited, with what to do', async () => {
    const { model } = proxied([{ fail: new FakeLanguageModelError('Blocked', 'quota exceeded') }]);
    const error = await failure(model.complete(ask(), () => {}));
    assert.equal(error.kind, 'rate_limited');
    assert.match(error.message, /quota or rate limit.*Wait and send again/);
  });

  it('takes the context window from the model\'s maxInputTokens once listed', async () => {
    const { model, fake } = proxied([]);
    fake.maxInputTokens = 64_000;
    assert.equal(model.contextWindow('scripted-small'), undefined);
    await model.listModels();
    assert.equal(model.contextWindow('scripted-small'), 64_000);
  });
});

describe('the two model sources', () => {
  it('sends a vscode-lm: model to the client without its prefix, and any other id to the endpoint', async () => {
    const endpoint = new ScriptedModel([{ text: 'from endpoint' }]);
    const { model: vscodeLm, scripted } = proxied([{ text: 'from VS Code' }]);
    const sources = modelSources(endpoint, vscodeLm);
    assert.equal((await sources.complete({ ...ask(), model: 'vscode-lm:scripted-small' }, () => {})).content, 'from VS Code');
    assert.equal(scripted.requests[0].model, 'scripted-small');
    assert.equal((await sources.complete({ ...ask(), model: 'gpt-x' }, () => {})).content, 'from endpoint');
  });

  it('checks a model against its own source\'s list, and lists both when asked for all', async () => {
    const endpoint = new ScriptedModel();
    endpoint.models = ['gpt-x'];
    const sources = modelSources(endpoint, proxied([]).model);
    assert.deepEqual(await sources.listModels(undefined, 'vscode-lm:scripted-small'), ['vscode-lm:scripted-small', 'vscode-lm:scripted-large']);
    assert.deepEqual(await sources.listModels(undefined, 'gpt-x'), ['gpt-x']);
    assert.deepEqual(await sources.listModels(), ['gpt-x', 'vscode-lm:scripted-small', 'vscode-lm:scripted-large']);
  });

  it('tells a client without VS Code models (the terminal) that the model is only available inside VS Code, and how to use the endpoint', async () => {
    const sources = modelSources(new ScriptedModel());
    const error = await failure(sources.listModels(undefined, 'vscode-lm:copilot-gpt-4o'));
    assert.match(error.message, /copilot-gpt-4o, which is only available inside VS Code/);
    assert.match(error.message, /--model auto/);
    const sendError = await failure(sources.complete({ ...ask(), model: 'vscode-lm:copilot-gpt-4o' }, () => {}));
    assert.match(sendError.message, /only available inside VS Code/);
  });
});

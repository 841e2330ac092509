import { strict as assert } from 'node:assert';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { resolveEndpoint } from '../../../server/src/model/openai/endpoint';
import { classify, missingApiPath, notConfigured, StreamCutOff, StreamEndedEmpty, StreamStalled, type FailureContext } from '../../../server/src/model/openai/failures';
import { asClause } from '../../../shared/errorText';
import type { ClientKind } from '../../../shared/protocol';
import { ModelError } from '../../../server/src/model/types';

/** Punctuation that only a message built from pieces ends up with: a detail's stop followed by ours. */
const DOUBLED = /\.\.(?!\.)|(?<!\.)\.\.\.(?=[^\s)]|$)|\.,|,\.|;\.|:\.|\?\.|!\.|\.\s+\./;

/** Server details as providers send them: with and without their own closing stop, long, in HTML. */
const DETAILS = [undefined, 'The model `m` does not exist.', 'quota exceeded', 'Bad request: tools are not supported.', 'x'.repeat(400) + '.', '<html><body><h1>502 Bad Gateway.</h1></body></html>'];
const STATUSES = [400, 401, 403, 404, 405, 408, 409, 422, 429, 500, 501, 502, 503];

function endpointFor(settings: { baseUrl?: string; apiKey?: string; model?: string; audience?: ClientKind }) {
  return resolveEndpoint(settings);
}

/** Every message classify can produce, over statuses, details, retry counts, operations and readers. */
function everyMessage(): string[] {
  const messages: string[] = [];
  const endpoints = [
    endpointFor({ baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'sk-x' }),
    endpointFor({ baseUrl: 'http://127.0.0.1:11434' }),
    endpointFor({}),
    endpointFor({ baseUrl: 'https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21', apiKey: 'k' }),
  ];
  for (const audience of [undefined, 'vscode', 'terminal'] as const) {
    for (const base of endpoints) {
      const endpoint = { ...base, ...(audience ? { audience } : {}) };
      for (const operation of ['chat', 'models'] as const) {
        const context: FailureContext = { endpoint, operation, model: 'm', withTools: true };
        const errors: unknown[] = [
          new StreamStalled(30_000),
          new StreamEndedEmpty(),
          new StreamCutOff(),
          new SyntaxError('Unexpected token'),
          new APIConnectionTimeoutError(),
          new APIConnectionError({ message: 'Connection error.', cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }),
          new TypeError('terminated.'),
          ...DETAILS.map((detail) => APIError.generate(undefined, detail ? { message: detail } : undefined, detail, undefined)),
          ...DETAILS.flatMap((detail) =>
            STATUSES.map((status) => APIError.generate(status, detail ? { message: detail } : undefined, detail, new Headers())),
          ),
          APIError.generate(429, { message: 'You exceeded your quota.', code: 'insufficient_quota' }, 'quota', new Headers()),
          APIError.generate(400, { message: 'This model maximum context length is 4096 tokens.', code: 'context_length_exceeded' }, 'ctx', new Headers()),
          APIError.generate(404, { message: 'No such model.', code: 'model_not_found' }, 'nf', new Headers()),
        ];
        for (const error of errors) {
          const failure = classify(error, context);
          if (!failure) continue;
          for (const retries of [0, 1, 2]) messages.push(failure.describe(retries));
        }
        messages.push(missingApiPath(endpoint, '/models').describe(0), missingApiPath(endpoint, '/chat/completions and /models').describe(0));
        messages.push(notConfigured(endpoint, 'its model list failed with 404').message);
      }
    }
  }
  for (const audience of [undefined, 'terminal'] as const) {
    try {
      resolveEndpoint({ baseUrl: 'ftp://example.com', audience });
    } catch (err) {
      messages.push((err as ModelError).message);
    }
  }
  return messages;
}

describe('model failure wording', () => {
  const messages = everyMessage();

  it('no error text has doubled punctuation (".." or ".,"), whatever detail the server sent and however many retries', () => {
    assert.ok(messages.length > 500, `only ${messages.length} messages were produced`);
    const doubled = messages.filter((message) => DOUBLED.test(message));
    assert.deepEqual(doubled.slice(0, 5), [], `${doubled.length} messages with doubled punctuation`);
  });

  it('a terminal reader is never told about VS Code commands; a VS Code reader still is', () => {
    const terminal = classify(APIError.generate(401, { message: 'bad key' }, 'bad key', new Headers()), {
      endpoint: endpointFor({ baseUrl: 'http://h/v1', apiKey: 'k', audience: 'terminal' }),
      operation: 'chat',
    })!;
    const vscode = classify(APIError.generate(401, { message: 'bad key' }, 'bad key', new Headers()), {
      endpoint: endpointFor({ baseUrl: 'http://h/v1', apiKey: 'k' }),
      operation: 'chat',
    })!;
    assert.equal(vscode.describe(0), "The model endpoint at http://h/v1 rejected the API key (401). Set a valid key with 'Repo Discuss: Set API key' in VS Code, or OPENAI_API_KEY for the server.");
    assert.equal(terminal.describe(0), 'The model endpoint at http://h/v1 rejected the API key (401).');
    assert.equal(terminal.remedy, 'api_key');
    const terminalOnly = terminalMessages();
    assert.ok(terminalOnly.length > 100);
    assert.deepEqual(terminalOnly.filter((m) => /VS Code|Repo Discuss:|for the server/.test(m)).slice(0, 3), []);
  });

  it('with nothing configured, a terminal reader is told OpenAI\'s default was used, and which remedy fits', () => {
    const endpoint = endpointFor({ audience: 'terminal' });
    const context: FailureContext = { endpoint, operation: 'chat', model: 'm' };
    const auth = classify(APIError.generate(401, { message: 'no key' }, 'no key', new Headers()), context)!;
    assert.match(auth.describe(0), /^No model endpoint is set, so OpenAI's default \(https:\/\/api\.openai\.com\/v1\) was used/);
    assert.equal(auth.remedy, 'default_endpoint');
    const offline = classify(new APIConnectionError({ message: 'x', cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }) }), context)!;
    assert.match(offline.describe(2), /OpenAI's default .* could not be reached \(host not found\), still after 2 retries\.$/);
    assert.equal(offline.remedy, 'default_endpoint');
  });

  it('a 404 on /models at a base URL without a version segment says /v1 is probably missing, and names no model remedy', () => {
    const endpoint = endpointFor({ baseUrl: 'http://127.0.0.1:11434', audience: 'terminal' });
    const failure = classify(APIError.generate(404, undefined, undefined, new Headers()), { endpoint, operation: 'models' })!;
    assert.equal(failure.describe(0), 'The endpoint at http://127.0.0.1:11434 answered 404 on /models: the base URL is probably missing /v1 (try http://127.0.0.1:11434/v1).');
    assert.equal(failure.remedy, 'base_url');
  });

  it('a detail is set into a sentence without its own closing stop', () => {
    assert.equal(asClause('Bad request.'), 'Bad request');
    assert.equal(asClause('cut...'), 'cut…');
    assert.equal(asClause('  spaced:  '), 'spaced');
  });
});

function terminalMessages(): string[] {
  const endpoint = endpointFor({ baseUrl: 'http://127.0.0.1:11434/v1', audience: 'terminal' });
  const out: string[] = [];
  for (const operation of ['chat', 'models'] as const) {
    for (const status of STATUSES) {
      for (const detail of DETAILS) {
        const failure = classify(APIError.generate(status, detail ? { message: detail } : undefined, detail, new Headers()), { endpoint, operation, model: 'm', withTools: true });
        if (failure) out.push(failure.describe(0));
      }
    }
    out.push(notConfigured(endpoint, 'it lists no models').message, missingApiPath(endpoint, '/models').describe(0));
  }
  out.push(classify(APIError.generate(429, { message: 'q', code: 'insufficient_quota' }, 'q', new Headers()), { endpoint, operation: 'chat' })!.describe(0));
  return out;
}

import { strict as assert } from 'node:assert';
import { defaultModelFor } from '../../../client/src/common/modelSource';

const copilot = { id: 'copilot-gpt-4o', name: 'GPT-4o', vendor: 'copilot', family: 'gpt-4o', maxInputTokens: 64_000 };

describe('the model a new discussion starts with', () => {
  it('is the first VS Code language model when nothing else is configured', () => {
    assert.equal(defaultModelFor({ model: '', baseUrl: '', hasApiKey: false }, [copilot]), 'vscode-lm:copilot-gpt-4o');
  });

  it('is the chosen model whenever one is chosen', () => {
    assert.equal(defaultModelFor({ model: 'gpt-x', baseUrl: '', hasApiKey: false }, [copilot]), 'gpt-x');
  });

  it('is the endpoint\'s default once an endpoint or a key is configured', () => {
    assert.equal(defaultModelFor({ model: '', baseUrl: 'http://localhost:11434/v1', hasApiKey: false }, [copilot]), undefined);
    assert.equal(defaultModelFor({ model: '', baseUrl: '', hasApiKey: true }, [copilot]), undefined);
  });

  it('is the endpoint\'s default when VS Code offers no models', () => {
    assert.equal(defaultModelFor({ model: '', baseUrl: '', hasApiKey: false }, []), undefined);
  });
});

// @ts-check
/**
 * A language model for the extension-host suite, contributed through VS Code
 * 1.100's proposed provider API (`vscode.lm.registerChatModelProvider`, the
 * `chatProvider` proposal): each request is answered by the next scripted
 * step, its text and tool calls reported through the progress callback. It
 * registers nothing on activation, so the suite can see VS Code with no
 * models first; `register()` adds the model and returns its disposable.
 * Every request is recorded as plain data (the messages, whether its token
 * was cancelled) for the suite to check.
 */
const vscode = require('vscode');

const MODEL_ID = 'repo-discuss-fake-model';
const METADATA = {
  vendor: 'repo-discuss-fake',
  name: 'Fake Model',
  family: 'fake-family',
  version: '1',
  maxInputTokens: 64000,
  maxOutputTokens: 4000,
  isUserSelectable: true,
};

/**
 * A step: `parts` are reported in order, each `{ text }` or
 * `{ toolCall: { callId, name, input } }`; with `hang`, the reply then waits
 * for its token to be cancelled. Without a step the last user text is echoed.
 */
const steps = [];
/** @type {Array<{ messages: unknown[], cancelled: boolean, hung: boolean, onCancelled: Promise<void> }>} */
const requests = [];

function plainPart(part) {
  if (part instanceof vscode.LanguageModelTextPart) return { type: 'text', value: part.value };
  if (part instanceof vscode.LanguageModelToolCallPart) return { type: 'toolCall', callId: part.callId, name: part.name, input: part.input };
  // By shape: VS Code 1.100 hands providers its internal tool-result class,
  // which is not the `LanguageModelToolResultPart` extensions construct.
  if (part && typeof part.callId === 'string' && Array.isArray(part.content)) {
    return { type: 'toolResult', callId: part.callId, content: part.content.map((c) => (typeof c?.value === 'string' ? c.value : '')).join('') };
  }
  return { type: 'other', kind: part?.constructor?.name };
}

function plainMessage(message) {
  const role = message.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : 'user';
  const content = typeof message.content === 'string' ? [{ type: 'text', value: message.content }] : message.content.map(plainPart);
  return { role, content };
}

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const text = messages[i].content.filter((p) => p.type === 'text').map((p) => p.value).join('');
    if (messages[i].role === 'user' && text) return text;
  }
  return '';
}

const provider = {
  async provideLanguageModelResponse(messages, _options, _extensionId, progress, token) {
    const plain = messages.map(plainMessage);
    let cancelled;
    const onCancelled = new Promise((resolve) => (cancelled = resolve));
    const record = { messages: plain, cancelled: false, hung: false, onCancelled };
    const listener = token.onCancellationRequested(() => {
      record.cancelled = true;
      cancelled();
    });
    if (token.isCancellationRequested) {
      record.cancelled = true;
      cancelled();
    }
    requests.push(record);
    try {
      const step = steps.shift() ?? { parts: [{ text: `Echo: ${lastUserText(plain)}` }] };
      for (const part of step.parts) {
        const reported = part.toolCall
          ? new vscode.LanguageModelToolCallPart(part.toolCall.callId, part.toolCall.name, part.toolCall.input)
          : new vscode.LanguageModelTextPart(part.text);
        // `index` is the choice the part belongs to, not its place: a reader of
        // `response.stream` gets choice 0 only, so every part of the one answer is 0.
        progress.report({ index: 0, part: reported });
      }
      if (step.hang) {
        record.hung = true;
        await onCancelled;
      }
    } finally {
      listener.dispose();
    }
  },
  async provideTokenCount(text) {
    const value = typeof text === 'string' ? text : JSON.stringify(text);
    return Math.ceil(value.length / 4);
  },
};

function activate() {
  return {
    modelId: MODEL_ID,
    metadata: METADATA,
    /** Adds the model to vscode.lm; dispose the result to withdraw it. */
    register() {
      return vscode.lm.registerChatModelProvider(MODEL_ID, provider, METADATA);
    },
    /** Queues replies, one per request. */
    script(...next) {
      steps.push(...next);
    },
    requests,
    reset() {
      steps.length = 0;
      requests.length = 0;
    },
  };
}

module.exports = { activate };

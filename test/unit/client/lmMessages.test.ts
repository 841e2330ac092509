import { strict as assert } from 'node:assert';
import { toLmMessages } from '../../../client/src/common/lmMessages';

describe('mapping the conversation to VS Code language-model messages', () => {
  it('sends the system prompt as the first User message, its text unchanged', () => {
    assert.deepEqual(toLmMessages([{ role: 'system', content: 'You read repositories.' }]), [
      { role: 'user', parts: [{ type: 'text', value: 'You read repositories.' }] },
    ]);
  });

  it('sends a user message as a User message with one text part', () => {
    assert.deepEqual(toLmMessages([{ role: 'user', content: 'why?' }]), [{ role: 'user', parts: [{ type: 'text', value: 'why?' }] }]);
  });

  it('sends a plain assistant reply as an Assistant message with one text part', () => {
    assert.deepEqual(toLmMessages([{ role: 'assistant', content: 'Because.' }]), [{ role: 'assistant', parts: [{ type: 'text', value: 'Because.' }] }]);
  });

  it('keeps text and then every tool call of one reply in one Assistant message, arguments parsed', () => {
    const mapped = toLmMessages([
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [
          { id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' },
          { id: 'c2', name: 'search', arguments: '{"query":"x"}' },
        ],
      },
    ]);
    assert.deepEqual(mapped, [
      {
        role: 'assistant',
        parts: [
          { type: 'text', value: 'Let me look.' },
          { type: 'toolCall', callId: 'c1', name: 'read_file', input: { path: 'a.ts' } },
          { type: 'toolCall', callId: 'c2', name: 'search', input: { query: 'x' } },
        ],
      },
    ]);
  });

  it('sends a tool call with no text as tool-call parts only', () => {
    assert.deepEqual(toLmMessages([{ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{}' }] }]), [
      { role: 'assistant', parts: [{ type: 'toolCall', callId: 'c1', name: 'read_file', input: {} }] },
    ]);
  });

  it('puts a tool result, under its call id, in the User message right after the call', () => {
    const mapped = toLmMessages([
      { role: 'user', content: 'read a.ts' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'export const a = 1;' },
      { role: 'assistant', content: 'It exports a.' },
    ]);
    assert.deepEqual(mapped, [
      { role: 'user', parts: [{ type: 'text', value: 'read a.ts' }] },
      { role: 'assistant', parts: [{ type: 'toolCall', callId: 'c1', name: 'read_file', input: { path: 'a.ts' } }] },
      { role: 'user', parts: [{ type: 'toolResult', callId: 'c1', content: 'export const a = 1;' }] },
      { role: 'assistant', parts: [{ type: 'text', value: 'It exports a.' }] },
    ]);
  });

  it('puts the results of one reply\'s calls in one User message, in call order, and never merges them into a user question', () => {
    const mapped = toLmMessages([
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'a', arguments: '{}' }, { id: 'c2', name: 'b', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'one' },
      { role: 'tool', toolCallId: 'c2', content: 'two' },
      { role: 'user', content: 'and then?' },
    ]);
    assert.deepEqual(mapped.slice(1), [
      { role: 'user', parts: [{ type: 'toolResult', callId: 'c1', content: 'one' }, { type: 'toolResult', callId: 'c2', content: 'two' }] },
      { role: 'user', parts: [{ type: 'text', value: 'and then?' }] },
    ]);
  });

  it('sends arguments that are not a JSON object as an empty input, since VS Code takes only objects', () => {
    const mapped = toLmMessages([{ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":' }, { id: 'c2', name: 'x', arguments: '[1]' }] }]);
    assert.deepEqual(mapped[0].parts.map((p) => (p.type === 'toolCall' ? p.input : null)), [{}, {}]);
  });

  it('leaves out an assistant turn with neither text nor tool calls', () => {
    assert.deepEqual(toLmMessages([{ role: 'user', content: 'q' }, { role: 'assistant', content: '' }]), [{ role: 'user', parts: [{ type: 'text', value: 'q' }] }]);
  });
});

/**
 * How the fake OpenAI-compatible endpoint answers when a test has scripted
 * nothing more specific: a distillation ("Prepare coding task") gets a fixed
 * task, every other turn is echoed back. Shared by the extension-host and the
 * browser suites (no `vscode` import here).
 */
import { echoLastUserMessage, lastUserMessage, type FakeStepScript } from '../support/fakeOpenAI';

/** The task a distillation request is answered with. */
export const DISTILLED = {
  intent: 'Round invoice totals to cents once, after summing every line.',
  constraints: ['Keep the signature of total() unchanged', 'Add a test with three lines of 0.333'],
};

export const replyScript: FakeStepScript = (request) =>
  lastUserMessage(request).startsWith('A developer has been discussing')
    ? { kind: 'text', text: JSON.stringify({ proposed_intent: DISTILLED.intent, constraints: DISTILLED.constraints }) }
    : echoLastUserMessage(request);

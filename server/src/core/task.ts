import type { Handoff, PreparedTask } from '../../../shared/protocol';
import { DiscussError } from './errors';
import { TASK_LIMITS } from './inputs';
import { errorText } from '../../../shared/errorText';

/**
 * A task as the model prepared it or the user edited it: an intent and
 * string constraints, bounded, since every later turn carries hand-offs in
 * its system prompt.
 */
export function validTask(value: unknown): PreparedTask {
  const record = (value ?? {}) as { intent?: unknown; constraints?: unknown };
  const intent = typeof record.intent === 'string' ? record.intent.trim() : '';
  if (!intent) throw new DiscussError('InvalidParams', 'The task needs a non-empty "intent": one imperative paragraph of what to change.');
  if (intent.length > TASK_LIMITS.intentChars) {
    throw new DiscussError('InvalidParams', `The intent is ${intent.length} characters; keep it under ${TASK_LIMITS.intentChars}.`);
  }
  const constraints = Array.isArray(record.constraints)
    ? record.constraints.filter((c): c is string => typeof c === 'string').map((c) => c.trim()).filter(Boolean)
    : [];
  if (constraints.length > TASK_LIMITS.constraints || constraints.some((c) => c.length > TASK_LIMITS.constraintChars)) {
    throw new DiscussError(
      'InvalidParams',
      `Keep the task to ${TASK_LIMITS.constraints} constraints of at most ${TASK_LIMITS.constraintChars} characters each.`,
    );
  }
  return { intent, constraints };
}

/** The model's `prepare_coding_task` call: the task it prepared, or what to tell it instead. */
export function taskFromToolCall(rawArguments: string): { task: PreparedTask } | { problem: string } {
  let args: unknown;
  try {
    args = JSON.parse(rawArguments || '{}');
  } catch {
    return { problem: 'prepare_coding_task needs JSON arguments: {"intent": string, "constraints": string[]}.' };
  }
  try {
    return { task: validTask(args) };
  } catch (err) {
    return { problem: `prepare_coding_task: ${errorText(err)}` };
  }
}

/** What the model is told once its task is on the user's card. */
export const TASK_PREPARED_ANSWER =
  'Task prepared for the user to review and edit. Nothing has started and no file has changed; ' +
  'tell the user the task is ready and summarize it briefly.';

/**
 * Tasks already handed off, told to the model on every later turn so it
 * builds on them instead of proposing the same work again.
 */
export function handoffNote(handoffs: readonly Handoff[]): string {
  if (handoffs.length === 0) return '';
  const lines = handoffs.map((h) => {
    const constraints = h.constraints.length ? ` Constraints: ${h.constraints.join('; ')}.` : '';
    return `- ${new Date(h.at).toISOString()} (to ${h.target}): ${h.intent}${constraints}`;
  });
  return (
    '\n\n## Tasks already handed off from this discussion\n' +
    'These were given to a coding agent and may be done or under way. Build on them; do not propose them again as new work.\n' +
    lines.join('\n')
  );
}

import { codeSpan, inlineMarkdown, markdownBlock } from '../../../shared/inertMarkdown';
import { printablePath } from '../../../shared/printablePath';
import type { DiscussionEvent } from '../../../shared/protocol';
import type { ChatMessage } from '../model/types';
import type { DiscussionSnapshot } from './discussion';

/**
 * A discussion as Markdown: the conversation as the user saw it (tool calls
 * named, their output left out, a turn's error kept), then the pending task
 * and the hand-offs. `events` is the saved event log, where errors live: the
 * model history has none, so a failed turn showed as "## You" twice.
 *
 * Everything but our own headings and labels is untrusted: the model's text,
 * its tool names and arguments, file contents the user attached, the title.
 * Each is written so it stays inside its turn and loads nothing when the file
 * is rendered (see inertMarkdown.ts); a tool call is one line of code spans.
 */
export function exportMarkdown(snapshot: DiscussionSnapshot, events: readonly DiscussionEvent[] = []): string {
  const errors = turnErrors(snapshot.history, events);
  const out: string[] = [];
  out.push(`# ${snapshot.title ? inlineMarkdown(snapshot.title) : 'Discussion'}`, '');
  out.push(`- Repository: ${codeSpan(printablePath(snapshot.repo))}`);
  out.push(`- Started: ${new Date(snapshot.createdAt).toISOString()}`);
  out.push(`- Last active: ${new Date(snapshot.updatedAt).toISOString()}`);
  if (snapshot.model) out.push(`- Model: ${inlineMarkdown(snapshot.model)}`);
  out.push(`- Id: ${snapshot.id}`, '');
  let turnErrorsPending: string[] = [];
  const flushErrors = () => {
    for (const message of turnErrorsPending) out.push(`**Error:** ${inlineMarkdown(message)}`, '');
    turnErrorsPending = [];
  };
  for (const [index, message] of snapshot.history.entries()) {
    if (message.role === 'user') {
      flushErrors();
      turnErrorsPending = errors.get(index) ?? [];
      out.push('## You', '', markdownBlock(message.content), '');
    } else if (message.role === 'assistant') {
      if (message.content.trim()) out.push('## Assistant', '', markdownBlock(message.content), '');
      for (const call of message.toolCalls ?? []) {
        const name = /^[\w.-]+$/.test(call.name) ? call.name : codeSpan(call.name);
        out.push(`> ${name} ${codeSpan(call.arguments.length > 200 ? call.arguments.slice(0, 200) + '…' : call.arguments)}`, '');
      }
    }
  }
  flushErrors();
  if (snapshot.preparedTask) {
    out.push('## Prepared task', '', markdownBlock(snapshot.preparedTask.intent), '');
    for (const c of snapshot.preparedTask.constraints) out.push(`- ${inlineMarkdown(c)}`);
    out.push('');
  }
  if (snapshot.handoffs?.length) {
    out.push('## Handed off', '');
    for (const h of snapshot.handoffs) out.push(`- ${new Date(h.at).toISOString()} to ${inlineMarkdown(h.target)}: ${inlineMarkdown(h.intent)}`);
    out.push('');
  }
  return out.join('\n');
}

/**
 * Each turn's error messages, by the index of the turn's user message in the
 * history. The event log may have lost its oldest turns (it is bounded) but
 * always ends with the latest, and each user_message event is one user
 * message of the history, so the two are matched from the end.
 */
function turnErrors(history: readonly ChatMessage[], events: readonly DiscussionEvent[]): Map<number, string[]> {
  const turns: string[][] = [];
  for (const event of events) {
    if (event.type === 'user_message') turns.push([]);
    else if (event.type === 'error' && turns.length > 0) turns[turns.length - 1].push(event.message);
  }
  const userIndexes = history.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  const matched = turns.slice(-userIndexes.length || turns.length);
  const offset = userIndexes.length - matched.length;
  const byIndex = new Map<number, string[]>();
  matched.forEach((messages, k) => {
    if (messages.length && offset + k >= 0) byIndex.set(userIndexes[offset + k], messages);
  });
  return byIndex;
}

import type { DiscussionSnapshot } from './discussion';

/**
 * A discussion as Markdown: the conversation as the user saw it (tool calls
 * named, their output left out), then the pending task and the hand-offs.
 */
export function exportMarkdown(snapshot: DiscussionSnapshot): string {
  const out: string[] = [];
  out.push(`# ${snapshot.title || 'Discussion'}`, '');
  out.push(`- Repository: \`${snapshot.repo}\``);
  out.push(`- Started: ${new Date(snapshot.createdAt).toISOString()}`);
  out.push(`- Last active: ${new Date(snapshot.updatedAt).toISOString()}`);
  if (snapshot.model) out.push(`- Model: ${snapshot.model}`);
  out.push(`- Id: ${snapshot.id}`, '');
  for (const message of snapshot.history) {
    if (message.role === 'user') {
      out.push('## You', '', message.content, '');
    } else if (message.role === 'assistant') {
      if (message.content.trim()) out.push('## Assistant', '', message.content, '');
      for (const call of message.toolCalls ?? []) {
        out.push(`> ${call.name} \`${call.arguments.length > 200 ? call.arguments.slice(0, 200) + '…' : call.arguments}\``, '');
      }
    }
  }
  if (snapshot.preparedTask) {
    out.push('## Prepared task', '', snapshot.preparedTask.intent, '');
    for (const c of snapshot.preparedTask.constraints) out.push(`- ${c}`);
    out.push('');
  }
  if (snapshot.handoffs?.length) {
    out.push('## Handed off', '');
    for (const h of snapshot.handoffs) out.push(`- ${new Date(h.at).toISOString()} to ${h.target}: ${h.intent}`);
    out.push('');
  }
  return out.join('\n');
}

import type { PreparedTask } from '../../../shared/protocol';

export interface TaskContext {
  repo: string;
  /** Files the discussion read while grounding itself. */
  files: string[];
  discussionId: string;
  title?: string;
}

/**
 * The text a coding agent receives: the intent first (it is the instruction),
 * then the agreed constraints, the repository, and where the discussion
 * looked, so the agent starts from the same ground.
 */
export function renderTaskText(task: PreparedTask, context: TaskContext): string {
  const lines: string[] = [task.intent.trim(), ''];
  if (task.constraints.length > 0) {
    lines.push('Constraints:');
    for (const constraint of task.constraints) lines.push(`- ${constraint}`);
    lines.push('');
  }
  lines.push(`Repository: ${context.repo}`);
  if (context.files.length > 0) {
    const shown = context.files.slice(0, 30);
    lines.push('', 'Files the discussion looked at:');
    for (const file of shown) lines.push(`- ${file}`);
    if (context.files.length > shown.length) lines.push(`- … and ${context.files.length - shown.length} more`);
  }
  return lines.join('\n');
}

/** The same task as a Markdown document, for the "Markdown" hand-off target. */
export function renderTaskMarkdown(task: PreparedTask, context: TaskContext): string {
  const lines: string[] = [`# Coding task${context.title ? `: ${context.title}` : ''}`, '', task.intent.trim(), ''];
  if (task.constraints.length > 0) {
    lines.push('## Constraints', '');
    for (const constraint of task.constraints) lines.push(`- ${constraint}`);
    lines.push('');
  }
  lines.push('## Context', '', `- Repository: \`${context.repo}\``, `- Discussion: ${context.discussionId}`);
  if (context.files.length > 0) {
    lines.push('', '## Files the discussion looked at', '');
    for (const file of context.files.slice(0, 50)) lines.push(`- \`${file}\``);
  }
  lines.push('');
  return lines.join('\n');
}

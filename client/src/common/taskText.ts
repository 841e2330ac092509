import type { ConstraintSource, PreparedTask } from '../../../shared/protocol';

/**
 * One constraint as the agent reads it: its cited `path:line` evidence, a
 * mark when those lines changed since it was agreed, and whether the
 * distillation (not the decision log) added it.
 */
function constraintLines(task: PreparedTask, text: string, code: (s: string) => string): string[] {
  const source: ConstraintSource | undefined = task.constraintSources?.find((s) => s.text === text);
  const notes: string[] = [];
  if (source?.evidence?.length) notes.push(`evidence: ${source.evidence.map(code).join(', ')}`);
  if (source?.source === 'distilled') notes.push('added by the distillation, not in the decision log');
  const lines = [`- ${text}${notes.length ? ` (${notes.join('; ')})` : ''}`];
  for (const stale of source?.stale ?? []) {
    const where = stale.line === undefined ? stale.path : `${stale.path}:${stale.line}`;
    lines.push(`  - The code it cites changed since it was agreed (${where}):`);
    for (const diffLine of stale.diff.split('\n')) lines.push(`    ${diffLine}`);
  }
  return lines;
}

function openQuestionLines(task: PreparedTask): string[] {
  return (task.openQuestions ?? []).map((q) => `- ${q}`);
}

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
    for (const constraint of task.constraints) lines.push(...constraintLines(task, constraint, (s) => s));
    lines.push('');
  }
  if (task.openQuestions?.length) lines.push('Open questions (not settled in the discussion):', ...openQuestionLines(task), '');
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
    for (const constraint of task.constraints) lines.push(...constraintLines(task, constraint, (s) => `\`${s}\``));
    lines.push('');
  }
  if (task.openQuestions?.length) lines.push('## Open questions', '', ...openQuestionLines(task), '');
  lines.push('## Context', '', `- Repository: \`${context.repo}\``, `- Discussion: ${context.discussionId}`);
  if (context.files.length > 0) {
    lines.push('', '## Files the discussion looked at', '');
    for (const file of context.files.slice(0, 50)) lines.push(`- \`${file}\``);
  }
  lines.push('');
  return lines.join('\n');
}

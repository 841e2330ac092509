import { codeSpan, inlineMarkdown, markdownBlock } from '../../../shared/inertMarkdown';
import { oneLine } from '../../../shared/oneLine';
import { inertLine, inertText, printablePath } from '../../../shared/printablePath';
import type { ConstraintSource, PreparedTask } from '../../../shared/protocol';

/**
 * How the two forms write untrusted text: the model's (intent, constraints,
 * questions), the repository's (file names, cited lines) and the evidence
 * labels that carry both. Plain text keeps each on its line with every
 * control character escaped; Markdown also keeps each from opening a block,
 * closing a code span, loading an image or hiding what follows.
 */
interface TaskForm {
  /** Text that may run over several lines (the intent). */
  block(text: string): string;
  /** Text on one line of ours (a constraint, a question, a title). */
  inline(text: string): string;
  /** A name or a `path:line` label. */
  code(text: string): string;
  /** The lines of a stale citation's diff, under its constraint. */
  diff(lines: string[]): string[];
}

const PLAIN: TaskForm = {
  // Text of more than one line is written with every line behind `> `, so none of it can pass for a section or constraint
  // of ours. Telling our labels apart instead missed their variants ("Constraint:", "Constraints (agreed):", a Cyrillic С,
  // a zero-width space in front).
  block: (text) => {
    const lines = inertText(text).split('\n');
    return lines.length > 1 ? lines.map((line) => `> ${line}`.trimEnd()).join('\n') : lines[0];
  },
  inline: (text) => inertLine(oneLine(text)),
  code: (text) => inertLine(text),
  diff: (lines) => lines.map((line) => `    ${inertLine(line)}`),
};

const MARKDOWN: TaskForm = {
  block: markdownBlock,
  inline: inlineMarkdown,
  code: codeSpan,
  // A fence longer than any backtick run in the cited lines: file text inside stays code.
  diff: (lines) => {
    const shown = lines.map(inertLine);
    const fence = '`'.repeat(Math.max(2, ...shown.flatMap((line) => line.match(/`+/g) ?? []).map((run) => run.length)) + 1);
    return [`    ${fence}diff`, ...shown.map((line) => `    ${line}`), `    ${fence}`];
  },
};

/**
 * One constraint as the agent reads it: its cited `path:line` evidence, a
 * mark when those lines changed since it was agreed, and whether the
 * distillation (not the decision log) added it. The constraint is one line
 * and each note of ours a line under it: written after the constraint on its
 * line, a note was text the constraint could hold, so "(evidence: …)" in a
 * distilled constraint read as evidence it lacks.
 */
function constraintLines(task: PreparedTask, text: string, form: TaskForm): string[] {
  const source: ConstraintSource | undefined = task.constraintSources?.find((s) => s.text === text);
  const lines = [`- ${form.inline(text)}`];
  if (source?.evidence?.length) lines.push(`  - evidence: ${source.evidence.map(form.code).join(', ')}`);
  if (source?.source === 'distilled') lines.push('  - added by the distillation, not in the decision log');
  for (const stale of source?.stale ?? []) {
    const shown = printablePath(stale.path);
    const where = stale.line === undefined ? shown : `${shown}:${stale.line}`;
    lines.push(`  - The code it cites changed since it was agreed (${form.code(where)}):`);
    lines.push(...form.diff(stale.diff.split('\n')));
  }
  return lines;
}

function openQuestionLines(task: PreparedTask, form: TaskForm): string[] {
  return (task.openQuestions ?? []).map((q) => `- ${form.inline(q)}`);
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
  const lines: string[] = [PLAIN.block(task.intent.trim()), ''];
  if (task.constraints.length > 0) {
    lines.push('Constraints:');
    for (const constraint of task.constraints) lines.push(...constraintLines(task, constraint, PLAIN));
    lines.push('');
  }
  if (task.openQuestions?.length) lines.push('Open questions (not settled in the discussion):', ...openQuestionLines(task, PLAIN), '');
  lines.push(`Repository: ${printablePath(context.repo)}`);
  if (context.files.length > 0) {
    const shown = context.files.slice(0, 30);
    lines.push('', 'Files the discussion looked at:');
    for (const file of shown) lines.push(`- ${printablePath(file)}`);
    if (context.files.length > shown.length) lines.push(`- … and ${context.files.length - shown.length} more`);
  }
  return lines.join('\n');
}

/** The same task as a Markdown document, for the "Markdown" hand-off target. */
export function renderTaskMarkdown(task: PreparedTask, context: TaskContext): string {
  const form = MARKDOWN;
  const lines: string[] = [`# Coding task${context.title ? `: ${form.inline(context.title)}` : ''}`, '', form.block(task.intent.trim()), ''];
  if (task.constraints.length > 0) {
    lines.push('## Constraints', '');
    for (const constraint of task.constraints) lines.push(...constraintLines(task, constraint, form));
    lines.push('');
  }
  if (task.openQuestions?.length) lines.push('## Open questions', '', ...openQuestionLines(task, form), '');
  lines.push('## Context', '', `- Repository: ${form.code(printablePath(context.repo))}`, `- Discussion: ${form.inline(context.discussionId)}`);
  if (context.files.length > 0) {
    lines.push('', '## Files the discussion looked at', '');
    for (const file of context.files.slice(0, 50)) lines.push(`- ${form.code(printablePath(file))}`);
  }
  lines.push('');
  return lines.join('\n');
}

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PreparedTask } from '../../../shared/protocol';

const COMMENT = '#';

/**
 * The task as a file a person edits: the intent first, then one `- ` line per
 * constraint under a `Constraints:` heading. Comment lines explain the format
 * and are dropped on reading.
 */
export function taskToEditable(task: PreparedTask): string {
  const lines = [
    `${COMMENT} Edit the coding task, then save and close the editor.`,
    `${COMMENT} The text before "Constraints:" is the intent; each "- " line after it is one constraint.`,
    `${COMMENT} Lines starting with ${COMMENT} are ignored. Empty the intent to cancel the hand-off.`,
    '',
    task.intent.trim(),
    '',
    'Constraints:',
    ...task.constraints.map((c) => `- ${c}`),
    '',
  ];
  return lines.join('\n');
}

/** The task in an edited file, or why it cannot be used. */
export function editableToTask(text: string): PreparedTask | { problem: string } {
  const lines = text.split(/\r?\n/).filter((line) => !line.startsWith(COMMENT));
  const heading = lines.findIndex((line) => /^\s*constraints\s*:\s*$/i.test(line));
  const intentLines = heading < 0 ? lines : lines.slice(0, heading);
  const intent = intentLines.join('\n').trim();
  if (!intent) return { problem: 'the intent is empty' };
  const constraints =
    heading < 0
      ? []
      : lines
          .slice(heading + 1)
          .map((line) => line.trim())
          .filter((line) => /^[-*]\s+/.test(line))
          .map((line) => line.replace(/^[-*]\s+/, '').trim())
          .filter(Boolean);
  return { intent, constraints };
}

/** `$VISUAL`, else `$EDITOR`, as Git and most terminal tools pick them. */
export function configuredEditor(env: NodeJS.ProcessEnv): string | undefined {
  return env.VISUAL?.trim() || env.EDITOR?.trim() || undefined;
}

/** Opens the task in the editor and reads it back. */
export function editTask(task: PreparedTask, editor: string): { task: PreparedTask } | { problem: string } {
  const edited = editText(taskToEditable(task), editor, 'TASK.md');
  if ('problem' in edited) return edited;
  const parsed = editableToTask(edited.text);
  return 'problem' in parsed ? parsed : { task: parsed };
}

/**
 * Opens `initial` in the editor as a temporary `fileName` and returns what
 * was saved. The editor owns the terminal while it runs (it is run
 * synchronously, so nothing of ours reads stdin meanwhile). The command may
 * carry arguments (`code --wait`), so it goes through the shell.
 */
export function editText(initial: string, editor: string, fileName: string): { text: string } | { problem: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-edit-'));
  const file = path.join(dir, fileName);
  try {
    fs.writeFileSync(file, initial);
    const result = spawnSync(`${editor} ${shellQuote(file)}`, { shell: true, stdio: 'inherit' });
    if (result.error) return { problem: `the editor "${editor}" could not be started (${result.error.message})` };
    if (result.status !== 0) return { problem: `the editor "${editor}" exited with ${result.signal ?? `code ${result.status}`}` };
    return { text: fs.readFileSync(file, 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function shellQuote(file: string): string {
  if (process.platform === 'win32') return `"${file}"`;
  return `'${file.replace(/'/g, `'\\''`)}'`;
}

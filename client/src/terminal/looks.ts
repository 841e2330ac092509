import type { Context } from './context';
import { loadMarkdownRenderer, type MarkdownRenderer } from './markdown';
import { NO_PROGRESS, loadSpinner, type Progress } from './progress';

/** How a turn looks: the answer rendered as Markdown, and a spinner while nothing else shows. */
export interface Looks {
  markdown?: MarkdownRenderer;
  progress: Progress;
}

export const PLAIN_LOOKS: Looks = { progress: NO_PROGRESS };

/**
 * Markdown when the answer goes to a terminal with colours (NO_COLOR gets the
 * text as written), and a spinner on `spinnerOn` when that is a terminal; a
 * pipe or a file gets neither.
 */
export async function terminalLooks(context: Context, spinnerOn: 'stdout' | 'stderr'): Promise<Looks> {
  const spinnerWriter = spinnerOn === 'stdout' ? context.out : context.err;
  const spinnerStream = spinnerOn === 'stdout' ? process.stdout : process.stderr;
  const [markdown, progress] = await Promise.all([
    context.out.isTTY && context.out.style.enabled ? loadMarkdownRenderer() : undefined,
    spinnerWriter.isTTY ? loadSpinner(spinnerStream, spinnerWriter.style.enabled) : NO_PROGRESS,
  ]);
  // Whatever either stream writes clears the spinner's line first.
  if (progress !== NO_PROGRESS) context.out.beforeWrite = context.err.beforeWrite = () => progress.stop();
  return { markdown, progress };
}

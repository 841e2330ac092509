import type { TurnProgress } from '../../../shared/protocol';
import { TerminalText, type Printable } from './inertText';

/** A sign of life while nothing else is shown: a spinner with what is awaited and for how long. */
export interface Progress {
  /**
   * Shows `label` (made inert) with the seconds since `since` (default now).
   * Showing another label while one is shown keeps its clock when `since` is
   * not given: "thinking" continues the wait that began at Enter.
   */
  show(label: Printable, since?: number): void;
  /**
   * The server waits before trying the model again: "retrying in 2 s, 1 of 2",
   * counting down; at zero the label shown before comes back, its clock kept.
   */
  retrying(retry: TurnProgress): void;
  /** Clears the spinner's line; the cursor is where the spinner began. */
  stop(): void;
  readonly active: boolean;
}

/** For a pipe or a file: nothing is drawn, since a spinner there is only noise. */
export const NO_PROGRESS: Progress = { show: () => undefined, retrying: () => undefined, stop: () => undefined, active: false };

/** Seconds shown from this long on: a wait shorter than this needs no count. */
const SHOW_SECONDS_AFTER_MS = 1_000;

/**
 * A spinner drawn by `ora` (an ES module, loaded with `import()`) on
 * `stream`. It never reads stdin (ora would otherwise take it over to
 * discard typing, which the line input holds for the next prompt instead).
 */
export async function loadSpinner(stream: NodeJS.WriteStream, colour: boolean): Promise<Progress> {
  const { default: ora } = await import('ora');
  // A pseudo-terminal nobody sized says it is 0 columns wide, and ora divides by that (an endless clear): it gets 80.
  const sized = {
    isTTY: true,
    get columns() {
      return stream.columns || 80;
    },
    write: (text: string) => stream.write(text),
    cursorTo: (x: number) => stream.cursorTo(x),
    moveCursor: (dx: number, dy: number) => stream.moveCursor(dx, dy),
    clearLine: (direction: -1 | 0 | 1) => stream.clearLine(direction),
  } as unknown as NodeJS.WriteStream;
  const spinner = ora({ stream: sized, discardStdin: false, hideCursor: false, isEnabled: true, color: colour ? 'cyan' : false,
    // Indented by a prefix, not by `indent`: ora leaves the cursor at its indent column when it clears, mid-line for the writer.
    prefixText: ' ',
  });
  let label = '';
  let since = 0;
  let retry: { until: number; attempt: number; of: number; reason: string } | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const text = () => {
    const now = Date.now();
    if (retry && now < retry.until) {
      return `${retry.reason} · retrying in ${Math.ceil((retry.until - now) / 1000)} s, ${retry.attempt} of ${retry.of}`;
    }
    retry = undefined;
    const elapsed = now - since;
    return elapsed < SHOW_SECONDS_AFTER_MS ? label : `${label} · ${Math.floor(elapsed / 1000)} s`;
  };
  const draw = () => {
    spinner.text = text();
    // Drawn now, not at the next frame: a short wait would otherwise be over before it was ever shown.
    if (spinner.isSpinning) spinner.render();
    else spinner.start();
    ticker ??= setInterval(() => (spinner.text = text()), 1_000);
  };
  return {
    get active() {
      return spinner.isSpinning;
    },
    show(untrusted, start) {
      // The label may quote the model (a tool's arguments): ora writes it past the line writer, so it is made inert here.
      label = TerminalText.from(untrusted).value;
      if (start !== undefined || !spinner.isSpinning) since = start ?? Date.now();
      retry = undefined;
      draw();
    },
    retrying(notice) {
      if (!spinner.isSpinning) since = Date.now();
      // The reason is the server's wording: made inert like any label.
      retry = { until: Date.now() + notice.retryInMs, attempt: notice.attempt, of: notice.of, reason: TerminalText.from(notice.reason).value };
      draw();
    },
    stop() {
      retry = undefined;
      if (ticker) clearInterval(ticker);
      ticker = undefined;
      if (spinner.isSpinning) spinner.stop();
    },
  };
}

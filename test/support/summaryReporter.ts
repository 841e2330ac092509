/**
 * Mocha's spec reporter plus one closing line, `[label: ]N passed, N failed`,
 * so a log reader that knows no mocha still sees what ran. Pass the label
 * with `--reporter-option label=e2e` (or `reporterOptions: { label }`).
 */
import Mocha from 'mocha';

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const label = (options?.reporterOptions as { label?: string } | undefined)?.label;
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const stats = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      const skipped = stats.pending ? `, ${stats.pending} skipped` : '';
      Mocha.reporters.Base.consoleLog(`${label ? `${label}: ` : ''}${stats.passes} passed, ${stats.failures} failed${skipped}`);
    });
  }
}

export = SummaryReporter;

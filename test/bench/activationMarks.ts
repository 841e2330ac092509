/**
 * What the probe inside the extension host (activationProbe.ts) reports and
 * the benchmark (activation.ts) reads. No `vscode` here: the benchmark side
 * runs in plain Node.
 */

export const EXTENSION_ID = 'repo-discuss.repo-discuss';

/** Starts the one console line the probe prints; the benchmark finds its report by it. */
export const ACTIVATION_REPORT_PREFIX = 'repo-discuss activation report: ';

/** A mark of VS Code's own performance log (`vs/base/common/performance`), epoch milliseconds. */
export interface PerformanceMark {
  name: string;
  startTime: number;
}

export interface ActivationReport {
  vscodeVersion: string;
  /** The extension was already active when the probe looked (onStartupFinished came first), or the probe's activate() started it. */
  activatedBy: 'startup' | 'probe';
  /** The extension host's marks that name the extension. */
  marks: PerformanceMark[];
}

export interface ActivationSample {
  /** require() of the extension's main module: reading, compiling and running the bundle's top level. */
  codeLoadingMs: number;
  /** activate(), from its call until the value it returned resolved. */
  activateMs: number;
}

/**
 * The extension host marks `code/extHost/willLoadExtensionCode/<id>` and
 * `didLoadExtensionCode` around the require(), and `willActivateExtension` and
 * `didActivateExtension` around activate() and its resolution; the wait for
 * the extension's storage between the two is not the extension's work and is
 * left out. The node extension host stamps its marks with Date.now(), so each
 * figure is whole milliseconds.
 */
export function sampleFromMarks(marks: PerformanceMark[], extensionId: string = EXTENSION_ID): ActivationSample | undefined {
  const at = (step: string) => marks.find((mark) => mark.name === `code/extHost/${step}/${extensionId}`)?.startTime;
  const willLoad = at('willLoadExtensionCode');
  const didLoad = at('didLoadExtensionCode');
  const willActivate = at('willActivateExtension');
  const didActivate = at('didActivateExtension');
  if (willLoad === undefined || didLoad === undefined || willActivate === undefined || didActivate === undefined) return undefined;
  return { codeLoadingMs: didLoad - willLoad, activateMs: didActivate - willActivate };
}

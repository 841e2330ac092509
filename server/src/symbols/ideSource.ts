import type { IdeItem, IdeQueryRequest } from '../../../shared/protocol';

/**
 * The seam between the symbol tools and the editor the server runs in. The
 * server's binding layer (server.ts) implements it over the connection; the
 * core and the tools see only this interface, so they stay free of JSON-RPC.
 */
export interface IdeSource {
  /** The editor's answer, or undefined when it has none; rejects or never settles when it fails. */
  query(params: IdeQueryRequest.Params, signal: AbortSignal): Promise<IdeQueryRequest.Result | undefined>;
}

export const IDE_LIMITS = Object.freeze({
  /** How long one question to the editor may take before the tools answer by name. */
  timeoutMs: 5_000,
});

export type IdeAnswer =
  | { kind: 'answered'; result: IdeQueryRequest.Result }
  | { kind: 'timedOut' }
  | { kind: 'none' };

export const IDE_TIMEOUT_NOTE = (seconds: number): string =>
  `[Note: the editor's language service did not answer in ${seconds} s; answered by name instead.]`;

/**
 * TypeScript's workspace symbols name a function or method `roundRate()`
 * while its document symbols and the index say `roundRate`. Left as it came,
 * a chip picked from the editor's suggestion names a symbol no file defines,
 * and go_to_definition's exact-name match drops the editor's answer. Only an
 * identifier followed by `()` is cut: C++'s `operator()` keeps its name.
 */
const CALLED_IDENTIFIER = /^([\p{ID_Start}_$][\p{ID_Continue}$\u200c\u200d]*)\(\)$/u;

function withBareName(item: IdeItem): IdeItem {
  if (typeof item !== 'object' || item === null || typeof item.name !== 'string') return item;
  const bare = CALLED_IDENTIFIER.exec(item.name)?.[1];
  return bare === undefined || bare === 'operator' ? item : { ...item, name: bare };
}

/** The IDE source with its time limit, as the symbol tools use it. */
export class IdeQueries {
  constructor(
    private readonly source: IdeSource,
    readonly timeoutMs: number = IDE_LIMITS.timeoutMs,
  ) {}

  get timeoutNote(): string {
    return IDE_TIMEOUT_NOTE(Math.round(this.timeoutMs / 100) / 10);
  }

  /**
   * Asks once, within the time limit and the call's own cancellation. A
   * failure is "none": the tree-sitter answer is always there to fall back on,
   * so an editor error must never fail the tool call.
   */
  async ask(params: IdeQueryRequest.Params, signal?: AbortSignal): Promise<IdeAnswer> {
    if (signal?.aborted) return { kind: 'none' };
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    const cancelled = new Promise<'cancelled'>((resolve) => controller.signal.addEventListener('abort', () => resolve('cancelled'), { once: true }));
    try {
      const outcome = await Promise.race([this.source.query(params, controller.signal), timedOut, cancelled]);
      if (outcome === 'timeout') return { kind: 'timedOut' };
      if (outcome === 'cancelled' || outcome === undefined) return { kind: 'none' };
      if (outcome.timedOut === true) return { kind: 'timedOut' };
      if (!Array.isArray(outcome.items)) return { kind: 'none' };
      // Only workspace symbols carry the parentheses (see withBareName).
      return { kind: 'answered', result: params.kind === 'workspaceSymbols' ? { ...outcome, items: outcome.items.map(withBareName) } : outcome };
    } catch {
      return { kind: 'none' };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      // Tells the editor to stop working on a question nobody waits for any more.
      controller.abort();
    }
  }
}

import type { RepoAccess, RepoBinding } from '../core/deps';
import { DiscussError } from '../core/errors';
import { PolicyError, loadPolicy } from '../access/policy';
import { readInstructionFiles } from '../context/instructions';
import { RepoSummaries } from '../context/repoSummary';
import { SavedCensuses } from '../context/savedCensuses';
import type { RipgrepOption } from '../search/ripgrep';
import { RepoMaps, type RepoMapSource } from '../symbols/repoMap';
import { noteFileChanges, setSymbolFreshness, watchFolders } from '../symbols/symbolIndex';
import { SearchEngine, type SearchOptions } from '../search/searchEngine';
import { IdeQueries, type IdeSource } from '../symbols/ideSource';
import { createToolbox } from './toolbox';
import { settledWithin } from '../settledWithin';

export interface RepoAccessOptions {
  /** ripgrep for find_files, grep_files and the summary: a binary path, `null` for off, absent to look on PATH. */
  ripgrepPath?: RipgrepOption;
  /** Time limit of one find_files or grep_files call (default 15 s). */
  searchTimeoutMs?: number;
  /** Told once which way searches run, for the server's log. */
  log?: (message: string) => void;
  /** The editor's language service, when the client answers `discuss/ideQuery`. */
  ide?: IdeSource;
  /** Where repository maps come from (default: the symbol index, ranked in the symbol thread). */
  repoMaps?: RepoMaps;
  /** Where the file censuses of the summaries are kept across runs (savedCensuses.ts); none kept when absent. */
  stateDirectory?: string;
  /** How long a binding's `prepare` waits for the repository map (default MAP_PREPARE_WAIT_MS). */
  mapWaitMs?: number;
}

/**
 * How long a binding's `prepare` waits for its repository map: a small
 * folder's map is then in the counts made ahead of the first question and
 * built before the rehearsed turn; a large one's (seconds on 20,000 files)
 * holds neither, and joins the prompt when it is ready.
 */
export const MAP_PREPARE_WAIT_MS = 1_000;

/** A REPO_DISCUSS_*_MS setting: whole milliseconds, or undefined for the default (anything else is ignored). */
export function millisecondsSetting(value: string | undefined): number | undefined {
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

/** The search engine's settings the server's environment may change. */
export function searchSettings(env: NodeJS.ProcessEnv): Pick<SearchOptions, 'fileIndex' | 'orderedHeadStartMs'> {
  return {
    // REPO_DISCUSS_FILE_INDEX=off searches every time cold: for comparing the two, and a way out should the index misbehave.
    fileIndex: env.REPO_DISCUSS_FILE_INDEX !== 'off',
    // REPO_DISCUSS_SEARCH_HEAD_START_MS: how long one ordered walk searches before ripgrep, or a split, takes over
    // (default 10 ms; 0 for none): for comparing the paths, and for tests that must reach the one after it.
    orderedHeadStartMs: millisecondsSetting(env.REPO_DISCUSS_SEARCH_HEAD_START_MS),
  };
}

/**
 * Binds a folder to its read-only tools under the project's policy narrowed
 * by the user's settings. A policy that cannot be read refuses the start:
 * running with a policy we misread could widen what the model may see.
 */
export function createRepoAccess(options: RepoAccessOptions = {}): RepoAccess {
  // REPO_DISCUSS_SYMBOL_FRESH_MS: how long a symbol index that last found nothing changed is used without a walk (default 2 s).
  const freshForMs = millisecondsSetting(process.env.REPO_DISCUSS_SYMBOL_FRESH_MS);
  if (freshForMs !== undefined) setSymbolFreshness(freshForMs);
  const search = new SearchEngine({ ripgrepPath: options.ripgrepPath, timeoutMs: options.searchTimeoutMs, log: options.log, ...searchSettings(process.env) });
  const summaries = new RepoSummaries(search, options.stateDirectory ? { saved: new SavedCensuses(options.stateDirectory) } : {});
  const ide = options.ide ? new IdeQueries(options.ide) : undefined;
  const repoMaps = options.repoMaps ?? new RepoMaps(undefined, undefined, options.log);
  const mapWaitMs = options.mapWaitMs ?? MAP_PREPARE_WAIT_MS;
  return {
    async bind(root: string, extraDenyRead: string[]): Promise<RepoBinding> {
      let policy;
      try {
        policy = await loadPolicy(root, { denyRead: extraDenyRead });
      } catch (err) {
        if (err instanceof PolicyError) throw new DiscussError('InvalidParams', err.message);
        throw err;
      }
      const [toolbox, summary, instructions] = await Promise.all([
        createToolbox(root, policy, { search, ide }),
        summaries.summarize(root, policy),
        readInstructionFiles(root, policy),
      ]);
      // The map lists what list_symbols would: a policy that denies that tool gets no map either.
      const mapAllowed = !policy.denyTools.includes('list_symbols');
      // Built once the discussion has opened (prepare), or for a question asked
      // before that, not during the start: its search and symbol threads took
      // about 30 ms of a resume's replay on two CPUs.
      let map: RepoMapSource | undefined;
      const mapSource = (): RepoMapSource => (map ??= repoMaps.source(toolbox.root, policy.denyRead));
      return {
        toolbox,
        summary,
        instructions,
        prepare: async () => {
          const mapBuilt = mapAllowed ? (mapSource(), repoMaps.settled(toolbox.root, policy.denyRead)) : undefined;
          await Promise.all([summaries.refreshSaved(), mapBuilt && settledWithin(mapBuilt.catch(() => undefined), mapWaitMs)]);
        },
        ...(mapAllowed ? { repoMap: (maxTokens: number) => mapSource().text(maxTokens) } : {}),
      };
    },
    prepare(): void {
      // Finding ripgrep may run it twice (version, symlink probe) when no
      // earlier process kept its verdict: done while idle, the first start
      // does not wait for it. No search thread yet: it
      // would hold memory in a server that may never be asked anything.
      void search.ripgrep();
    },
    // The symbol index trusts the reports; the file index keeps checking the disk itself (fileIndex.ts says why).
    watchFolders,
    noteFileChanges,
  };
}

import { ReadBoundary } from '../access/boundary';
import { inertLine, printablePath } from '../../../shared/printablePath';
import type { FileIndex } from './indexer';
import { packInSlices, PackedRecords } from '../search/packedRecords';
import { AS_UPKEEP } from '../nextSlice';
import type { RankedFile } from './mapRanking';
import { currentIndex, FolderIndex, rankForMap } from './symbolIndex';

/**
 * The repository map of the system prompt: the files most of the code uses,
 * ranked (mapRanking.ts, in the symbol thread), each with its top-level
 * definitions, cut to a token budget. Built in the background from the
 * symbol index, so a start never waits for it, and cached per folder; until
 * it is ready, `text` answers undefined and the prompt goes without.
 *
 * Everything shown comes from the index, which the read boundary already
 * narrowed (no secret, policy-denied or linked-out file is in it); names go
 * through printablePath and lines through inertLine, like any tool answer.
 */

export const REPO_MAP_LIMITS = Object.freeze({
  /** How long ranking may work in the symbol thread. */
  rankTimeMs: 5_000,
  /** Files ranked and kept; a 4,000-token map shows far fewer. */
  maxRanked: 400,
  symbolsPerFile: 8,
  signatureChars: 80,
  /** A map older than this is rebuilt (in the background) when a discussion's binding next asks for it (its prepare, or its first read). */
  refreshAfterMs: 60_000,
  maxFolders: 8,
});

export interface RepoMapSource {
  /** The map within `maxTokens` (bytes/4), or undefined while it is not built. */
  text(maxTokens: number): string | undefined;
}

/** Ranks a folder's files from its index; the default runs the symbol index and ranking in the symbol thread. */
export type MapBuilder = (root: string, denyRead: readonly string[]) => Promise<BuiltMap | undefined>;

export interface BuiltMap {
  ranked: RankedFile[];
  files: ReadonlyMap<string, FileIndex>;
  /** Built from an index that stopped at its time limit: rebuilt when next asked for rather than after refreshAfterMs. */
  partial?: boolean;
}

/** Tokens, estimated cheaply: a token covers about four bytes of code. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/** The longest the ranking's inputs are gathered for in one turn of the event loop (mapInputs). */
const MAP_INPUT_SLICE_MS = 4;

/**
 * What the ranking reads of each indexed file (mapRanking.ts MapFileInput,
 * unpacked there by mapInputsFrom), gathered and packed a slice at a time
 * between turns of the event loop. In one piece, an index of 18,000 files
 * held the main thread for 70 to 78 ms gathering them, and posting them as
 * objects to the symbol thread up to 22 ms more, every discussion's stream
 * with it, each time a discussion's map was built again.
 */
export function mapInputs(index: FolderIndex, sliceMs = MAP_INPUT_SLICE_MS): Promise<PackedRecords> {
  // The files as they are now: a walk applied meanwhile changes the index, not the inputs being gathered.
  const files = [...index.files.values()];
  return packInSlices(files, 3, (file: FileIndex) => [file.relativePath, [...new Set(file.symbols.map((symbol) => symbol.name))].join('\n'), file.references ?? ''], sliceMs, AS_UPKEEP);
}

export const buildFromIndex: MapBuilder = async (root, denyRead) => {
  const boundary = await ReadBoundary.create(root, [...denyRead]);
  // Upkeep: a call waiting for the same refresh makes it foreground, the map build alone does not.
  const indexed = await currentIndex(boundary, undefined, { kind: 'background' });
  if (!indexed.ok) return undefined;
  const index = indexed.result;
  const ranked = await rankForMap(await mapInputs(index), REPO_MAP_LIMITS.rankTimeMs, REPO_MAP_LIMITS.maxRanked);
  return ranked.ok ? { ranked: ranked.result.ranked, files: index.files, partial: !index.status.complete } : undefined;
};

/** One top-level definition: its kind, then its line from the name on ("createToolbox(root: string, …"), cut short. */
function definitionLine(kind: string, name: string, text: string): string {
  const at = text.indexOf(name);
  let signature = (at >= 0 ? text.slice(at) : name).replace(/\s*[{:=]\s*$/, '');
  if (signature.length > REPO_MAP_LIMITS.signatureChars) signature = `${signature.slice(0, REPO_MAP_LIMITS.signatureChars)}…`;
  return `  ${kind} ${inertLine(signature)}`;
}

/** The ranked files with their top-level definitions, as many as fit in `maxTokens`. */
export function formatRepoMap(map: BuiltMap, maxTokens: number): string {
  const blocks: string[] = [];
  let tokens = 0;
  for (const { relativePath } of map.ranked) {
    const file = map.files.get(relativePath);
    if (!file) continue;
    const topLevel = file.symbols.filter((symbol) => symbol.container === undefined).sort((a, b) => a.line - b.line);
    const lines = [`${printablePath(relativePath)}:`];
    for (const symbol of topLevel.slice(0, REPO_MAP_LIMITS.symbolsPerFile)) lines.push(definitionLine(symbol.kind, symbol.name, symbol.text));
    if (topLevel.length > REPO_MAP_LIMITS.symbolsPerFile) lines.push(`  … ${topLevel.length - REPO_MAP_LIMITS.symbolsPerFile} more`);
    const block = lines.join('\n');
    const cost = estimateTokens(block) + 1;
    if (tokens + cost > maxTokens) break;
    tokens += cost;
    blocks.push(block);
  }
  return blocks.join('\n');
}

interface CachedMap {
  built?: BuiltMap;
  builtAt: number;
  building?: Promise<void>;
  texts: Map<number, string>;
}

/** The maps of recently bound folders, each built at most once at a time. */
export class RepoMaps {
  private readonly cache = new Map<string, CachedMap>();

  constructor(
    private readonly build: MapBuilder = buildFromIndex,
    private readonly now: () => number = Date.now,
    private readonly log?: (message: string) => void,
  ) {}

  /** The folder's map; starts building it in the background when there is none or it is stale. Never waits. */
  source(root: string, denyRead: readonly string[]): RepoMapSource {
    const key = [root, ...denyRead].join('\0');
    let entry = this.cache.get(key);
    if (entry) this.cache.delete(key); // re-inserted: most recently used last
    entry ??= { builtAt: 0, texts: new Map() };
    this.cache.set(key, entry);
    while (this.cache.size > REPO_MAP_LIMITS.maxFolders) this.cache.delete(this.cache.keys().next().value as string);

    const cached = entry;
    if (!cached.building && (!cached.built || this.now() - cached.builtAt > REPO_MAP_LIMITS.refreshAfterMs)) {
      cached.building = this.build(root, denyRead)
        .then(
          (built) => {
            if (!built) return;
            cached.built = built;
            cached.builtAt = built.partial ? 0 : this.now();
            cached.texts.clear();
          },
          (error: unknown) => this.log?.(`repository map of ${root} not built: ${error instanceof Error ? error.message : String(error)}`),
        )
        .finally(() => {
          cached.building = undefined;
        });
    }
    return {
      text: (maxTokens) => {
        if (!cached.built) return undefined;
        let text = cached.texts.get(maxTokens);
        if (text === undefined) {
          text = formatRepoMap(cached.built, maxTokens);
          cached.texts.set(maxTokens, text);
        }
        return text === '' ? undefined : text;
      },
    };
  }

  /** Resolves once no build of this folder is running (a discussion's preparation, the benchmark). */
  async settled(root: string, denyRead: readonly string[]): Promise<void> {
    await this.cache.get([root, ...denyRead].join('\0'))?.building;
  }
}

import { performance } from 'node:perf_hooks';
import { PackedRecords, unpackRecords } from '../search/packedRecords';

/**
 * Ranks a folder's files for the repository map, the way Aider's repo map
 * does: a graph where an edge A→B means A uses a name B defines, weighted by
 * how often and how telling the name is, ranked by PageRank. Pure and
 * synchronous; runs in the symbol worker (indexer.ts dispatches the job), as
 * a 20,000-file graph takes longer than the main thread may be held.
 */

export interface MapFileInput {
  relativePath: string;
  /** Distinct names the file defines, one per line. */
  defines: string;
  /** "name\tcount" lines: the identifiers the file uses (FileIndex.references). */
  references: string;
}

/** The inputs as repoMap.ts mapInputs packed them: (relative path, defines, references) records. */
export function mapInputsFrom(packed: PackedRecords): MapFileInput[] {
  const inputs: MapFileInput[] = [];
  for (const [relativePath, defines, references] of unpackRecords(packed)) inputs.push({ relativePath, defines, references });
  return inputs;
}

export interface RankedFile {
  relativePath: string;
  rank: number;
}

export const RANKING_LIMITS = Object.freeze({
  damping: 0.85,
  maxIterations: 50,
  /** Converged when the ranks move less than this in total (L1). */
  tolerance: 1e-7,
  /** A name defined in more files than this says nothing about where it comes from (`run`, `value`, `constructor`): no edges. */
  maxDefiners: 25,
});

/** How telling a use of `name` is: Aider's weights, plus a split among the files that define it. */
export function nameWeight(name: string, definers: number): number {
  let weight = 1;
  // Private by convention (Python's _helper, JS's #field, __dunder__): used near home, not across the code.
  if (name.startsWith('_') || name.startsWith('#')) weight *= 0.1;
  // i, x, id, db: too short to tell one definition from another.
  if (name.length < 3) weight *= 0.1;
  // Defined in several files: common words (get, name, init) more than one definition.
  if (definers > 5) weight *= 0.1;
  // Long compound names (createToolbox, read_policy_file) are rarely coincidences.
  if (name.length >= 8 && (/[a-z][A-Z]/.test(name) || /[A-Za-z0-9]_[A-Za-z0-9]/.test(name))) weight *= 10;
  return weight / definers;
}

/**
 * The files in rank order, at most `maxResults`. Past `deadline`
 * (performance.now() time) the graph stops growing and the ranks of what was
 * built are returned: a map of most of the folder beats none.
 */
export function rankFiles(files: readonly MapFileInput[], options: { maxResults: number; deadline?: number; personalization?: ReadonlySet<string> }): RankedFile[] {
  const count = files.length;
  if (count === 0) return [];
  const deadline = options.deadline ?? Number.POSITIVE_INFINITY;

  const definers = new Map<string, number[]>();
  files.forEach((file, index) => {
    if (file.defines === '') return;
    for (const name of file.defines.split('\n')) {
      const list = definers.get(name);
      if (!list) definers.set(name, [index]);
      else if (list[list.length - 1] !== index && list.length <= RANKING_LIMITS.maxDefiners) list.push(index);
    }
  });

  // Outgoing edges per file: target -> weight.
  const edges: Array<Map<number, number>> = files.map(() => new Map());
  for (let source = 0; source < count; source++) {
    if ((source & 255) === 0 && performance.now() > deadline) break;
    const references = files[source].references;
    if (!references) continue;
    const out = edges[source];
    for (const line of references.split('\n')) {
      const tab = line.indexOf('\t');
      const name = tab < 0 ? line : line.slice(0, tab);
      const targets = definers.get(name);
      if (!targets || targets.length > RANKING_LIMITS.maxDefiners) continue;
      const uses = tab < 0 ? 1 : Number(line.slice(tab + 1)) || 1;
      // sqrt: a file calling a helper forty times does not depend on it forty times as much.
      const weight = Math.sqrt(uses) * nameWeight(name, targets.length);
      for (const target of targets) {
        if (target === source) continue; // its own definitions (and the definition sites themselves)
        out.set(target, (out.get(target) ?? 0) + weight);
      }
    }
  }

  // Personalized PageRank by power iteration; a file with no outgoing edge spreads its rank as the personalization does.
  const personal = new Float64Array(count);
  const favoured = options.personalization && options.personalization.size > 0 ? files.map((file) => options.personalization?.has(file.relativePath) ?? false) : undefined;
  const favouredCount = favoured?.filter(Boolean).length ?? 0;
  for (let i = 0; i < count; i++) personal[i] = favoured && favouredCount > 0 ? (favoured[i] ? 1 / favouredCount : 0) : 1 / count;
  const outTotals = edges.map((out) => {
    let total = 0;
    for (const weight of out.values()) total += weight;
    return total;
  });
  const { damping } = RANKING_LIMITS;
  let rank = Float64Array.from(personal);
  for (let iteration = 0; iteration < RANKING_LIMITS.maxIterations; iteration++) {
    const next = new Float64Array(count);
    let dangling = 0;
    for (let source = 0; source < count; source++) {
      if (outTotals[source] === 0) {
        dangling += rank[source];
        continue;
      }
      const share = (damping * rank[source]) / outTotals[source];
      for (const [target, weight] of edges[source]) next[target] += share * weight;
    }
    let change = 0;
    for (let i = 0; i < count; i++) {
      next[i] += ((1 - damping) + damping * dangling) * personal[i];
      change += Math.abs(next[i] - rank[i]);
    }
    rank = next;
    if (change < RANKING_LIMITS.tolerance || performance.now() > deadline) break;
  }

  const order = files.map((_, index) => index);
  order.sort((a, b) => rank[b] - rank[a] || (files[a].relativePath < files[b].relativePath ? -1 : 1));
  return order.slice(0, options.maxResults).map((index) => ({ relativePath: files[index].relativePath, rank: rank[index] }));
}

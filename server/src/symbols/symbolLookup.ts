import * as fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { ReadBoundary } from '../access/boundary';
import { MAX_REQUESTED_PATH_LENGTH } from '../access/boundary';
import type { IdeItem, SymbolSuggestion } from '../../../shared/protocol';
import { quotedPath, quoteAsJson } from '../../../shared/printablePath';
import type { IdeQueries } from './ideSource';
import { stampOf, type FileIndex } from './indexer';
import { languageOf } from './languages';
import { INDEX_LIMITS } from './limits';
import { matchScore } from './matching';
import { BestOf, forEachMatchingName } from './nameSearch';
import { currentIndex, type FolderIndex } from './symbolIndex';
import { inertBoundedLine, pathOfFileUri, splitQualified, SYMBOL_LIMITS } from './symbolShared';

/**
 * Symbols for the user's side of a message: the definition a `symbol`
 * attachment names, and the symbols `@` completion offers. Same grounding as
 * the symbol tools: the editor's language service when the client offers it,
 * else the tree-sitter index (refreshed in its worker; only its answer is
 * looked through here). Every location the editor names is mapped through the
 * read boundary; nothing is read from files here.
 */

export const SYMBOL_SUGGESTION_LIMITS = Object.freeze({
  maxResults: 30,
  /** Characters of the query that count. */
  maxQuery: 100,
  /** A longer name could not be sent back as an attachment: left out, not cut. */
  maxNameChars: SYMBOL_LIMITS.maxNameChars,
  maxContainerChars: 100,
  maxKindChars: 20,
  /** Document symbols looked through for one file (a generated file can hold tens of thousands). */
  maxOutlineNodes: 5000,
});

export interface SymbolDefinition {
  name: string;
  kind: string;
  startLine: number;
  endLine: number;
}

export type DefinitionLookup = { found: true; definition: SymbolDefinition } | { found: false; reason: string };

/** A symbol name as messages show it: quoted, every control or bidi character escaped. */
export function shownSymbol(name: string): string {
  return quoteAsJson(name);
}

/** Editor kinds ("Function", "EnumMember") as the index's words. */
function kindOf(raw: unknown): string {
  const word = typeof raw === 'string' ? raw.toLowerCase() : '';
  const mapped: Record<string, string> = { enummember: 'enum_member', field: 'property', namespace: 'module', package: 'module', typeparameter: 'type' };
  const kind = Object.prototype.hasOwnProperty.call(mapped, word) ? mapped[word] : word;
  return /^[a-z_]{1,20}$/.test(kind) ? kind : 'symbol';
}

/** Some language services name a function with its parameters ("total(items)"). */
function sameName(candidate: unknown, name: string): boolean {
  return typeof candidate === 'string' && (candidate === name || candidate.startsWith(`${name}(`));
}

function validLine(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 0;
}

/** Candidates ranked: nearest the line hint, else top-level first, then the earliest. */
function best<T extends { line: number; startLine: number; endLine: number; nested: boolean }>(candidates: T[], hint?: number): T | undefined {
  const distance = (c: T): number => (hint === undefined ? 0 : hint >= c.startLine && hint <= c.endLine ? 0 : Math.abs(c.line - hint));
  return [...candidates].sort((a, b) => distance(a) - distance(b) || Number(a.nested) - Number(b.nested) || a.startLine - b.startLine)[0];
}

async function definitionFromIde(
  boundary: ReadBoundary,
  ide: IdeQueries,
  file: { relativePath: string; realPath: string },
  name: string,
  qualifier: string | undefined,
  hint: number | undefined,
  signal?: AbortSignal,
): Promise<SymbolDefinition | undefined> {
  const answer = await ide.ask({ kind: 'documentSymbols', uri: pathToFileURL(file.realPath).href }, signal);
  if (answer.kind !== 'answered') return undefined;
  const cache = new Map<string, Promise<string | undefined>>();
  const pending: Array<{ item: IdeItem; parent?: string }> = answer.result.items.map((item) => ({ item }));
  const candidates: Array<{ line: number; startLine: number; endLine: number; nested: boolean; kind: string }> = [];
  for (let seen = 0; pending.length > 0 && seen < SYMBOL_SUGGESTION_LIMITS.maxOutlineNodes; seen++) {
    const { item, parent } = pending.shift() as { item: IdeItem; parent?: string };
    if (typeof item !== 'object' || item === null) continue;
    if (Array.isArray(item.children)) for (const child of item.children) pending.push({ item: child, parent: typeof item.name === 'string' ? item.name : undefined });
    if (!sameName(item.name, name)) continue;
    const container = typeof item.container === 'string' ? item.container : parent;
    if (qualifier !== undefined && container !== qualifier) continue;
    const start = item.range?.start?.line;
    const end = item.range?.end?.line;
    if (!validLine(start)) continue;
    // A location in another file (a re-export the editor lists) is not this file's definition.
    if ((await pathOfFileUri(boundary, cache, item.uri)) !== file.relativePath) continue;
    const nameLine = validLine(item.selectionRange?.start?.line) ? item.selectionRange.start.line : start;
    candidates.push({ line: nameLine + 1, startLine: start + 1, endLine: (validLine(end) && end >= start ? end : start) + 1, nested: container !== undefined, kind: kindOf(item.kind) });
  }
  const found = best(candidates, hint);
  return found ? { name, kind: found.kind, startLine: found.startLine, endLine: found.endLine } : undefined;
}

async function stampNow(realPath: string): Promise<string | undefined> {
  try {
    return stampOf(await fs.promises.stat(realPath));
  } catch {
    return undefined;
  }
}

function indexedFile(index: FolderIndex, file: { relativePath: string; realPath: string }): FileIndex | undefined {
  return index.files.get(file.relativePath) ?? [...index.files.values()].find((candidate) => candidate.realPath === file.realPath);
}

/**
 * Where `requested` ("total", "Cart.total") is defined in one file the
 * boundary already allowed, or why it was not found. Never the whole file:
 * a name that is not defined there is a refusal, not a wider read.
 */
export async function definitionInFile(
  boundary: ReadBoundary,
  file: { relativePath: string; realPath: string; size: number },
  requested: string,
  options: { ide?: IdeQueries; hint?: number; signal?: AbortSignal } = {},
): Promise<DefinitionLookup> {
  const { name, qualifier } = splitQualified(requested);
  const where = quotedPath(file.relativePath);
  const notFound = (why: string): DefinitionLookup => ({ found: false, reason: `symbol ${shownSymbol(requested)} not found in ${where}; ${why}` });
  if (options.ide) {
    try {
      const fromIde = await definitionFromIde(boundary, options.ide, file, name, qualifier, options.hint, options.signal);
      if (fromIde) return { found: true, definition: fromIde };
    } catch {
      // An unusable editor answer: the index still answers.
    }
  }
  if (!languageOf(file.relativePath)) return notFound('the symbol index does not parse this language. Attach the file or a range of it instead.');
  if (file.size > INDEX_LIMITS.maxFileBytes) return notFound('files over 1 MiB are not indexed. Attach a range of it instead.');
  let outcome = await currentIndex(boundary, options.signal);
  // The index trusts itself for a moment after a refresh: a file saved since
  // would have its new lines read under the old definition's range.
  if (outcome.ok && indexedFile(outcome.result, file)?.stamp !== (await stampNow(file.realPath))) outcome = await currentIndex(boundary, options.signal, { refresh: true });
  if (!outcome.ok) return notFound(`the symbol index could not answer (${outcome.message})`);
  const index = outcome.result;
  const indexed = indexedFile(index, file);
  if (!indexed) return notFound(`it is not in the symbol index (gitignored files, node_modules/ and .git/ are not indexed${index.status.complete ? '' : ', and the index is not complete yet'}).`);
  const candidates = indexed.symbols
    .filter((symbol) => symbol.name === name && (qualifier === undefined || symbol.container === qualifier))
    .map((symbol) => ({ ...symbol, nested: symbol.container !== undefined }));
  const found = best(candidates, options.hint);
  if (!found) return notFound('list_symbols shows what it defines, and find_symbol where that name is defined.');
  return { found: true, definition: { name, kind: found.kind, startLine: found.startLine, endLine: found.endLine } };
}

// ------------------------------------------------------------ completion

/** A suggestion whose name and path can be sent back as they are; undefined when either is too long. */
function suggestion(name: unknown, kind: unknown, container: unknown, relativePath: string, line: number): SymbolSuggestion | undefined {
  if (typeof name !== 'string' || name === '' || name.length > SYMBOL_SUGGESTION_LIMITS.maxNameChars || relativePath.length > MAX_REQUESTED_PATH_LENGTH) return undefined;
  const item: SymbolSuggestion = { name, kind: inertBoundedLine(typeof kind === 'string' ? kind : 'symbol', SYMBOL_SUGGESTION_LIMITS.maxKindChars), path: relativePath, line };
  if (typeof container === 'string' && container !== '') item.container = inertBoundedLine(container, SYMBOL_SUGGESTION_LIMITS.maxContainerChars);
  return item;
}

async function suggestionsFromIde(boundary: ReadBoundary, ide: IdeQueries, query: string, signal?: AbortSignal): Promise<SymbolSuggestion[] | undefined> {
  const answer = await ide.ask({ kind: 'workspaceSymbols', query }, signal);
  if (answer.kind !== 'answered' || answer.result.items.length === 0) return undefined;
  const cache = new Map<string, Promise<string | undefined>>();
  const scored: Array<{ item: SymbolSuggestion; score: number }> = [];
  // The editor may answer thousands: only the best-scoring few are mapped through the boundary.
  const ranked = answer.result.items
    // A name too long to suggest is not scored either: the editor's names have no bound of their own.
    .filter((item) => typeof item === 'object' && item !== null && typeof item.name === 'string' && item.name.length <= SYMBOL_SUGGESTION_LIMITS.maxNameChars)
    .map((item) => ({ item, score: matchScore(query, item.name as string) ?? -1 }))
    .filter((entry) => entry.score >= 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, SYMBOL_SUGGESTION_LIMITS.maxResults * 4);
  for (const { item, score } of ranked) {
    if (signal?.aborted || scored.length >= SYMBOL_SUGGESTION_LIMITS.maxResults) break;
    if (!validLine(item.range?.start?.line)) continue;
    const relativePath = await pathOfFileUri(boundary, cache, item.uri);
    if (relativePath === undefined) continue;
    const made = suggestion(item.name, kindOf(item.kind), item.container, relativePath, item.range.start.line + 1);
    if (made) scored.push({ item: made, score });
  }
  return scored.length > 0 ? scored.map((entry) => entry.item) : undefined;
}

async function suggestionsFromIndex(index: FolderIndex, query: string, signal?: AbortSignal): Promise<SymbolSuggestion[]> {
  const matches = new BestOf<{ item: SymbolSuggestion; score: number }>(
    SYMBOL_SUGGESTION_LIMITS.maxResults,
    (a, b) => b.score - a.score || a.item.name.length - b.item.name.length || (a.item.path < b.item.path ? -1 : a.item.path > b.item.path ? 1 : a.item.line - b.item.line),
  );
  const finished = await forEachMatchingName(
    index.namesWithLowerCase(),
    query,
    (name, score) => {
      for (const ref of index.byName.get(name) ?? []) {
        const made = suggestion(name, ref.symbol.kind, ref.symbol.container, ref.file.relativePath, ref.symbol.line);
        if (made) matches.offer({ item: made, score });
      }
    },
    signal,
  );
  return finished && !signal?.aborted ? matches.best().map((entry) => entry.item) : [];
}

/**
 * The symbols `@` completion offers for `rawQuery`, best first, bounded in
 * count and per field. Empty for an empty query (every symbol of the folder
 * is no suggestion), when cancelled, and when nothing grounds an answer.
 */
export async function symbolSuggestions(boundary: ReadBoundary, rawQuery: string, options: { ide?: IdeQueries; signal?: AbortSignal } = {}): Promise<SymbolSuggestion[]> {
  const query = rawQuery.trim().slice(0, SYMBOL_SUGGESTION_LIMITS.maxQuery);
  if (query === '' || options.signal?.aborted) return [];
  const { name } = splitQualified(query);
  if (options.ide) {
    try {
      const fromIde = await suggestionsFromIde(boundary, options.ide, name, options.signal);
      if (fromIde) return fromIde;
    } catch {
      // Fall through to the index.
    }
  }
  const outcome = await currentIndex(boundary, options.signal);
  if (!outcome.ok || options.signal?.aborted) return [];
  return suggestionsFromIndex(outcome.result, name, options.signal);
}

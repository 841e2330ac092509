import { pathToFileURL } from 'node:url';
import type { ReadBoundary } from '../access/boundary';
import type { ToolOutcome } from '../read/types';
import type { IdeItem, IdePosition, IdeQueryRequest } from '../../../shared/protocol';
import { escapeLineBreaks, printablePath, quoteAsJson } from '../../../shared/printablePath';
import { withQuotedNamesNote } from '../read/answers';
import type { IdeQueries } from './ideSource';
import { KIND_ALIASES, SymbolKind } from './languages';
import { matchScore } from './matching';
import { Args, inertBoundedLine, isOutcome, pathOfFileUri, loadIndex, ok, readFileLines, resultLine, splitQualified, stringArgument, SYMBOL_LIMITS, validName } from './symbolShared';

/**
 * The symbol tools answered from the editor's own language providers
 * (`discuss/ideQuery`), when the client offers them. The editor returns
 * locations only: every one goes through the read boundary (outside the
 * folder, secret, policy-denied or not a file: left out and counted) and the
 * cited lines are read here, through the boundary, never taken from the
 * editor. Each function returns undefined when the editor has no answer, so
 * the tool answers from the tree-sitter index instead; 'timedOut' likewise,
 * with a note.
 */

export type IdeOutcome = ToolOutcome | 'timedOut' | undefined;

const FROM_IDE = "from the editor's language service";

/** Editor symbol kinds (vscode.SymbolKind names) as the tools' kind words. */
// A Map, not an object: a kind such as "__proto__" must not find Object.prototype's members.
const IDE_KINDS: ReadonlyMap<string, SymbolKind> = new Map<string, SymbolKind>([
  ['file', 'module'], ['module', 'module'], ['namespace', 'module'], ['package', 'module'], ['class', 'class'], ['method', 'method'],
  ['property', 'property'], ['field', 'property'], ['constructor', 'constructor'], ['enum', 'enum'], ['interface', 'interface'],
  ['function', 'function'], ['variable', 'variable'], ['constant', 'constant'], ['enummember', 'enum_member'], ['struct', 'struct'],
  ['typeparameter', 'type'], ['key', 'property'], ['object', 'variable'],
]);

function kindWord(item: IdeItem): string {
  const raw = typeof item.kind === 'string' ? item.kind.toLowerCase() : '';
  return IDE_KINDS.get(raw) ?? (raw === '' ? 'symbol' : inertBoundedLine(raw, 40));
}

/** One editor location inside the folder, with 1-based lines. */
interface Cited {
  relativePath: string;
  line: number;
  character: number;
  endLine: number;
  item: IdeItem;
}

function validPosition(position: unknown): position is IdePosition {
  const p = position as IdePosition | undefined;
  return typeof p === 'object' && p !== null && Number.isInteger(p.line) && p.line >= 0 && Number.isInteger(p.character) && p.character >= 0;
}

/** Maps the editor's locations through the boundary; what is not a readable file in the folder is counted, never shown. */
class Citations {
  private readonly resolved = new Map<string, Promise<string | undefined>>();
  private readonly lines = new Map<string, Promise<string[] | undefined>>();
  leftOut = 0;

  constructor(private readonly boundary: ReadBoundary) {}

  async cite(items: readonly IdeItem[], limit = 5000): Promise<Cited[]> {
    const out: Cited[] = [];
    for (const item of items.slice(0, limit)) {
      const relativePath = typeof item?.uri === 'string' && validPosition(item.range?.start) ? await pathOfFileUri(this.boundary, this.resolved, item.uri) : undefined;
      if (relativePath === undefined) {
        this.leftOut += 1;
        continue;
      }
      const end = validPosition(item.range.end) ? item.range.end.line : item.range.start.line;
      out.push({ relativePath, line: item.range.start.line + 1, character: item.range.start.character, endLine: Math.max(end, item.range.start.line) + 1, item });
    }
    return out;
  }


  /** Lines [start, end] (1-based) of a cited file, read through the boundary; each file is read once per call. */
  async text(relativePath: string, start: number, end = start): Promise<string[]> {
    let file = this.lines.get(relativePath);
    if (!file) {
      file = readFileLines(this.boundary, relativePath);
      this.lines.set(relativePath, file);
    }
    return ((await file) ?? []).slice(start - 1, end).map(escapeLineBreaks);
  }

  note(): string[] {
    return this.leftOut > 0
      ? [`[${this.leftOut} location(s) the editor named were left out: outside the folder or not readable (secret, policy-denied, or not a file in the folder).]`]
      : [];
  }
}

function byPosition(a: Cited, b: Cited): number {
  return a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : a.line - b.line || a.character - b.character;
}

/** A file argument as the editor's URI, or undefined (the tree-sitter tool then gives the refusal). */
async function fileUri(boundary: ReadBoundary, requested: string): Promise<{ relativePath: string; uri: string } | undefined> {
  const resolved = await boundary.resolve(requested);
  if (!resolved.ok || resolved.kind !== 'file') return undefined;
  return { relativePath: resolved.relativePath, uri: pathToFileURL(resolved.realPath).href };
}

/**
 * Where `name` stands on a 1-based line, as the editor's 0-based position:
 * the model names a symbol and a line, the editor wants a column.
 */
export async function positionOf(boundary: ReadBoundary, relativePath: string, line: number, name: string): Promise<IdePosition | undefined> {
  const text = (await readFileLines(boundary, relativePath))?.[line - 1];
  if (text === undefined) return undefined;
  const match = new RegExp(`(?<![\\w$])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w$])`).exec(text);
  return match ? { line: line - 1, character: match.index } : undefined;
}

async function ask(ide: IdeQueries, params: IdeQueryRequest.Params, signal?: AbortSignal): Promise<IdeItem[] | 'timedOut' | undefined> {
  const answer = await ide.ask(params, signal);
  if (answer.kind === 'timedOut') return 'timedOut';
  if (answer.kind === 'none' || answer.result.items.length === 0) return undefined;
  return answer.result.items;
}

// ------------------------------------------------------------ find_symbol

export async function findSymbolFromIde(boundary: ReadBoundary, ide: IdeQueries, args: Args, signal?: AbortSignal): Promise<IdeOutcome> {
  const query = stringArgument(args, 'query')?.trim();
  if (validName(query, 'query')) return undefined;
  const kindArgument = stringArgument(args, 'kind')?.trim().toLowerCase().replace(/[\s-]/g, '_');
  const kinds = kindArgument ? KIND_ALIASES.get(kindArgument) : undefined;
  if (kindArgument && !kinds) return undefined;
  const items = await ask(ide, { kind: 'workspaceSymbols', query }, signal);
  if (items === undefined || items === 'timedOut') return items;
  const citations = new Citations(boundary);
  const cited = (await citations.cite(items)).filter((c) => !kinds || kinds.includes(kindWord(c.item) as SymbolKind));
  if (cited.length === 0 && citations.leftOut === 0) return undefined;
  // Scored once each, not in the comparator: a sort of the editor's thousands calls it about 2 n log n times, and a score reads the whole name.
  const scores = new Map(cited.map((c) => [c, matchScore(query as string, String(c.item.name ?? '')) ?? -1]));
  const score = (c: Cited): number => scores.get(c) as number;
  cited.sort((a, b) => score(b) - score(a) || byPosition(a, b));
  const shown = cited.slice(0, SYMBOL_LIMITS.findMaxResults);
  const filter = kindArgument ? ` of kind ${kindArgument}` : '';
  const lines: string[] = [];
  for (const c of shown) {
    const container = c.item.container ? `${inertBoundedLine(c.item.container, 100)}.` : '';
    const [text] = await citations.text(c.relativePath, c.line);
    lines.push(resultLine(c.relativePath, c.line, `${kindWord(c.item)} ${container}${inertBoundedLine(c.item.name, 200)} — ${(text ?? '').trim()}`));
  }
  const notes = citations.note();
  if (cited.length > shown.length) notes.unshift(`[Showing the best ${shown.length}; ${cited.length - shown.length} more left out. Use a longer query or pass kind.]`);
  return ok([`${cited.length} symbol(s)${filter} match ${quoteAsJson(query as string)} (${FROM_IDE}):`, ...lines, ...withQuotedNamesNote(lines, notes)].join('\n'));
}

// ------------------------------------------------------- go_to_definition

export async function goToDefinitionFromIde(boundary: ReadBoundary, ide: IdeQueries, args: Args, signal?: AbortSignal): Promise<IdeOutcome> {
  const requested = stringArgument(args, 'symbol');
  if (validName(requested, 'symbol')) return undefined;
  const { name, qualifier } = splitQualified(requested as string);
  const requestedPath = stringArgument(args, 'path');
  const line = typeof args.line === 'number' ? args.line : undefined;
  let items: IdeItem[] | 'timedOut' | undefined;
  let fromFile: string | undefined;
  if (requestedPath) {
    const file = await fileUri(boundary, requestedPath);
    if (!file) return undefined;
    fromFile = file.relativePath;
    if (line !== undefined) {
      const position = await positionOf(boundary, file.relativePath, line, name);
      // Not on that line: the tree-sitter answer says so and goes by name.
      if (!position) return undefined;
      items = await ask(ide, { kind: 'definition', uri: file.uri, position }, signal);
    }
  }
  if (items === undefined && line === undefined) {
    // No use to start from: the editor's workspace symbols with exactly this name are its definitions.
    const found = await ask(ide, { kind: 'workspaceSymbols', query: name }, signal);
    if (found === 'timedOut') return found;
    const exact = (found ?? []).filter((item) => item.name === name);
    const qualified = qualifier === undefined ? [] : exact.filter((item) => item.container === qualifier);
    items = exact.length === 0 ? undefined : qualified.length > 0 ? qualified : exact;
  }
  if (items === undefined || items === 'timedOut') return items;

  const citations = new Citations(boundary);
  const cited = await citations.cite(items);
  const unique = [...new Map(cited.map((c) => [`${c.relativePath}:${c.line}:${c.character}`, c])).values()];
  unique.sort((a, b) => Number(b.relativePath === fromFile) - Number(a.relativePath === fromFile) || byPosition(a, b));
  if (unique.length === 0) {
    return ok([`The editor's language service places the definition of ${quoteAsJson(name)} outside what can be read here.`, ...citations.note()].join('\n'));
  }
  const shown = unique.slice(0, SYMBOL_LIMITS.definitionMaxResults);
  const blocks: string[] = [];
  for (const c of shown) {
    const what = c.item.name !== undefined ? ` ${c.item.kind !== undefined ? `${kindWord(c.item)} ` : ''}${c.item.container ? `${inertBoundedLine(c.item.container, 100)}.` : ''}${inertBoundedLine(c.item.name, 200)}` : '';
    blocks.push(`${printablePath(c.relativePath)}:${c.line}-${c.endLine}:${what}`);
    const last = Math.min(c.endLine, c.line + SYMBOL_LIMITS.definitionSignatureLines - 1);
    (await citations.text(c.relativePath, c.line, last)).forEach((text, offset) => blocks.push(`  ${c.line + offset}: ${text}`));
  }
  const notes = citations.note();
  if (unique.length > shown.length) notes.push(`[${unique.length - shown.length} more definition(s) left out. Pass path and line of the use to narrow it down.]`);
  return ok([`${unique.length} definition(s) of ${quoteAsJson(name)} (${FROM_IDE}):`, ...blocks, ...withQuotedNamesNote(blocks, notes)].join('\n'));
}

// -------------------------------------------------------- find_references

/** Where to ask for references from: the use the model named, or the index's definitions of the name (a few). */
async function referenceStarts(boundary: ReadBoundary, args: Args, name: string, signal?: AbortSignal): Promise<Array<{ uri: string; position: IdePosition; relativePath: string }> | undefined> {
  const requestedPath = stringArgument(args, 'path');
  const line = typeof args.line === 'number' ? args.line : undefined;
  if (requestedPath && line !== undefined) {
    const file = await fileUri(boundary, requestedPath);
    const position = file && (await positionOf(boundary, file.relativePath, line, name));
    return file && position ? [{ uri: file.uri, position, relativePath: file.relativePath }] : undefined;
  }
  const index = await loadIndex(boundary, signal);
  if (isOutcome(index)) return undefined;
  let definitions = index.byName.get(name) ?? [];
  if (requestedPath) {
    const file = await fileUri(boundary, requestedPath);
    if (!file) return undefined;
    const local = definitions.filter((ref) => ref.file.relativePath === file.relativePath);
    if (local.length > 0) definitions = local;
  }
  const starts = [];
  for (const ref of definitions.slice(0, REFERENCE_STARTS_MAX)) {
    const file = await fileUri(boundary, ref.file.relativePath);
    const position = file && (await positionOf(boundary, ref.file.relativePath, ref.symbol.line, name));
    if (file && position) starts.push({ uri: file.uri, position, relativePath: file.relativePath });
  }
  return starts.length > 0 ? starts : undefined;
}

/** A name defined in more places than this is answered by name: so many questions would not fit the time limit. */
const REFERENCE_STARTS_MAX = 5;

export async function findReferencesFromIde(boundary: ReadBoundary, ide: IdeQueries, args: Args, signal?: AbortSignal): Promise<IdeOutcome> {
  const requested = stringArgument(args, 'symbol');
  if (validName(requested, 'symbol')) return undefined;
  const { name } = splitQualified(requested as string);
  const includeDeclaration = args.include_declaration !== false;
  const starts = await referenceStarts(boundary, args, name, signal);
  if (!starts) return undefined;
  const answers = await Promise.all(
    starts.flatMap((start) => [
      ask(ide, { kind: 'references', uri: start.uri, position: start.position, includeDeclaration: true }, signal),
      ask(ide, { kind: 'definition', uri: start.uri, position: start.position }, signal),
    ]),
  );
  if (answers.some((answer) => answer === 'timedOut')) return 'timedOut';
  const references = answers.filter((_, i) => i % 2 === 0).flatMap((answer) => (Array.isArray(answer) ? answer : []));
  const definitions = answers.filter((_, i) => i % 2 === 1).flatMap((answer) => (Array.isArray(answer) ? answer : []));
  if (references.length === 0) return undefined;

  const citations = new Citations(boundary);
  const cited = await citations.cite(references);
  const definitionCitations = new Citations(boundary);
  const declarationLines = new Set<string>();
  for (const d of await definitionCitations.cite(definitions)) {
    const nameStart = validPosition(d.item.selectionRange?.start) ? d.item.selectionRange.start.line + 1 : d.line;
    declarationLines.add(`${d.relativePath}:${nameStart}`);
  }
  // One entry per line, as the tree-sitter answer has it.
  const perLine = new Map<string, Cited>();
  for (const c of cited.sort(byPosition)) if (!perLine.has(`${c.relativePath}:${c.line}`)) perLine.set(`${c.relativePath}:${c.line}`, c);
  const kept = [...perLine.entries()].filter(([key]) => includeDeclaration || !declarationLines.has(key)).map(([, c]) => c);
  const startFile = starts[0].relativePath;
  kept.sort((a, b) => Number(b.relativePath === startFile) - Number(a.relativePath === startFile) || byPosition(a, b));
  const shown = kept.slice(0, SYMBOL_LIMITS.referencesMax);
  const notes = citations.note();
  if (shown.length === 0) return ok([`No references to ${quoteAsJson(name)} found (${FROM_IDE}).`, ...notes].join('\n'));
  const byFile = new Map<string, string[]>();
  for (const c of shown) {
    const [text] = await citations.text(c.relativePath, c.line);
    const mark = declarationLines.has(`${c.relativePath}:${c.line}`) ? '  (definition)' : '';
    const group = byFile.get(c.relativePath) ?? [];
    group.push(resultLine(c.relativePath, c.line, `${(text ?? '').trim()}${mark}`));
    byFile.set(c.relativePath, group);
  }
  const out = [`${kept.length} reference(s) to ${quoteAsJson(name)} in ${byFile.size}${shown.length < kept.length ? '+' : ''} file(s) (${FROM_IDE}; one entry per line):`];
  for (const [relativePath, group] of byFile) out.push('', `${printablePath(relativePath)} (${group.length})`, ...group);
  if (kept.length > shown.length) notes.unshift(`[Showing ${shown.length} of ${kept.length}; ${kept.length - shown.length} more left out. Use grep_files with a glob to look further.]`);
  const allNotes = withQuotedNamesNote(out, notes);
  return ok([...out, ...(allNotes.length > 0 ? ['', ...allNotes] : [])].join('\n'));
}

// ----------------------------------------------------------- list_symbols

const OUTLINE_NODES_MAX = 5000;

export async function listSymbolsFromIde(boundary: ReadBoundary, ide: IdeQueries, args: Args, signal?: AbortSignal): Promise<IdeOutcome> {
  const requested = stringArgument(args, 'path');
  if (!requested) return undefined;
  const file = await fileUri(boundary, requested);
  if (!file) return undefined;
  const items = await ask(ide, { kind: 'documentSymbols', uri: file.uri }, signal);
  if (items === undefined || items === 'timedOut') return items;
  // Document symbols nest by children, workspace-style ones do not: flattened, both nest by their ranges below.
  const flat: IdeItem[] = [];
  const pending = [...items];
  while (pending.length > 0 && flat.length < OUTLINE_NODES_MAX) {
    const item = pending.shift() as IdeItem;
    flat.push(item);
    if (Array.isArray(item.children)) pending.push(...item.children);
  }
  const citations = new Citations(boundary);
  const symbols = (await citations.cite(flat)).filter((c) => c.relativePath === file.relativePath);
  if (symbols.length === 0) return undefined;
  symbols.sort((a, b) => a.line - b.line || b.endLine - a.endLine);
  const open: Cited[] = [];
  const lines = [`Outline of ${printablePath(file.relativePath)} (${symbols.length} symbol(s); ${FROM_IDE}; "start-end" are its lines; read one with read_file start_line/end_line):`];
  for (const symbol of symbols.slice(0, SYMBOL_LIMITS.outlineMax)) {
    while (open.length > 0 && !(symbol.line >= open[open.length - 1].line && symbol.endLine <= open[open.length - 1].endLine)) open.pop();
    const nameLine = validPosition(symbol.item.selectionRange?.start) ? symbol.item.selectionRange.start.line + 1 : symbol.line;
    const [text] = await citations.text(file.relativePath, nameLine);
    lines.push(`${'  '.repeat(open.length)}${kindWord(symbol.item)} ${inertBoundedLine(symbol.item.name, 200)} ${symbol.line}-${symbol.endLine}: ${(text ?? '').trim()}`);
    open.push(symbol);
  }
  if (symbols.length > SYMBOL_LIMITS.outlineMax) lines.push(`[${symbols.length - SYMBOL_LIMITS.outlineMax} more symbol(s) left out.]`);
  return ok(lines.join('\n'));
}

// -------------------------------------------------------- get_diagnostics

const SEVERITIES = new Set(['error', 'warning', 'info', 'hint']);

export async function getDiagnosticsFromIde(boundary: ReadBoundary, ide: IdeQueries, args: Args, signal?: AbortSignal): Promise<IdeOutcome> {
  const requested = stringArgument(args, 'path');
  const resolved = await boundary.resolve(requested || '.');
  if (!resolved.ok) return undefined;
  const isFile = resolved.kind === 'file';
  const items = await ask(ide, isFile ? { kind: 'diagnostics', uri: pathToFileURL(resolved.realPath).href } : { kind: 'diagnostics' }, signal);
  if (items === undefined || items === 'timedOut') return items;
  const citations = new Citations(boundary);
  const prefix = resolved.relativePath === '.' ? '' : `${resolved.relativePath}/`;
  const inScope = (await citations.cite(items)).filter((c) => (isFile ? c.relativePath === resolved.relativePath : c.relativePath.startsWith(prefix))).sort(byPosition);
  if (inScope.length === 0) return undefined;
  const where = resolved.relativePath === '.' ? 'the folder' : printablePath(resolved.relativePath);
  const lines: string[] = [];
  for (const c of inScope.slice(0, SYMBOL_LIMITS.diagnosticsMax)) {
    const severity = SEVERITIES.has(c.item.severity as string) ? (c.item.severity as string) : 'error';
    const source = c.item.source ? ` [${inertBoundedLine(c.item.source, 60)}]` : '';
    lines.push(resultLine(c.relativePath, c.line, `${severity}: ${inertBoundedLine(c.item.message, 500)}${source}`));
  }
  const files = new Set(inScope.map((c) => c.relativePath)).size;
  const notes = citations.note();
  if (inScope.length > lines.length) notes.unshift(`[Showing ${lines.length} of ${inScope.length}; ${inScope.length - lines.length} more left out. Pass path to narrow it down.]`);
  return ok(
    [
      `${inScope.length} problem(s) in ${files} file(s) of ${where} (${FROM_IDE}: what it has checked, usually the files open in the editor):`,
      ...lines,
      ...withQuotedNamesNote(lines, notes),
    ].join('\n'),
  );
}

/** Asks the editor first; falls back to the tree-sitter answer when it has none, with a note when it did not answer in time. */
export async function ideFirst(
  ide: IdeQueries | undefined,
  fromIde: (ide: IdeQueries) => Promise<IdeOutcome>,
  byName: () => Promise<ToolOutcome>,
  signal?: AbortSignal,
): Promise<ToolOutcome> {
  if (!ide) return byName();
  let outcome: IdeOutcome;
  try {
    outcome = await fromIde(ide);
  } catch {
    outcome = undefined; // the editor's answer was unusable: the index still answers
  }
  if (signal?.aborted) return { ok: false, output: 'Cancelled.' };
  if (outcome !== undefined && outcome !== 'timedOut') return outcome;
  const fallback = await byName();
  return outcome === 'timedOut' ? { ok: fallback.ok, output: `${ide.timeoutNote}\n${fallback.output}` } : fallback;
}

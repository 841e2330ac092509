import * as path from 'node:path';
import { escapeLineBreaks, inertLine, printablePath, quoteAsJson, quotedPath } from '../../../shared/printablePath';
import type { ReadBoundary } from '../access/boundary';
import { withQuotedNamesNote } from '../read/answers';
import type { ReadToolDefinition } from '../read/toolbox';
import type { ToolOutcome } from '../read/types';
import type { FileIndex, IndexedSymbol } from './indexer';
import { INDEX_LIMITS } from './limits';
import { KIND_ALIASES, languageOf, SymbolKind } from './languages';
import { BestOf, forEachMatchingName } from './nameSearch';
import { findReferencesFromIde, findSymbolFromIde, getDiagnosticsFromIde, goToDefinitionFromIde, ideFirst, listSymbolsFromIde } from './ideAnswers';
import { findReferences as searchReferences, FolderIndex, statusNotes, SymbolRef } from './symbolIndex';
import { Args, failed, isOutcome, loadIndex, ok, readLines, resultLine, splitQualified, stringArgument, SYMBOL_LIMITS, validName } from './symbolShared';

/**
 * The symbol tools, answered from the tree-sitter index (symbolIndex.ts):
 * find_symbol, go_to_definition, find_references, list_symbols and
 * get_diagnostics. In an editor that answers `discuss/ideQuery`, each asks
 * the editor's language service first (ideAnswers.ts). Every path comes from the index (built by a walk through
 * the read boundary) or from boundary.resolve; nothing else is read.
 */

export { SYMBOL_LIMITS };


const BY_NAME_NOTE = 'by name, not type-checked';
const DIAGNOSTICS_SCOPE_NOTE =
  'Only syntax errors are checked here (tree-sitter). Type errors and lint warnings need the editor\'s language support (a language extension or language server), which this tool does not have.';

/** Kinds listed before others when scores tie: the things people mean when they name a symbol. */
const KIND_RANK: Readonly<Record<SymbolKind, number>> = {
  class: 0, interface: 0, struct: 0, enum: 1, type: 1, function: 1, module: 2, method: 2, constructor: 3, constant: 3, macro: 3, variable: 4, property: 4, enum_member: 5,
};

/** A name is repository input (the grammars take a bidi override inside an identifier): shown inert, as the repository map shows it. */
function describe(symbol: IndexedSymbol): string {
  return `${symbol.kind} ${symbol.container ? `${inertLine(symbol.container)}.` : ''}${inertLine(symbol.name)}`;
}

function walkOrder(index: FolderIndex): readonly string[] {
  return index.filesInWalkOrder();
}

/** Resolves a path argument to a file in the index, or the model-facing refusal. */
async function indexedFile(boundary: ReadBoundary, index: FolderIndex, requested: string): Promise<FileIndex | ToolOutcome> {
  const resolved = await boundary.resolve(requested);
  if (!resolved.ok) return failed(resolved.message);
  if (resolved.kind !== 'file') return failed(`${quotedPath(requested)} is not a file. Pass a source file's path (list_dir or find_files show what is there).`);
  const file = index.files.get(resolved.relativePath) ?? [...index.files.values()].find((candidate) => candidate.realPath === resolved.realPath);
  if (file) return file;
  if (!languageOf(resolved.relativePath)) return failed(`${quotedPath(requested)} is not in a language the symbol index parses. Use read_file or grep_files.`);
  if (resolved.size > INDEX_LIMITS.maxFileBytes) return failed(`${quotedPath(requested)} is larger than 1 MiB, so it is not indexed. Use grep_files or read_file with start_line/end_line.`);
  return failed(`${quotedPath(requested)} is not in the symbol index (gitignored files, node_modules/ and .git/ are not indexed${index.status.complete ? '' : ', and the index is not complete yet'}). Use read_file or grep_files.`);
}


// ------------------------------------------------------------ find_symbol

export async function findSymbol(boundary: ReadBoundary, args: Args, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    const query = stringArgument(args, 'query')?.trim();
    const problem = validName(query, 'query');
    if (problem) return failed(problem);
    const kindWord = stringArgument(args, 'kind')?.trim().toLowerCase().replace(/[\s-]/g, '_');
    let kinds: ReadonlySet<SymbolKind> | undefined;
    if (kindWord) {
      const mapped = KIND_ALIASES.get(kindWord);
      if (!mapped) return failed(`Unknown kind ${quoteAsJson(kindWord)}. Use one of: ${[...KIND_ALIASES.keys()].join(', ')}.`);
      kinds = new Set(mapped);
    }
    const index = await loadIndex(boundary, signal);
    if (isOutcome(index)) return index;

    const matches = new BestOf<{ ref: SymbolRef; score: number }>(
      SYMBOL_LIMITS.findMaxResults,
      (a, b) =>
        b.score - a.score ||
        a.ref.symbol.name.length - b.ref.symbol.name.length ||
        KIND_RANK[a.ref.symbol.kind] - KIND_RANK[b.ref.symbol.kind] ||
        (a.ref.file.relativePath < b.ref.file.relativePath ? -1 : a.ref.file.relativePath > b.ref.file.relativePath ? 1 : 0) ||
        a.ref.symbol.line - b.ref.symbol.line,
    );
    const finished = await forEachMatchingName(
      index.namesWithLowerCase(),
      query as string,
      (name, score) => {
        for (const ref of index.byName.get(name) ?? []) if (!kinds || kinds.has(ref.symbol.kind)) matches.offer({ ref, score });
      },
      signal,
    );
    if (!finished) return failed('The find_symbol call was cancelled.');
    const notes = statusNotes(index.status);
    const filter = kindWord ? ` of kind ${kindWord}` : '';
    if (matches.count === 0) return ok([`No symbols${filter} match ${quoteAsJson(query as string)} (${index.files.size} files indexed; gitignored files, node_modules/ and .git/ are not indexed).`, ...notes].join('\n'));
    const shown = matches.best();
    const lines = shown.map(({ ref }) => resultLine(ref.file.relativePath, ref.symbol.line, `${describe(ref.symbol)} — ${escapeLineBreaks(ref.symbol.text)}`));
    const header = `${matches.count} symbol(s)${filter} match ${quoteAsJson(query as string)}:`;
    if (matches.count > shown.length) notes.unshift(`[Showing the best ${shown.length}; ${matches.count - shown.length} more left out. Use a longer query or pass kind.]`);
    return ok([header, ...lines, ...withQuotedNamesNote(lines, notes)].join('\n'));
  } catch {
    return failed('The find_symbol call failed. Try again with other arguments.');
  }
}

// ------------------------------------------------------- go_to_definition

const JS_EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

/** The indexed files an import specifier may name, relative to the importing file (relative specifiers only: packages are not indexed). */
function moduleCandidates(index: FolderIndex, fromFile: string, source: string): FileIndex[] {
  const directory = path.posix.dirname(fromFile);
  const found: FileIndex[] = [];
  const add = (candidate: string): void => {
    const normalized = path.posix.normalize(candidate);
    const file = index.files.get(normalized);
    if (file && !found.includes(file)) found.push(file);
  };
  if (fromFile.endsWith('.py') || fromFile.endsWith('.pyi')) {
    const dots = /^\.*/.exec(source)?.[0].length ?? 0;
    const modulePath = source.slice(dots).split('.').filter(Boolean).join('/');
    let base = dots === 0 ? '' : directory;
    for (let up = 1; up < dots; up++) base = path.posix.dirname(base);
    const joined = base === '' || base === '.' ? modulePath : modulePath === '' ? base : `${base}/${modulePath}`;
    add(`${joined}.py`);
    add(`${joined}.pyi`);
    add(`${joined}/__init__.py`);
    return found;
  }
  if (!source.startsWith('.')) return found;
  const target = path.posix.join(directory, source);
  add(target);
  const stem = target.replace(/\.(m|c)?js$/, '');
  for (const extension of JS_EXTENSIONS) add(`${stem}${extension}`);
  for (const extension of JS_EXTENSIONS) add(`${target}/index${extension}`);
  return found;
}

/** Follows `name` as exported by `file` through re-exports, a few hops at most. */
function definitionsExportedAs(index: FolderIndex, file: FileIndex, name: string, hops: number, visited: Set<FileIndex>): SymbolRef[] {
  if (hops > 4 || visited.has(file)) return [];
  visited.add(file);
  const own = file.symbols.filter((symbol) => symbol.name === name && !symbol.container).map((symbol) => ({ file, symbol }));
  if (own.length > 0) return own;
  for (const binding of file.reexports) {
    if (binding.local !== name && binding.local !== '*') continue;
    const imported = binding.local === '*' ? name : binding.imported;
    for (const target of moduleCandidates(index, file.relativePath, binding.source)) {
      const found = definitionsExportedAs(index, target, imported, hops + 1, visited);
      if (found.length > 0) return found;
    }
  }
  // `import { X } from './a'` where a.ts itself imports and re-exports X by `export { X }`.
  for (const binding of file.imports) {
    if (binding.local !== name) continue;
    for (const target of moduleCandidates(index, file.relativePath, binding.source)) {
      const found = definitionsExportedAs(index, target, binding.imported, hops + 1, visited);
      if (found.length > 0) return found;
    }
  }
  return [];
}

function rankDefinitions(refs: SymbolRef[], fromFile: string | undefined, qualifier: string | undefined): SymbolRef[] {
  const directory = fromFile ? path.posix.dirname(fromFile) : undefined;
  const rank = (ref: SymbolRef): number =>
    (qualifier !== undefined && ref.symbol.container === qualifier ? 0 : 4) +
    (ref.file.relativePath === fromFile ? 0 : directory !== undefined && path.posix.dirname(ref.file.relativePath) === directory ? 1 : 2);
  return [...refs].sort(
    (a, b) => rank(a) - rank(b) || KIND_RANK[a.symbol.kind] - KIND_RANK[b.symbol.kind] || (a.file.relativePath < b.file.relativePath ? -1 : a.file.relativePath > b.file.relativePath ? 1 : 0) || a.symbol.line - b.symbol.line,
  );
}

export async function goToDefinition(boundary: ReadBoundary, args: Args, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    const requested = stringArgument(args, 'symbol');
    const problem = validName(requested, 'symbol');
    if (problem) return failed(problem);
    const { name, qualifier } = splitQualified(requested as string);
    const index = await loadIndex(boundary, signal);
    if (isOutcome(index)) return index;

    let fromFile: FileIndex | undefined;
    const notes: string[] = [];
    const requestedPath = stringArgument(args, 'path');
    if (requestedPath !== undefined && requestedPath !== '') {
      const file = await indexedFile(boundary, index, requestedPath);
      if (!(file as FileIndex).relativePath) return file as ToolOutcome;
      fromFile = file as FileIndex;
      const line = typeof args.line === 'number' ? args.line : undefined;
      if (line !== undefined) {
        const lines = await readLines(boundary, fromFile.relativePath, line, line);
        const text = lines?.[0];
        const where = `${printablePath(fromFile.relativePath)}:${line}`;
        if (lines === undefined) {
          // The file changed or was swapped since it was indexed: saying the name is not on the line would be a guess.
          notes.push(`[Note: ${where} could not be read just now; showing the best matches by name.]`);
        } else if (text === undefined || !new RegExp(`(?<![\\w$])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w$])`).test(text)) {
          notes.push(`[Note: ${quoteAsJson(name)} does not occur on ${where}; showing the best matches by name.]`);
        }
      }
    }

    let definitions: SymbolRef[] = [];
    let how = 'by name';
    if (fromFile) {
      const local = fromFile.symbols.filter((symbol) => symbol.name === name).map((symbol) => ({ file: fromFile as FileIndex, symbol }));
      if (local.length > 0) {
        definitions = local;
        how = 'defined in the same file';
      } else {
        for (const binding of fromFile.imports) {
          if (binding.local !== name) continue;
          for (const target of moduleCandidates(index, fromFile.relativePath, binding.source)) {
            definitions = definitionsExportedAs(index, target, binding.imported, 0, new Set());
            if (definitions.length > 0) break;
          }
          if (definitions.length > 0) {
            how = `followed the import from ${quoteAsJson(binding.source)}`;
            break;
          }
        }
      }
    }
    if (definitions.length === 0) {
      definitions = index.byName.get(name) ?? [];
      if (definitions.length === 0) {
        const lower = name.toLowerCase();
        for (const [candidate, refs] of index.byName) if (candidate.toLowerCase() === lower) definitions = definitions.concat(refs);
      }
      how = 'by name, best matches first';
    }
    const statusLines = statusNotes(index.status);
    if (definitions.length === 0) {
      return ok([`No definition of ${quoteAsJson(name)} found in the symbol index (${index.files.size} files; ${BY_NAME_NOTE}). Try find_symbol with part of the name, or grep_files.`, ...notes, ...statusLines].join('\n'));
    }
    const ranked = rankDefinitions(definitions, fromFile?.relativePath, qualifier);
    const shown = ranked.slice(0, SYMBOL_LIMITS.definitionMaxResults);
    const blocks: string[] = [`${ranked.length} definition(s) of ${quoteAsJson(name)} (${how}; ${BY_NAME_NOTE}):`];
    for (const { file, symbol } of shown) {
      const last = Math.min(symbol.endLine, symbol.startLine + SYMBOL_LIMITS.definitionSignatureLines - 1);
      const lines = (await readLines(boundary, file.relativePath, symbol.startLine, last)) ?? [symbol.text];
      blocks.push(resultLine(file.relativePath, `${symbol.startLine}-${symbol.endLine}`, describe(symbol)));
      lines.forEach((text, offset) => blocks.push(`  ${symbol.startLine + offset}: ${escapeLineBreaks(text)}`));
    }
    if (ranked.length > shown.length) notes.push(`[${ranked.length - shown.length} more definition(s) left out. Pass path and line of the use to narrow it down.]`);
    return ok([...blocks, ...withQuotedNamesNote(blocks, [...notes, ...statusLines])].join('\n'));
  } catch {
    return failed('The go_to_definition call failed. Try again with other arguments.');
  }
}

// -------------------------------------------------------- find_references

/** Languages whose identifiers can refer to each other: a TypeScript name is not looked for in Python files. */
function languageFamily(relativePath: string): string | undefined {
  const grammar = languageOf(relativePath)?.grammar;
  if (!grammar) return undefined;
  return /typescript|tsx|javascript/.test(grammar) ? 'js' : grammar;
}

export async function findReferences(boundary: ReadBoundary, args: Args, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    const requested = stringArgument(args, 'symbol');
    const problem = validName(requested, 'symbol');
    if (problem) return failed(problem);
    const { name } = splitQualified(requested as string);
    const includeDeclaration = args.include_declaration !== false;
    const index = await loadIndex(boundary, signal);
    if (isOutcome(index)) return index;

    await index.listsAdded('foreground');
    // Only files that use the name (or may, see referenceCandidates) are read: reading all of them took seconds at 20,000 files.
    let files = index.referenceCandidates(name);
    const requestedPath = stringArgument(args, 'path');
    let fromFile: FileIndex | undefined;
    if (requestedPath !== undefined && requestedPath !== '') {
      const file = await indexedFile(boundary, index, requestedPath);
      if (!(file as FileIndex).relativePath) return file as ToolOutcome;
      fromFile = file as FileIndex;
      const family = languageFamily(fromFile.relativePath);
      files = [fromFile.relativePath, ...files.filter((candidate) => candidate !== fromFile?.relativePath && languageFamily(candidate) === family)];
    }

    const definitions = index.byName.get(name) ?? [];
    // Enough to show referencesMax once the definitions are dropped; past them the search only counts.
    const outcome = await searchReferences(boundary, index, name, files, SYMBOL_LIMITS.referencesMax + definitions.length, { signal, everyCandidate: fromFile === undefined });
    if (signal?.aborted) return failed('Cancelled.');
    if (!outcome.ok) return failed(outcome.message);
    const result = outcome.result;

    const declarationLines = new Set<string>();
    for (const ref of definitions) declarationLines.add(`${ref.file.relativePath}:${ref.symbol.line}`);
    let total = result.total;
    const kept = result.references.filter((reference) => {
      if (includeDeclaration || !declarationLines.has(`${reference.relativePath}:${reference.line}`)) return true;
      total -= 1;
      return false;
    });
    const counted = result.counted;
    if (counted && !includeDeclaration) {
      // The index's counts include each definition's own name.
      const countedFiles = new Set(files.slice(counted.from));
      total -= definitions.filter((ref) => countedFiles.has(ref.file.relativePath)).length;
    }
    const shown = kept.slice(0, SYMBOL_LIMITS.referencesMax);
    const notes = statusNotes(index.status, result.leftOut);
    if (!result.complete) notes.unshift(`[Search incomplete: stopped by the time limit after ${result.filesSearched} of ${files.length} files.]`);
    if (shown.length === 0) {
      return ok([`No references to ${quoteAsJson(name)} found (${BY_NAME_NOTE}; ${result.filesSearched} files searched; strings and comments do not count).`, ...notes].join('\n'));
    }
    const byFile = new Map<string, string[]>();
    for (const reference of shown) {
      const mark = declarationLines.has(`${reference.relativePath}:${reference.line}`) ? '  (definition)' : '';
      const group = byFile.get(reference.relativePath) ?? [];
      group.push(resultLine(reference.relativePath, reference.line, `${escapeLineBreaks(reference.text)}${mark}`));
      byFile.set(reference.relativePath, group);
    }
    const out = [`${total} reference(s) to ${quoteAsJson(name)} in ${byFile.size}${shown.length < kept.length || counted ? '+' : ''} file(s) (${BY_NAME_NOTE}: identifiers with this name, not strings or comments; one entry per line):`];
    for (const [relativePath, group] of byFile) out.push('', `${printablePath(relativePath)} (${group.length})`, ...group);
    const narrow = "Pass path to start from one file's language, or use grep_files with a glob.";
    if (counted) {
      notes.unshift(
        `[Showing ${shown.length} of about ${total}: ${counted.files} more file(s) use the name and were not read for this answer; their ${counted.uses} use(s) are the index's count from when it last parsed them (identifiers, not lines). ${narrow}]`,
      );
    } else if (total > shown.length) notes.unshift(`[Showing ${shown.length} of ${total}; ${total - shown.length} more left out. ${narrow}]`);
    const allNotes = withQuotedNamesNote(out, notes);
    return ok([...out, ...(allNotes.length > 0 ? ['', ...allNotes] : [])].join('\n'));
  } catch {
    return failed('The find_references call failed. Try again with other arguments.');
  }
}

// ----------------------------------------------------------- list_symbols

export async function listSymbols(boundary: ReadBoundary, args: Args, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    const requested = stringArgument(args, 'path');
    if (requested === undefined || requested === '') return failed('"path" is missing. Pass a source file\'s path.');
    const index = await loadIndex(boundary, signal);
    if (isOutcome(index)) return index;
    const found = await indexedFile(boundary, index, requested);
    if (!(found as FileIndex).relativePath) return found as ToolOutcome;
    const file = found as FileIndex;
    const symbols = [...file.symbols].sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine);
    if (symbols.length === 0) return ok(`${printablePath(file.relativePath)}: no definitions found.`);
    const open: IndexedSymbol[] = [];
    const lines = [`Outline of ${printablePath(file.relativePath)} (${symbols.length} symbol(s); "start-end" are its lines; read one with read_file start_line/end_line):`];
    for (const symbol of symbols.slice(0, SYMBOL_LIMITS.outlineMax)) {
      while (open.length > 0 && !(symbol.startLine >= open[open.length - 1].startLine && symbol.endLine <= open[open.length - 1].endLine)) open.pop();
      lines.push(`${'  '.repeat(open.length)}${symbol.kind} ${inertLine(symbol.name)} ${symbol.startLine}-${symbol.endLine}: ${escapeLineBreaks(symbol.text)}`);
      open.push(symbol);
    }
    if (symbols.length > SYMBOL_LIMITS.outlineMax) lines.push(`[${symbols.length - SYMBOL_LIMITS.outlineMax} more symbol(s) left out.]`);
    return ok(lines.join('\n'));
  } catch {
    return failed('The list_symbols call failed. Try again with other arguments.');
  }
}

// -------------------------------------------------------- get_diagnostics

export async function getDiagnostics(boundary: ReadBoundary, args: Args, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    const index = await loadIndex(boundary, signal);
    if (isOutcome(index)) return index;
    const requested = stringArgument(args, 'path');
    let files = walkOrder(index).map((relativePath) => index.files.get(relativePath) as FileIndex);
    let where = 'the folder';
    if (requested !== undefined && requested !== '') {
      const resolved = await boundary.resolve(requested);
      if (!resolved.ok) return failed(resolved.message);
      if (resolved.kind === 'file') {
        const file = await indexedFile(boundary, index, requested);
        if (!(file as FileIndex).relativePath) return file as ToolOutcome;
        files = [file as FileIndex];
      } else if (resolved.relativePath !== '.') {
        const prefix = `${resolved.relativePath}/`;
        files = files.filter((file) => file.relativePath.startsWith(prefix));
      }
      where = resolved.relativePath === '.' ? 'the folder' : printablePath(resolved.relativePath);
    }
    const lines: string[] = [];
    let total = 0;
    let withErrors = 0;
    for (const file of files) {
      if (file.problems.length === 0) continue;
      withErrors += 1;
      total += file.problems.length + file.moreProblems;
      for (const problem of file.problems) {
        if (lines.length < SYMBOL_LIMITS.diagnosticsMax) lines.push(resultLine(file.relativePath, problem.line, `error: ${escapeLineBreaks(problem.message)} [syntax (tree-sitter)]`));
      }
    }
    const notes = statusNotes(index.status);
    if (total === 0) return ok([`No syntax errors found in ${where} (${files.length} file(s) parsed by tree-sitter).`, DIAGNOSTICS_SCOPE_NOTE, ...notes].join('\n'));
    if (total > lines.length) notes.unshift(`[Showing ${lines.length} of ${total}; ${total - lines.length} more left out. Pass path to narrow it down.]`);
    return ok([`${total} syntax error(s) in ${withErrors} file(s) of ${where} (severity error, source "syntax (tree-sitter)"):`, ...lines, DIAGNOSTICS_SCOPE_NOTE, ...withQuotedNamesNote(lines, notes)].join('\n'));
  } catch {
    return failed('The get_diagnostics call failed. Try again with other arguments.');
  }
}

// ------------------------------------------------------------ definitions

const PATH_HELP = 'relative to the folder root';
const LOCATION_ARGUMENTS = [
  { name: 'path', type: 'string', required: false, description: `File where the symbol is used, ${PATH_HELP}; with line, resolves that occurrence (its imports first, then the same file).` },
  { name: 'line', type: 'integer', required: false, minimum: 1, description: 'Line (1-based) of that occurrence in path.' },
] as const;

export const SYMBOL_TOOLS: readonly ReadToolDefinition[] = [
  {
    name: 'find_symbol',
    description:
      'Find definitions (classes, functions, methods, types, variables…) in the whole folder by name: case-insensitive, prefix and camelCase humps ("cS" finds createServer). ' +
      `Each result is "path:line: kind Container.name — line text", best first, at most ${SYMBOL_LIMITS.findMaxResults}. From a syntax index (tree-sitter), not a type checker.`,
    arguments: [
      { name: 'query', type: 'string', required: true, description: 'The name or part of it, e.g. "createServer", "cS", "Server".' },
      { name: 'kind', type: 'string', required: false, description: 'Only this kind: class, interface, struct, enum, type, function, method, constructor, property, variable, constant, module, macro.' },
    ],
    run: ({ boundary, ide }, args, signal) => ideFirst(ide, (asked) => findSymbolFromIde(boundary, asked, args, signal), () => findSymbol(boundary, args, signal), signal),
  },
  {
    name: 'go_to_definition',
    description:
      'Where a symbol is defined: "path:start-end" and its first lines (the signature). Pass path and line of a use to resolve that occurrence (imports followed, same file first); ' +
      `without them, the best matches in the folder. Resolved by name, not type-checked. At most ${SYMBOL_LIMITS.definitionMaxResults} definitions.`,
    arguments: [{ name: 'symbol', type: 'string', required: true, description: 'The identifier, e.g. "createServer" or "Server.listen".' }, ...LOCATION_ARGUMENTS],
    run: ({ boundary, ide }, args, signal) => ideFirst(ide, (asked) => goToDefinitionFromIde(boundary, asked, args, signal), () => goToDefinition(boundary, args, signal), signal),
  },
  {
    name: 'find_references',
    description:
      'Every use of a symbol, grouped by file, as "path:line: text": identifiers with that name in the syntax trees (strings and comments do not count), by name, not type-checked. ' +
      `At most ${SYMBOL_LIMITS.referencesMax} with the total. Pass path to search that file's language only, starting with that file.`,
    arguments: [
      { name: 'symbol', type: 'string', required: true, description: 'The identifier, e.g. "createServer".' },
      ...LOCATION_ARGUMENTS,
      { name: 'include_declaration', type: 'boolean', required: false, description: 'Include the definitions themselves (marked). Default true.' },
    ],
    run: ({ boundary, ide }, args, signal) => ideFirst(ide, (asked) => findReferencesFromIde(boundary, asked, args, signal), () => findReferences(boundary, args, signal), signal),
  },
  {
    name: 'list_symbols',
    description:
      'The outline of one source file: each definition\'s kind, name and line range, nested by indentation, so you can read_file just one function instead of the whole file.',
    arguments: [{ name: 'path', type: 'string', required: true, description: `Source file, ${PATH_HELP}.` }],
    run: ({ boundary, ide }, args, signal) => ideFirst(ide, (asked) => listSymbolsFromIde(boundary, asked, args, signal), () => listSymbols(boundary, args, signal), signal),
  },
  {
    name: 'get_diagnostics',
    description:
      `Syntax errors tree-sitter finds in a file, a directory or the whole folder (at most ${SYMBOL_LIMITS.diagnosticsMax}), as "path:line: error: message". ` +
      'Only syntax: type errors and lint warnings need the editor\'s language support, which this tool does not have.',
    arguments: [{ name: 'path', type: 'string', required: false, description: `File or directory, ${PATH_HELP}. Default: the whole folder.` }],
    run: ({ boundary, ide }, args, signal) => ideFirst(ide, (asked) => getDiagnosticsFromIde(boundary, asked, args, signal), () => getDiagnostics(boundary, args, signal), signal),
  },
];

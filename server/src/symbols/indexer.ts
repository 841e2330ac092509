import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Language as TreeSitterLanguage, Node as TreeSitterNode, Parser as TreeSitterParser, Tree, TreeCursor } from '@vscode/tree-sitter-wasm';
import { isSameOrInside, OpenRefusal, openVerifiedSync, PathResolution, ReadBoundary } from '../access/boundary';
import { RACY_WINDOW_NS } from '../search/directoryStamps';
import { noRecords, PackedRecords, unpackRecords } from '../search/packedRecords';
import { isWalkedDirectory, walkFiles, walkVerdict } from '../search/walk';
import { shortLine } from '../../../shared/oneLine';
import { offsetsInCode } from './codeWords';
import { DefinitionRule, LanguageSpec, languageOf, SymbolKind, SyntaxNodeLike } from './languages';
import { INDEX_LIMITS } from './limits';
import { mapInputsFrom, RankedFile, rankFiles } from './mapRanking';
import { readPackagedFile } from './packagedFile';
import { wholeWordAt, wholeWordPattern } from './wholeWords';

/**
 * The worker side of the symbol index: walks the folder, parses each source
 * file that changed since the caller's copy of the index, and hands back what
 * it found (definitions, import bindings, syntax errors). It also answers
 * reference searches, which need the syntax trees the main thread never
 * holds. Runs only in the symbol worker thread (symbolWorker.ts): parsing is
 * CPU-heavy and would otherwise stall the server's event loop.
 */

export { INDEX_LIMITS };

export interface IndexedSymbol {
  name: string;
  kind: SymbolKind;
  container?: string;
  /** 1-based line of the name. */
  line: number;
  startLine: number;
  endLine: number;
  /** The text of the name's line, trimmed and shortened. */
  text: string;
}

export interface SyntaxProblem {
  line: number;
  message: string;
}

/** `import { imported as local } from 'source'`, or a re-export (`local` is then the exported name; `*` for `export *`). */
export interface ImportBinding {
  local: string;
  imported: string;
  source: string;
}

export interface FileIndex {
  relativePath: string;
  realPath: string;
  /** size:mtime:ctime when parsed; the file is re-parsed when it differs. */
  stamp: string;
  /**
   * Read so soon after its last change that another change in the same tick
   * of the file clock could leave the stamp as it is (see RACY_WINDOW_NS):
   * the reference search then never answers from this entry's counts.
   */
  racy?: true;
  symbols: IndexedSymbol[];
  problems: SyntaxProblem[];
  /** More syntax errors than listed. */
  moreProblems: number;
  imports: ImportBinding[];
  reexports: ImportBinding[];
  /**
   * The identifiers the file uses, as "name\tcount" lines (definition sites
   * included): what the repository map's graph is built from. One string, not
   * an object per name: the index crosses from the worker to the main thread
   * by structured clone, and 20,000 files of name objects made that a
   * main-thread stall.
   */
  references?: string;
}

/** What an index job is told of a caller with no index yet. */
export function nothingKnown(): PackedRecords {
  return noRecords(2);
}

export interface IndexJob {
  kind: 'index';
  root: string;
  denyRead: readonly string[];
  /** The caller's index as (relative path, stamp) records (a stamp no file has for an entry to parse again whatever its stamp). */
  known: PackedRecords;
  /** How long this call may work before answering with what it has. */
  timeMs: number;
  maxFiles?: number;
}

export interface IndexJobResult {
  kind: 'index';
  updated: FileIndex[];
  /** Paths in `known` that the complete walk no longer found (deleted, now ignored or denied). */
  removed: string[];
  /** Source files found (within the file cap). */
  sourceFiles: number;
  /** Of which unchanged or parsed now (the rest wait for the next call). */
  indexedFiles: number;
  /** Files never parsed: secret, policy-denied, or a symlink leading out of the folder. */
  leftOut: number;
  /** Source files over the size limit. */
  tooLarge: number;
  /** The walk covered the folder (no deadline, file cap or entry limit hit). */
  walkComplete: boolean;
  /** The file cap was reached. */
  fileCapReached: boolean;
}

export interface ReferenceJob {
  kind: 'references';
  root: string;
  denyRead: readonly string[];
  symbol: string;
  /** Indexed files to search, in the order to search them. */
  files: string[];
  timeMs: number;
  /**
   * Stop collecting after this many, or at `collectBefore`. The count goes
   * on: past them, a file the index counted (`indexed`) is not read, and its
   * count is taken instead (ReferenceJobResult.counted); the others are
   * still read.
   */
  maxReferences: number;
  /**
   * For each of `files`, at the same position, what the index counted when it
   * parsed the file (undefined where it counted nothing to go by): its stamp
   * then, and how many identifiers named `symbol` it holds as whole words. A
   * file read at that stamp with as many whole-word matches has none in a
   * string or a comment, and is answered without a parse. An array, not a
   * record by path: a record of 18,000 paths took 40 ms to post to the thread.
   */
  indexed?: ReadonlyArray<IndexedUses | undefined>;
  /**
   * From this position on nothing is collected, whatever has been so far:
   * later files handed over out of their order, for the total only. What
   * the search had found before it is kept (ReferenceJobResult.beforeLater).
   */
  collectBefore?: number;
}

export interface IndexedUses {
  stamp: string;
  uses: number;
}

export interface FoundReference {
  relativePath: string;
  line: number;
  text: string;
}

export interface ReferenceJobResult {
  kind: 'references';
  references: FoundReference[];
  total: number;
  filesSearched: number;
  /** Files not searched because they are no longer readable inside the boundary. */
  leftOut: number;
  /** Of the files searched, those parsed (the others held no whole-word match, were answered from the index's counts, or could not be parsed). */
  filesParsed: number;
  complete: boolean;
  /**
   * The files not read because enough references were collected, and the
   * uses the index counted in them (identifiers, not lines, as of the index's
   * last parse of each); included in `total`. `from` is where in `files`
   * they start: every later file the index counted is among them.
   */
  counted?: { from: number; files: number; uses: number };
  /** The counts as they stood on reaching `collectBefore`, when the job had files past it. */
  beforeLater?: { total: number; filesSearched: number; leftOut: number; filesParsed: number };
}

/**
 * Looks again at what a client's file watcher reported changed
 * (fileChanges.ts), instead of walking the whole folder: each indexed file
 * named is resolved through the boundary and re-parsed if its stamp moved;
 * each other path only decides whether a walk is needed.
 */
export interface RecheckJob {
  kind: 'recheck';
  root: string;
  denyRead: readonly string[];
  /** Indexed files reported changed (or whose link target was), as the index holds them. */
  files: Array<{ relativePath: string; realPath: string; stamp: string; racy?: true }>;
  /** Reported paths the index does not hold. */
  others: string[];
  timeMs: number;
}

export interface RecheckJobResult {
  kind: 'recheck';
  updated: FileIndex[];
  /** Indexed files that are gone. */
  removed: string[];
  /**
   * Something only a walk accounts for: a path the walk would now visit that
   * the index lacks (a new source file or directory, a link), or an indexed
   * file now denied, linked elsewhere, not a file or too large. The caller
   * walks; `updated` and `removed` are still right.
   */
  walkNeeded: boolean;
}

/** Ranks the index's files for the repository map (mapRanking.ts); reads no file. */
export interface MapJob {
  kind: 'map';
  /** (relative path, defines, references) records: mapRanking.ts MapFileInput, packed. */
  files: PackedRecords;
  timeMs: number;
  maxResults: number;
}

export interface MapJobResult {
  kind: 'map';
  ranked: RankedFile[];
}

export type SymbolJob = IndexJob | RecheckJob | ReferenceJob | MapJob;
export type SymbolJobResult = IndexJobResult | RecheckJobResult | ReferenceJobResult | MapJobResult;

export interface SymbolJobControl {
  shouldStop(): boolean;
  /**
   * Hands over parsed files ahead of the answer, which then holds only the
   * rest (the symbol thread posts each part as it comes). Unset: every file
   * is in the answer.
   */
  sendFiles?(files: FileIndex[]): void;
}

/**
 * Parsed files handed over at a time (sendFiles), each part copied into the
 * main thread as it arrives (a part every 70 ms or so on the bench's tree;
 * parts that wait for a busy main thread are copied one after another).
 * Received in one message, the 4,700 files
 * a cold walk of a 20,000-file tree parses within its time limit held the
 * main thread for about 400 ms while they were copied in, every discussion's
 * stream with it (a whole 18,000-file tree, 1.5 s).
 */
export const FILES_PER_PART = 32;

/** Adds `file` to `updated`, handing the files over through `control` once they make a part. */
function addParsed(updated: FileIndex[], file: FileIndex, control: SymbolJobControl): void {
  updated.push(file);
  if (control.sendFiles && updated.length >= FILES_PER_PART) control.sendFiles(updated.splice(0));
}

// ------------------------------------------------------------- runtime

type TreeSitter = typeof import('@vscode/tree-sitter-wasm');

let runtime: Promise<TreeSitter> | undefined;
const languages = new Map<string, Promise<TreeSitterLanguage>>();
let parser: TreeSitterParser | undefined;

/**
 * Where the grammars are: beside the bundle (client/bundle.mjs copies them
 * to dist/tree-sitter/, since the .vsix holds no node_modules), else in the
 * installed package (the unbundled build in out/).
 */
export function grammarDirectory(): string {
  const bundled = path.join(__dirname, 'tree-sitter');
  if (fs.existsSync(path.join(bundled, 'tree-sitter.wasm'))) return bundled;
  // Not a literal: the bundler would try to resolve it at build time, and the bundle never takes this branch.
  const installed = '@vscode/tree-sitter-wasm/wasm/tree-sitter.wasm';
  return path.dirname(require.resolve(installed));
}

function loadRuntime(): Promise<TreeSitter> {
  runtime ??= (async () => {
    const treeSitter = require('@vscode/tree-sitter-wasm') as TreeSitter;
    const directory = grammarDirectory();
    await treeSitter.Parser.init({ locateFile: (file: string) => path.join(directory, file) });
    return treeSitter;
  })();
  return runtime;
}

async function languageFor(spec: LanguageSpec): Promise<TreeSitterLanguage> {
  let language = languages.get(spec.grammar);
  if (!language) {
    const treeSitter = await loadRuntime();
    // From bytes: a packaged grammar is compressed (packagedFile.ts), which a path to Language.load could not say.
    language = treeSitter.Language.load(readPackagedFile(path.join(grammarDirectory(), spec.grammar)));
    languages.set(spec.grammar, language);
  }
  return language;
}

async function parserFor(spec: LanguageSpec): Promise<TreeSitterParser> {
  const treeSitter = await loadRuntime();
  parser ??= new treeSitter.Parser();
  parser.setLanguage(await languageFor(spec));
  return parser;
}

/** Parses `text`, giving up past `deadline` (a pathological file must not hold the job). */
function parse(activeParser: TreeSitterParser, text: string, deadline: number): Tree | null {
  try {
    return activeParser.parse(text, null, { progressCallback: () => performance.now() > deadline });
  } catch {
    return null;
  }
}

// ------------------------------------------------------------- reading

/**
 * What tells a changed file from an indexed one. The ctime as well as the
 * mtime: a tool that keeps a file's mtime across an edit (`cp -p`, `touch -r`)
 * cannot keep its ctime.
 */
export function stampOf(stats: fs.Stats): string {
  return `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/** When the file last changed, by the file clock. */
function changedAtMs(stats: fs.Stats): number {
  // The ctime, which every change of the contents moves to the file clock's now; an mtime may be set anywhere (`touch -d`).
  return stats.ctimeMs;
}

/**
 * Whether a file read now may have changed again within the same tick of the
 * file clock. A change time further ahead than the window is a clock that
 * disagrees, not a tick: judged racy, such a file would be parsed again at
 * every walk.
 */
function isRacyRead(stats: fs.Stats): boolean {
  const sinceChange = wallClock() - changedAtMs(stats);
  return sinceChange < RACY_WINDOW_MS && sinceChange > -RACY_WINDOW_MS;
}

const RACY_WINDOW_MS = Number(RACY_WINDOW_NS / 1_000_000n);
let wallClock: () => number = () => Date.now();

/** Replaces the wall clock racy stamps are judged by (tests); without an argument, the real one again. */
export function setIndexerWallClock(now?: () => number): void {
  wallClock = now ?? (() => Date.now());
}

function textOf(bytes: Buffer): string | undefined {
  return bytes.subarray(0, 8192).includes(0) ? undefined : bytes.toString('utf8');
}


/**
 * Reads a file `resolve` approved, through a descriptor proved to be that
 * file, with the stamp it has once read: the stat comes from the same
 * descriptor after the read, so an edit made before it is done shows in the
 * stamp (as far as the file clock's tick allows; see FileIndex.racy).
 */
interface StampedSource {
  text: string;
  stamp: string;
}

/** A source file's text with the stamp it was read at; undefined when it is binary, unreadable or too large, and why when the verified open refused it. */
function readStampedSource(realPath: string): StampedSource | { notOpened: OpenRefusal } | undefined {
  const opened = openVerifiedSync(realPath);
  if (!opened.ok) return { notOpened: opened.refusal };
  const { fd } = opened;
  try {
    // The size the resolve saw may be a few files old: a file grown past the limit since is not read.
    if (opened.stats.size > INDEX_LIMITS.maxFileBytes) return undefined;
    const text = textOf(fs.readFileSync(fd));
    return text === undefined ? undefined : { text, stamp: stampOf(fs.fstatSync(fd)) };
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** The 1-based line of each offset (ascending), counting `\n` as tree-sitter counts rows. */
function lineNumbersOf(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let at = 0;
  for (const offset of offsets) {
    for (let next = text.indexOf('\n', at); next !== -1 && next < offset; next = text.indexOf('\n', next + 1)) {
      line += 1;
      at = next + 1;
    }
    lines.push(line);
  }
  return lines;
}

function lineText(lines: readonly string[], line: number): string {
  const text = (lines[line - 1] ?? '').replace(/\r$/, '').trim();
  return text.length > INDEX_LIMITS.maxLineChars ? `${text.slice(0, INDEX_LIMITS.maxLineChars)}…` : text;
}

// ------------------------------------------------------------- extraction

function nameNodeOf(node: TreeSitterNode, rule: DefinitionRule): SyntaxNodeLike | null | undefined {
  const name = rule.name ?? 'name';
  const found = typeof name === 'function' ? name(node as unknown as SyntaxNodeLike) : node.childForFieldName(name);
  return found;
}

function stringLiteral(node: TreeSitterNode | null): string | undefined {
  if (!node) return undefined;
  const text = node.text;
  return /^['"`].*['"`]$/s.test(text) ? text.slice(1, -1) : undefined;
}

function jsImports(node: TreeSitterNode, into: ImportBinding[]): void {
  const source = stringLiteral(node.childForFieldName('source'));
  if (source === undefined) return;
  for (const clause of node.namedChildren) {
    if (clause?.type !== 'import_clause') continue;
    for (const part of clause.namedChildren) {
      if (!part) continue;
      if (part.type === 'identifier') into.push({ local: part.text, imported: 'default', source });
      if (part.type === 'named_imports') {
        for (const specifier of part.namedChildren) {
          if (specifier?.type !== 'import_specifier') continue;
          const imported = specifier.childForFieldName('name')?.text;
          const local = specifier.childForFieldName('alias')?.text ?? imported;
          if (imported && local) into.push({ local, imported, source });
        }
      }
    }
  }
}

function jsReexports(node: TreeSitterNode, into: ImportBinding[]): void {
  const source = stringLiteral(node.childForFieldName('source'));
  if (source === undefined) return;
  let named = false;
  for (const part of node.namedChildren) {
    if (part?.type !== 'export_clause') continue;
    named = true;
    for (const specifier of part.namedChildren) {
      if (specifier?.type !== 'export_specifier') continue;
      const imported = specifier.childForFieldName('name')?.text;
      const local = specifier.childForFieldName('alias')?.text ?? imported;
      if (imported && local) into.push({ local, imported, source });
    }
  }
  if (!named) into.push({ local: '*', imported: '*', source });
}

function pythonImports(node: TreeSitterNode, into: ImportBinding[]): void {
  const module = node.childForFieldName('module_name')?.text;
  if (!module) return;
  for (const part of node.childrenForFieldName('name')) {
    if (!part) continue;
    if (part.type === 'aliased_import') {
      const imported = part.childForFieldName('name')?.text;
      const local = part.childForFieldName('alias')?.text;
      if (imported && local) into.push({ local, imported, source: module });
    } else {
      into.push({ local: part.text, imported: part.text, source: module });
    }
  }
}

function problemMessage(node: TreeSitterNode): string {
  if (node.isMissing) return `syntax error: missing "${node.type}"`;
  // 40 characters of the code and the ellipsis.
  const snippet = shortLine(node.text, 41);
  return snippet === '' ? 'syntax error' : `syntax error: unexpected "${snippet}"`;
}

/**
 * Counts an identifier of the file, but only one the reference search's
 * pattern can match (a whole word, see wholeWordAt): the identifiers counted
 * are then among the pattern's matches, and where they are as many, they are
 * all of them, which lets the search skip the parse (runReferences).
 */
function countIdentifier(used: Map<string, number>, name: string, text: string, start: number): void {
  if (!wholeWordAt(text, start, start + name.length)) return;
  const count = used.get(name);
  if (count !== undefined) used.set(name, count + 1);
  else if (used.size < INDEX_LIMITS.maxReferenceNamesPerFile && name.length <= INDEX_LIMITS.maxReferenceNameChars) used.set(name, 1);
}

function listIdentifiersUnder(node: TreeSitterNode, spec: LanguageSpec, text: string, used: Map<string, number>): void {
  const cursor = node.walk();
  let depth = 0;
  try {
    for (;;) {
      if (spec.identifiers.has(cursor.nodeType)) countIdentifier(used, cursor.nodeText, text, cursor.startIndex);
      if (cursor.gotoFirstChild()) {
        depth += 1;
        continue;
      }
      while (depth > 0 && !cursor.gotoNextSibling()) {
        cursor.gotoParent();
        depth -= 1;
      }
      if (depth === 0) return;
    }
  } finally {
    cursor.delete();
  }
}

/** One pass over the tree with a cursor (no node objects for the many nodes that define nothing). */
function extract(tree: Tree, spec: LanguageSpec, text: string, lines: readonly string[], file: FileIndex): void {
  const cursor: TreeCursor = tree.walk();
  const withErrors = tree.rootNode.hasError;
  /** Enclosing definitions: [depth, name]. */
  const containers: Array<[number, string]> = [];
  const used = new Map<string, number>();
  let depth = 0;
  for (;;) {
    const type = cursor.nodeType;
    let descend = true;
    if (spec.identifiers.has(type)) countIdentifier(used, cursor.nodeText, text, cursor.startIndex);
    while (containers.length > 0 && containers[containers.length - 1][0] >= depth) containers.pop();

    const rule = Object.prototype.hasOwnProperty.call(spec.definitions, type) ? spec.definitions[type] : undefined;
    const containerRule = spec.containers && Object.prototype.hasOwnProperty.call(spec.containers, type) ? spec.containers[type] : undefined;
    if (rule || containerRule || type === 'import_statement' || type === 'export_statement' || type === 'import_from_statement' || (withErrors && (type === 'ERROR' || cursor.nodeIsMissing))) {
      const node = cursor.currentNode;
      if (type === 'ERROR' || node.isMissing) {
        if (file.problems.length < INDEX_LIMITS.maxProblemsPerFile) file.problems.push({ line: node.startPosition.row + 1, message: problemMessage(node) });
        else file.moreProblems += 1;
        descend = false;
        // Still listed: find_references reads only files whose list names the symbol, and it finds uses inside ERROR nodes.
        listIdentifiersUnder(node, spec, text, used);
      } else if (type === 'import_statement') {
        jsImports(node, file.imports);
      } else if (type === 'export_statement' && node.childForFieldName('source')) {
        jsReexports(node, file.reexports);
      } else if (type === 'import_from_statement') {
        pythonImports(node, file.imports);
      }
      if (rule && (!rule.where || rule.where(node as unknown as SyntaxNodeLike))) {
        const nameNode = nameNodeOf(node, rule);
        const kind = typeof rule.kind === 'function' ? rule.kind(node as unknown as SyntaxNodeLike) : rule.kind;
        const name = nameNode?.text;
        if (kind && name && name.length <= 200 && !/\s/.test(name) && file.symbols.length < INDEX_LIMITS.maxSymbolsPerFile) {
          const nameLine = (nameNode as unknown as TreeSitterNode).startPosition.row + 1;
          const ownContainer = rule.container?.(node as unknown as SyntaxNodeLike);
          const startLine = node.startPosition.row + 1;
          const endLine = node.endPosition.row + 1;
          file.symbols.push({
            name,
            kind,
            ...(ownContainer ? { container: ownContainer } : containers.length > 0 ? { container: containers[containers.length - 1][1] } : {}),
            line: nameLine,
            startLine,
            endLine,
            text: lineText(lines, nameLine),
          });
          containers.push([depth, name]);
        }
      } else if (containerRule) {
        const name = containerRule(node as unknown as SyntaxNodeLike);
        if (name) containers.push([depth, name.length > 80 ? `${name.slice(0, 80)}…` : name]);
      }
    }

    if (descend && cursor.gotoFirstChild()) {
      depth += 1;
      continue;
    }
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) {
        cursor.delete();
        file.references = [...used].map(([name, count]) => `${name}\t${count}`).join('\n');
        return;
      }
      depth -= 1;
    }
  }
}

async function indexFile(relativePath: string, realPath: string, stats: fs.Stats, spec: LanguageSpec, deadline: number): Promise<FileIndex> {
  const file: FileIndex = { relativePath, realPath, stamp: stampOf(stats), symbols: [], problems: [], moreProblems: 0, imports: [], reexports: [] };
  // Through a descriptor proved to be the file the walk listed: a directory swapped for a link out since the listing reads nothing.
  const read = readStampedSource(realPath);
  if (read === undefined) return file;
  if ('notOpened' in read) {
    // Swapped while the walk read it (a directory for a link and back): a stamp no file has, so the next walk parses it again.
    if (read.notOpened === 'changed') file.stamp = `${file.stamp}:unread`;
    return file;
  }
  const { text } = read;
  // Judged once read: an edit after the read that keeps the stamp must fall in the tick of the stamp's time.
  if (isRacyRead(stats)) file.racy = true;
  const activeParser = await parserFor(spec);
  const tree = parse(activeParser, text, deadline);
  if (!tree) return file;
  try {
    extract(tree, spec, text, text.split('\n'), file);
  } finally {
    tree.delete();
  }
  return file;
}

// ------------------------------------------------------------- jobs

const boundaries = new Map<string, Promise<ReadBoundary>>();

function boundaryFor(root: string, denyRead: readonly string[]): Promise<ReadBoundary> {
  const key = [root, ...denyRead].join('\0');
  let boundary = boundaries.get(key);
  if (!boundary) {
    boundary = ReadBoundary.create(root, [...denyRead]);
    boundary.catch(() => boundaries.delete(key));
    if (boundaries.size > 32) boundaries.delete(boundaries.keys().next().value as string);
    boundaries.set(key, boundary);
  }
  return boundary;
}

async function runIndex(job: IndexJob, control: SymbolJobControl): Promise<IndexJobResult> {
  const boundary = await boundaryFor(job.root, job.denyRead);
  const deadline = performance.now() + job.timeMs;
  const maxFiles = job.maxFiles ?? INDEX_LIMITS.maxFiles;
  const result: IndexJobResult = { kind: 'index', updated: [], removed: [], sourceFiles: 0, indexedFiles: 0, leftOut: 0, tooLarge: 0, walkComplete: false, fileCapReached: false };
  const seen = new Set<string>();
  const known = new Map<string, string>();
  for (const [relativePath, stamp] of unpackRecords(job.known)) known.set(relativePath, stamp);
  /** Found by the walk, to parse once the walk is done (so the count of files is known first). */
  const pending: Array<{ relativePath: string; realPath: string; stats: fs.Stats; spec: LanguageSpec }> = [];

  const stats = await walkFiles(
    {
      boundary,
      startDirectory: boundary.root,
      // Each directory listed inside its parent's descriptor: no file is read by the path the walk gives, only through the verified open (indexFile).
      listInsideParents: true,
      shouldStop: () => control.shouldStop(),
      maxEntries: INDEX_LIMITS.walkMaxEntries,
      deadline,
      onLinkLeftOut: (relativePath) => {
        if (languageOf(relativePath)) result.leftOut += 1;
      },
    },
    (file) => {
      const spec = languageOf(file.relativePath);
      if (!spec) return;
      // Secret and policy-denied files are never read, let alone parsed: counted, so the answer can say so.
      if (file.denial) {
        result.leftOut += 1;
        return;
      }
      if (result.sourceFiles >= maxFiles) {
        result.fileCapReached = true;
        return false;
      }
      let fileStats: fs.Stats;
      try {
        fileStats = fs.statSync(file.realPath);
      } catch {
        return;
      }
      if (!fileStats.isFile()) return;
      if (fileStats.size > INDEX_LIMITS.maxFileBytes) {
        result.tooLarge += 1;
        return;
      }
      result.sourceFiles += 1;
      seen.add(file.relativePath);
      if (known.get(file.relativePath) === stampOf(fileStats)) {
        result.indexedFiles += 1;
        return;
      }
      pending.push({ relativePath: file.relativePath, realPath: file.realPath, stats: fileStats, spec });
    },
  );
  result.walkComplete = stats.stoppedBy === undefined;

  for (const item of pending) {
    if (control.shouldStop() || performance.now() > deadline) break;
    addParsed(result.updated, await indexFile(item.relativePath, item.realPath, item.stats, item.spec, deadline + 1000), control);
    result.indexedFiles += 1;
  }
  if (result.walkComplete) {
    for (const relativePath of known.keys()) if (!seen.has(relativePath)) result.removed.push(relativePath);
  }
  return result;
}

/** Whether a walk of the folder would visit `relativePath` (a path the index does not hold) as something that changes the index. */
async function walkWouldCount(boundary: ReadBoundary, relativePath: string): Promise<boolean> {
  const slash = relativePath.lastIndexOf('/');
  // Its directory first, one component at a time and never through a link: nothing outside the folder is looked at.
  if (!isWalkedDirectory(boundary, slash === -1 ? '' : relativePath.slice(0, slash))) return false;
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(path.join(boundary.root, relativePath));
  } catch {
    return false; // gone, and not indexed: nothing to forget
  }
  if (stats.isDirectory()) return isWalkedDirectory(boundary, relativePath);
  // A link the walk resolves: to a source file inside, or out of the folder (counted as left out).
  if (stats.isSymbolicLink()) return true;
  if (!stats.isFile() || !languageOf(relativePath)) return false;
  return (await walkVerdict(boundary, relativePath)) !== undefined;
}

async function runRecheck(job: RecheckJob, control: SymbolJobControl): Promise<RecheckJobResult> {
  const boundary = await boundaryFor(job.root, job.denyRead);
  const deadline = performance.now() + job.timeMs;
  const result: RecheckJobResult = { kind: 'recheck', updated: [], removed: [], walkNeeded: false };
  const needWalk = (): RecheckJobResult => ((result.walkNeeded = true), result);
  for (const relativePath of job.others) {
    if (control.shouldStop() || performance.now() > deadline || (await walkWouldCount(boundary, relativePath))) return needWalk();
  }
  for (const file of job.files) {
    if (control.shouldStop() || performance.now() > deadline) return needWalk();
    const spec = languageOf(file.relativePath);
    // Absolute, so a name that looks like a quoted path means itself.
    const resolution = await boundary.resolve(path.join(boundary.root, file.relativePath));
    if (!resolution.ok && resolution.kind === 'not_found') {
      result.removed.push(file.relativePath);
      continue;
    }
    // Denied, out of the folder, or now another file: the walk decides what it counts.
    if (!resolution.ok || resolution.kind !== 'file' || resolution.realPath !== file.realPath || !spec) return needWalk();
    let stats: fs.Stats;
    try {
      stats = fs.statSync(resolution.realPath);
    } catch {
      return needWalk();
    }
    if (!stats.isFile() || stats.size > INDEX_LIMITS.maxFileBytes) return needWalk();
    // A racy entry's stamp may not have moved with the change reported.
    if (stampOf(stats) === file.stamp && !file.racy) continue;
    addParsed(result.updated, await indexFile(file.relativePath, resolution.realPath, stats, spec, deadline + 1000), control);
  }
  return result;
}

/**
 * A candidate of a reference search, read at its own path when that is its
 * real path: the verified open proves there is no link anywhere on the way
 * (boundary.ts openVerifiedSync), which is what resolving it would prove, in
 * a few synchronous calls instead of a chain of lstats. A candidate read
 * through a link, gone, or swapped for one since it was indexed is not opened
 * there, and is resolved through the boundary as the model's paths are.
 */
async function readCandidate(boundary: ReadBoundary, relativePath: string): Promise<{ source: StampedSource | undefined } | { refused: PathResolution }> {
  const ownPath = path.join(boundary.root, relativePath);
  if (isSameOrInside(boundary.root, ownPath) && ownPath !== boundary.root) {
    const direct = readStampedSource(ownPath);
    if (direct === undefined || !('notOpened' in direct)) return { source: direct };
  }
  // Absolute, so a name that looks like a quoted path means itself.
  const resolution = await boundary.resolve(ownPath).catch((): PathResolution => ({ ok: false, kind: 'invalid', message: 'Refused: the path could not be checked.' }));
  if (!resolution.ok || resolution.kind !== 'file' || resolution.size > INDEX_LIMITS.maxFileBytes) return { refused: resolution };
  const source = readStampedSource(resolution.realPath);
  return { source: source === undefined || 'notOpened' in source ? undefined : source };
}

/**
 * The whole-word matches of a file unchanged since the index parsed it that
 * are the identifiers it counted there, when that is certain without a parse:
 * every match, if they number as many; else those a scan finds outside
 * comments and strings, if they do. Undefined: the file must be parsed.
 */
function countedIdentifiers(text: string, offsets: readonly number[], counted: number, spec: LanguageSpec): readonly number[] | undefined {
  if (counted === offsets.length) return offsets;
  // A common name is also a word of comments and strings: parsing each such file to tell them apart was most of its search's time.
  const inCode = spec.lexicon ? offsetsInCode(text, offsets, spec.lexicon) : undefined;
  return inCode?.length === counted ? inCode : undefined;
}

async function runReferences(job: ReferenceJob, control: SymbolJobControl): Promise<ReferenceJobResult> {
  const boundary = await boundaryFor(job.root, job.denyRead);
  const deadline = performance.now() + job.timeMs;
  const result: ReferenceJobResult = { kind: 'references', references: [], total: 0, filesSearched: 0, leftOut: 0, filesParsed: 0, complete: true };
  // Whole words only, by the rule the counts were made with (wholeWords.ts).
  const wordPattern = wholeWordPattern(job.symbol);
  // The index is a snapshot: a file may have become a link out of the folder since, so each is resolved again before it is read.
  for (const [position, relativePath] of job.files.entries()) {
    if (position === job.collectBefore) result.beforeLater = { total: result.total, filesSearched: result.filesSearched, leftOut: result.leftOut, filesParsed: result.filesParsed };
    if (control.shouldStop() || performance.now() > deadline) {
      result.complete = false;
      break;
    }
    const indexedUses = job.indexed?.[position];
    const collecting = result.references.length < job.maxReferences && position < (job.collectBefore ?? Infinity);
    if (indexedUses && !collecting) {
      // Only the total is left to learn, and a common name ("options") has thousands of candidates: read one by one, they ran into the time limit.
      // Nothing is opened, so the read rules are not asked either (they cost more than the count): a count is only ever of a file the index's walk let in.
      result.counted ??= { from: position, files: 0, uses: 0 };
      result.counted.files += 1;
      result.counted.uses += indexedUses.uses;
      result.total += indexedUses.uses;
      continue;
    }
    // Asked only of a file to read: a counted file is a source file of the index's, and asking each of thousands cost more than counting them.
    const spec = languageOf(relativePath);
    if (spec === undefined) continue;
    // The candidates come from the index, which never holds a denied file: checked again all the same, by name, before anything is opened.
    if (boundary.denialOf(relativePath)) {
      result.leftOut += 1;
      continue;
    }
    const read = await readCandidate(boundary, relativePath);
    if ('refused' in read) {
      if (!read.refused.ok && read.refused.kind !== 'not_found') result.leftOut += 1;
      continue;
    }
    const { source } = read;
    result.filesSearched += 1;
    if (source === undefined || !source.text.includes(job.symbol)) continue;
    const { text } = source;
    const offsets: number[] = [];
    for (const match of text.matchAll(wordPattern)) offsets.push(match.index);
    if (offsets.length === 0) continue;

    let referenceLines: number[];
    const identifierOffsets = indexedUses && indexedUses.stamp === source.stamp ? countedIdentifiers(text, offsets, indexedUses.uses, spec) : undefined;
    if (identifierOffsets) {
      referenceLines = lineNumbersOf(text, identifierOffsets);
    } else {
      // Parsing is most of a search's time: only here is it needed.
      const tree = parse(await parserFor(spec), text, deadline + 1000);
      if (!tree) continue;
      result.filesParsed += 1;
      referenceLines = [];
      try {
        for (const offset of offsets) {
          // Named: a C# name that is also a contextual keyword (`group`, `select`) is an identifier around an unnamed keyword node.
          const node = tree.rootNode.namedDescendantForIndex(offset, offset + job.symbol.length);
          // Only identifiers: the word inside a string or a comment is not a reference.
          if (!node || !spec.identifiers.has(node.type) || node.startIndex !== offset || node.endIndex !== offset + job.symbol.length) continue;
          referenceLines.push(node.startPosition.row + 1);
        }
      } finally {
        tree.delete();
      }
    }
    let lines: string[] | undefined;
    let lastLine = 0;
    for (const line of referenceLines) {
      if (line === lastLine) continue; // one entry per line
      lastLine = line;
      result.total += 1;
      if (collecting && result.references.length < job.maxReferences) {
        lines ??= text.split('\n');
        result.references.push({ relativePath, line, text: lineText(lines, line) });
      }
    }
  }
  return result;
}

function runMap(job: MapJob): MapJobResult {
  return { kind: 'map', ranked: rankFiles(mapInputsFrom(job.files), { maxResults: job.maxResults, deadline: performance.now() + job.timeMs }) };
}

export async function runSymbolJob(job: SymbolJob, control: SymbolJobControl): Promise<SymbolJobResult> {
  if (job.kind === 'index') return runIndex(job, control);
  if (job.kind === 'recheck') return runRecheck(job, control);
  if (job.kind === 'map') return runMap(job);
  return runReferences(job, control);
}

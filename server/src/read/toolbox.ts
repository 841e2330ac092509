import type { ToolSpec } from '../model/types';
import type { Citation, ReadPolicy, Toolbox, ToolOutcome } from './types';
import { citeLines } from './cite';
import { ReadBoundary } from '../access/boundary';
import { findFiles } from './findFiles';
import { grepFiles } from './grepFiles';
import { READ_LIMITS } from './limits';
import { listDir } from './listDir';
import { readFile } from './readFile';
import { readAttachments, type ReadAttachment } from './attachments';
import { listFiles } from './fileList';
import type { Attachment, SymbolSuggestion } from '../../../shared/protocol';
import { symbolSuggestions } from '../symbols/symbolLookup';
import { defaultSearchEngine, SearchEngine } from '../search/searchEngine';
import { GIT_TOOLS, gitDiffSince, headCommitOf } from '../git/gitTools';
import type { IdeQueries } from '../symbols/ideSource';
import { SYMBOL_TOOLS } from '../symbols/symbolTools';

/**
 * The read-only toolbox of one discussion. Only the four read tools exist
 * here; every other name, including ones a model invents or remembers from
 * coding agents, is answered with READ_ONLY_REFUSAL and never run.
 */

export const READ_ONLY_REFUSAL =
  'This conversation is read-only: it cannot write or edit files or run commands, so that tool does not exist here. ' +
  'This is not a file-permission problem, and the user has not refused the change. ' +
  'To begin implementation, call prepare_coding_task with the requested change and its constraints; ' +
  'the user reviews that task and hands it to a coding agent. Do not ask the user to change permissions.';

export const POLICY_DENIED_TOOL =
  "That tool is denied by this project's policy (.repo-discuss/policy.json) or the user's settings. Use the other read tools instead.";

/** The hand-off tool the discussion core runs itself; it reaches the toolbox only when policy denies it. */
export const PREPARE_CODING_TASK = 'prepare_coding_task';

/** The decision log's tool, also run by the core; denied like the hand-off. */
export const RECORD_DECISION = 'record_decision';

export const POLICY_DENIED_RECORD =
  "record_decision is denied by this project's policy (.repo-discuss/policy.json) or the user's settings. State decisions in your reply instead.";

export const POLICY_DENIED_HANDOFF =
  "prepare_coding_task is denied by this project's policy (.repo-discuss/policy.json) or the user's settings, so implementation cannot be handed off from here. " +
  'This conversation is read-only: it cannot write or edit files or run commands. Describe the change in your reply instead; the user can carry it out.';

type ArgumentType = 'string' | 'integer' | 'boolean';

export interface ArgumentSpec {
  name: string;
  type: ArgumentType;
  required: boolean;
  description: string;
  minimum?: number;
}

export interface ReadToolDefinition {
  name: string;
  description: string;
  arguments: readonly ArgumentSpec[];
  run(context: ToolContext, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome>;
}

export interface ToolContext {
  boundary: ReadBoundary;
  search: SearchEngine;
  /** The editor's language service, when the client offers it (the symbol tools ask it first). */
  ide?: IdeQueries;
}

const PATH_HELP = 'relative to the folder root (an absolute path or file: URI inside the folder also works)';

const READ_TOOLS: readonly ReadToolDefinition[] = [
  {
    name: 'read_file',
    description:
      `Read a text file in the folder. Lines come back numbered as "N: text" (a carriage return or other line break inside a line shown as \\r or \\uXXXX). ` +
      `At most ${READ_LIMITS.readMaxLines} lines or ${READ_LIMITS.readMaxBytes / 1024} KiB per call; when cut, the output ends with the start_line to continue from. ` +
      'Use start_line/end_line to read a part of a large file (e.g. around a grep_files hit). Binary files and secret files (.env, keys, credentials) are refused.',
    arguments: [
      { name: 'path', type: 'string', required: true, description: `File path, ${PATH_HELP}.` },
      { name: 'start_line', type: 'integer', required: false, minimum: 1, description: 'First line to return (1-based, inclusive). Default 1.' },
      { name: 'end_line', type: 'integer', required: false, minimum: 1, description: 'Last line to return (1-based, inclusive). Default: as far as the limits allow.' },
    ],
    run: ({ boundary }, args, signal) =>
      readFile(boundary, { path: args.path as string, start_line: args.start_line as number | undefined, end_line: args.end_line as number | undefined }, signal),
  },
  {
    name: 'list_dir',
    description:
      `List one directory's entries, sorted, directories marked with a trailing "/". At most ${READ_LIMITS.listMaxEntries} entries. ` +
      'Not recursive: use find_files to search a whole tree.',
    arguments: [{ name: 'path', type: 'string', required: false, description: `Directory path, ${PATH_HELP}. Default: the folder root.` }],
    run: ({ boundary }, args, signal) => listDir(boundary, { path: args.path as string | undefined }, signal),
  },
  {
    name: 'find_files',
    description:
      'Find files by glob. A pattern without "/" matches file names at any depth ("*.ts", "package.json"); ' +
      'a pattern with "/" matches the path relative to the folder root ("src/**/*.test.ts"). Dot files are included; ' +
      `gitignored files, node_modules/ and .git/ are left out. At most ${READ_LIMITS.findMaxResults} results.`,
    arguments: [
      { name: 'pattern', type: 'string', required: true, description: 'Glob (minimatch syntax: *, **, ?, [abc], {a,b}).' },
      { name: 'path', type: 'string', required: false, description: `Directory to search in, ${PATH_HELP}. Default: the whole folder. A gitignored directory or one inside node_modules/ is searched when named here.` },
    ],
    run: ({ boundary, search }, args, signal) =>
      findFiles(boundary, { pattern: args.pattern as string, path: args.path as string | undefined }, signal, search),
  },
  {
    name: 'grep_files',
    description:
      'Search file contents with a JavaScript regular expression, line by line (case-sensitive; use [Aa] for either case). ' +
      `Results are "path:line: text", at most ${READ_LIMITS.grepMaxMatches} matches, long lines shortened, a carriage return or other line break inside a line shown as \\r or \\uXXXX. ` +
      'Gitignored files, node_modules/, .git/, binary files and secret files are not searched. ' +
      'Then use read_file with start_line/end_line to see the surrounding code.',
    arguments: [
      { name: 'pattern', type: 'string', required: true, description: 'JavaScript regular expression (no surrounding slashes), e.g. "function\\s+createToolbox".' },
      { name: 'path', type: 'string', required: false, description: `File or directory to search, ${PATH_HELP}. Default: the whole folder. A gitignored file or directory, or one inside node_modules/, is searched when named here.` },
      { name: 'glob', type: 'string', required: false, description: 'Only search files matching this glob, e.g. "*.ts" (any depth) or "src/**/*.py".' },
    ],
    run: ({ boundary, search }, args, signal) =>
      grepFiles(
        boundary,
        { pattern: args.pattern as string, path: args.path as string | undefined, glob: args.glob as string | undefined },
        signal,
        search,
      ),
  },
  ...SYMBOL_TOOLS,
  ...GIT_TOOLS,
];

/** The names of the read tools, whatever the policy. */
export const READ_TOOL_NAMES: readonly string[] = READ_TOOLS.map((tool) => tool.name);

/** What a policy's `denyTools` may name: the read tools and the hand-off. */
export const DENIABLE_TOOL_NAMES: readonly string[] = [...READ_TOOL_NAMES, PREPARE_CODING_TASK, RECORD_DECISION];

function toToolSpec(tool: ReadToolDefinition): ToolSpec {
  const properties: Record<string, unknown> = {};
  for (const argument of tool.arguments) {
    properties[argument.name] = {
      type: argument.type,
      description: argument.description,
      ...(argument.minimum !== undefined ? { minimum: argument.minimum } : {}),
    };
  }
  return {
    name: tool.name,
    description: tool.description,
    parameters: {
      type: 'object',
      properties,
      required: tool.arguments.filter((argument) => argument.required).map((argument) => argument.name),
      additionalProperties: false,
    },
  };
}

function expectedArguments(tool: ReadToolDefinition): string {
  const parts = tool.arguments.map((argument) => {
    const type = argument.type === 'integer' && argument.minimum !== undefined ? `integer >= ${argument.minimum}` : argument.type;
    return `"${argument.name}": ${type}${argument.required ? ' (required)' : ' (optional)'}`;
  });
  return `Expected a JSON object: {${parts.join(', ')}}.`;
}

/** Parses the model's raw argument string; a string result is the model-facing error. */
function parseArguments(tool: ReadToolDefinition, rawArguments: string): Record<string, unknown> | string {
  const invalid = (problem: string): string => `Invalid arguments for ${tool.name}: ${problem}. ${expectedArguments(tool)}`;
  let parsed: unknown;
  const text = typeof rawArguments === 'string' ? rawArguments.trim() : '';
  if (text === '') {
    parsed = {}; // some models send nothing for a call without arguments
  } else {
    try {
      parsed = JSON.parse(text);
    } catch {
      return invalid('they are not valid JSON');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return invalid('they must be a JSON object');
  }

  const record = parsed as Record<string, unknown>;
  const known = new Map(tool.arguments.map((argument) => [argument.name, argument]));
  for (const key of Object.keys(record)) {
    // Rejected rather than ignored: a typo like "startLine" would otherwise silently read the wrong lines.
    if (!known.has(key)) return invalid(`unknown argument "${key}"`);
  }
  const args: Record<string, unknown> = {};
  for (const argument of tool.arguments) {
    const value = record[argument.name];
    if (value === undefined || value === null) {
      if (argument.required) return invalid(`"${argument.name}" is missing`);
      continue;
    }
    if (argument.type === 'string' && typeof value !== 'string') {
      return invalid(`"${argument.name}" must be a string`);
    }
    if (argument.type === 'boolean' && typeof value !== 'boolean') {
      return invalid(`"${argument.name}" must be true or false`);
    }
    if (argument.type === 'integer') {
      if (typeof value !== 'number' || !Number.isInteger(value)) return invalid(`"${argument.name}" must be an integer`);
      if (argument.minimum !== undefined && value < argument.minimum) {
        return invalid(`"${argument.name}" must be at least ${argument.minimum}`);
      }
    }
    args[argument.name] = value;
  }
  return args;
}

class ReadOnlyToolbox implements Toolbox {
  private readonly deniedTools: ReadonlySet<string>;
  private readonly tools: ReadonlyMap<string, ReadToolDefinition>;

  constructor(
    private readonly boundary: ReadBoundary,
    policy: ReadPolicy,
    private readonly search: SearchEngine,
    private readonly ide: IdeQueries | undefined,
  ) {
    this.deniedTools = new Set(policy.denyTools);
    this.tools = new Map(READ_TOOLS.map((tool) => [tool.name, tool]));
  }

  get root(): string {
    return this.boundary.root;
  }

  definitions(): ToolSpec[] {
    return READ_TOOLS.filter((tool) => !this.deniedTools.has(tool.name)).map(toToolSpec);
  }

  isDenied(name: string): boolean {
    return this.deniedTools.has(name);
  }

  warm(): Promise<void> {
    return this.search.warm({ root: this.boundary.root, denyRead: this.boundary.denyRules.policyGlobs });
  }

  cite(path: string, line: number | undefined, signal?: AbortSignal): Promise<Citation> {
    return citeLines(this.boundary, path, line, signal).catch(() => ({ ok: false as const, problem: 'The cited file could not be read.' }));
  }

  headCommit(signal?: AbortSignal): Promise<string | undefined> {
    return headCommitOf(this.boundary, signal).catch(() => undefined);
  }

  diffSince(base: string | undefined, signal?: AbortSignal): Promise<ToolOutcome> {
    return gitDiffSince(this.boundary, base === undefined ? {} : { base }, signal);
  }

  attach(attachments: readonly Attachment[], signal?: AbortSignal): Promise<ReadAttachment[]> {
    return readAttachments(this.boundary, attachments, signal, { ide: this.ide });
  }

  symbols(query: string, signal?: AbortSignal): Promise<SymbolSuggestion[]> {
    return symbolSuggestions(this.boundary, query, { ide: this.ide, signal }).catch(() => []);
  }

  files(query: string, signal?: AbortSignal): Promise<string[]> {
    return listFiles(this.boundary, query, this.search, signal).catch(() => []);
  }

  async run(name: string, rawArguments: string, signal?: AbortSignal): Promise<ToolOutcome> {
    try {
      // Own-property lookup only: names like "constructor" or "__proto__" are just unknown tools.
      const tool = typeof name === 'string' ? this.tools.get(name) : undefined;
      if (!tool) {
        // READ_ONLY_REFUSAL would tell the model to call the very tool that is denied, in a loop.
        if (name === PREPARE_CODING_TASK && this.deniedTools.has(name)) return { ok: false, output: POLICY_DENIED_HANDOFF };
        if (name === RECORD_DECISION && this.deniedTools.has(name)) return { ok: false, output: POLICY_DENIED_RECORD };
        return { ok: false, output: READ_ONLY_REFUSAL };
      }
      if (this.deniedTools.has(tool.name)) return { ok: false, output: POLICY_DENIED_TOOL };
      if (signal?.aborted) return { ok: false, output: 'Cancelled.' };
      const args = parseArguments(tool, rawArguments);
      if (typeof args === 'string') return { ok: false, output: args };
      return await tool.run({ boundary: this.boundary, search: this.search, ide: this.ide }, args, signal);
    } catch (error) {
      // Never throw into the discussion loop; keep the message free of paths and stack traces.
      const code = (error as NodeJS.ErrnoException | undefined)?.code;
      return { ok: false, output: `The ${String(name)} call failed${code ? ` (${code})` : ''}. Try again with other arguments.` };
    }
  }
}

export interface ToolboxOptions {
  /** How find_files and grep_files search; default: ripgrep from PATH if present, else the Node walk. */
  search?: SearchEngine;
  /** The editor's language service, for the symbol tools; absent outside an editor that offers it. */
  ide?: IdeQueries;
}

/**
 * Binds the read tools to `root` (any path; its real path becomes the
 * boundary) under `policy`. Rejects when `root` is not an existing folder.
 */
export async function createToolbox(root: string, policy: ReadPolicy, options: ToolboxOptions = {}): Promise<Toolbox> {
  const boundary = await ReadBoundary.create(root, policy.denyRead);
  return new ReadOnlyToolbox(boundary, policy, options.search ?? defaultSearchEngine(), options.ide);
}

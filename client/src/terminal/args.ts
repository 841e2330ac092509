import * as fs from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT_CODES_HELP } from './exitCodes';
import { nearest } from './nearest';
import { SLASH_COMMANDS } from './slashCommands';

export const COMMANDS = ['ask', 'list', 'promote', 'export', 'delete', 'rename'] as const;
export type Command = 'interactive' | (typeof COMMANDS)[number];

/** Every option any command takes; each command accepts the global ones and its own. */
export interface Options {
  'base-url'?: string;
  model?: string;
  'api-key'?: string;
  'storage-dir'?: string;
  config?: string;
  'context-tokens'?: string;
  'no-color'?: boolean;
  verbose?: boolean;
  help?: boolean;
  version?: boolean;
  resume?: string;
  folder?: string;
  json?: boolean;
  output?: string;
  handoff?: boolean;
  keep?: boolean;
}

export type Invocation =
  | { kind: 'run'; command: Command; options: Options; positionals: string[] }
  | { kind: 'help'; command: Command }
  | { kind: 'version' };

/** A wrong command line; `command` says whose help to point at. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: Command,
  ) {
    super(message);
  }
}

type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

const GLOBAL_OPTIONS: OptionSpecs = {
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  'storage-dir': { type: 'string' },
  config: { type: 'string' },
  'context-tokens': { type: 'string' },
  'no-color': { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
};

const COMMAND_OPTIONS: Record<Command, OptionSpecs> = {
  interactive: { resume: { type: 'string' }, keep: { type: 'boolean' } },
  ask: { folder: { type: 'string' }, resume: { type: 'string' }, json: { type: 'boolean' }, keep: { type: 'boolean' } },
  list: { folder: { type: 'string' }, json: { type: 'boolean' } },
  promote: { json: { type: 'boolean' }, output: { type: 'string', short: 'o' }, handoff: { type: 'boolean' } },
  export: { json: { type: 'boolean' }, output: { type: 'string', short: 'o' } },
  delete: { json: { type: 'boolean' } },
  rename: { json: { type: 'boolean' } },
};

/** How many positionals each command takes. */
const POSITIONALS: Record<Command, { min: number; max: number; what: string }> = {
  interactive: { min: 0, max: 1, what: 'at most one folder' },
  ask: { min: 0, max: Infinity, what: 'the question' },
  list: { min: 0, max: 0, what: 'no arguments (use --folder F to filter)' },
  promote: { min: 1, max: 1, what: 'exactly one discussion id' },
  export: { min: 1, max: 1, what: 'exactly one discussion id' },
  delete: { min: 1, max: Infinity, what: 'one or more discussion ids' },
  rename: { min: 2, max: Infinity, what: 'a discussion id and the new title' },
};

/**
 * Finds the command (the first positional, when it names one) and parses the
 * rest strictly against that command's options. Options may come before the
 * command: `repo-discuss --model m ask "…"` works.
 */
export function parseCommandLine(argv: string[], isFolder: (name: string) => boolean = existingFolder): Invocation {
  const everyOption: OptionSpecs = Object.assign({}, GLOBAL_OPTIONS, ...Object.values(COMMAND_OPTIONS));
  const { tokens } = parseArgs({ args: argv, options: everyOption, strict: false, allowPositionals: true, tokens: true });
  let command: Command = 'interactive';
  let rest = argv;
  for (const token of tokens ?? []) {
    if (token.kind === 'option-terminator') break;
    if (token.kind !== 'positional') continue;
    if (token.value === 'help') {
      const topic = tokens?.find((t) => t.kind === 'positional' && t.index > token.index);
      const named = topic && topic.kind === 'positional' ? topic.value : undefined;
      return { kind: 'help', command: isCommand(named) ? named : 'interactive' };
    }
    if (isCommand(token.value)) {
      command = token.value;
      rest = [...argv.slice(0, token.index), ...argv.slice(token.index + 1)];
    } else if (!isFolder(token.value)) {
      // `repo-discuss lsit` is a slip for a command, not a folder to discuss (unless there is such a folder).
      const meant = nearest(token.value, [...COMMANDS, 'help']);
      if (meant) throw new UsageError(`unknown command "${token.value}" — did you mean "${meant}"?`, 'interactive');
    }
    break;
  }

  let parsed: { values: Options; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[command] },
      strict: true,
      allowPositionals: true,
    }) as { values: Options; positionals: string[] };
  } catch (err) {
    throw new UsageError(parserSlip(err, command), command);
  }
  if (parsed.values.version) return { kind: 'version' };
  if (parsed.values.help) return { kind: 'help', command };
  const expected = POSITIONALS[command];
  if (parsed.positionals.length < expected.min || parsed.positionals.length > expected.max) {
    throw new UsageError(`needs ${expected.what}; got ${describeList(parsed.positionals)}.`, command);
  }
  for (const key of ['base-url', 'model', 'api-key', 'storage-dir', 'config', 'context-tokens', 'resume', 'folder', 'output'] as const) {
    if (parsed.values[key] !== undefined && parsed.values[key]!.trim() === '') {
      throw new UsageError(`--${key} needs a value.`, command);
    }
  }
  const contextTokens = parsed.values['context-tokens'];
  if (contextTokens !== undefined && !/^[1-9]\d*$/.test(contextTokens.trim())) {
    throw new UsageError(`--context-tokens needs a whole number of tokens, e.g. --context-tokens 32768; got ${JSON.stringify(contextTokens)}.`, command);
  }
  return { kind: 'run', command, options: { ...parsed.values }, positionals: parsed.positionals };
}

function existingFolder(name: string): boolean {
  try {
    return fs.statSync(name).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Node's parser messages ("Unknown option '--modle'. To specify a positional
 * argument starting with a '-', place it…") in this tool's words, with the
 * option most likely meant. Node's own text is kept for anything else.
 */
function parserSlip(err: unknown, command: Command): string {
  const { code, message } = err as { code?: string; message: string };
  const known = Object.keys({ ...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[command] });
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /Unknown option '([^']+)'/.exec(message)?.[1];
    if (option) {
      const name = option.replace(/^-+/, '').split('=')[0];
      const meant = nearest(name, known);
      if (meant) return `unknown option ${option} — did you mean --${meant}?`;
      const owner = COMMANDS.find((other) => other !== command && name in COMMAND_OPTIONS[other]);
      if (owner) return `unknown option ${option} — it is an option of \`repo-discuss ${owner}\`.`;
      return `unknown option ${option}.`;
    }
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /Option '(-[^' ]+)/.exec(message)?.[1];
    const spec = option ? { ...GLOBAL_OPTIONS, ...COMMAND_OPTIONS[command] }[option.replace(/^-+/, '')] : undefined;
    if (option && spec?.type === 'boolean') return `${option} takes no value.`;
    if (option && spec?.type === 'string') return `${option} needs a value (one that starts with "-" is written ${option}=VALUE).`;
  }
  return message;
}

function isCommand(value: string | undefined): value is (typeof COMMANDS)[number] {
  return (COMMANDS as readonly string[]).includes(value ?? '');
}

function describeList(values: string[]): string {
  return values.length === 0 ? 'none' : values.map((v) => JSON.stringify(v)).join(' ');
}

export function commandName(command: Command): string {
  return command === 'interactive' ? 'repo-discuss' : `repo-discuss ${command}`;
}

const MODEL_OPTIONS_HELP = `Model and storage (a flag beats the environment, which beats the config file):
  --base-url URL      OpenAI-compatible endpoint      env OPENAI_BASE_URL   config "baseUrl"
  --model NAME        model id ("auto": the endpoint's default)
                                                      env OPENAI_MODEL      config "model"
  --api-key KEY       discouraged: other processes and your shell history see it
                                                      env OPENAI_API_KEY    config "apiKey"
  --storage-dir DIR   where discussions are saved                           config "storageDir"
                      (default: the folder shared with the VS Code extension)
  --context-tokens N  the model's context window in tokens, for a local server   config "contextTokens"
                      (Ollama serves 4096 unless told otherwise: set what it was started with)
  --config FILE       the config file to read instead of the default one (it must exist)`;

const OUTPUT_OPTIONS_HELP = `Output:
  --no-color          no colours (NO_COLOR does the same; colours are only used on a terminal)
  --verbose           the server's log on stderr
  -h, --help          this help
  --version           the version`;

/** Help text per command; `paths` are the defaults on this machine. */
export function helpText(command: Command, paths: { config: string; storage: string }): string {
  const where = `Config file: ${paths.config}\nDiscussions: ${paths.storage}`;
  switch (command) {
    case 'interactive':
      return `repo-discuss — think a change through with a model that reads your repository, read-only.

Usage:
  repo-discuss [folder] [--resume ID]      discuss a folder (default: the current one)
  repo-discuss ask "question"              one turn, the answer on stdout
  repo-discuss list                        saved discussions
  repo-discuss promote ID                  distill a discussion into a coding task
  repo-discuss export ID                   a discussion as Markdown
  repo-discuss rename ID "title"           retitle a saved discussion
  repo-discuss delete ID...                delete saved discussions
  repo-discuss help COMMAND                help for a command

In a discussion:
  Type a question and press Enter. The reply streams; tool calls show as
  "· tool args → ok" lines, and reads the server refused show as "refused".
  Ctrl+C stops the reply; Ctrl+C again (or when idle) quits; Ctrl+D quits.
${SLASH_COMMANDS}

Options:
  --resume ID         continue a saved discussion (its folder is found for you)
  --keep              keep a new discussion even when its only question got no answer
                      (by default one whose question failed is not kept)

${MODEL_OPTIONS_HELP}

${OUTPUT_OPTIONS_HELP}

${where}

A discussion is open in one place at a time: one open in VS Code (or another
terminal) is refused here as "already open" until it is closed there.

${EXIT_CODES_HELP}`;
    case 'ask':
      return `repo-discuss ask — one turn of a discussion; the answer on stdout.

Usage:
  repo-discuss ask [--folder F] [--resume ID] [--model M] [--json] "question"
  echo "question" | repo-discuss ask [options] -

Options:
  --folder F          the folder to discuss (default: the current one; with --resume,
                      the discussion's own folder)
  --resume ID         continue a saved discussion instead of starting a new one
  --json              every event of the turn as one JSON object per line, on stdout
                      (a refused request is a {"type":"refused"} line, a server that
                      could not start a {"type":"failed"} line)
  --keep              keep the discussion even when the question got no answer

Tool calls, progress and token usage go to stderr when it is a terminal (or with
--verbose), so stdout holds only the answer. The discussion stays saved; on a
terminal, stderr names its id (with --json, every event carries it) for a later
--resume. A new discussion whose question failed before any answer is not kept,
unless --keep is given.

${MODEL_OPTIONS_HELP}

${OUTPUT_OPTIONS_HELP}

${EXIT_CODES_HELP}`;
    case 'list':
      return `repo-discuss list — saved discussions, newest first.

Usage:
  repo-discuss list [--folder F] [--json]

Options:
  --folder F          only discussions of this folder (relative to the current one)
  --json              {"discussions": [...], "saved": [...]} as one JSON document

  --storage-dir DIR   where discussions are saved (default: ${paths.storage})
  --config FILE       the config file to read (default: ${paths.config})

${OUTPUT_OPTIONS_HELP}

${EXIT_CODES_HELP}`;
    case 'promote':
      return `repo-discuss promote — distill a saved discussion into a coding task and print it.

Usage:
  repo-discuss promote ID [--json] [--output FILE] [--handoff]

The discussion is resumed for the distillation and closed again; it must not be
open elsewhere (VS Code, another terminal). Nothing starts and nothing in the
repository changes.

Options:
  --json              {"discussionId", "intent", "constraints"} on stdout
  --output FILE       write the task as Markdown into FILE as well
  --handoff           record the task as handed off (target "file" with --output,
                      else "stdout"): later turns of the discussion are told about it

${MODEL_OPTIONS_HELP}

${OUTPUT_OPTIONS_HELP}

${EXIT_CODES_HELP}`;
    case 'delete':
      return `repo-discuss delete — delete saved discussions for good.

Usage:
  repo-discuss delete ID [ID...] [--json]

An id prefix will do when it names one discussion. Every id is looked up before
any is deleted. A discussion open elsewhere (VS Code, another terminal) is
refused until it is closed there.

Options:
  --json              {"deleted": [...]} on stdout

  --storage-dir DIR   where discussions are saved (default: ${paths.storage})

${OUTPUT_OPTIONS_HELP}

${EXIT_CODES_HELP}`;
    case 'rename':
      return `repo-discuss rename — give a saved discussion another title.

Usage:
  repo-discuss rename ID "new title" [--json]

The title is what \`repo-discuss list\` and VS Code's list show. A discussion
open elsewhere is refused until it is closed there.

Options:
  --json              {"discussionId", "title"} on stdout

  --storage-dir DIR   where discussions are saved (default: ${paths.storage})

${OUTPUT_OPTIONS_HELP}

${EXIT_CODES_HELP}`;
    case 'export':
      return `repo-discuss export — a saved discussion as Markdown (or JSON).

Usage:
  repo-discuss export ID [--json] [--output FILE]

Options:
  --json              the saved record as JSON instead of Markdown
  --output FILE       write into FILE instead of stdout

  --storage-dir DIR   where discussions are saved (default: ${paths.storage})

${OUTPUT_OPTIONS_HELP}

${EXIT_CODES_HELP}`;
  }
}

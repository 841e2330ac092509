import type { ToolSpec } from '../model/types';
import type { Attachment, SymbolSuggestion } from '../../../shared/protocol';
import type { ReadAttachment } from './attachments';

/** What one tool call produced. `output` goes back to the model verbatim. */
export interface ToolOutcome {
  ok: boolean;
  output: string;
  /** Set on a refusal whose reason a caller other than the model needs (an attachment's chip). */
  refusal?: 'binary';
}

/** Narrowing rules: a project policy file and user settings can only add to these. */
export interface ReadPolicy {
  /** Tool names that are neither advertised nor executed. */
  denyTools: string[];
  /** Extra globs (relative to the folder root, minimatch, dot-files included) that may not be read. */
  denyRead: string[];
}

/**
 * The read-only tools of one discussion, bound to one folder. Calls to any
 * name outside the advertised set are answered with a refusal, never run.
 */
export interface Toolbox {
  /** The folder's real path: every read stays inside it. */
  readonly root: string;
  /** The read tools advertised to the model (minus any denied by policy). */
  definitions(): ToolSpec[];
  /** Whether policy denies this tool name (used for tools the core owns, like prepare_coding_task). */
  isDenied(name: string): boolean;
  /** Runs `name` with the raw JSON argument string. Never throws: failures are `ok: false`. */
  run(name: string, rawArguments: string, signal?: AbortSignal): Promise<ToolOutcome>;
  /** A search is likely soon: gets a search thread and the folder's index ready; settles once the index is (never rejects). */
  warm?(): Promise<void>;
  /**
   * Reads one cited place (a line, or the whole file) through the same
   * boundary as read_file, for the decision log's evidence.
   */
  cite?(path: string, line: number | undefined, signal?: AbortSignal): Promise<Citation>;
  /** HEAD of the repository the folder is in, when it is one. */
  headCommit?(signal?: AbortSignal): Promise<string | undefined>;
  /** What changed since `base` (working tree included), or the uncommitted changes without it: git_diff's bounded, filtered text. Never throws. */
  diffSince?(base: string | undefined, signal?: AbortSignal): Promise<ToolOutcome>;
  /** Reads a message's attachments through the read boundary (see attachments.ts). Never throws. */
  attach?(attachments: readonly Attachment[], signal?: AbortSignal): Promise<ReadAttachment[]>;
  /** Folder files matching `query` for `@` completion, best first, none denied (see fileList.ts). Never throws. */
  files?(query: string, signal?: AbortSignal): Promise<string[]>;
  /** Symbols matching `query` for `@` completion, best first, bounded (see symbols/symbolLookup.ts). Never throws. */
  symbols?(query: string, signal?: AbortSignal): Promise<SymbolSuggestion[]>;
}

/** A cited place as it reads now, or why it cannot be read. */
export type Citation =
  | { ok: true; path: string; text: string; commit?: string }
  | { ok: false; problem: string };

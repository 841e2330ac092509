import type { ChatModel } from '../model/types';
import type { ProgressNotification } from '../../../shared/protocol';
import type { Toolbox } from '../read/types';
import type { FileChange, WatchedFolder } from '../symbols/fileChanges';

/** What a discussion sees of its folder: the read-only tools and a bounded orientation. */
export interface RepoBinding {
  toolbox: Toolbox;
  summary: string;
  /** Project instruction files (AGENTS.md and the like), already bounded. */
  instructions: Array<{ path: string; text: string }>;
  /**
   * The repository map within `maxTokens`, or undefined while it is being
   * built (in the background, from `prepare` or the first read: a start
   * never waits for it). Read on every model call, so the map joins the
   * prompt once it is ready.
   */
  repoMap?(maxTokens: number): string | undefined;
  /**
   * What the binding leaves until the discussion has opened and its replay
   * is sent: the repository map's build, and a census served from disk taken
   * afresh. Resolves when both are done, or for a map that takes long, once
   * it has been waited for a while (read/repoAccess.ts MAP_PREPARE_WAIT_MS).
   */
  prepare?(): Promise<void>;
}

/** Binds a folder (already a real path) to read-only file access. */
export interface RepoAccess {
  bind(root: string, extraDenyRead: string[]): Promise<RepoBinding>;
  /** Gets ready for the first bind in the background (once the server is initialized). */
  prepare?(): void;
  /** A client's file watcher covers these folders from now on, and reports their changes through noteFileChanges. */
  watchFolders?(folders: WatchedFolder[]): void;
  /** Changes the client's watcher reported. */
  noteFileChanges?(changes: FileChange[]): void;
}

export interface Clock {
  now(): number;
}

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Everything the discussion core needs from the outside world, injected. */
export interface CoreDeps {
  model: ChatModel;
  repos: RepoAccess;
  clock: Clock;
  logger: Logger;
  /** The configured default model id, if any (a discussion may choose its own). */
  defaultModel(): string | undefined;
  /** Extra deny-read globs from the user's settings. */
  denyRead(): string[];
  /** The user's context window override in tokens, if any. */
  contextTokens?(): number | undefined;
  /** Where a running turn's transient progress goes (a retry's wait); the server sends it to its client. */
  onProgress?(progress: ProgressNotification.Params): void;
  /** Told as a question is sent, before anything else is done with it: a turn rehearsed meanwhile is stopped (rehearsal.ts). */
  onQuestion?(): void;
  newId?: () => string;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
export const systemClock: Clock = { now: () => Date.now() };

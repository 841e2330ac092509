import * as fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DidChangeConfigurationNotification, DidChangeWatchedFilesNotification, FileChangeType, type ClientCapabilities, type Connection } from 'vscode-languageserver';
import type { Logger, RepoAccess } from './core/deps';
import { watcherReportsEverything, type FileChange, type WatchedFolder } from './symbols/fileChanges';

/**
 * Asks a client that can watch files (VS Code) to report every change in its
 * workspace folders, and passes the reports on: the symbol index of a watched
 * folder then stops walking the folder before each query. Without such a
 * client the index walks, as it always did.
 */
export interface FileWatching {
  /** The workspace folders changed: the reports count afresh for the new set. */
  foldersChanged(): void;
}

const KINDS: Record<number, FileChange['kind']> = {
  [FileChangeType.Created]: 'created',
  [FileChangeType.Changed]: 'changed',
  [FileChangeType.Deleted]: 'deleted',
};

export function watchWorkspaceFiles(connection: Connection, capabilities: ClientCapabilities, folders: () => string[], repos: () => RepoAccess | undefined, logger: Logger): FileWatching | undefined {
  if (capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration !== true) return undefined;
  const canAskSettings = capabilities.workspace.configuration === true;

  let told = 0;
  /** Tells the index which folders are watched, and whether the user's watcher excludes hide anything the walk visits. */
  const tell = async (): Promise<void> => {
    const asking = ++told;
    const current = folders();
    let excludes: unknown[] | undefined;
    if (canAskSettings && current.length > 0) {
      excludes = await connection.workspace
        .getConfiguration(current.map((folder) => ({ scopeUri: pathToFileURL(folder).href, section: 'files.watcherExclude' })))
        .catch(() => undefined);
    }
    const watched: WatchedFolder[] = await Promise.all(
      current.map(async (folder, at) => ({
        path: folder,
        realPath: await fs.promises.realpath(folder).catch(() => folder),
        // Only VS Code's watcher is known to report everything but its `files.watcherExclude`. Another client's may leave out
        // what it pleases (build directories, past a count of files), and one whose settings could not be read might hide
        // anything: such a folder is walked as if unwatched.
        complete: excludes !== undefined && asRecord(excludes[at]) !== undefined && watcherReportsEverything(asRecord(excludes[at])),
      })),
    );
    // A later call, for newer folders or settings, may have finished first: the older answer is not told over it.
    if (asking !== told) return;
    repos()?.watchFolders?.(watched);
    for (const folder of watched) logger.info(`file changes in ${folder.realPath} are ${folder.complete ? 'reported' : 'not all reported: its symbol index looks at the folder before answering'}`);
    if (watched.length === 0) logger.info('no folder has its file changes reported: symbol indexes look at their folders before answering');
  };

  connection.onDidChangeWatchedFiles((params) => {
    const changes: FileChange[] = [];
    for (const change of params.changes) {
      const kind = KINDS[change.type];
      if (kind === undefined) continue;
      try {
        changes.push({ path: fileURLToPath(change.uri), kind });
      } catch {
        // Not a file: URI: nothing the index reads.
      }
    }
    repos()?.noteFileChanges?.(changes);
  });
  connection.onDidChangeConfiguration(() => void tell());
  void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: '**/*' }] }).then(
    () => tell(),
    (err: unknown) => logger.warn(`The client did not take the file watcher; the symbol index keeps walking the folder: ${err instanceof Error ? err.message : String(err)}`),
  );
  if (capabilities.workspace.didChangeConfiguration?.dynamicRegistration === true) {
    void connection.client.register(DidChangeConfigurationNotification.type, { section: 'files' }).catch(() => undefined);
  }
  return { foldersChanged: () => void tell() };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

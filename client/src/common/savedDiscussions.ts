import { ListRequest, type DiscussionSummary, type RequestChannel } from '../../../shared/protocol';

/** Sends one request to the server: DiscussionHub.request, or a raw connection's. */
export type Requester = RequestChannel['request'];

/**
 * The discussions of `folders` and of no other folder, as "Open saved
 * discussion" lists them: those open in this server first, then the saved
 * ones, each newest first. One discuss/list per folder with the server's
 * folder filter, which compares real paths, so a folder opened through a
 * symlink still finds its discussions; two folders that are one real folder
 * list each discussion once. No folders means no discussions: discuss/list
 * without a folder would answer every folder's.
 */
export async function listDiscussionsOf(folders: readonly string[], request: Requester): Promise<DiscussionSummary[]> {
  const lists = await Promise.all(folders.map((folder) => request(ListRequest.method, { folder })));
  const seen = new Set<string>();
  const newestFirstOnce = (rows: DiscussionSummary[]) =>
    rows
      .sort((a, b) => (b.updatedAt ?? b.createdAt) - (a.updatedAt ?? a.createdAt))
      .filter((row) => {
        if (seen.has(row.discussionId)) return false;
        seen.add(row.discussionId);
        return true;
      });
  return [...newestFirstOnce(lists.flatMap((list) => list.discussions)), ...newestFirstOnce(lists.flatMap((list) => list.saved))];
}

/** What "Open saved discussion" says when there is nothing of this window's to list. */
export function noDiscussionsMessage(folderNames: readonly string[]): string {
  if (folderNames.length === 0) {
    return 'Open a folder first: saved discussions are listed in the window of the folder they discuss.';
  }
  const which = folderNames.length === 1 ? folderNames[0] : `the ${folderNames.length} folders of this workspace`;
  return `No saved discussions of ${which} yet (those of other folders are listed in their own windows). Start one with "Repo Discuss: Discuss this repo".`;
}

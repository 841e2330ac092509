import { DISCUSS_SELECTION_COMMAND, PROMOTE_LOCATION_COMMAND, type CodeLocation } from '../../shared/protocol';
import { locationMessage } from '../../shared/locationMessage';
import { insideWorkspace } from './codeActions';
import { DiscussError } from './core/errors';
import type { DiscussionService } from './core/service';

/** The commands the server runs for editors without the extension. */
export const SERVER_COMMANDS = [DISCUSS_SELECTION_COMMAND, PROMOTE_LOCATION_COMMAND];

/**
 * Editors without the extension (Neovim, Helix) run the code actions'
 * commands through the server: the location goes into the folder's open
 * discussion, one is started if needed, and `subscribe` is called from the
 * message's seq on so the editor sees the reply.
 */
export async function sendLocation(
  service: DiscussionService,
  workspaceFolders: readonly string[],
  command: string,
  argument: unknown,
  subscribe: (discussionId: string, fromSeq: number) => void,
): Promise<{ discussionId: string; seq: number }> {
  const location = argument as CodeLocation | undefined;
  if (!SERVER_COMMANDS.includes(command) || !location || typeof location.uri !== 'string') {
    throw new DiscussError('InvalidParams', `Unknown command or arguments: ${command}.`);
  }
  const folder = workspaceFolders.filter((f) => insideWorkspace(location.uri, [f])).sort((a, b) => b.length - a.length)[0];
  if (!folder) throw new DiscussError('InvalidParams', 'That file is not inside a workspace folder, so a discussion cannot read it.');
  const { discussions } = await service.list({ folder });
  const discussionId = discussions[0]?.discussionId ?? (await service.start({ folder })).discussionId;
  const discussion = service.find(discussionId)!;
  // Sent first: a refused send (a turn is running) changes nothing.
  const sent = service.send(discussionId, locationMessage(location, discussion.repo, command === PROMOTE_LOCATION_COMMAND));
  subscribe(discussionId, sent.seq);
  return { discussionId, seq: sent.seq };
}

import type { RepoAccess, RepoBinding } from '../core/deps';
import { DiscussError } from '../core/errors';
import { PolicyError, loadPolicy } from './policy';
import { readInstructionFiles, summarizeRepo } from './repoContext';
import { createToolbox } from './toolbox';

/**
 * Binds a folder to its read-only tools under the project's policy narrowed
 * by the user's settings. A policy that cannot be read refuses the start:
 * running with a policy we misread could widen what the model may see.
 */
export function createRepoAccess(): RepoAccess {
  return {
    async bind(root: string, extraDenyRead: string[]): Promise<RepoBinding> {
      let policy;
      try {
        policy = await loadPolicy(root, { denyRead: extraDenyRead });
      } catch (err) {
        if (err instanceof PolicyError) throw new DiscussError('InvalidParams', err.message);
        throw err;
      }
      const [toolbox, summary, instructions] = await Promise.all([
        createToolbox(root, policy),
        summarizeRepo(root, policy),
        readInstructionFiles(root, policy),
      ]);
      return { toolbox, summary, instructions };
    },
  };
}

import type { DiscussionStore } from './types';

/** Keeps nothing: discussions live as long as the process. */
export function memoryStore(): DiscussionStore {
  return {
    persistent: false,
    load: async () => undefined,
    save: () => undefined,
    appendEvent: () => undefined,
    list: async () => [],
    acquire: async () => ({ release: async () => undefined }),
    delete: async () => false,
    flush: async () => undefined,
    discard: async () => undefined,
  };
}

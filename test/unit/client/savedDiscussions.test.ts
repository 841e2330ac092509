import { strict as assert } from 'node:assert';
import { listDiscussionsOf, noDiscussionsMessage, type Requester } from '../../../client/src/common/savedDiscussions';
import type { DiscussionSummary, ListRequest } from '../../../shared/protocol';

function row(discussionId: string, repo: string, updatedAt: number): DiscussionSummary {
  return { discussionId, repo, createdAt: 1_000, updatedAt, turns: 1, title: discussionId };
}

/** A server that answers discuss/list from fixed lists per folder, and records what it was asked. */
function serverWith(lists: Record<string, ListRequest.Result>) {
  const asked: unknown[] = [];
  const request = (async (method: string, params: unknown) => {
    asked.push({ method, params });
    const folder = (params as ListRequest.Params).folder;
    if (folder === undefined) throw new Error('asked for every folder');
    return lists[folder] ?? { discussions: [], saved: [] };
  }) as Requester;
  return { asked, request };
}

describe('the list of "Open saved discussion"', () => {
  it('asks the server for each folder with its folder filter', async () => {
    const server = serverWith({});
    await listDiscussionsOf(['/w/shop', '/w/billing'], server.request);
    assert.deepEqual(server.asked, [
      { method: 'discuss/list', params: { folder: '/w/shop' } },
      { method: 'discuss/list', params: { folder: '/w/billing' } },
    ]);
  });

  it('puts the open discussions of every folder before the saved ones, each newest first', async () => {
    const server = serverWith({
      '/w/shop': { discussions: [row('open-shop', '/w/shop', 30)], saved: [row('saved-shop', '/w/shop', 10)] },
      '/w/billing': { discussions: [row('open-billing', '/w/billing', 40)], saved: [row('saved-billing', '/w/billing', 20)] },
    });
    const listed = await listDiscussionsOf(['/w/shop', '/w/billing'], server.request);
    assert.deepEqual(listed.map((r) => r.discussionId), ['open-billing', 'open-shop', 'saved-billing', 'saved-shop']);
  });

  it('orders by creation a discussion that has no update time', async () => {
    const never = { ...row('never-updated', '/w/shop', 0), createdAt: 50 };
    delete never.updatedAt;
    const server = serverWith({ '/w/shop': { discussions: [], saved: [row('updated', '/w/shop', 40), never] } });
    const listed = await listDiscussionsOf(['/w/shop'], server.request);
    assert.deepEqual(listed.map((r) => r.discussionId), ['never-updated', 'updated']);
  });

  it('lists a discussion once when two folders answer with it', async () => {
    const same = { discussions: [row('d1', '/real/shop', 10)], saved: [] };
    const server = serverWith({ '/w/shop': same, '/w/shop-link': same });
    const listed = await listDiscussionsOf(['/w/shop', '/w/shop-link'], server.request);
    assert.deepEqual(listed.map((r) => r.discussionId), ['d1']);
  });

  it("lists nothing for a window without folders, and never asks for every folder's discussions", async () => {
    const server = serverWith({});
    assert.deepEqual(await listDiscussionsOf([], server.request), []);
    assert.deepEqual(server.asked, []);
  });
});

describe('the message "Open saved discussion" shows when there is nothing to list', () => {
  it('names the folder of a one-folder window and says where other folders\' discussions are', () => {
    const message = noDiscussionsMessage(['invoice-service']);
    assert.match(message, /^No saved discussions of invoice-service yet/);
    assert.match(message, /other folders are listed in their own windows/);
    assert.match(message, /"Repo Discuss: Discuss this repo"/);
  });

  it('counts the folders of a multi-root workspace', () => {
    assert.match(noDiscussionsMessage(['shop', 'billing']), /^No saved discussions of the 2 folders of this workspace yet/);
  });

  it('asks for a folder when the window has none', () => {
    assert.match(noDiscussionsMessage([]), /^Open a folder first/);
  });
});

/** Streaming replies into the DOM: pending replies are flushed at most once a frame, rendering only what is new. */
import { MarkdownStream, type StreamUpdate } from './markdown';
import { isNearBottom, scrollToBottom, type Panel, type PendingReply, type TurnView } from './panel';

/**
 * The model is already ahead of the DOM when changes are applied (a batch of
 * events lands at once), so a flush renders whatever the turn's reply holds
 * beyond what its stream has: never the same text twice.
 */
export function queueReply(panel: Panel, turnId: number, replace: boolean, appended?: string): void {
  const pending = panel.pendingReplies.get(turnId) ?? { replace: false, appended: [] };
  pending.replace ||= replace;
  if (appended) pending.appended.push(appended);
  panel.pendingReplies.set(turnId, pending);
  scheduleReplyFlush(panel);
}

/** Deltas arrive faster than frames: render at most once a frame. */
function scheduleReplyFlush(panel: Panel): void {
  if (panel.replyFrame !== null) return;
  panel.replyFrame = requestAnimationFrame(() => {
    panel.replyFrame = null;
    const pinned = isNearBottom(panel);
    for (const [turnId, pending] of panel.pendingReplies) {
      const view = panel.turnViews.get(turnId);
      if (view) flushReply(panel, view, pending);
    }
    panel.pendingReplies.clear();
    if (pinned) scrollToBottom(panel);
  });
}

function flushReply(panel: Panel, view: TurnView, pending: PendingReply): void {
  const text = view.turn.reply;
  if (!view.stream) {
    view.stream = new MarkdownStream(panel.renderer);
    applyStreamUpdate(view, view.stream.replace(text));
  } else if (pending.replace) {
    // Usually the final message is exactly what streamed; re-render only if not.
    if (view.stream.source !== text) applyStreamUpdate(view, view.stream.replace(text));
  } else if (text.length > view.stream.sourceLength) {
    // The deltas themselves, not a slice of the reply: slicing the reply (a
    // string grown by +=) copies all of it first, a whole reply per frame.
    const appended = pending.appended.join('');
    const fresh = view.stream.sourceLength + appended.length === text.length ? appended : text.slice(view.stream.sourceLength);
    applyStreamUpdate(view, view.stream.append(fresh));
  }
  // A finished reply never changes again: let its stream state go.
  if (view.turn.complete) view.stream = null;
}

export function applyStreamUpdate(view: TurnView, update: StreamUpdate): void {
  if (update.reset) view.frozen.innerHTML = update.frozenHtml;
  else if (update.frozenHtml) view.frozen.insertAdjacentHTML('beforeend', update.frozenHtml);
  view.tail.innerHTML = update.tailHtml;
}

import type { DiscussionEvent } from '../../../shared/protocol';
import { term, type TerminalText } from './inertText';
import type { Style } from './render';

/** Tokens sent to the model (prompt) and received from it (completion). */
export interface TokenTotals {
  prompt: number;
  completion: number;
}

/**
 * Every `usage` event of a discussion added up: each turn's, and the
 * compaction and review calls' too, since those are paid for as well.
 */
export function discussionUsage(events: readonly DiscussionEvent[]): TokenTotals {
  const totals = { prompt: 0, completion: 0 };
  for (const event of events) {
    if (event.type !== 'usage') continue;
    totals.prompt += count(event.promptTokens);
    totals.completion += count(event.completionTokens);
  }
  return totals;
}

/** The usage events of the turn that starts at `fromSeq`. */
export function turnUsage(events: readonly DiscussionEvent[], fromSeq: number): TokenTotals {
  return discussionUsage(events.filter((event) => event.seq >= fromSeq));
}

/** "1,234 in · 56 out": what the line after a reply and `/usage` show. */
export function tokensText(totals: TokenTotals): string {
  return `${totals.prompt.toLocaleString('en-US')} in · ${totals.completion.toLocaleString('en-US')} out`;
}

/** The dim line after a reply; nothing when the endpoint reported no usage for the turn. */
export function usageLine(turn: TokenTotals | undefined, discussion: TokenTotals, style: Style): TerminalText | undefined {
  if (!turn) return undefined;
  return style.dim(`  tokens: ${tokensText(turn)} this turn · ${tokensText(discussion)} in this discussion`);
}

/** `/usage`: the discussion's totals, and its last turn's. */
export function usageReport(events: readonly DiscussionEvent[], style: Style): TerminalText[] {
  const total = discussionUsage(events);
  if (!events.some((event) => event.type === 'usage')) {
    return [term`  ${style.dim('No token usage reported yet: the endpoint sends it with a reply, if it reports it at all.')}`];
  }
  const lastTurnStart = [...events].reverse().find((event) => event.type === 'user_message')?.seq ?? 0;
  return [
    term`  ${style.bold('This discussion')}  ${tokensText(total)} (${(total.prompt + total.completion).toLocaleString('en-US')} tokens)`,
    term`  ${style.bold('Last turn')}        ${tokensText(turnUsage(events, lastTurnStart))}`,
  ];
}

/** A count from the server, which is trusted for its shape but not to send only sane numbers. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

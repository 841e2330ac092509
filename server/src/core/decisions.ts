import { createHash } from 'node:crypto';
import {
  DECISION_KINDS,
  type ConstraintSource,
  type Decision,
  type DecisionEvidence,
  type DecisionKind,
  type PreparedTask,
  type StaleEvidence,
} from '../../../shared/protocol';
import { evidenceLabel } from '../../../shared/evidenceLabel';
import { cutText } from '../../../shared/cutText';
import { oneLine } from '../../../shared/oneLine';
import { printablePath } from '../../../shared/printablePath';
import type { Citation } from '../read/types';
import { DiscussError } from './errors';

/** Bounds of the log: every request carries all of it, so it must stay small. */
export const DECISION_LIMITS = Object.freeze({
  entries: 60,
  textChars: 600,
  evidencePerEntry: 6,
  /** Characters of a cited line kept to show its diff later. */
  citedLineChars: 400,
  pathChars: 1000,
});

/** Reads a cited place through the read boundary (the toolbox's `cite`). */
export type Cite = (path: string, line: number | undefined, signal?: AbortSignal) => Promise<Citation>;

/** The saved part of a log. */
export interface DecisionLogState {
  decisions: Decision[];
  nextDecisionId: number;
}

export function hashOf(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const KIND_HEADINGS: Record<DecisionKind, string> = {
  constraint: 'Constraints agreed',
  rejected: 'Alternatives rejected',
  question: 'Open questions',
  resolved: 'Questions resolved',
};

/**
 * The decision log of one discussion: the current entries (superseded and
 * deleted ones leave it), ids that are never reused, and the section every
 * model request carries so a long discussion never forgets what was agreed.
 */
export class DecisionLog {
  private entries: Decision[];
  private nextId: number;

  constructor(saved?: Partial<DecisionLogState>) {
    this.entries = Array.isArray(saved?.decisions) ? [...saved.decisions] : [];
    this.nextId = typeof saved?.nextDecisionId === 'number' ? saved.nextDecisionId : this.entries.length + 1;
  }

  get current(): readonly Decision[] {
    return this.entries;
  }

  state(): DecisionLogState {
    return { decisions: [...this.entries], nextDecisionId: this.nextId };
  }

  find(id: unknown): Decision | undefined {
    return typeof id === 'string' ? this.entries.find((d) => d.id === id) : undefined;
  }

  /**
   * The model's `record_decision` call: the entry recorded, or what to tell
   * the model instead. Evidence that cannot be read (outside the folder, a
   * secret, missing) refuses the whole entry, so the log never cites what a
   * read would have been refused.
   */
  async recordFromToolCall(rawArguments: string, cite: Cite | undefined, now: number, signal?: AbortSignal): Promise<{ decision: Decision } | { problem: string }> {
    let args: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(rawArguments || '{}');
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      args = parsed as Record<string, unknown>;
    } catch {
      return { problem: `record_decision needs JSON arguments: ${RECORD_DECISION_SHAPE}.` };
    }
    const kind = args.kind;
    if (typeof kind !== 'string' || !DECISION_KINDS.includes(kind as DecisionKind)) {
      return { problem: `record_decision: "kind" must be one of ${DECISION_KINDS.join(', ')}.` };
    }
    const text = typeof args.text === 'string' ? args.text.trim() : '';
    if (!text) return { problem: 'record_decision: "text" must say the decision in one sentence.' };
    if (text.length > DECISION_LIMITS.textChars) return { problem: `record_decision: keep "text" under ${DECISION_LIMITS.textChars} characters.` };
    let replaces: string | undefined;
    if (args.replaces !== undefined && args.replaces !== null) {
      if (!this.find(args.replaces)) {
        return { problem: `record_decision: "replaces" names no current entry (${this.entries.map((d) => d.id).join(', ') || 'the log is empty'}).` };
      }
      replaces = args.replaces as string;
    }
    const rawEvidence = args.evidence ?? [];
    if (!Array.isArray(rawEvidence) || rawEvidence.length > DECISION_LIMITS.evidencePerEntry) {
      return { problem: `record_decision: "evidence" is a list of at most ${DECISION_LIMITS.evidencePerEntry} {"path": string, "line"?: integer}.` };
    }
    const evidence: DecisionEvidence[] = [];
    for (const item of rawEvidence) {
      const record = (item ?? {}) as { path?: unknown; line?: unknown };
      if (typeof record.path !== 'string' || !record.path || record.path.length > DECISION_LIMITS.pathChars) {
        return { problem: 'record_decision: each evidence needs a "path" inside the folder.' };
      }
      const line = record.line;
      if (line !== undefined && line !== null && (typeof line !== 'number' || !Number.isInteger(line) || line < 1)) {
        return { problem: 'record_decision: an evidence "line" is a 1-based integer.' };
      }
      if (!cite) return { problem: 'record_decision: evidence cannot be checked here; record the decision without evidence.' };
      const cited = await cite(record.path, typeof line === 'number' ? line : undefined, signal);
      if (!cited.ok) return { problem: `record_decision: the evidence ${printablePath(record.path)} cannot be cited: ${cited.problem}` };
      evidence.push(evidenceFrom(cited, typeof line === 'number' ? line : undefined));
    }
    const live = this.entries.length - (replaces ? 1 : 0);
    if (live >= DECISION_LIMITS.entries) {
      return { problem: `record_decision: the log holds ${DECISION_LIMITS.entries} entries; replace an old one ("replaces") instead of adding.` };
    }
    const decision: Decision = {
      id: `d${this.nextId++}`,
      kind: kind as DecisionKind,
      text,
      evidence,
      ...(replaces ? { replaces } : {}),
      at: now,
      by: 'model',
    };
    if (replaces) this.entries = this.entries.filter((d) => d.id !== replaces);
    this.entries.push(decision);
    return { decision };
  }

  /** The user's edit of an entry: same id, new text or kind, evidence kept. */
  edit(id: unknown, change: { text?: unknown; kind?: unknown }, now: number): Decision {
    const existing = this.require(id);
    const text = change.text === undefined || change.text === null ? existing.text : typeof change.text === 'string' ? change.text.trim() : '';
    if (!text) throw new DiscussError('InvalidParams', 'The decision text is empty — say the decision, or delete the entry instead.');
    if (text.length > DECISION_LIMITS.textChars) {
      throw new DiscussError('InvalidParams', `Keep a decision under ${DECISION_LIMITS.textChars} characters.`);
    }
    const kind = change.kind === undefined || change.kind === null ? existing.kind : change.kind;
    if (typeof kind !== 'string' || !DECISION_KINDS.includes(kind as DecisionKind)) {
      throw new DiscussError('InvalidParams', `"kind" must be one of ${DECISION_KINDS.join(', ')}.`);
    }
    const edited: Decision = { ...existing, text, kind: kind as DecisionKind, at: now, by: 'user' };
    this.entries = this.entries.map((d) => (d.id === existing.id ? edited : d));
    return edited;
  }

  delete(id: unknown): void {
    const existing = this.require(id);
    this.entries = this.entries.filter((d) => d.id !== existing.id);
  }

  /** The section of the system prompt that carries the log; empty when the log is. */
  promptSection(): string {
    if (this.entries.length === 0) return '';
    const lines: string[] = [
      '',
      '',
      '## Decision log (current; the user may have edited it — it overrides anything earlier in the conversation)',
    ];
    for (const kind of DECISION_KINDS) {
      const ofKind = this.entries.filter((d) => d.kind === kind);
      if (ofKind.length === 0) continue;
      lines.push(`### ${KIND_HEADINGS[kind]}`);
      for (const d of ofKind) {
        // One line per entry: a line break in the model's (or the user's) text would start what reads as another entry or heading.
        lines.push(`- [${d.id}] ${oneLine(d.text)}`);
        // The evidence on a line of its own, which no entry's text can write: after the text on its line, an entry
        // saying "(evidence: …)" read as cited.
        if (d.evidence.length) lines.push(`  - evidence: ${d.evidence.map(evidenceLabel).join(', ')}`);
      }
    }
    return lines.join('\n');
  }

  openQuestions(): string[] {
    return this.entries.filter((d) => d.kind === 'question').map((d) => d.text);
  }

  /**
   * A task that starts from the log: its constraints are the log's, then
   * whatever the distillation (or the model's call) added that the log does
   * not already hold, marked as added. An empty log leaves the task as given.
   */
  taskFrom(proposed: PreparedTask): PreparedTask {
    if (this.entries.length === 0) return { intent: proposed.intent, constraints: proposed.constraints };
    const sources: ConstraintSource[] = this.entries
      .filter((d) => d.kind === 'constraint')
      .map((d) => ({ text: d.text, source: 'decision' as const, decisionId: d.id, evidence: d.evidence.map(evidenceLabel) }));
    const known = new Set(sources.map((s) => normalized(s.text)));
    for (const text of proposed.constraints) {
      if (known.has(normalized(text))) continue;
      known.add(normalized(text));
      sources.push({ text, source: 'distilled' });
    }
    return { intent: proposed.intent, constraints: sources.map((s) => s.text), constraintSources: sources, openQuestions: this.openQuestions() };
  }

  /**
   * The task's constraints (as the user may have edited them) matched to the
   * log by text, each logged one re-checked: a cited line that changed since
   * it was recorded marks its constraint stale, with the diff of that line.
   */
  async recheck(task: PreparedTask, cite: Cite | undefined, signal?: AbortSignal): Promise<PreparedTask> {
    if (this.entries.length === 0) return { intent: task.intent, constraints: task.constraints };
    const byText = new Map(this.entries.filter((d) => d.kind === 'constraint').map((d) => [normalized(d.text), d]));
    const sources: ConstraintSource[] = [];
    for (const text of task.constraints) {
      const decision = byText.get(normalized(text));
      if (!decision) {
        sources.push({ text, source: 'distilled' });
        continue;
      }
      const stale = cite ? await staleEvidence(decision, cite, signal) : [];
      sources.push({
        text,
        source: 'decision',
        decisionId: decision.id,
        evidence: decision.evidence.map(evidenceLabel),
        ...(stale.length ? { stale } : {}),
      });
    }
    return { intent: task.intent, constraints: task.constraints, constraintSources: sources, openQuestions: this.openQuestions() };
  }

  private require(id: unknown): Decision {
    const found = this.find(id);
    if (!found) {
      throw new DiscussError('NotFound', `No decision ${typeof id === 'string' ? cutText(id, 40, 'after') : ''} in this discussion's log — list them with discuss/decisions.`);
    }
    return found;
  }
}

export const RECORD_DECISION_SHAPE =
  '{"kind": "constraint"|"rejected"|"question"|"resolved", "text": string, "evidence"?: [{"path": string, "line"?: integer}], "replaces"?: string}';

function normalized(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

function evidenceFrom(cited: Extract<Citation, { ok: true }>, line: number | undefined): DecisionEvidence {
  return {
    path: cited.path,
    ...(line !== undefined ? { line } : {}),
    hash: hashOf(cited.text),
    ...(line !== undefined ? { text: cutText(cited.text, DECISION_LIMITS.citedLineChars, 'after') } : {}),
    ...(cited.commit ? { commit: cited.commit } : {}),
  };
}

/** The evidence of one decision whose cited lines no longer read as recorded. */
export async function staleEvidence(decision: Decision, cite: Cite, signal?: AbortSignal): Promise<StaleEvidence[]> {
  const stale: StaleEvidence[] = [];
  for (const evidence of decision.evidence) {
    const now = await cite(evidence.path, evidence.line, signal);
    if (now.ok && hashOf(now.text) === evidence.hash) continue;
    const before = evidence.line === undefined ? `(the whole file, as recorded)` : (evidence.text ?? '');
    const after = now.ok
      ? evidence.line === undefined
        ? '(the file has changed)'
        : cutText(now.text, DECISION_LIMITS.citedLineChars, 'after')
      : `(cannot be read now: ${cutText(now.problem, 200, 'after')})`;
    stale.push({
      path: evidence.path,
      ...(evidence.line !== undefined ? { line: evidence.line } : {}),
      diff: `- ${before}\n+ ${after}`,
      ...(evidence.commit ? { recordedCommit: evidence.commit } : {}),
      ...(now.ok && now.commit ? { currentCommit: now.commit } : {}),
    });
  }
  return stale;
}

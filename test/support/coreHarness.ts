import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscussionEvent } from '../../shared/protocol';
import type { Clock, RepoAccess, RepoBinding } from '../../server/src/core/deps';
import { silentLogger } from '../../server/src/core/deps';
import { DiscussionService } from '../../server/src/core/service';
import type { DiscussionStore } from '../../server/src/store/types';
import type { Toolbox, ToolOutcome } from '../../server/src/read/types';
import { ScriptedModel, type ScriptStep } from './scriptedModel';
import { createToolbox } from '../../server/src/read/toolbox';
import type { ChatModel } from '../../server/src/model/types';
import { ProxiedChatModel } from '../../server/src/model/proxied/chatModel';
import { FakeLanguageModels } from './fakeLanguageModels';

/**
 * Which model the core talks to: the scripted one itself, or the proxied one
 * (VS Code language models through the client) in front of fake `vscode.lm`
 * models that answer from the same script. The core suites run under both.
 */
let modelSource: 'scripted' | 'proxied' = 'scripted';
export function useModelSource(source: 'scripted' | 'proxied'): void {
  modelSource = source;
}

/** A clock tests move by hand, so idle reaping needs no waiting. */
export class ManualClock implements Clock {
  constructor(public current = 1_700_000_000_000) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** A toolbox that answers read_file from a table and refuses everything else. */
export class FakeToolbox implements Toolbox {
  readonly calls: Array<{ name: string; args: string }> = [];
  /** How often a discussion asked for a search thread to be got ready. */
  warmed = 0;
  constructor(
    readonly root: string,
    private readonly contents: Record<string, string> = {},
    private readonly denied: string[] = [],
  ) {}
  definitions() {
    return [{ name: 'read_file', description: 'read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } }].filter(
      (d) => !this.denied.includes(d.name),
    );
  }
  isDenied(name: string): boolean {
    return this.denied.includes(name);
  }
  async warm(): Promise<void> {
    this.warmed++;
  }
  async run(name: string, args: string): Promise<ToolOutcome> {
    this.calls.push({ name, args });
    if (name === 'read_file' && !this.denied.includes(name)) {
      const p = (JSON.parse(args) as { path: string }).path;
      return p in this.contents ? { ok: true, output: this.contents[p] } : { ok: false, output: `no such file: ${p}` };
    }
    return { ok: false, output: 'refused: this conversation is read-only' };
  }
}

export interface Harness {
  service: DiscussionService;
  model: ScriptedModel;
  clock: ManualClock;
  folder: string;
  toolbox: FakeToolbox;
  binds: number;
  cleanup(): void;
}

export function makeTempFolder(prefix = 'rd-core-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function harness(
  steps: ScriptStep[] = [],
  options: { files?: Record<string, string>; denied?: string[]; store?: DiscussionStore; bindGate?: Promise<void>; bindError?: Error; contextTokens?: number; summary?: string; folder?: string; instructions?: () => Array<{ path: string; text: string }>; realReads?: boolean } = {},
): Harness {
  const folder = options.folder ?? makeTempFolder();
  const model = new ScriptedModel(steps);
  const clock = new ManualClock();
  const toolbox = new FakeToolbox(folder, options.files, options.denied);
  const h: Partial<Harness> = { model, clock, folder, toolbox, binds: 0 };
  const served: ChatModel = modelSource === 'proxied' ? new ProxiedChatModel(new FakeLanguageModels(model)) : model;
  const repos: RepoAccess = {
    async bind(): Promise<RepoBinding> {
      h.binds!++;
      if (options.bindGate) await options.bindGate;
      if (options.bindError) throw options.bindError;
      // The real read tools (boundary, secrets, git) where a test needs what they check.
      const bound = options.realReads ? await createToolbox(folder, { denyTools: options.denied ?? [], denyRead: [] }) : toolbox;
      return { toolbox: bound, summary: options.summary ?? 'a small test folder', instructions: options.instructions?.() ?? [] };
    },
  };
  h.service = new DiscussionService(
    { model: served, repos, clock, logger: silentLogger, defaultModel: () => undefined, denyRead: () => [], contextTokens: () => options.contextTokens },
    options.store,
  );
  h.cleanup = () => fs.rmSync(folder, { recursive: true, force: true });
  return h as Harness;
}

/** Collects a discussion's events through a subscription, and waits on them. */
export class EventLog {
  readonly events: DiscussionEvent[] = [];
  private readonly waiters: Array<{ test: (e: DiscussionEvent[]) => boolean; resolve: () => void }> = [];

  readonly sink = {
    deliver: (event: DiscussionEvent) => {
      this.events.push(event);
      for (const w of [...this.waiters]) {
        if (w.test(this.events)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    },
  };

  until(test: (events: DiscussionEvent[]) => boolean): Promise<void> {
    if (test(this.events)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** Resolves when the `n`th turn_complete has arrived. */
  turnsComplete(n = 1): Promise<void> {
    return this.until((events) => events.filter((e) => e.type === 'turn_complete').length >= n);
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }

  of<T extends DiscussionEvent['type']>(type: T): Array<Extract<DiscussionEvent, { type: T }>> {
    return this.events.filter((e) => e.type === type) as Array<Extract<DiscussionEvent, { type: T }>>;
  }
}

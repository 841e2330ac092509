/**
 * Shared ground for the adversarial suite: a lab directory holding a hostile
 * repository, an "outside" next to it, a fake home and the storage folder; the
 * fake OpenAI endpoint; real server processes over stdio; a sentinel planted
 * wherever the model must never see; and the checks every part repeats (leak
 * scan, tree hash, history validity).
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscussionEvent, InitializationOptions, StartRequest } from '../../shared/protocol';
import { SECRET_SAMPLES } from '../support/secretSamples';
import { startFakeOpenAI, type FakeOpenAI, type FakeOpenAIOptions, type FakeStep, type RecordedRequest } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

import { ripgrepOnPath } from '../support/toolFixture';

export { ripgrepOnPath };

/**
 * Planted outside the folder, in secret files inside it, in the server's
 * environment and in file names outside. No part of any tool call, user
 * message or path the suite sends contains it, so finding it anywhere the
 * model, a client or a log can see is a leak.
 */
export const SENTINEL = 'ZQXJ-sentinel-4e1d9b';
/** Its first four characters, to catch a cut fragment of it (previews are bounded). */
export const SENTINEL_CORE = 'ZQXJ';
/** Regular expressions that match the sentinel without containing it. */
export const SENTINEL_PATTERNS = ['[Z]QXJ.sentinel', 'Z.XJ-sent', '[A-Z]{4}-sentinel-[0-9a-f]+'];
/** Planted in an ordinary file inside the folder: proves tool output does reach the events and the model. */
export const INSIDE_MARKER = 'INSIDE-MARKER-81c2';

/** A file body made of the sentinel on many lines, so even a short cut of it carries the whole string. */
export function sentinelBody(label: string): string {
  return Array.from({ length: 40 }, (_, i) => `${label} ${i} ${SENTINEL} ${SENTINEL}`).join('\n') + '\n';
}

export interface LabOptions {
  fake?: FakeOpenAIOptions;
  /** Extra files and links inside the repository, after the standard ones. */
  build?: (lab: Lab) => void;
  /** Leave out the committed symlinks (crash and soak parts want a plain repository). */
  plain?: boolean;
}

export class Lab {
  readonly servers: ServerProcess[] = [];

  private constructor(
    readonly root: string,
    readonly repo: string,
    readonly outside: string,
    readonly home: string,
    readonly storage: string,
    readonly fake: FakeOpenAI,
  ) {}

  static async create(options: LabOptions = {}): Promise<Lab> {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-adv-')));
    const dirs = ['repo', 'outside', 'home', 'storage'].map((name) => {
      const dir = path.join(root, name);
      fs.mkdirSync(dir);
      return dir;
    });
    const fake = await startFakeOpenAI({ models: ['fake-model'], ...options.fake });
    const lab = new Lab(root, dirs[0], dirs[1], dirs[2], dirs[3], fake);
    lab.plantOutside();
    lab.buildRepository(options.plain ?? false);
    options.build?.(lab);
    return lab;
  }

  /** Writes a file inside the repository (parents created). */
  write(relative: string, content: string | Buffer, mode?: number): string {
    const file = path.join(this.repo, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    if (mode !== undefined) fs.chmodSync(file, mode);
    return file;
  }

  link(relative: string, target: string): void {
    const file = path.join(this.repo, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.symlinkSync(target, file);
  }

  private plantOutside(): void {
    const put = (file: string, content: string) => {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    };
    put(path.join(this.outside, 'secret.txt'), sentinelBody('outside'));
    put(path.join(this.outside, 'nested', 'deeper.txt'), sentinelBody('outside-nested'));
    // A name that leaks on a listing, not only on a read.
    put(path.join(this.outside, `${SENTINEL}-name.txt`), 'the name is the secret\n');
    put(path.join(this.home, 'secret.txt'), sentinelBody('home'));
    put(path.join(this.home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${sentinelBody('home-key')}`);
    put(path.join(this.home, '.npmrc'), `//registry.npmjs.org/:_authToken=${SENTINEL}\n`);
    put(path.join(this.storage, 'planted.txt'), sentinelBody('storage'));
  }

  private buildRepository(plain: boolean): void {
    const S = path.join(this.outside, 'secret.txt');
    this.write('README.md', '# Demo project\n\nA small service. See src/app.ts.\n');
    this.write('src/app.ts', 'export const answer = 42;\n\nexport function greet(name: string): string {\n  return `hello ${name}`;\n}\n');
    this.write('src/util/math.ts', 'export const add = (a: number, b: number) => a + b;\n');
    this.write('docs/inside.txt', `This file is inside the folder: ${INSIDE_MARKER}\n`);
    this.write('package.json', '{ "name": "demo", "version": "1.0.0" }\n');
    this.write('scripts/build.sh', '#!/bin/sh\necho build\n', 0o755);
    // Default-denied secrets, each holding the sentinel.
    this.write('.env', `API_TOKEN=${SENTINEL}\n${sentinelBody('env')}`);
    this.write('.env.local', sentinelBody('env-local'));
    this.write('config/.env.production', sentinelBody('env-production'));
    this.write('.npmrc', `//registry.npmjs.org/:_authToken=${SENTINEL}\n`);
    this.write('.netrc', `machine github.com login me password ${SENTINEL}\n`);
    this.write('.pypirc', `[pypi]\npassword = ${SENTINEL}\n`);
    this.write('id_rsa', `-----BEGIN OPENSSH PRIVATE KEY-----\n${sentinelBody('id_rsa')}`);
    this.write('keys/id_ed25519', sentinelBody('id_ed25519'));
    this.write('certs/server.pem', sentinelBody('pem'));
    this.write('certs/private.key', sentinelBody('key'));
    // And one file for every other default rule (test/support/secretSamples.ts).
    for (const sample of SECRET_SAMPLES) {
      if (!fs.existsSync(path.join(this.repo, sample.path))) this.write(sample.path, `TOKEN=${SENTINEL}\n${sentinelBody(sample.path)}`);
    }
    this.write('.git/config', `[remote "origin"]\n\turl = https://me:${SENTINEL}@example.com/demo.git\n`);
    this.write('.git/HEAD', 'ref: refs/heads/main\n');
    this.write('.git/credentials', `https://me:${SENTINEL}@example.com\n`);
    this.write('.git/objects/ab/cdef0123', sentinelBody('object'));
    // Denied by the project's policy (which can only narrow).
    this.write('.repo-discuss/policy.json', JSON.stringify({ denyRead: ['private/**'] }));
    this.write('private/notes.txt', sentinelBody('policy-denied'));
    if (plain) return;

    // Symlinks committed in the repository that point out, or at secrets.
    this.link('link-file', S);
    this.link('link-file-rel', '../outside/secret.txt');
    this.link('link-dir', this.outside);
    this.link('link-dir-rel', '../outside');
    this.link('chain-1', 'chain-2');
    this.link('chain-2', 'chain-3');
    this.link('chain-3', S);
    this.link('chain-dir-1', 'chain-dir-2');
    this.link('chain-dir-2', '../outside');
    this.link('loop-a', 'loop-b');
    this.link('loop-b', 'loop-a');
    this.link('self-loop', 'self-loop');
    this.link('dangling-out', path.join(this.outside, 'no-such-file'));
    this.link('dangling-in', 'no-such-file');
    this.link('link-root', '/');
    this.link('link-up', '..');
    this.link('docs/up2', '../..');
    this.link('link-home', this.home);
    this.link('link-proc-root', '/proc/self/root');
    this.link('link-proc-cwd', '/proc/self/cwd');
    this.link('link-storage', this.storage);
    this.link('link-tmp', os.tmpdir());
    this.link('link-env', '.env');
    this.link('innocent.txt', '.git/config');
    this.link('.env.example', '.env');
    this.link('src/deep/inner', '../../link-dir');
    this.link('src/deep/hop', '../../chain-1');
    this.link('notes/key-link', '../id_rsa');
    // Instruction files that point out or at a secret: they go into the system prompt if followed.
    this.link('CLAUDE.md', S);
    this.link('.github/copilot-instructions.md', '../.env');
  }

  /** Starts a real server process on this lab's storage; the model is the fake. */
  async server(init: Partial<InitializationOptions> = {}, env: Record<string, string> = {}): Promise<ServerProcess> {
    const s = await ServerProcess.start(
      {
        storageDir: this.storage,
        model: { baseUrl: this.fake.baseUrl, apiKey: 'sk-adversarial-key', model: 'fake-model' },
        ...init,
      },
      // A fake home (for `~` and links into it) and the sentinel in the environment (/proc/self/environ).
      { HOME: this.home, PLANTED_SECRET: SENTINEL, ...env },
    );
    this.servers.push(s);
    return s;
  }

  /** Starts (or resumes) a discussion of the repository and subscribes from seq 0. */
  async open(s: ServerProcess, params: Partial<StartRequest.Params> = {}): Promise<string> {
    const started = await s.request<StartRequest.Result>('discuss/start', { folder: this.repo, ...params });
    await s.request('discuss/subscribe', { discussionId: started.discussionId, fromSeq: 0 });
    return started.discussionId;
  }

  /** Forgets a server already stopped or killed. */
  drop(s: ServerProcess): void {
    const i = this.servers.indexOf(s);
    if (i >= 0) this.servers.splice(i, 1);
  }

  async dispose(): Promise<void> {
    for (const s of this.servers.splice(0)) await s.stop().catch(() => s.kill());
    await this.fake.close();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Turns

/** Sends one message with `steps` queued on the fake and resolves with that turn's events. */
export async function runTurn(
  s: ServerProcess,
  fake: FakeOpenAI,
  id: string,
  text: string,
  steps: FakeStep[] = [],
): Promise<DiscussionEvent[]> {
  fake.push(...steps);
  const done = s.of(id, 'turn_complete').length;
  const sent = await s.request<{ seq: number }>('discuss/send', { discussionId: id, text });
  await s.turnsComplete(id, done + 1);
  return turnEvents(s, id, sent.seq);
}

/** The events of one discussion from `fromSeq` up to and including the next turn_complete. */
export function turnEvents(s: ServerProcess, id: string, fromSeq: number): DiscussionEvent[] {
  const out: DiscussionEvent[] = [];
  for (const e of s.events) {
    if (e.discussionId !== id || e.seq < fromSeq) continue;
    out.push(e);
    if (e.type === 'turn_complete') break;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Leaks

export interface LeakReport {
  /** Where the sentinel (or its core) was found; empty when nothing leaked. */
  places: string[];
  /** Bytes of the sentinel found, counted as occurrences times its length. */
  bytes: number;
  /** Bytes scanned. */
  scanned: number;
}

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}

/**
 * Looks for the sentinel in everything a model, a client or a log saw: every
 * event, every request body the endpoint received, the server's stderr and
 * log messages, and the files the server saved (minus the one planted there).
 */
export function scanForLeaks(lab: Lab, servers: ServerProcess[] = lab.servers, extra: Array<[string, string]> = []): LeakReport {
  const sources: Array<[string, string]> = [];
  servers.forEach((s, i) => {
    sources.push([`server ${i} events`, JSON.stringify(s.events)]);
    sources.push([`server ${i} stderr and log`, s.stderr.join('\n')]);
  });
  lab.fake.requests.forEach((r, i) => sources.push([`request ${i} to ${r.path}`, r.rawBody + JSON.stringify(r.headers)]));
  for (const file of listFiles(path.join(lab.storage, 'discussions'))) {
    sources.push([`saved ${path.relative(lab.storage, file)}`, fs.readFileSync(file, 'latin1')]);
  }
  sources.push(...extra);
  const places: string[] = [];
  let bytes = 0;
  let scanned = 0;
  for (const [where, text] of sources) {
    scanned += text.length;
    const full = occurrences(text, SENTINEL);
    const core = occurrences(text, SENTINEL_CORE);
    if (full > 0 || core > 0) {
      places.push(`${where}: ${full} whole, ${core} fragments`);
      bytes += Math.max(full * SENTINEL.length, core * SENTINEL_CORE.length);
    }
  }
  return { places, bytes, scanned };
}

export function assertNoLeak(report: LeakReport): void {
  assert.deepEqual(report.places, [], `the sentinel leaked (${report.bytes} bytes)`);
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Tree hash

/**
 * Every path under `dir` with its type, mode and content (a file's bytes, a
 * link's target), without following links. Two equal hashes mean nothing was
 * created, deleted, renamed, re-moded or rewritten.
 */
export function treeManifest(dir: string): string[] {
  const lines: string[] = [];
  const visit = (absolute: string, relative: string) => {
    const stats = fs.lstatSync(absolute);
    const mode = (stats.mode & 0o7777).toString(8);
    if (stats.isSymbolicLink()) {
      lines.push(`L ${relative} ${mode} -> ${fs.readlinkSync(absolute)}`);
    } else if (stats.isDirectory()) {
      lines.push(`D ${relative} ${mode}`);
      for (const name of fs.readdirSync(absolute).sort()) visit(path.join(absolute, name), relative ? `${relative}/${name}` : name);
    } else if (stats.isFile()) {
      const digest = createHash('sha256').update(fs.readFileSync(absolute)).digest('hex');
      lines.push(`F ${relative} ${mode} ${stats.size} ${digest}`);
    } else {
      lines.push(`O ${relative} ${mode}`);
    }
  };
  visit(dir, '');
  return lines;
}

export function treeHash(...dirs: string[]): { hash: string; entries: number; manifest: string[] } {
  const manifest = dirs.flatMap((dir) => treeManifest(dir).map((line) => `${dir}: ${line}`));
  return { hash: createHash('sha256').update(manifest.join('\n')).digest('hex'), entries: manifest.length, manifest };
}

export function assertSameTree(before: { hash: string; manifest: string[] }, after: { hash: string; manifest: string[] }): void {
  if (before.hash === after.hash) return;
  const gone = before.manifest.filter((line) => !after.manifest.includes(line));
  const added = after.manifest.filter((line) => !before.manifest.includes(line));
  assert.fail(`the tree changed:\n- ${gone.join('\n- ')}\n+ ${added.join('\n+ ')}`);
}

// ---------------------------------------------------------------------------
// Model requests

interface WireMessage {
  role: string;
  content?: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export function messagesOf(request: RecordedRequest): WireMessage[] {
  return (request.body?.messages ?? []) as unknown as WireMessage[];
}

/** The full tool output the model was given for each call id, across the given requests. */
export function toolOutputs(requests: readonly RecordedRequest[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const request of requests) {
    for (const m of messagesOf(request)) {
      if (m.role === 'tool' && m.tool_call_id) out.set(m.tool_call_id, String(m.content ?? ''));
    }
  }
  return out;
}

/**
 * A history a provider accepts: every assistant tool call is answered by a
 * tool message before the next user or assistant message, and no tool message
 * answers a call that was not made.
 */
export function assertValidHistory(request: RecordedRequest): void {
  const messages = messagesOf(request);
  assert.equal(messages[0]?.role, 'system', 'the request starts with the system prompt');
  let open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      assert.ok(m.tool_call_id && open.has(m.tool_call_id), `message ${i} answers a call that is not pending (${m.tool_call_id})`);
      open.delete(m.tool_call_id!);
      continue;
    }
    assert.equal(open.size, 0, `message ${i} (${m.role}) follows unanswered tool calls ${[...open].join(', ')}`);
    if (m.role === 'assistant' && m.tool_calls?.length) open = new Set(m.tool_calls.map((c) => c.id));
  }
}

/** The names of the tools offered in a request. */
export function offeredTools(request: RecordedRequest): string[] {
  return ((request.body?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name).sort();
}

export const OFFERED_TOOLS = [
  'find_files', 'find_references', 'find_symbol', 'get_diagnostics', 'git_blame', 'git_diff', 'git_log', 'git_show', 'go_to_definition', 'grep_files', 'list_dir', 'list_symbols', 'prepare_coding_task', 'read_file', 'record_decision',
];

// ---------------------------------------------------------------------------
// Figures

const FIGURES_FILE = process.env.ADVERSARIAL_FIGURES ?? path.resolve(__dirname, '../../adversarial-figures.json');
/** One id per mocha process: figures from an earlier run are replaced, not merged. */
const RUN_ID = `${process.pid}-${Date.now()}`;

/** Merges one part's figures into the run's figures file (out/adversarial-figures.json). */
export function recordFigures(part: string, figures: Record<string, unknown>): void {
  let all: Record<string, unknown> = {};
  try {
    all = JSON.parse(fs.readFileSync(FIGURES_FILE, 'utf8')) as Record<string, unknown>;
  } catch {
    // first part of the run
  }
  if (all.runId !== RUN_ID) all = { runId: RUN_ID, startedAt: new Date().toISOString() };
  all[part] = { ...(all[part] as Record<string, unknown> | undefined), ...figures, recordedAt: new Date().toISOString() };
  fs.writeFileSync(FIGURES_FILE, JSON.stringify(all, null, 2) + '\n');
}

export { prng } from '../support/prng';

/** Resident memory of a process in KiB, from /proc/<pid>/status. */
export function residentKiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  assert.ok(match, `no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

/** One way the server may search, to run a part against each. */
export interface SearchEngineConfig {
  name: string;
  tag: string;
  init: Partial<InitializationOptions>;
  env: (lab: Lab) => Record<string, string>;
  /** False for ripgrep when no `rg` is on PATH: the part is skipped rather than run on the walk a second time. */
  available: boolean;
}

/**
 * Both search engines: the built-in one (ripgrep turned off, and not on the
 * PATH either, whichever the server honours) and ripgrep from the PATH.
 */
export const SEARCH_ENGINES: SearchEngineConfig[] = [
  {
    name: 'built-in search',
    tag: 'b',
    init: { ripgrepPath: null },
    env: (lab) => {
      const empty = path.join(lab.root, 'empty-bin');
      fs.mkdirSync(empty, { recursive: true });
      return { PATH: empty };
    },
    available: true,
  },
  { name: 'ripgrep from PATH', tag: 'r', init: {}, env: () => ({}), available: ripgrepOnPath() !== undefined },
];

/**
 * The built-in search with no warm index (as for a folder past the walk's
 * cap) and no head start: each grep is split across the search threads
 * (grepShards.ts).
 */
export const SPLIT_WALK_ENGINE: SearchEngineConfig = {
  name: 'built-in search split across threads, no file index',
  tag: 's',
  init: { ripgrepPath: null },
  env: (lab) => ({ ...SEARCH_ENGINES[0].env(lab), REPO_DISCUSS_FILE_INDEX: 'off', REPO_DISCUSS_SEARCH_HEAD_START_MS: '0' }),
  available: true,
};

// ---------------------------------------------------------------------------
// A concurrent writer

/** The swapper's loop, run in a child process so the server sees a writer it does not share a thread with. */
const SWAPPER_SOURCE = `
const fs = require('node:fs');
const [kind, target, insideSpare, linkSpare, outside, maxSwaps, maxMs] = process.argv.slice(1);
const started = Date.now();
let swaps = 0;
const report = () => { process.stdout.write(String(swaps)); process.exit(0); };
process.on('SIGTERM', report);
function once() {
  try {
    if (kind === 'file') {
      // The name always exists: a link to outside, then an inside file, each renamed over it.
      // Each state lasts about one file system call.
      fs.renameSync(linkSpare, target);
      fs.copyFileSync(insideSpare, target + '.tmp');
      fs.renameSync(target + '.tmp', target);
      fs.symlinkSync(outside, linkSpare);
    } else {
      // A directory cannot be renamed over: the name is the inside directory, then a link to outside.
      fs.renameSync(insideSpare, target);
      fs.renameSync(target, insideSpare);
      fs.renameSync(linkSpare, target);
      fs.renameSync(target, linkSpare);
    }
    swaps += 1;
  } catch {}
}
(function loop() {
  for (let i = 0; i < 200; i++) once();
  if (swaps >= Number(maxSwaps) || Date.now() - started > Number(maxMs)) report();
  else setImmediate(loop);
})();
`;

export interface Swapper {
  /** Stops the writer and resolves with how many swaps it made. */
  stop(): Promise<number>;
}

/**
 * Starts a child process that keeps swapping `relative` (inside the
 * repository) between an inside file or directory and a symlink to
 * `outsideTarget`, bounded by a swap count and a time. The spares are parked
 * in the lab root (same file system, outside the repository), so the only
 * name that changes inside is `relative`.
 */
export function startSwapper(lab: Lab, kind: 'file' | 'directory', relative: string, outsideTarget: string, insideContent: Record<string, string>): Swapper {
  const target = path.join(lab.repo, relative);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const tag = relative.replace(/[^A-Za-z0-9]/g, '_');
  const insideSpare = path.join(lab.root, `${tag}.inside`);
  const linkSpare = path.join(lab.root, `${tag}.link`);
  if (kind === 'file') {
    fs.writeFileSync(insideSpare, Object.values(insideContent)[0]);
    fs.copyFileSync(insideSpare, target);
  } else {
    fs.mkdirSync(insideSpare, { recursive: true });
    for (const [name, text] of Object.entries(insideContent)) fs.writeFileSync(path.join(insideSpare, name), text);
  }
  fs.symlinkSync(outsideTarget, linkSpare);
  const child = spawn(process.execPath, ['-e', SWAPPER_SOURCE, kind, target, insideSpare, linkSpare, outsideTarget, '5000000', '120000'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number>((resolve) => child.on('close', () => resolve(Number(out) || 0)));
  return {
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

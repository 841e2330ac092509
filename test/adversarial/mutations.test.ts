/**
 * Part 2 — mutations. Generated tool calls that try to change something:
 * mutating tool names real agents use, invented names, the read tools with
 * wrong argument types, argument text that is not JSON, and arguments of a
 * megabyte or more. Driven as real model tool calls through the server.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FakeStep, FakeToolCall } from '../support/fakeOpenAI';
import type { ServerProcess } from '../support/serverProcess';
import {
  Lab,
  assertNoLeak,
  assertSameTree,
  assertValidHistory,
  messagesOf,
  prng,
  recordFigures,
  runTurn,
  scanForLeaks,
  treeHash,
} from './lab';

const SEED = 7;
const READ_TOOLS = ['read_file', 'list_dir', 'find_files', 'grep_files'];
const GROUNDING_TOOLS = ['find_symbol', 'go_to_definition', 'find_references', 'list_symbols', 'get_diagnostics', 'git_diff', 'git_log', 'git_show', 'git_blame'];

/** Tool names coding agents and shells use to change things. */
const MUTATING_NAMES = [
  'write_file', 'edit_file', 'apply_patch', 'shell', 'bash', 'run_command', 'delete_file', 'create_file', 'rename',
  'rename_file', 'move_file', 'copy_file', 'git_commit', 'git_push', 'git_checkout', 'git_reset', 'exec', 'execute',
  'run_terminal_cmd', 'run_in_terminal', 'terminal', 'str_replace_editor', 'str_replace_based_edit_tool',
  'replace_string_in_file', 'insert_edit_into_file', 'multi_edit', 'notebook_edit', 'create_directory', 'mkdir',
  'rm', 'chmod', 'chown', 'python', 'node', 'eval', 'computer', 'text_editor', 'patch', 'write', 'save_file',
  'update_file', 'append_file', 'truncate_file', 'symlink', 'http_request', 'fetch_url', 'Write', 'Edit', 'MultiEdit',
  'Bash', 'NotebookEdit', 'WRITE_FILE', 'write_file ', ' read_file', 'read_file\u0000', 'read-file', 'readFile',
  'read_file;rm -rf .', '../read_file', 'functions.write_file', 'tools/write_file', '__proto__', 'constructor',
  'toString', 'hasOwnProperty', 'valueOf', 'prototype', '', ' ', '\u0000', 'read_file\nwrite_file',
];

/** Argument texts a careless or hostile model produces. */
function invalidJsonTexts(): string[] {
  return [
    'not json', '{', '}', '{"path":', '{"path":"README.md"', "{'path':'README.md'}", '{path: "README.md"}',
    '{"path":"README.md",}', '{"path":"README.md"}}', '{"a":1}{"b":2}', 'NaN', 'undefined', 'Infinity', '-',
    '\u0000', '\uFEFF{"path":"README.md"}extra', '{"path":"\\x41"}', '{"path":"\\u12"}', '{"path":"a\nb"}',
    '[', '[[[[', '"unterminated', "{\"content\": 'x'}", '{"path": 01}', '{"path": .5}', '{"path": +1}',
    '{"path": true false}', '{"path":"README.md"} // comment', '/* c */ {"path":"README.md"}', '```json\n{"path":"README.md"}\n```',
    '<tool_call>{"name":"write_file"}</tool_call>', 'path=README.md', 'README.md', '{"":""', '{"path":"README.md"\u0000}',
  ];
}

/** JSON values of the wrong shape or type for every argument. */
function wrongValues(): unknown[] {
  return [null, true, false, 0, -1, 1.5, 1e308, -0, 'x', '', [], [1, 2], {}, { nested: { deep: true } }, ['README.md'], { path: 'README.md' }];
}

interface Call {
  name: string;
  arguments: string | Record<string, unknown>;
  /** Category, for the figures. */
  kind: string;
  /** Must the call be refused? (A few well-formed read calls may succeed; they change nothing either.) */
  mustFail: boolean;
}

/** The generated calls: deterministic for a seed, and at least 1,000 of them. */
export function generateCalls(seed: number): Call[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const calls: Call[] = [];
  const add = (name: string, args: string | Record<string, unknown>, kind: string, mustFail = true) =>
    calls.push({ name, arguments: args, kind, mustFail });

  // Mutating names with the arguments they would take, and with nonsense.
  const writeArgs = [
    { path: 'README.md', content: 'overwritten' },
    { path: 'PWNED.txt', content: 'created' },
    { file_path: 'src/app.ts', old_string: '42', new_string: '43' },
    { command: 'rm -rf . && touch PWNED' },
    { cmd: ['sh', '-c', 'echo pwned > PWNED'] },
    { patch: '*** Begin Patch\n*** Add File: PWNED.txt\n+pwned\n*** End Patch' },
    { from: 'README.md', to: 'README.old' },
    { path: '../outside/PWNED.txt', content: 'escaped write' },
    { message: 'commit everything', all: true },
    { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ncurl evil', mode: 0o755 },
  ];
  for (const name of MUTATING_NAMES) {
    for (const args of writeArgs) add(name, args, 'mutating name, plausible arguments');
    add(name, '', 'mutating name, empty arguments');
    add(name, pick(invalidJsonTexts()), 'mutating name, invalid JSON');
    add(name, JSON.stringify(pick(wrongValues())), 'mutating name, wrong type');
  }

  // Invented names.
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./ :\\$`|;&<>*?{}[]()\'"\u00e9\u4e2d\u{1F600}\u200b';
  const chars = [...alphabet];
  for (let i = 0; i < 220; i++) {
    const length = 1 + Math.floor(random() * 48);
    let name = '';
    for (let k = 0; k < length; k++) name += pick(chars);
    const argsKind = random();
    const args =
      argsKind < 0.4 ? pick(writeArgs) : argsKind < 0.7 ? pick(invalidJsonTexts()) : JSON.stringify(pick(wrongValues()));
    add(name, args, 'invented name');
  }

  // The read tools with wrong argument types, unknown arguments and missing ones.
  const argNames: Record<string, string[]> = {
    read_file: ['path', 'start_line', 'end_line'],
    list_dir: ['path'],
    find_files: ['pattern', 'path'],
    grep_files: ['pattern', 'path', 'glob'],
  };
  for (const tool of READ_TOOLS) {
    for (const arg of argNames[tool]) {
      for (const value of wrongValues()) {
        if (typeof value === 'string' && arg !== 'start_line' && arg !== 'end_line') continue; // a string is the right type
        if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && arg.endsWith('_line')) continue;
        const base: Record<string, unknown> = tool === 'read_file' ? { path: 'README.md' } : tool === 'list_dir' ? {} : { pattern: 'x' };
        // null for an optional argument means "absent", which is fine.
        const optional = !(arg === 'path' && tool === 'read_file') && arg !== 'pattern';
        add(tool, { ...base, [arg]: value }, 'read tool, wrong argument type', !(value === null && optional));
      }
    }
    for (const extra of ['content', 'command', 'write', 'mode', 'startLine', '__proto__', 'constructor']) {
      const base: Record<string, unknown> = tool === 'read_file' ? { path: 'README.md' } : tool === 'list_dir' ? {} : { pattern: 'x' };
      // As text: an object literal with a `__proto__` key would set the prototype instead.
      add(tool, JSON.stringify(base).replace(/^\{/, `{"${extra}":"PWNED"${Object.keys(base).length ? ',' : ''}`), 'read tool, unknown argument');
    }
    for (const text of invalidJsonTexts()) add(tool, text, 'read tool, invalid JSON');
    for (const value of [null, [], 'README.md', 42, true]) add(tool, JSON.stringify(value), 'read tool, not an object');
  }
  add('read_file', {}, 'read tool, missing argument');
  add('find_files', {}, 'read tool, missing argument');
  add('grep_files', { path: '.' }, 'read tool, missing argument');
  add('read_file', { path: 'README.md', start_line: 5, end_line: 2 }, 'read tool, inverted range');

  // Arguments a search program could take for options: they must change nothing.
  for (const pattern of ['--pre=/bin/rm', '--pre=/usr/bin/touch', '--pre=rm', '-r', '--replace=PWNED', '--files', '--follow']) {
    add('grep_files', { pattern }, 'read tool, option-like pattern', false);
    add('grep_files', { pattern: 'x', glob: pattern }, 'read tool, option-like glob', false);
    add('grep_files', { pattern: '.', path: '.', glob: pattern }, 'read tool, option-like glob', false);
    add('find_files', { pattern }, 'read tool, option-like pattern', false);
  }
  // The grounding tools (symbols and git): malformed arguments, and values a
  // program could take for options. Answered, never run as options, and the
  // tree stays as it was.
  const groundingArgs: Record<string, Record<string, unknown>> = {
    find_symbol: { query: 'x' },
    go_to_definition: { symbol: 'x' },
    find_references: { symbol: 'x' },
    list_symbols: { path: 'README.md' },
    get_diagnostics: {},
    git_diff: {},
    git_log: {},
    git_show: { commit: 'HEAD' },
    git_blame: { path: 'README.md', start_line: 1, end_line: 2 },
  };
  for (const [tool, base] of Object.entries(groundingArgs)) {
    for (const text of invalidJsonTexts()) add(tool, text, 'grounding tool, invalid JSON', false);
    for (const value of [null, [], 'README.md', 42, true]) add(tool, JSON.stringify(value), 'grounding tool, not an object', false);
    for (const extra of ['content', 'command', 'write', '__proto__']) {
      add(tool, JSON.stringify(base).replace(/^\{/, `{"${extra}":"PWNED"${Object.keys(base).length ? ',' : ''}`), 'grounding tool, unknown argument', false);
    }
    for (const key of Object.keys(base)) {
      for (const value of wrongValues()) add(tool, { ...base, [key]: value }, 'grounding tool, wrong argument type', false);
    }
  }
  for (const option of ['--output=PWNED.txt', '--exec=touch PWNED', '-p', '--ext-diff', '--textconv', '-c core.pager=touch PWNED', '--upload-pack=touch PWNED']) {
    add('git_show', { commit: option }, 'grounding tool, option-like argument', false);
    add('git_diff', { scope: 'branch', base: option }, 'grounding tool, option-like argument', false);
    add('git_log', { grep: option, path: option }, 'grounding tool, option-like argument', false);
    add('git_blame', { path: option, start_line: 1, end_line: 2 }, 'grounding tool, option-like argument', false);
    add('find_symbol', { query: option }, 'grounding tool, option-like argument', false);
    add('find_references', { symbol: option, path: option }, 'grounding tool, option-like argument', false);
  }
  // The core's own hand-off tool with bad arguments: refused, and it starts nothing either way.
  for (const args of ['not json', '{}', '{"intent":42}', '{"intent":""}', '[]']) add('prepare_coding_task', args, 'prepare_coding_task, bad arguments');
  return calls;
}

/** Calls with one argument of a megabyte or more (kept apart: every later request repeats them). */
function hugeCalls(): Call[] {
  const MB = 1024 * 1024;
  const big = (n: number, c = 'a') => c.repeat(n);
  return [
    { name: 'write_file', arguments: JSON.stringify({ path: 'PWNED.txt', content: big(MB + 17, 'p') }), kind: 'huge', mustFail: true },
    { name: 'read_file', arguments: JSON.stringify({ path: big(MB) }), kind: 'huge', mustFail: true },
    { name: 'read_file', arguments: JSON.stringify({ path: '../'.repeat(400_000) + 'etc/passwd' }), kind: 'huge', mustFail: true },
    { name: 'grep_files', arguments: JSON.stringify({ pattern: big(MB, 'z') }), kind: 'huge', mustFail: false },
    { name: 'grep_files', arguments: JSON.stringify({ pattern: '('.repeat(MB) }), kind: 'huge', mustFail: true },
    { name: 'find_files', arguments: JSON.stringify({ pattern: big(MB, '*') }), kind: 'huge', mustFail: true },
    { name: 'list_dir', arguments: JSON.stringify({ path: 'src/'.repeat(MB / 4) }), kind: 'huge', mustFail: true },
    { name: 'apply_patch', arguments: 'x'.repeat(MB + 1), kind: 'huge', mustFail: true },
    { name: 'read_file', arguments: '['.repeat(MB / 2) + ']'.repeat(MB / 2), kind: 'huge', mustFail: true },
    { name: 'shell', arguments: JSON.stringify({ command: 'echo ' + big(MB, 'e') }), kind: 'huge', mustFail: true },
    { name: 'x'.repeat(MB), arguments: '{"path":"PWNED.txt","content":"x"}', kind: 'huge', mustFail: true },
  ];
}

const CALLS_PER_STEP = 40;
const STEPS_PER_TURN = 8;
const CALLS_PER_DISCUSSION = 320;

describe('adversarial: generated mutating and malformed tool calls', function () {
  this.timeout(180_000);
  let lab: Lab;
  let s: ServerProcess;
  let hugeResults: Array<{ call: Call; ok: boolean; output: string }> = [];

  before(async () => {
    lab = await Lab.create();
    // Something for a write that escaped to land on, outside the folder too.
    fs.writeFileSync(path.join(lab.outside, 'victim.txt'), 'untouched\n');
    s = await lab.server();
  });
  after(() => lab.dispose());

  /**
   * Drives `calls` in turns of several steps; checks that each call got a
   * tool_result event and a tool message answering its id in the next request.
   */
  async function drive(
    calls: Call[],
    tag: string,
    { perStep = CALLS_PER_STEP, perTurn = STEPS_PER_TURN, perDiscussion = CALLS_PER_DISCUSSION } = {},
  ): Promise<Array<{ call: Call; ok: boolean; output: string }>> {
    const results: Array<{ call: Call; ok: boolean; output: string }> = [];
    let id = '';
    let inDiscussion = Number.POSITIVE_INFINITY;
    for (let start = 0, turn = 0; start < calls.length; turn++) {
      if (inDiscussion >= perDiscussion) {
        if (id) await s.request('discuss/close', { discussionId: id });
        id = await lab.open(s);
        inDiscussion = 0;
      }
      const steps: FakeStep[] = [];
      const stepIds: string[][] = [];
      for (let step = 0; step < perTurn && start < calls.length; step++, start += perStep) {
        const batch = calls.slice(start, start + perStep);
        const fakeCalls: FakeToolCall[] = batch.map((call, k) => ({ id: `${tag}-${start + k}`, name: call.name, arguments: call.arguments }));
        stepIds.push(fakeCalls.map((c) => c.id));
        steps.push({ kind: 'toolCalls', calls: fakeCalls, interleave: (turn + step) % 3 === 0 });
        inDiscussion += batch.length;
      }
      steps.push({ kind: 'text', text: 'I cannot change anything here.' });
      const firstRequest = lab.fake.completionRequests.length;
      const events = await runTurn(s, lab.fake, id, `please change things (${tag} ${turn})`, steps);
      assert.equal(lab.fake.pendingSteps, 0, 'every scripted step was consumed');
      const requests = lab.fake.completionRequests.slice(firstRequest);
      assert.equal(requests.length, steps.length, 'one model call per step');
      const toolEvents = events.filter((e) => e.type === 'tool_result') as Array<{ ok: boolean }>;
      const callEvents = events.filter((e) => e.type === 'tool_call');
      const expected = stepIds.flat().length;
      assert.equal(callEvents.length, expected, 'a tool_call event per call');
      assert.equal(toolEvents.length, expected, 'a tool_result event per call');
      // Each step's calls are answered, by id, in the request that follows it.
      stepIds.forEach((ids, k) => {
        const next = requests[k + 1];
        assertValidHistory(next);
        const answered = new Map(messagesOf(next).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, String(m.content)]));
        for (const [j, callId] of ids.entries()) {
          assert.ok(answered.has(callId), `call ${callId} got a tool message`);
          const index = stepIds.slice(0, k).flat().length + j;
          const call = calls[Number(callId.slice(tag.length + 1))];
          results.push({ call, ok: toolEvents[index].ok, output: answered.get(callId)! });
        }
      });
      assert.equal(s.child.exitCode, null, 'the server is still running');
    }
    if (id) await s.request('discuss/close', { discussionId: id });
    return results;
  }

  it('refuses at least 1,000 generated mutating and malformed calls one by one, answers every call, and leaves the folder byte-for-byte as it was', async () => {
    const calls = generateCalls(SEED);
    assert.ok(calls.length >= 1000, `generated ${calls.length} calls`);
    const before = treeHash(lab.repo, lab.outside, lab.home);
    const tmpBefore = new Set(fs.readdirSync(os.tmpdir()));

    const results = await drive(calls, 'm');

    assertSameTree(before, treeHash(lab.repo, lab.outside, lab.home));
    const strayInTmp = fs.readdirSync(os.tmpdir()).filter((name) => !tmpBefore.has(name) && /pwned/i.test(name));
    assert.deepEqual(strayInTmp, []);
    const wronglyAccepted = results.filter((r) => r.call.mustFail && r.ok).map((r) => `${JSON.stringify(r.call.name).slice(0, 60)} ${String(JSON.stringify(r.call.arguments)).slice(0, 80)}`);
    assert.deepEqual(wronglyAccepted, [], 'these calls were not refused');
    const mutating = results.filter((r) => !READ_TOOLS.includes(r.call.name) && !GROUNDING_TOOLS.includes(r.call.name) && r.call.name !== 'prepare_coding_task');
    assert.ok(mutating.every((r) => /read-only/.test(r.output)), 'every unknown or mutating tool is told the conversation is read-only');
    assertNoLeak(scanForLeaks(lab, [s]));
    // Still answering requests.
    assert.ok(Array.isArray((await s.request<{ discussions: unknown[] }>('discuss/list', {})).discussions));

    const byKind: Record<string, number> = {};
    for (const r of results) byKind[r.call.kind] = (byKind[r.call.kind] ?? 0) + 1;
    recordFigures('mutations', {
      seed: SEED,
      generatedCalls: results.length,
      byKind,
      refused: results.filter((r) => !r.ok).length,
      succeededWithoutChange: results.filter((r) => r.ok).length,
      treeEntriesHashed: before.entries,
      treeUnchanged: true,
    });
  });

  it('refuses calls whose arguments or names are a megabyte or more, answers each, and stays up', async () => {
    const calls = hugeCalls();
    const before = treeHash(lab.repo, lab.outside, lab.home);
    // One call per discussion: every later request of a discussion repeats every earlier argument.
    const results = await drive(calls, 'h', { perStep: 1, perTurn: 1, perDiscussion: 1 });
    assertSameTree(before, treeHash(lab.repo, lab.outside, lab.home));
    const wronglyAccepted = results.filter((r) => r.call.mustFail && r.ok).map((r) => `${r.call.name.slice(0, 40)}: ${r.output.slice(0, 120)}`);
    assert.deepEqual(wronglyAccepted, []);
    assert.equal(s.child.exitCode, null);
    const followUp = await lab.open(s);
    await runTurn(s, lab.fake, followUp, 'still there?', [{ kind: 'text', text: 'Yes.' }]);
    recordFigures('mutations', {
      hugeCalls: results.length,
      hugeArgumentBytes: calls.reduce((n, c) => n + (typeof c.arguments === 'string' ? c.arguments.length : 0) + c.name.length, 0),
      largestToolAnswerChars: Math.max(...results.map((r) => r.output.length)),
      largestEventChars: Math.max(...s.events.map((e) => JSON.stringify(e).length)),
    });
    hugeResults = results;
  });

  /**
   * Found by this suite, now fixed: grep_files echoes its whole
   * pattern ("No matches for …", "Invalid regular expression …"), so a 1 MB
   * pattern comes back as a 1–2 MB tool result that every later request of
   * the discussion carries; and the tool_call/tool_result events carry a
   * tool name of any length. Paths are already cut to 200 characters in
   * refusals; the other echoes are not.
   */
  it('the answer to a call and its events stay bounded (64 KiB) whatever the size of the call', async () => {
    if (hugeResults.length === 0) hugeResults = await drive(hugeCalls(), 'h2', { perStep: 1, perTurn: 1, perDiscussion: 1 });
    const LIMIT = 64 * 1024;
    const unbounded = [
      ...hugeResults
        .filter((r) => r.output.length > LIMIT)
        .map((r) => `${r.call.name.slice(0, 20)} ${String(r.call.arguments).slice(0, 24)}…: a ${r.output.length}-character answer`),
      ...s.events
        .filter((e) => JSON.stringify(e).length > LIMIT)
        .map((e) => `a ${e.type} event of ${JSON.stringify(e).length} characters`),
    ];
    assert.deepEqual(unbounded, []);
  });
});

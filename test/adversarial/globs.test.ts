/**
 * Hostile globs, against the real server process. Globs reach the server
 * from three places: a repository's `.repo-discuss/policy.json` (untrusted),
 * the user's `denyRead` setting, and the model's find_files/grep_files
 * arguments. minimatch used to compile them to backtracking regular
 * expressions on the main thread: a 31-byte extglob rule held `discuss/start`
 * for minutes, and a few brace rules ran the process out of memory. Each
 * must now be refused at once with a message saying what to do, while the
 * server keeps answering and other discussions keep streaming.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc';
import { DiscussErrorCode, type ListRequest } from '../../shared/protocol';
import { createGate, lastUserMessage, type FakeStep, type FakeToolCall, type RecordedRequest } from '../support/fakeOpenAI';
import { Lab, SEARCH_ENGINES, messagesOf, recordFigures, runTurn, toolOutputs } from './lab';

const EXTGLOB = '+(?|?|?)x';
const BRACES_17 = '{a,b}'.repeat(17);
/** Four rules of 300 bytes: together they once exhausted the heap. */
const BRACE_BOMB = Array.from({ length: 4 }, (_, i) => `${'{a,b}'.repeat(59)}${'xyzw'[i]}....`.slice(0, 300));

/** Policies a repository might commit, each with where the message must point. */
const HOSTILE_POLICIES: Array<{ label: string; policy: unknown; points: RegExp }> = [
  { label: 'extglob rule', policy: { denyRead: ['docs/**', EXTGLOB] }, points: /"denyRead"\[1\] \("\+\(\?\|\?\|\?\)x"\) cannot be used: it uses the extglob syntax/ },
  { label: 'nested extglob', policy: { denyRead: ['**/*(a|aa|aaa)+(b)'] }, points: /"denyRead"\[0\].*extglob/ },
  { label: 'braces repeated 17 times', policy: { denyRead: [BRACES_17] }, points: /"denyRead"\[0\].*more than 256 alternatives/ },
  { label: 'numeric sequence', policy: { denyRead: ['logs/{1..1000000}.txt'] }, points: /"denyRead"\[0\].*more than 256 alternatives/ },
  { label: 'brace bomb (4 rules of 300 bytes)', policy: { denyRead: BRACE_BOMB }, points: /"denyRead"\[0\].*characters long/ },
  { label: 'nested braces', policy: { denyRead: ['{a,{b,{c,{d,e}}}}'.repeat(6)] }, points: /"denyRead"\[0\].*alternatives/ },
  { label: 'too many rules', policy: { denyRead: Array.from({ length: 300 }, (_, i) => `dir${i}/**`) }, points: /"denyRead" has 300 rules/ },
  { label: 'miscased tool name', policy: { denyTools: ['READ_FILE'] }, points: /"denyTools"\[0\] names no tool: "READ_FILE" \(did you mean "read_file"\?\); the tools are "read_file"/ },
  { label: 'unknown tool name', policy: { denyTools: ['grep_files', 'shell'] }, points: /"denyTools"\[1\] names no tool: "shell"; the tools are/ },
];

/** The model's script: a user message names its calls (from `plans`); after the results, a short answer. */
const plans = new Map<string, FakeToolCall[]>();
function script(request: RecordedRequest): FakeStep {
  const messages = messagesOf(request);
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    const calls = plans.get(lastUserMessage(request));
    if (calls) return { kind: 'toolCalls', calls };
  }
  return { kind: 'text', text: 'Looked at.' };
}
function plan(text: string, calls: Array<{ id: string; name: string; args: Record<string, unknown> }>): string {
  plans.set(text, calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.args) })));
  return text;
}

async function refusal(promise: Promise<unknown>): Promise<ResponseError<unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as ResponseError<unknown>;
  }
  assert.fail('the request was accepted');
}

describe('adversarial: hostile globs (policy, settings, model)', function () {
  this.timeout(60_000);
  const figures: Record<string, unknown> = {};
  let lab: Lab;
  let hostile: string;

  before(async () => {
    lab = await Lab.create({ plain: true, fake: { fallback: script } });
    // Long names of one letter: what an extglob or a chain of `*` backtracks on.
    lab.write(`names/${'a'.repeat(200)}`, 'long name\n');
    lab.write('names/short.ts', 'export const short = 1;\n');
    hostile = path.join(lab.root, 'hostile');
    fs.mkdirSync(path.join(hostile, '.repo-discuss'), { recursive: true });
    fs.writeFileSync(path.join(hostile, 'README.md'), '# hostile\n');
  });
  after(async () => {
    await lab?.dispose();
    recordFigures('globs', figures);
  });

  for (const config of SEARCH_ENGINES) {
    it(`refuses every hostile policy's start naming the file, key and index, while discuss/list answers and a discussion of another folder keeps streaming; the process survives the brace bomb (${config.name})`, async () => {
      const s = await lab.server(config.init, config.env(lab));
      const streaming = await lab.open(s);
      const gate = createGate();
      lab.fake.push({ kind: 'gate', gate, deltas: ['Streaming ', 'before, '], then: { kind: 'text', deltas: ['and ', 'after.'] } });
      await s.request('discuss/send', { discussionId: streaming, text: 'talk while the policies are tried' });
      await gate.reached;
      // Mid-stream: its first text has reached the client, the rest waits on the gate.
      await s.until(() => s.of(streaming, 'assistant_delta').map((e) => e.text).join('') === 'Streaming before, ');
      const deltasBefore = s.of(streaming, 'assistant_delta').length;

      const policyFile = path.join(hostile, '.repo-discuss', 'policy.json');
      const tried: Array<{ label: string; refused: boolean; listAnswered: boolean }> = [];
      for (const { label, policy, points } of HOSTILE_POLICIES) {
        fs.writeFileSync(policyFile, JSON.stringify(policy));
        const refused = await refusal(s.request('discuss/start', { folder: hostile }));
        assert.equal(refused.code, DiscussErrorCode.InvalidParams, label);
        assert.ok(refused.message.includes(policyFile), `${label}: the message names the file (${refused.message})`);
        assert.match(refused.message, points, label);
        assert.match(refused.message, /Fix or remove it, then start the discussion again/, label);
        const listed = await s.request<ListRequest.Result>('discuss/list', {});
        assert.ok(listed.discussions.some((d) => d.discussionId === streaming), `${label}: discuss/list answers with the streaming discussion`);
        tried.push({ label, refused: true, listAnswered: true });
      }

      gate.release();
      await s.turnsComplete(streaming, 1);
      const text = s.of(streaming, 'assistant_delta').map((e) => e.text).join('');
      assert.equal(text, 'Streaming before, and after.', 'the other discussion streamed through to its end');
      assert.equal(s.child.exitCode, null, 'the server process is still running');

      // The same folder starts once its policy is fixed: the refusal was about the rules, not the folder.
      fs.writeFileSync(policyFile, JSON.stringify({ denyTools: ['grep_files'], denyRead: ['src/**/*.{ts,tsx}', '**/test/**', '*.min.js'] }));
      const fixed = await s.request<{ discussionId: string }>('discuss/start', { folder: hostile });
      await s.request('discuss/close', { discussionId: fixed.discussionId });
      await s.request('discuss/close', { discussionId: streaming });

      figures[config.name] = {
        ...(figures[config.name] as object),
        policies: { tried: tried.length, refused: tried.filter((t) => t.refused).length, listAnsweredEveryTime: tried.every((t) => t.listAnswered), labels: tried.map((t) => t.label) },
        streamingDiscussion: { deltasBeforeRelease: deltasBefore, completed: true },
        processAlive: s.child.exitCode === null,
      };
      await s.stop();
      lab.drop(s);
    });

    it(`answers the model's hostile find_files and grep_files globs (a file as path too) with a refusal saying what to do, keeps a legitimate complex glob working, and refuses a hostile denyRead setting at configure (${config.name})`, async () => {
      const s = await lab.server(config.init, config.env(lab));
      const id = await lab.open(s);
      const t = config.tag;
      const longName = `names/${'a'.repeat(200)}`;
      const hostileCalls = [
        { id: `${t}-find-ext-file`, name: 'find_files', args: { pattern: EXTGLOB, path: longName } },
        { id: `${t}-find-ext`, name: 'find_files', args: { pattern: EXTGLOB } },
        { id: `${t}-find-braces-file`, name: 'find_files', args: { pattern: BRACES_17, path: longName } },
        { id: `${t}-find-bomb`, name: 'find_files', args: { pattern: BRACE_BOMB[0] } },
        { id: `${t}-grep-ext-file`, name: 'grep_files', args: { pattern: 'long', path: longName, glob: EXTGLOB } },
        { id: `${t}-grep-braces`, name: 'grep_files', args: { pattern: 'long', glob: BRACES_17 } },
        { id: `${t}-grep-seq`, name: 'grep_files', args: { pattern: 'long', glob: 'names/{1..100000}' } },
      ];
      const legitCalls = [
        { id: `${t}-find-legit`, name: 'find_files', args: { pattern: 'src/**/*.{ts,tsx}' } },
        { id: `${t}-find-legit-file`, name: 'find_files', args: { pattern: '**/*.{ts,tsx}', path: 'names/short.ts' } },
        { id: `${t}-grep-legit`, name: 'grep_files', args: { pattern: 'export', glob: '*.{ts,tsx}', path: 'names' } },
      ];
      const text = plan(`${t}: hostile globs`, [...hostileCalls, ...legitCalls]);
      const events = await runTurn(s, lab.fake, id, text);
      assert.ok(events.some((e) => e.type === 'turn_complete'), 'the turn completed');
      const listed = await s.request<ListRequest.Result>('discuss/list', {});
      assert.ok(listed.discussions.some((d) => d.discussionId === id), 'discuss/list answers after the calls');

      const outputs = toolOutputs(lab.fake.completionRequests);
      const answers: Record<string, string> = {};
      for (const call of hostileCalls) {
        const output = outputs.get(call.id) ?? '';
        answers[call.id.slice(t.length + 1)] = output.slice(0, 160);
        const argument = call.name === 'find_files' ? 'pattern' : 'glob';
        assert.match(output, new RegExp(`The ${argument} argument .* cannot be used: `), `${call.id}: ${output}`);
        assert.match(output, /extglob|alternatives|characters long/, call.id);
      }
      assert.equal(outputs.get(`${t}-find-legit`), 'src/app.ts\nsrc/util/math.ts');
      assert.equal(outputs.get(`${t}-find-legit-file`), 'names/short.ts');
      assert.equal(outputs.get(`${t}-grep-legit`), 'names/short.ts:1: export const short = 1;');

      const settingRefused = await refusal(s.request('discuss/configure', { denyRead: ['private/**', EXTGLOB] }));
      assert.equal(settingRefused.code, DiscussErrorCode.InvalidParams);
      assert.match(settingRefused.message, /"denyRead"\[1\] \("\+\(\?\|\?\|\?\)x"\) cannot be used: it uses the extglob syntax/);
      const bombRefused = await refusal(s.request('discuss/configure', { denyRead: BRACE_BOMB }));
      assert.match(bombRefused.message, /"denyRead"\[0\].*characters long/);
      // The earlier (empty) setting stands: a start still works.
      const again = await s.request<{ discussionId: string }>('discuss/start', { folder: lab.repo });
      await s.request('discuss/close', { discussionId: again.discussionId });
      await s.request('discuss/close', { discussionId: id });

      figures[config.name] = {
        ...(figures[config.name] as object),
        modelGlobs: { tried: hostileCalls.length, refused: hostileCalls.length, legitimateAnswered: legitCalls.length, answers },
        settings: { tried: 2, refused: 2 },
        serverResponsive: true,
      };
      await s.stop();
      lab.drop(s);
    });
  }
});

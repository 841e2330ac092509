/**
 * Part 6 — bad input. Every request of the protocol with malformed params
 * (missing fields, wrong types, huge strings, unknown ids, ids that climb out
 * of the storage folder), malformed frames, unknown methods, and bursts of
 * concurrent starts and sends. Each gets a clear error, nothing saved is lost
 * or touched, and the server stays up.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc';
import { DiscussErrorCode, type StartRequest } from '../../shared/protocol';
import { createGate } from '../support/fakeOpenAI';
import type { ServerProcess } from '../support/serverProcess';
import { Lab, SENTINEL, assertSameTree, recordFigures, runTurn, sentinelBody, toolOutputs, treeHash } from './lab';

const KNOWN_CODES = new Set<number>([...Object.values(DiscussErrorCode), -32601]);
const MB = 'x'.repeat(1024 * 1024);

/** Ids that must never name anything but a discussion folder. */
const HOSTILE_IDS: unknown[] = [
  undefined, null, 42, -1, true, {}, [], ['disc-x'], '', ' ', 'disc-nope', 'disc-00000000000000000000000000000000',
  '../../victim', '../victim', 'disc-../../victim', 'disc-a/../../../victim', '..', '.', '/etc/passwd', `/${'x'}`,
  'disc-\u0000', 'disc-x\u0000/../../victim', 'disc-%2e%2e%2f%2e%2e%2fvictim', 'disc-..\\..\\victim', 'DISC-abc',
  'disc-' + 'a'.repeat(200), 'disc-' + MB, `file:///../victim`, '~/victim', 'disc-abc\n../../victim',
];
/** The string ids among them, for resumeId (other types are a separate, open case below). */
const HOSTILE_STRING_IDS = HOSTILE_IDS.filter((id): id is string => typeof id === 'string' && id.trim() !== '');

interface Probe {
  method: string;
  params: unknown;
  /** `error`: must be refused clearly. `either`: a lenient answer is fine, an unclear failure is not. */
  expect: 'error' | 'either';
}

describe('adversarial: malformed requests and frames', function () {
  this.timeout(120_000);
  let lab: Lab;
  let s: ServerProcess;
  let keep: string;
  let saved: string;
  const victims: string[] = [];

  before(async () => {
    lab = await Lab.create({ plain: true, fake: { fallback: { kind: 'text', text: 'An answer.' } } });
    // Things an id that climbs out of discussions/ would reach: each looks like a saved discussion.
    for (const dir of [path.join(lab.root, 'victim'), path.join(lab.storage, 'victim'), path.join(lab.storage, 'discussions', 'victim')]) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'record.json'),
        JSON.stringify({ version: 1, record: { id: '../../victim', repo: lab.repo, createdAt: 0, updatedAt: 0, title: SENTINEL, model: null, turns: 1, transcript: [], preparedTask: null, handoffs: [], nextSeq: 0, historyLength: 0 } }),
      );
      fs.writeFileSync(path.join(dir, 'events.jsonl'), sentinelBody('victim'));
      victims.push(dir);
    }
    s = await lab.server();
    // A discussion kept open with two turns, and one saved and closed.
    keep = await lab.open(s);
    await runTurn(s, lab.fake, keep, 'first question');
    await runTurn(s, lab.fake, keep, 'second question', [
      { kind: 'toolCalls', calls: [{ id: 'k1', name: 'read_file', arguments: '{"path":"README.md"}' }] },
      { kind: 'text', text: 'Second answer.' },
    ]);
    saved = await lab.open(s);
    await runTurn(s, lab.fake, saved, 'a saved question');
    await s.request('discuss/close', { discussionId: saved });
  });
  after(() => lab.dispose());

  function probes(): Probe[] {
    const out: Probe[] = [];
    const shapes: unknown[] = [undefined, null, [], 42, 'string', true, {}];
    const byId = ['discuss/send', 'discuss/subscribe', 'discuss/unsubscribe', 'discuss/cancel', 'discuss/promote', 'discuss/close', 'discuss/rename', 'discuss/consumeTask', 'discuss/delete', 'discuss/export'];
    for (const method of byId) {
      for (const params of shapes) out.push({ method, params, expect: 'error' });
      for (const id of HOSTILE_IDS) {
        const extra = method === 'discuss/send' ? { text: 'hello' } : method === 'discuss/rename' ? { title: 'x' } : {};
        out.push({ method, params: { discussionId: id, ...extra }, expect: 'error' });
      }
    }
    for (const params of shapes) out.push({ method: 'discuss/start', params, expect: 'error' });
    for (const folder of [null, 42, {}, [], '', '   ', 'relative/path', '/no/such/folder', path.join(lab.repo, 'README.md'), 'file://host/share', 'file:///%00', 'http://example.com/repo', 'c:\\repo', '\u0000', MB]) {
      out.push({ method: 'discuss/start', params: { folder }, expect: 'error' });
    }
    for (const resumeId of HOSTILE_STRING_IDS) {
      out.push({ method: 'discuss/start', params: { folder: lab.repo, resumeId }, expect: 'error' });
    }
    for (const model of ['no-such-model', MB]) out.push({ method: 'discuss/start', params: { folder: lab.repo, model }, expect: 'error' });
    // Valid id, bad other fields.
    for (const text of [undefined, null, 42, {}, [], '', '   ', MB, 'x'.repeat(70_000)]) out.push({ method: 'discuss/send', params: { discussionId: keep, text }, expect: 'error' });
    for (const title of [undefined, null, 42, {}, [], '', '   ']) out.push({ method: 'discuss/rename', params: { discussionId: keep, title }, expect: 'error' });
    for (const format of [42, 'pdf', {}, [], '', 'MARKDOWN']) out.push({ method: 'discuss/export', params: { discussionId: keep, format }, expect: 'error' });
    for (const task of [42, 'x', [], { intent: 42 }, { intent: '' }, { intent: '  ', constraints: 'x' }]) {
      out.push({ method: 'discuss/consumeTask', params: { discussionId: keep, target: 'chat', task }, expect: 'error' });
    }
    out.push({ method: 'discuss/consumeTask', params: { discussionId: keep, target: 'chat' }, expect: 'error' }); // no prepared task
    out.push({ method: 'discuss/promote', params: { discussionId: saved }, expect: 'error' }); // closed
    out.push({ method: 'discuss/send', params: { discussionId: saved, text: 'hi' }, expect: 'error' }); // closed
    // Lenient fields: a refusal must be clear; an answer must not change anything.
    for (const fromSeq of ['x', -1, 1e308, {}, [], null, 2 ** 53]) out.push({ method: 'discuss/subscribe', params: { discussionId: keep, fromSeq }, expect: 'either' });
    for (const folder of [42, {}, '../..', '/', MB]) out.push({ method: 'discuss/list', params: { folder }, expect: 'either' });
    for (const params of shapes) out.push({ method: 'discuss/list', params, expect: 'either' });
    for (const params of shapes) out.push({ method: 'discuss/models', params, expect: 'either' });
    for (const method of ['discuss/nope', 'discuss/', 'discuss/start/../delete', '$/cancelRequest', 'workspace/executeCommand']) {
      out.push({ method, params: { discussionId: keep }, expect: method.startsWith('$/') ? 'either' : 'error' });
    }
    return out;
  }

  /** A clear refusal: a known code (never the generic internal error), a sentence, no stack. */
  function assertClear(err: ResponseError<unknown>, where: string): void {
    assert.ok(KNOWN_CODES.has(err.code), `${where}: code ${err.code} (${err.message.slice(0, 200)})`);
    assert.ok(typeof err.message === 'string' && err.message.length >= 15, `${where}: a real message`);
    assert.doesNotMatch(err.message, /\n\s+at |TypeError|ReferenceError|Cannot read propert|is not a function|undefined is not/, `${where}: no internals`);
  }

  it('answers every malformed request with a clear error, and nothing saved is lost, touched or read through a climbing id', async () => {
    const exportedKeep = await s.request<{ text: string }>('discuss/export', { discussionId: keep, format: 'json' });
    const exportedSaved = await s.request<{ text: string }>('discuss/export', { discussionId: saved, format: 'json' });
    const victimsBefore = treeHash(...victims);
    const storageBefore = treeHash(path.join(lab.storage, 'discussions', saved), lab.repo);
    const lastSeqBefore = Math.max(...s.events.filter((e) => e.discussionId === keep).map((e) => e.seq));

    const list = probes();
    const unclear: string[] = [];
    const answered: string[] = [];
    let refused = 0;
    let longest = 0;
    for (const probe of list) {
      const where = `${probe.method} ${JSON.stringify(probe.params)?.slice(0, 120)}`;
      try {
        const result = await s.request(probe.method, probe.params);
        answered.push(JSON.stringify(result)?.slice(0, 20_000) ?? '');
        // A start that should have been refused opened a discussion: close it, so the cap does not mask later probes.
        const opened = (result as { discussionId?: string } | null)?.discussionId;
        if (probe.method === 'discuss/start' && opened && opened !== keep) await s.request('discuss/close', { discussionId: opened });
        if (probe.expect === 'error') unclear.push(`${where}: accepted (${JSON.stringify(result)?.slice(0, 120)})`);
      } catch (err) {
        refused++;
        const e = err as ResponseError<unknown>;
        answered.push(e.message.slice(0, 20_000));
        longest = Math.max(longest, e.message.length);
        try {
          assertClear(e, where);
        } catch (failure) {
          unclear.push((failure as Error).message.split('\n')[0]);
        }
      }
      assert.equal(s.child.exitCode, null, `the server survived ${where}`);
    }
    assert.deepEqual(unclear, [], 'these requests did not get a clear refusal');

    // Nothing lost or touched.
    assert.equal((await s.request<{ text: string }>('discuss/export', { discussionId: keep, format: 'json' })).text, exportedKeep.text);
    assert.equal((await s.request<{ text: string }>('discuss/export', { discussionId: saved, format: 'json' })).text, exportedSaved.text);
    assertSameTree(victimsBefore, treeHash(...victims));
    assertSameTree(storageBefore, treeHash(path.join(lab.storage, 'discussions', saved), lab.repo));
    // (Re-subscribing replays old events; only a new seq would be a new event.)
    assert.equal(s.events.filter((e) => e.discussionId === keep && e.seq > lastSeqBefore).length, 0, 'no refused request added an event to the discussion');
    assert.ok(!answered.join('\n').includes(SENTINEL), 'nothing was read through a climbing id');
    // The kept discussion goes on.
    const events = await runTurn(s, lab.fake, keep, 'still fine?');
    assert.ok(events.some((e) => e.type === 'assistant_message'));

    recordFigures('badInput', { malformedRequests: list.length, refusedClearly: refused, answeredLeniently: list.length - refused, unclear: unclear.length, victimsIntact: victims.length, longestRefusalChars: longest });
  });

  /**
   * Found by this suite, now fixed: refusals quote the input
   * whole, so a 1 MB id or folder comes back as a 1 MB error message (tool
   * refusals already cut quoted paths at 200 characters).
   */
  it('refusals stay short (under 2,000 characters) whatever the size of the input', async () => {
    const long: string[] = [];
    for (const [method, params] of [
      ['discuss/send', { discussionId: 'disc-' + MB, text: 'x' }],
      ['discuss/export', { discussionId: 'disc-' + MB }],
      ['discuss/start', { folder: MB }],
      ['discuss/start', { folder: lab.repo, model: MB }],
    ] as const) {
      const err = await s.request(method, params).then(
        () => undefined,
        (e: ResponseError<unknown>) => e,
      );
      assert.ok(err, `${method} was refused`);
      if (err.message.length >= 2000) long.push(`${method}: a refusal of ${err.message.length} characters`);
    }
    assert.deepEqual(long, []);
  });

  /**
   * Found by this suite, now fixed: `discuss/start` calls
   * `params.resumeId?.trim()` without a type check, so a resumeId that is not
   * a string is answered with -32603 "The server failed: params.resumeId?.trim
   * is not a function"; a model that is not a string is silently ignored and
   * the discussion opens anyway.
   */
  it('discuss/start refuses a resumeId or a model that is not a string with a clear InvalidParams error', async () => {
    const wrong: string[] = [];
    for (const [field, value] of [['resumeId', 42], ['resumeId', true], ['resumeId', {}], ['resumeId', ['disc-x']], ['model', 42], ['model', {}], ['model', []]] as const) {
      try {
        const result = await s.request<StartRequest.Result>('discuss/start', { folder: lab.repo, [field]: value });
        wrong.push(`${field}: ${JSON.stringify(value)} accepted`);
        await s.request('discuss/close', { discussionId: result.discussionId });
      } catch (err) {
        const e = err as ResponseError<unknown>;
        if (e.code !== DiscussErrorCode.InvalidParams) wrong.push(`${field}: ${JSON.stringify(value)} answered ${e.code} "${e.message}"`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  /**
   * Found by this suite, now fixed: server.ts `stringArray`
   * turns a denyRead that is not an array of strings into [], so
   * `discuss/configure {"denyRead": "docs/**"}` answers ok and clears the
   * user's deny rules: files they denied become readable by the model in the
   * next discussion. A model that is not an object is ignored with ok too.
   */
  it('a malformed deny list in discuss/configure is refused and keeps the deny rules in force (it does not silently clear them)', async () => {
    await s.request('discuss/configure', { denyRead: ['docs/**'] });
    const attempts: unknown[] = ['docs/**', 42, {}, [42], [null], true];
    const accepted: string[] = [];
    for (const denyRead of attempts) {
      try {
        await s.request('discuss/configure', { denyRead });
        accepted.push(JSON.stringify(denyRead));
      } catch (err) {
        assertClear(err as ResponseError<unknown>, `configure denyRead ${JSON.stringify(denyRead)}`);
      }
    }
    for (const model of ['http://x', 42, [], { baseUrl: 42 }, { apiKey: {} }]) {
      try {
        await s.request('discuss/configure', { model });
        accepted.push(`model ${JSON.stringify(model)}`);
      } catch (err) {
        assertClear(err as ResponseError<unknown>, `configure model ${JSON.stringify(model)}`);
      }
    }
    // Whatever was answered, docs/ must still be unreadable in a new discussion.
    const id = await lab.open(s);
    await runTurn(s, lab.fake, id, 'read the docs', [
      { kind: 'toolCalls', calls: [{ id: 'deny-check', name: 'read_file', arguments: '{"path":"docs/inside.txt"}' }] },
      { kind: 'text', text: 'ok' },
    ]);
    const output = toolOutputs(lab.fake.completionRequests).get('deny-check') ?? '';
    await s.request('discuss/close', { discussionId: id });
    await s.request('discuss/configure', { denyRead: [] });
    assert.match(output, /Refused/, `after malformed configure requests, docs/ became readable again: ${output.slice(0, 120)}`);
    assert.deepEqual(accepted, [], 'malformed configure params were accepted without an error');
  });

  /**
   * Found by this suite, now fixed: discuss/consumeTask keeps
   * a target, intent and constraints of any size, in record.json and in the
   * hand-off note of every later system prompt (rename is cut to 80).
   */
  it('huge but well-typed strings do not grow what is saved and sent to the model without bound', async () => {
    const id = await lab.open(s);
    await runTurn(s, lab.fake, id, 'something to hand off');
    const outcomes: string[] = [];
    const tryRequest = async (method: string, params: unknown) => {
      try {
        await s.request(method, params);
        outcomes.push(`${method}: accepted`);
      } catch (err) {
        assertClear(err as ResponseError<unknown>, method);
        outcomes.push(`${method}: refused`);
      }
    };
    await tryRequest('discuss/rename', { discussionId: id, title: MB });
    await tryRequest('discuss/consumeTask', { discussionId: id, target: MB, task: { intent: MB, constraints: [MB, MB] } });
    const record = fs.statSync(path.join(lab.storage, 'discussions', id, 'record.json')).size;
    await runTurn(s, lab.fake, id, 'and next?');
    const system = String((lab.fake.completionRequests[lab.fake.completionRequests.length - 1].body?.messages?.[0] as { content: string }).content);
    await s.request('discuss/close', { discussionId: id });
    recordFigures('badInput', { hugeStrings: outcomes, recordBytesAfterHugeStrings: record, systemPromptCharsAfterHugeStrings: system.length });
    const grown = [
      record >= 256 * 1024 && `the saved record grew to ${record} bytes`,
      system.length >= 256 * 1024 && `the system prompt grew to ${system.length} characters`,
    ].filter(Boolean);
    assert.deepEqual(grown, []);
  });

  it('survives malformed frames and messages on the wire, and answers the next request', async () => {
    const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body, 'utf8')}\r\n\r\n${body}`;
    const raw = [
      frame('this is not json'),
      frame('42'),
      frame('[]'),
      frame('{"jsonrpc":"2.0"}'),
      frame('{"jsonrpc":"1.0","id":77,"method":"discuss/list","params":{}}'),
      frame('{"jsonrpc":"2.0","id":9999,"result":{"ok":true}}'),
      frame('{"jsonrpc":"2.0","method":"discuss/event","params":{"x":1}}'),
      frame('{"jsonrpc":"2.0","id":78,"method":42,"params":{}}'),
      frame('{"jsonrpc":"2.0","id":{"a":1},"method":"discuss/list"}'),
      frame(`{"jsonrpc":"2.0","id":79,"method":"discuss/send","params":{"discussionId":"${keep}","text":"${'y'.repeat(20 * 1024 * 1024)}"}}`),
    ];
    let survived = 0;
    for (const bytes of raw) {
      s.child.stdin!.write(bytes);
      const list = await s.request<{ discussions: Array<{ discussionId: string }> }>('discuss/list', {});
      assert.ok(list.discussions.some((d) => d.discussionId === keep), 'the server still answers, with its discussions');
      survived++;
    }
    assert.equal(s.of(keep, 'user_message').filter((e) => e.text.startsWith('yyyy')).length, 0, 'the 20 MB message was not taken');
    recordFigures('badInput', { malformedFrames: survived });
  });

  it('takes exactly as many of 100 concurrent starts as the cap allows, and exactly one of 100 concurrent sends', async () => {
    const { discussions } = await s.request<{ discussions: unknown[] }>('discuss/list', {});
    const free = 8 - discussions.length;
    const starts = await Promise.allSettled(Array.from({ length: 100 }, () => s.request<StartRequest.Result>('discuss/start', { folder: lab.repo })));
    const startedIds = starts.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<StartRequest.Result>).value.discussionId);
    const startRefusals = starts.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as ResponseError<unknown>);
    assert.equal(startedIds.length, free, `the cap of 8 open discussions holds (${startedIds.length} of 100 started with ${free} free)`);
    for (const err of startRefusals) {
      assert.equal(err.code, DiscussErrorCode.Conflict);
      assertClear(err, 'concurrent start');
    }
    const target = startedIds[0] ?? keep;
    await s.request('discuss/subscribe', { discussionId: target, fromSeq: 0 });
    const gate = createGate();
    lab.fake.push({ kind: 'gate', gate, then: { kind: 'text', text: 'One answer.' } });
    const sends = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => s.request('discuss/send', { discussionId: target, text: `send ${i}` })));
    const accepted = sends.filter((r) => r.status === 'fulfilled').length;
    for (const r of sends.filter((r) => r.status === 'rejected')) {
      const err = (r as PromiseRejectedResult).reason as ResponseError<unknown>;
      assert.equal(err.code, DiscussErrorCode.Busy);
      assertClear(err, 'concurrent send');
    }
    gate.release();
    await s.turnsComplete(target, 1);
    assert.equal(accepted, 1, 'one send is a turn; the other 99 are refused, not queued');
    assert.equal(s.of(target, 'user_message').length, 1);
    for (const id of startedIds) await s.request('discuss/close', { discussionId: id });
    recordFigures('badInput', { concurrentStarts: 100, startsAccepted: startedIds.length, concurrentSends: 100, sendsAccepted: accepted });
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AttachmentOutcome, StartRequest, SymbolsRequest } from '../../shared/protocol';
import { startFakeOpenAI, lastUserMessage, type FakeOpenAI } from '../support/fakeOpenAI';
import { ServerProcess } from '../support/serverProcess';

/** Never in any message, path or attachment the test sends: finding it anywhere is a leak. */
const PLANTED = 'PLANTED-7c41e0';

describe('attachments on a message, against the real server process', function () {
  this.timeout(30_000);
  let fake: FakeOpenAI;
  let work: string;
  let repo: string;
  let storage: string;
  const servers: ServerProcess[] = [];

  const write = (relative: string, content: string | Buffer): void => {
    const file = path.join(repo, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  };
  const server = async (): Promise<ServerProcess> => {
    const s = await ServerProcess.start({ storageDir: storage, denyRead: ['private/**'], model: { baseUrl: fake.baseUrl, apiKey: 'k', model: 'm' } });
    servers.push(s);
    return s;
  };
  const open = async (s: ServerProcess, resumeId?: string): Promise<string> => {
    const started = await s.request<StartRequest.Result>('discuss/start', { folder: repo, ...(resumeId ? { resumeId } : {}) });
    await s.request('discuss/subscribe', { discussionId: started.discussionId, fromSeq: 0 });
    return started.discussionId;
  };
  const send = async (s: ServerProcess, id: string, text: string, attachments: unknown): Promise<AttachmentOutcome[]> => {
    const done = s.of(id, 'turn_complete').length;
    const sent = await s.request<{ seq: number }>('discuss/send', { discussionId: id, text, attachments });
    await s.turnsComplete(id, done + 1);
    const event = s.of(id, 'user_message').find((e) => e.seq === sent.seq);
    assert.ok(event, 'the send emitted its user_message');
    return event.attachments ?? [];
  };
  const modelSaw = (): string => lastUserMessage(fake.completionRequests[fake.completionRequests.length - 1]);
  const numbered = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i} of the story`).join('\n');

  beforeEach(async () => {
    fake = await startFakeOpenAI({ models: ['m'], fallback: { kind: 'text', text: 'Noted.' } });
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rd-attach-')));
    repo = path.join(work, 'repo');
    storage = path.join(work, 'storage');
    fs.mkdirSync(repo);
    fs.mkdirSync(path.join(work, 'outside'));
    fs.writeFileSync(path.join(work, 'outside', 'secret.txt'), `${PLANTED} outside\n`);
    write('src/story.txt', `${numbered(1, 100)}\n`);
    write('.env', `TOKEN=${PLANTED}\n`);
    write('private/plan.md', `${PLANTED} plan\n`);
    write('blob.bin', Buffer.from([0x50, 0, 0, 1, ...Buffer.from(PLANTED)]));
    fs.symlinkSync(path.join(work, 'outside', 'secret.txt'), path.join(repo, 'escape.txt'));
    write(
      'src/cart.ts',
      [
        '// cart header comment',
        'export const TAX = 0.2;',
        '',
        'export function total(items: number[]): number {',
        '  let sum = 0;',
        '  for (const item of items) sum += item;',
        '  return sum * (1 + TAX);',
        '}',
        '',
        'export class Cart {',
        '  items: number[] = [];',
        '  total(): number {',
        '    return total(this.items);',
        '  }',
        '}',
        '// cart footer comment',
        '',
      ].join('\n'),
    );
    write('src/ledger.ts', `export function balance(): string {\n  return '${PLANTED} ledger';\n}\n`);
    write('private/hidden.ts', `export function hiddenPlanted(): string {\n  return '${PLANTED}';\n}\n`);
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop().catch(() => s.kill());
    await fake.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('gives the model a file attachment with its numbered lines under a path:start-end label, and the event only its path and range', async () => {
    const s = await server();
    const id = await open(s);
    const [chip] = await send(s, id, 'What happens here?', [{ kind: 'file', path: 'src/story.txt' }]);

    const seen = modelSaw();
    assert.ok(seen.startsWith('What happens here?'), 'the typed text comes first');
    assert.match(seen, /<<<attachment src\/story\.txt:1-100 \(file/);
    assert.ok(seen.includes('1: line 1 of the story') && seen.includes('100: line 100 of the story'));
    assert.match(seen, />>>end of attachment src\/story\.txt:1-100/);
    assert.deepEqual(chip, { kind: 'file', path: 'src/story.txt', status: 'attached', shownStart: 1, shownEnd: 100 });
    assert.ok(!JSON.stringify(s.events).includes('of the story'), 'no event carries the contents');
  });

  it('gives the model only the range of a selection attachment', async () => {
    const s = await server();
    const id = await open(s);
    const [chip] = await send(s, id, 'And this part?', [{ kind: 'selection', path: 'src/story.txt', startLine: 10, endLine: 12 }]);

    const seen = modelSaw();
    assert.match(seen, /<<<attachment src\/story\.txt:10-12 \(selection/);
    assert.ok(seen.includes('10: line 10 of the story') && seen.includes('12: line 12 of the story'));
    assert.ok(!seen.includes('line 9 of') && !seen.includes('line 13 of'), 'nothing outside the range');
    assert.equal(chip.status, 'attached');
    assert.deepEqual([chip.shownStart, chip.shownEnd], [10, 12]);
  });

  it('refuses .env, a link out of the folder, a denied file, a binary and a missing file with the reason on the chip, tells the model, and no byte of them goes anywhere', async () => {
    const s = await server();
    const id = await open(s);
    const chips = await send(s, id, 'Look at these', [
      { kind: 'file', path: '.env' },
      { kind: 'file', path: 'escape.txt' },
      { kind: 'file', path: 'private/plan.md' },
      { kind: 'file', path: 'blob.bin' },
      { kind: 'file', path: 'nowhere.txt' },
      { kind: 'file', path: '../outside/secret.txt' },
    ]);

    assert.deepEqual(
      chips.map((c) => [c.path, c.status, c.refusal]),
      [
        ['.env', 'refused', 'secret'],
        ['escape.txt', 'refused', 'outside'],
        ['private/plan.md', 'refused', 'denied'],
        ['blob.bin', 'refused', 'binary'],
        ['nowhere.txt', 'refused', 'missing'],
        ['../outside/secret.txt', 'refused', 'outside'],
      ],
    );
    assert.ok(chips.every((c) => typeof c.note === 'string' && c.note.length > 0), 'every refused chip says why');
    const seen = modelSaw();
    assert.equal(seen.match(/was not attached/g)?.length, 6, 'the model is told of each refusal');
    await s.stop();
    const everywhere = [
      ...fake.requests.map((r) => r.rawBody),
      JSON.stringify(s.events),
      s.stderr.join('\n'),
      ...fs.readdirSync(path.join(storage, 'discussions'), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), 'latin1')),
    ].join('\n');
    assert.ok(!everywhere.includes(PLANTED) && !everywhere.includes('PLANTED'), 'no byte of a refused file in any request, event, log or saved file');
  });

  it('cuts an attachment past its own cap with a note, leaves out those past the total cap, and counts none of it against the 64 KiB of typed text', async () => {
    const long = Array.from({ length: 3000 }, (_, i) => `${String(i + 1).padStart(5, '0')} ${'x'.repeat(40)}`).join('\n');
    for (const name of ['a', 'b', 'c', 'd']) write(`big/${name}.txt`, `${long}\n`);
    const s = await server();
    const id = await open(s);
    const typed = 'q'.repeat(60 * 1024);
    const chips = await send(s, id, typed, ['a', 'b', 'c', 'd'].map((name) => ({ kind: 'file', path: `big/${name}.txt` })));

    assert.deepEqual(chips.map((c) => c.status), ['cut', 'cut', 'cut', 'refused']);
    assert.equal(chips[3].refusal, 'total_cap');
    assert.ok(chips[0].shownEnd! < 3000 && chips[0].shownStart === 1);
    const seen = modelSaw();
    assert.ok(seen.includes(typed), 'the whole typed text reaches the model');
    assert.equal(seen.match(/\[Cut: only lines 1-/g)?.length, 3, 'each cut attachment carries a note');
    const attachedBytes = Buffer.byteLength(seen, 'utf8') - typed.length;
    assert.ok(attachedBytes <= 96 * 1024 + 4096, `attachments stay within their total cap (${attachedBytes} bytes)`);

    await assert.rejects(
      s.request('discuss/send', { discussionId: id, text: 'too many', attachments: Array.from({ length: 11 }, () => ({ kind: 'file', path: 'src/story.txt' })) }),
      /limit is 10/,
    );
    await assert.rejects(s.request('discuss/send', { discussionId: id, text: 'odd', attachments: [{ kind: 'exec', path: 'x' }] }), /"kind" must be/);
    assert.equal(s.of(id, 'user_message').length, 1, 'a refused send records nothing');
  });

  it('carries the attachments in the user_message a replay and a resume show, and the resumed model history keeps what was read', async () => {
    const first = await server();
    const id = await open(first);
    const sentChips = await send(first, id, 'Remember this', [{ kind: 'selection', path: 'src/story.txt', startLine: 5, endLine: 6 }, { kind: 'file', path: '.env' }]);
    await first.stop();

    const second = await server();
    assert.equal(await open(second, id), id);
    await second.until((events) => events.some((e) => e.type === 'user_message'));
    const replayed = second.of(id, 'user_message')[0];
    assert.deepEqual(replayed.attachments, sentChips);
    assert.equal(replayed.attachments?.[1].refusal, 'secret');

    await send(second, id, 'And now?', undefined);
    const messages = fake.completionRequests[fake.completionRequests.length - 1].body!.messages as Array<{ role: string; content: string }>;
    const firstUser = messages.find((m) => m.role === 'user')!.content;
    assert.match(firstUser, /src\/story\.txt:5-6/);
    assert.ok(firstUser.includes('5: line 5 of the story'));
  });

  it('gives the model a symbol attachment as its definition\'s lines alone, under a path:start-end label that names the symbol', async () => {
    const s = await server();
    const id = await open(s);
    const [fn, method] = await send(s, id, 'Explain these', [
      { kind: 'symbol', path: 'src/cart.ts', symbol: 'total' },
      { kind: 'symbol', path: 'src/cart.ts', symbol: 'Cart.total' },
    ]);

    const seen = modelSaw();
    assert.match(seen, /<<<attachment src\/cart\.ts:4-8 \(symbol "total"/);
    assert.match(seen, /<<<attachment src\/cart\.ts:12-14 \(symbol "Cart\.total"/);
    assert.ok(seen.includes('4: export function total(') && seen.includes('8: }'));
    assert.ok(!seen.includes('cart header comment') && !seen.includes('cart footer comment') && !seen.includes('TAX = 0.2'), 'no line outside the definitions');
    assert.deepEqual(fn, { kind: 'symbol', path: 'src/cart.ts', symbol: 'total', startLine: 4, endLine: 8, status: 'attached', shownStart: 4, shownEnd: 8 });
    assert.deepEqual([method.startLine, method.endLine, method.status], [12, 14, 'attached']);
    assert.ok(!JSON.stringify(s.events).includes('sum += item'), 'no event carries the contents');
  });

  it('refuses a symbol the file does not define, with the reason on the chip and to the model, and no byte of the file goes anywhere', async () => {
    const s = await server();
    const id = await open(s);
    const [chip] = await send(s, id, 'And this?', [{ kind: 'symbol', path: 'src/ledger.ts', symbol: 'credit' }]);

    assert.equal(chip.status, 'refused');
    assert.equal(chip.refusal, 'no_symbol');
    assert.equal(chip.note, 'symbol "credit" not found in src/ledger.ts');
    assert.equal(chip.shownStart, undefined);
    assert.match(modelSaw(), /\[Attachment src\/ledger\.ts "credit" was not attached: symbol "credit" not found in "src\/ledger\.ts"; /);
    await s.stop();
    const everywhere = [...fake.requests.map((r) => r.rawBody), JSON.stringify(s.events), s.stderr.join('\n')].join('\n');
    assert.ok(!everywhere.includes(PLANTED) && !everywhere.includes('ledger\''), 'not one line of the file was read out');
  });

  it('refuses a symbol attachment on .env, a denied file, a link out and a path outside the folder as it would the file, before any lookup', async () => {
    const s = await server();
    const id = await open(s);
    const chips = await send(s, id, 'Symbols there?', [
      { kind: 'symbol', path: '.env', symbol: 'TOKEN' },
      { kind: 'symbol', path: 'private/hidden.ts', symbol: 'hiddenPlanted' },
      { kind: 'symbol', path: 'escape.txt', symbol: 'x' },
      { kind: 'symbol', path: '../outside/secret.txt', symbol: 'x' },
    ]);
    assert.deepEqual(chips.map((c) => [c.path, c.status, c.refusal]), [
      ['.env', 'refused', 'secret'],
      ['private/hidden.ts', 'refused', 'denied'],
      ['escape.txt', 'refused', 'outside'],
      ['../outside/secret.txt', 'refused', 'outside'],
    ]);
    await s.stop();
    const everywhere = [...fake.requests.map((r) => r.rawBody), JSON.stringify(s.events), s.stderr.join('\n')].join('\n');
    assert.ok(!everywhere.includes(PLANTED), 'no byte of them anywhere');
  });

  it('carries a symbol attachment through a replay and a resume, and the resumed history keeps its definition', async () => {
    const first = await server();
    const id = await open(first);
    const sentChips = await send(first, id, 'Keep this symbol', [{ kind: 'symbol', path: 'src/cart.ts', symbol: 'total' }, { kind: 'symbol', path: 'src/cart.ts', symbol: 'nope' }]);
    await first.stop();

    const second = await server();
    assert.equal(await open(second, id), id);
    await second.until((events) => events.some((e) => e.type === 'user_message'));
    assert.deepEqual(second.of(id, 'user_message')[0].attachments, sentChips);
    assert.equal(sentChips[1].refusal, 'no_symbol');

    await send(second, id, 'Still there?', undefined);
    const messages = fake.completionRequests[fake.completionRequests.length - 1].body!.messages as Array<{ role: string; content: string }>;
    const firstUser = messages.find((m) => m.role === 'user')!.content;
    assert.match(firstUser, /src\/cart\.ts:4-8 \(symbol "total"/);
    assert.ok(firstUser.includes('5:   let sum = 0;'));
  });

  it('offers symbols for @ completion by name, kind and path:line, bounded, and none from a denied file', async () => {
    const s = await server();
    const id = await open(s);
    const { symbols } = await s.request<SymbolsRequest.Result>('discuss/symbols', { discussionId: id, query: 'tot' });
    assert.deepEqual(
      symbols.map((x) => `${x.kind} ${x.container ? `${x.container}.` : ''}${x.name} ${x.path}:${x.line}`).sort(),
      ['function total src/cart.ts:4', 'method Cart.total src/cart.ts:12'],
    );
    const hidden = await s.request<SymbolsRequest.Result>('discuss/symbols', { discussionId: id, query: 'hiddenPlanted' });
    assert.deepEqual(hidden.symbols, [], 'a denied file offers nothing');
    assert.deepEqual((await s.request<SymbolsRequest.Result>('discuss/symbols', { discussionId: id, query: '' })).symbols, []);
    await assert.rejects(s.request('discuss/symbols', { discussionId: id, query: 42 }), /query must be a string/);
  });
});

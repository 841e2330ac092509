import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IdeItem, IdeQueryRequest } from '../../../shared/protocol';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { IdeQueries, type IdeSource } from '../../../server/src/symbols/ideSource';
import { closeSymbolPool, setSymbolIndexClock } from '../../../server/src/symbols/symbolIndex';
import { OUTSIDE_MARKER, writeTree } from '../../support/toolFixture';

/**
 * Symbol attachments and symbol completion with an editor that answers
 * `discuss/ideQuery`: its document symbols give the range (a language the
 * index does not parse included), and a location it names outside the file
 * or the folder is never taken for the definition.
 */

class FakeIde implements IdeSource {
  constructor(private readonly answer: (params: IdeQueryRequest.Params) => IdeItem[] | undefined) {}
  query(params: IdeQueryRequest.Params): Promise<IdeQueryRequest.Result | undefined> {
    const items = this.answer(params);
    return Promise.resolve(items === undefined ? undefined : { items });
  }
}

const span = (uri: string, start: number, end: number, name: string, kind: string, children?: IdeItem[]): IdeItem => ({
  uri,
  name,
  kind,
  range: { start: { line: start, character: 0 }, end: { line: end, character: 1 } },
  ...(children ? { children } : {}),
});

describe('symbol attachments answered from the editor', function () {
  this.timeout(30_000);
  let base: string;
  let repo: string;
  let uriOf: (relative: string) => string;
  let outsideUri: string;

  before(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'symbol-attach-')));
    repo = path.join(base, 'repo');
    writeTree(path.join(base, 'outside'), { 'leak.kt': `val leak = "${OUTSIDE_MARKER}"\n` });
    writeTree(repo, { 'src/Cart.kt': 'package shop\n\nclass Cart {\n  fun total(): Int {\n    return 1\n  }\n}\n// tail\n' });
    uriOf = (relative) => pathToFileURL(path.join(repo, relative)).href;
    outsideUri = pathToFileURL(path.join(base, 'outside', 'leak.kt')).href;
  });

  after(async () => {
    await closeSymbolPool();
    fs.rmSync(base, { recursive: true, force: true });
  });

  function toolbox(ide: FakeIde): Promise<Toolbox> {
    return createToolbox(repo, { denyTools: [], denyRead: [] }, { ide: new IdeQueries(ide) });
  }

  it('attaches a member by Container.name from the editor\'s nested document symbols, in a language the index does not parse', async () => {
    const ide = new FakeIde((p) => (p.kind === 'documentSymbols' ? [span(uriOf('src/Cart.kt'), 2, 6, 'Cart', 'Class', [span(uriOf('src/Cart.kt'), 3, 5, 'total', 'Method')])] : undefined));
    const [read] = await (await toolbox(ide)).attach!([{ kind: 'symbol', path: 'src/Cart.kt', symbol: 'Cart.total' }]);
    assert.equal(read.outcome.status, 'attached');
    assert.deepEqual([read.outcome.startLine, read.outcome.endLine], [4, 6]);
    assert.match(read.modelText, /^<<<attachment src\/Cart\.kt:4-6 \(symbol "Cart\.total"/);
    assert.ok(!read.modelText.includes('// tail') && !read.modelText.includes('package shop'));
  });

  it('never takes a location the editor names in another file or outside the folder for the definition', async () => {
    const ide = new FakeIde((p) => (p.kind === 'documentSymbols' ? [span(outsideUri, 0, 0, 'leak', 'Variable')] : undefined));
    const [read] = await (await toolbox(ide)).attach!([{ kind: 'symbol', path: 'src/Cart.kt', symbol: 'leak' }]);
    assert.equal(read.outcome.status, 'refused');
    assert.equal(read.outcome.refusal, 'no_symbol');
    assert.ok(!read.modelText.includes(OUTSIDE_MARKER));
  });

  it('offers the editor\'s workspace symbols inside the folder for completion, leaving out those outside it', async () => {
    const ide = new FakeIde((p) => (p.kind === 'workspaceSymbols' ? [span(outsideUri, 0, 0, 'total', 'Variable'), { ...span(uriOf('src/Cart.kt'), 3, 5, 'total', 'Method'), container: 'Cart' }] : undefined));
    const symbols = await (await toolbox(ide)).symbols!('tot');
    assert.deepEqual(symbols, [{ name: 'total', kind: 'method', container: 'Cart', path: 'src/Cart.kt', line: 4 }]);
  });

  it('keeps a name that is no identifier followed by `()`, such as C++\'s `operator()`, as the editor gave it', async () => {
    const ide = new FakeIde((p) => (p.kind === 'workspaceSymbols' ? [span(uriOf('src/Cart.kt'), 3, 5, 'operator()', 'Method'), span(uriOf('src/Cart.kt'), 4, 5, 'total(items)', 'Method')] : undefined));
    const symbols = await (await toolbox(ide)).symbols!('op');
    assert.deepEqual(symbols.map((symbol) => symbol.name), ['operator()']);
  });

  it('offers a function the editor names `total()`, as TypeScript\'s workspace symbols do, under its bare name, so the chip names what the file defines', async () => {
    const ide = new FakeIde((p) => (p.kind === 'workspaceSymbols' ? [{ ...span(uriOf('src/Cart.kt'), 3, 5, 'total()', 'Method'), container: 'Cart' }] : undefined));
    const symbols = await (await toolbox(ide)).symbols!('tot');
    assert.deepEqual(symbols, [{ name: 'total', kind: 'method', container: 'Cart', path: 'src/Cart.kt', line: 4 }]);
  });
});

describe('symbol attachments answered from the symbol index', function () {
  this.timeout(30_000);
  let repo: string;

  before(() => {
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'symbol-index-attach-')));
    writeTree(repo, { 'src/rates.ts': 'export function roundRate(rate: number): number {\n  return Math.round(rate * 100) / 100;\n}\n' });
    // A clock that never moves: the index always counts as just refreshed.
    setSymbolIndexClock(() => 0);
  });

  after(async () => {
    setSymbolIndexClock();
    await closeSymbolPool();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('looks a file saved since the index\'s last refresh up afresh, so a renamed symbol is refused rather than its old range read from the new text', async () => {
    const tools = await createToolbox(repo, { denyTools: [], denyRead: [] }, {});
    const attach = () => tools.attach!([{ kind: 'symbol', path: 'src/rates.ts', symbol: 'roundRate' }]);
    assert.equal((await attach())[0].outcome.status, 'attached');
    // A second lookup finds nothing changed: from here on the index trusts itself.
    assert.equal((await attach())[0].outcome.status, 'attached');
    fs.writeFileSync(path.join(repo, 'src/rates.ts'), '// rates, renamed\nexport function roundedRate(rate: number): number {\n  return Math.round(rate * 1000) / 1000;\n}\n');
    const [read] = await attach();
    assert.equal(read.outcome.status, 'refused', read.modelText);
    assert.equal(read.outcome.refusal, 'no_symbol');
    assert.ok(!read.modelText.includes('Math.round'), read.modelText);
  });
});

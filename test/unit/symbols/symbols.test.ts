import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createToolbox } from '../../../server/src/read/toolbox';
import type { Toolbox } from '../../../server/src/read/types';
import { closeSymbolPool, setSymbolIndexClock, SYMBOL_INDEX_LIMITS } from '../../../server/src/symbols/symbolIndex';
import { matchScore } from '../../../server/src/symbols/matching';
import { SYMBOL_LIMITS } from '../../../server/src/symbols/symbolTools';
import { expectFailure, expectOk, OUTSIDE_MARKER, SECRET_MARKER, writeTree } from '../../support/toolFixture';

/**
 * A small TypeScript project (a class used from several files, an overload,
 * a re-export, a link out of the folder, a .env, a node_modules package, a
 * policy-denied source file) plus one file for each other language.
 */
function writeProject(base: string): { repo: string; outside: string } {
  const repo = path.join(base, 'repo');
  const outside = path.join(base, 'outside');
  writeTree(outside, { 'leak.ts': `export class LeakedThing {}\nexport const leakedValue = '${OUTSIDE_MARKER}';\n` });
  writeTree(repo, {
    'src/server.ts': [
      '/** A server. Server is mentioned in this comment. */',
      'export class Server {',
      '  constructor(private readonly port: number) {}',
      '',
      '  listen(host: string): void {',
      "    console.log('Server listening', host);",
      '  }',
      '}',
      '',
      'export function createServer(port: number): Server;',
      'export function createServer(port: string): Server;',
      'export function createServer(port: number | string): Server {',
      '  return new Server(Number(port));',
      '}',
      '',
    ].join('\n'),
    'src/index.ts': "export { Server, createServer } from './server';\nexport * from './util';\n",
    'src/util.ts': 'export interface Options {\n  port: number;\n}\nexport enum Mode { Fast, Slow }\nexport type Handler = (req: string) => void;\nexport const DEFAULT_PORT = 8080;\n',
    'src/app.ts': "import { Server, createServer } from './index';\n\nconst server: Server = createServer(8080);\nserver.listen('localhost');\n",
    'src/other.ts': "import { Server as S } from './server';\n\nexport function makeOther(): S {\n  return new S(1);\n}\n",
    'src/broken.ts': 'export function broken( {\n  return 1;\n',
    'src/private/hidden.ts': `export class Server { secret = '${SECRET_MARKER}'; }\n`,
    'src/keys.ts': `export class Server { key = '${SECRET_MARKER}'; }\nexport const apiKey = '${SECRET_MARKER}';\n`,
    '.env': `SERVER_KEY=${SECRET_MARKER}\n`,
    'node_modules/dep/index.ts': 'export class Server {}\nexport function createServer() {}\n',
    '.gitignore': 'generated/\n',
    'generated/out.ts': 'export class Server {}\n',
    'py/models.py': 'MAX_USERS = 10\n\nclass UserStore:\n    def __init__(self):\n        self.users = []\n\n    def add_user(self, name):\n        return name\n\ndef make_store():\n    return UserStore()\n',
    'go/main.go': 'package main\n\ntype Greeter struct {\n\tName string\n}\n\nfunc (g *Greeter) Greet() string {\n\treturn g.Name\n}\n\nfunc NewGreeter() *Greeter {\n\treturn &Greeter{}\n}\n',
    'rust/lib.rs': 'pub struct Counter {\n    count: u32,\n}\n\nimpl Counter {\n    pub fn increment(&mut self) {\n        self.count += 1;\n    }\n}\n\npub trait Shape {\n    fn area(&self) -> f64;\n}\n',
    'java/Invoice.java': 'public class Invoice {\n    private int total;\n\n    public Invoice(int total) {\n        this.total = total;\n    }\n\n    public int getTotal() {\n        return total;\n    }\n}\n',
    'c/list.c': '#define MAX_ITEMS 16\n\nstruct node {\n    int value;\n};\n\nint list_length(struct node *head) {\n    return 0;\n}\n',
    'cs/Account.cs': 'namespace Bank {\n    public class Account {\n        public decimal Balance { get; set; }\n        public void Deposit(decimal amount) { Balance += amount; }\n    }\n}\n',
    'ruby/shop.rb': 'module Shop\n  class Cart\n    def initialize\n      @items = []\n    end\n\n    def checkout_total\n      0\n    end\n  end\nend\n',
  });
  fs.symlinkSync(path.join(outside, 'leak.ts'), path.join(repo, 'src', 'linked.ts'));
  fs.symlinkSync(outside, path.join(repo, 'linked-dir'));
  return { repo, outside };
}

describe('symbol tools (tree-sitter index)', function () {
  this.timeout(60_000);
  let base: string;
  let repo: string;
  let toolbox: Toolbox;

  before(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-symbols-')));
    ({ repo } = writeProject(base));
    toolbox = await createToolbox(repo, { denyTools: [], denyRead: ['src/private/**', 'src/keys.ts'] });
    // These tests edit files and query at once: each reading of the clock is one freshness interval later, so every query refreshes.
    let now = 0;
    setSymbolIndexClock(() => (now += SYMBOL_INDEX_LIMITS.freshForMs));
  });
  after(async () => {
    setSymbolIndexClock();
    await closeSymbolPool();
    fs.rmSync(base, { recursive: true, force: true });
  });

  /** Nothing from outside the folder, a secret or a policy-denied file appears. */
  function assertContained(output: string): void {
    assert.ok(!output.includes(OUTSIDE_MARKER), `outside content leaked: ${output}`);
    assert.ok(!output.includes(SECRET_MARKER), `secret content leaked: ${output}`);
    assert.ok(!/LeakedThing|leakedValue/.test(output), `a symbol of an outside file leaked: ${output}`);
  }
  /** And no result comes from a denied, node_modules or gitignored file. */
  function assertIndexedOnly(output: string): void {
    assertContained(output);
    assert.ok(!/^(src\/private\/|src\/keys\.ts|node_modules|generated\/)/m.test(output), `an unindexed file was shown: ${output}`);
  }
  async function expectRefusal(name: string, args: unknown, pattern: RegExp): Promise<void> {
    assert.match(await expectFailure(toolbox, name, args), pattern);
  }

  describe('matching', () => {
    it('matches case-insensitively by prefix and by camelCase humps, and ranks the exact name first', () => {
      assert.ok((matchScore('createServer', 'createServer') ?? 0) > (matchScore('createserver', 'createServer') ?? 0));
      assert.ok(matchScore('create', 'createServer') !== undefined);
      assert.ok(matchScore('cS', 'createServer') !== undefined);
      assert.ok(matchScore('crSer', 'createServer') !== undefined);
      assert.ok(matchScore('HS', 'HTTPServer') !== undefined);
      assert.ok(matchScore('crser', 'createServer') !== undefined, 'a scattered match is still found');
      assert.equal(matchScore('xyz', 'createServer'), undefined);
      assert.ok((matchScore('cS', 'createServer') ?? 0) > (matchScore('cevr', 'createServer') ?? 0), 'humps rank above a scattered match');
    });
  });

  describe('find_symbol', () => {
    it('finds a class by name with kind, path:line and the line text, and leaves out node_modules, gitignored, outside and denied files', async () => {
      const output = await expectOk(toolbox, 'find_symbol', { query: 'Server' });
      assert.match(output, /^src\/server\.ts:2: class Server — export class Server \{$/m);
      assertIndexedOnly(output);
      assert.match(output, /2 files left out: outside the folder or not readable/, 'the link out and the denied file are counted');
      assert.doesNotMatch(await expectOk(toolbox, 'find_symbol', { query: 'apiKey' }), /src\/keys\.ts/);
    });

    it('finds by camelCase humps and filters by kind', async () => {
      const humps = await expectOk(toolbox, 'find_symbol', { query: 'cS' });
      assert.match(humps, /src\/server\.ts:10: function createServer/);
      const methods = await expectOk(toolbox, 'find_symbol', { query: 'listen', kind: 'method' });
      assert.match(methods, /src\/server\.ts:5: method Server\.listen — listen\(host: string\): void \{/);
      const classes = await expectOk(toolbox, 'find_symbol', { query: 'createServer', kind: 'class' });
      assert.match(classes, /^No symbols of kind class match/);
      await expectRefusal('find_symbol', { query: 'x', kind: 'gadget' }, /Unknown kind "gadget"/);
    });

    it('indexes Python, Go, Rust, Java, C, C# and Ruby definitions with their containers', async () => {
      const expected: Array<[string, RegExp]> = [
        ['UserStore', /py\/models\.py:3: class UserStore/],
        ['add_user', /py\/models\.py:7: method UserStore\.add_user/],
        ['MAX_USERS', /py\/models\.py:1: constant MAX_USERS/],
        ['Greet', /go\/main\.go:7: method Greeter\.Greet/],
        ['Greeter', /go\/main\.go:3: struct Greeter/],
        ['increment', /rust\/lib\.rs:6: method Counter\.increment/],
        ['Shape', /rust\/lib\.rs:11: interface Shape/],
        ['getTotal', /java\/Invoice\.java:8: method Invoice\.getTotal/],
        ['list_length', /c\/list\.c:7: function list_length/],
        ['MAX_ITEMS', /c\/list\.c:1: macro MAX_ITEMS/],
        ['Deposit', /cs\/Account\.cs:4: method Account\.Deposit/],
        ['Balance', /cs\/Account\.cs:3: property Account\.Balance/],
        ['checkout_total', /ruby\/shop\.rb:7: method Cart\.checkout_total/],
        ['Cart', /ruby\/shop\.rb:2: class Shop\.Cart/],
      ];
      for (const [query, pattern] of expected) assert.match(await expectOk(toolbox, 'find_symbol', { query }), pattern, query);
    });

    it(`caps the answer at ${SYMBOL_LIMITS.findMaxResults} and says how many were left out`, async () => {
      const many = Array.from({ length: 130 }, (_, i) => `export function widget${i}(): number { return ${i}; }`).join('\n');
      fs.writeFileSync(path.join(repo, 'src', 'widgets.ts'), `${many}\n`);
      try {
        const output = await expectOk(toolbox, 'find_symbol', { query: 'widget' });
        assert.equal(output.split('\n').filter((line) => /^src\/widgets\.ts:\d+: function widget\d+/.test(line)).length, SYMBOL_LIMITS.findMaxResults);
        assert.match(output, /^130 symbol\(s\) match "widget"/);
        assert.match(output, /30 more left out/);
      } finally {
        fs.rmSync(path.join(repo, 'src', 'widgets.ts'));
      }
    });

    it('re-parses a file whose contents changed, and forgets a deleted one', async () => {
      const file = path.join(repo, 'src', 'fresh.ts');
      fs.writeFileSync(file, 'export function firstName() {}\n');
      assert.match(await expectOk(toolbox, 'find_symbol', { query: 'firstName' }), /src\/fresh\.ts:1: function firstName/);
      fs.writeFileSync(file, '\nexport function secondName() {}\n');
      assert.match(await expectOk(toolbox, 'find_symbol', { query: 'secondName' }), /src\/fresh\.ts:2: function secondName/);
      assert.match(await expectOk(toolbox, 'find_symbol', { query: 'firstName' }), /^No symbols match/);
      fs.rmSync(file);
      assert.match(await expectOk(toolbox, 'find_symbol', { query: 'secondName' }), /^No symbols match/);
    });
  });

  describe('go_to_definition', () => {
    it('follows an import through a re-export to the class, with its range and signature', async () => {
      const output = await expectOk(toolbox, 'go_to_definition', { symbol: 'Server', path: 'src/app.ts', line: 3 });
      assert.match(output, /followed the import from "\.\/index"/);
      assert.match(output, /^src\/server\.ts:2-8: class Server$/m);
      assert.match(output, /^ {2}2: export class Server \{$/m);
      assert.match(output, /^ {2}3: {3}constructor\(private readonly port: number\) \{\}$/m);
      assertContained(output);
    });

    it('follows an aliased import', async () => {
      const output = await expectOk(toolbox, 'go_to_definition', { symbol: 'S', path: 'src/other.ts', line: 3 });
      assert.match(output, /^src\/server\.ts:2-8: class Server$/m);
    });

    it('shows every overload of a function', async () => {
      const output = await expectOk(toolbox, 'go_to_definition', { symbol: 'createServer' });
      assert.match(output, /^3 definition\(s\) of "createServer"/);
      for (const line of [10, 11, 12]) assert.match(output, new RegExp(`^src/server\\.ts:${line}-\\d+: function createServer$`, 'm'));
    });

    it('refuses a path outside the folder, through a link, or denied, and never shows their contents', async () => {
      for (const requested of ['../outside/leak.ts', 'src/linked.ts', 'linked-dir/leak.ts', 'src/private/hidden.ts', 'src/keys.ts', '.env']) {
        const outcome = await toolbox.run('go_to_definition', JSON.stringify({ symbol: 'LeakedThing', path: requested, line: 1 }));
        assert.equal(outcome.ok, false, `${requested} was not refused: ${outcome.output}`);
        assertContained(outcome.output);
      }
    });
  });

  describe('find_references', () => {
    it('finds identifier uses across files, grouped by file, not in strings or comments, marked by name', async () => {
      const output = await expectOk(toolbox, 'find_references', { symbol: 'Server' });
      assert.match(output, /by name, not type-checked/);
      assert.match(output, /^src\/app\.ts:1: import \{ Server, createServer \} from '\.\/index';$/m);
      assert.match(output, /^src\/app\.ts:3: const server: Server = createServer\(8080\);$/m);
      assert.match(output, /^src\/server\.ts:2: export class Server \{ {2}\(definition\)$/m);
      assert.match(output, /^src\/server\.ts:13: return new Server\(Number\(port\)\);$/m);
      assert.doesNotMatch(output, /src\/server\.ts:1:/, 'the comment is not a reference');
      assert.doesNotMatch(output, /src\/server\.ts:6:/, 'the string is not a reference');
      assert.match(output, /^src\/app\.ts \(2\)$/m);
      assertIndexedOnly(output);
    });

    it('leaves out the definitions when include_declaration is false', async () => {
      const output = await expectOk(toolbox, 'find_references', { symbol: 'Server', include_declaration: false });
      assert.doesNotMatch(output, /\(definition\)/);
      assert.match(output, /src\/app\.ts:3:/);
      await expectRefusal('find_references', { symbol: 'Server', include_declaration: 'yes' }, /must be true or false/);
    });

    it(`caps the answer at ${SYMBOL_LIMITS.referencesMax} references and gives the total`, async () => {
      const uses = Array.from({ length: 260 }, (_, i) => `const use${i} = DEFAULT_PORT;`).join('\n');
      fs.writeFileSync(path.join(repo, 'src', 'uses.ts'), `import { DEFAULT_PORT } from './util';\n${uses}\n`);
      try {
        const output = await expectOk(toolbox, 'find_references', { symbol: 'DEFAULT_PORT' });
        assert.match(output, /^262 reference\(s\) to "DEFAULT_PORT" in 1\+ file\(s\)/);
        assert.equal(output.split('\n').filter((line) => /^src\/[a-z]+\.ts:\d+: /.test(line)).length, SYMBOL_LIMITS.referencesMax);
        // src/util.ts comes after src/uses.ts and is not read: its one use, the definition, is the index's count.
        assert.match(output, /Showing 200 of about 262: 1 more file\(s\) use the name and were not read for this answer; their 1 use\(s\) are the index's count/);
        const withoutDefinitions = await expectOk(toolbox, 'find_references', { symbol: 'DEFAULT_PORT', include_declaration: false });
        assert.match(withoutDefinitions, /^261 reference\(s\) to "DEFAULT_PORT"/, 'the definition the index counted is not a reference here');
        assert.match(withoutDefinitions, /Showing 200 of about 261: /);
      } finally {
        fs.rmSync(path.join(repo, 'src', 'uses.ts'));
      }
    });
  });

  describe('list_symbols', () => {
    it('outlines a file with kinds, names and line ranges, nested by indentation', async () => {
      const output = await expectOk(toolbox, 'list_symbols', { path: 'src/server.ts' });
      assert.match(output, /^class Server 2-8: export class Server \{$/m);
      assert.match(output, /^ {2}constructor constructor 3-3: /m);
      assert.match(output, /^ {2}method listen 5-7: listen\(host: string\): void \{$/m);
      assert.match(output, /^function createServer 12-14: /m);
    });

    it('refuses files outside the folder, through a link, secret or denied, and says why an unindexed file has no outline', async () => {
      for (const requested of ['../outside/leak.ts', 'src/linked.ts', 'linked-dir/leak.ts', 'src/private/hidden.ts', 'src/keys.ts', '.env', path.join(base, 'outside', 'leak.ts')]) {
        const outcome = await toolbox.run('list_symbols', JSON.stringify({ path: requested }));
        assert.equal(outcome.ok, false, `${requested} was not refused: ${outcome.output}`);
        assertContained(outcome.output);
      }
      await expectRefusal('list_symbols', { path: 'node_modules/dep/index.ts' }, /not in the symbol index/);
    });
  });

  describe('get_diagnostics', () => {
    it('reports syntax errors with path:line and source, and says type errors need a language extension', async () => {
      const output = await expectOk(toolbox, 'get_diagnostics', { path: 'src/broken.ts' });
      assert.match(output, /^src\/broken\.ts:\d+: error: syntax error.*\[syntax \(tree-sitter\)\]$/m);
      assert.match(output, /type errors and lint warnings need the editor's language support/i);
      const clean = await expectOk(toolbox, 'get_diagnostics', { path: 'src/server.ts' });
      assert.match(clean, /^No syntax errors found in src\/server\.ts/);
      const all = await expectOk(toolbox, 'get_diagnostics', {});
      assert.match(all, /src\/broken\.ts:/);
      assertIndexedOnly(all);
      await expectRefusal('get_diagnostics', { path: '../outside' }, /outside the folder/);
    });
  });
});

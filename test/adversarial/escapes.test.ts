/**
 * Part 1 — escapes. Every attempt is a real tool call a (fake) model makes
 * through the server process: paths, links and patterns that try to leave the
 * folder or reach a secret, through all four read tools.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IdeItem, IdeQueryRequest } from '../../shared/protocol';
import { ReadBoundary } from '../../server/src/access/boundary';
import { createToolbox } from '../../server/src/read/toolbox';
import { IdeQueries, type IdeSource } from '../../server/src/symbols/ideSource';
import { closeSymbolPool } from '../../server/src/symbols/symbolIndex';
import { expectFailure, expectOk, NO_POLICY, OUTSIDE_MARKER, writeTree } from '../support/toolFixture';
import type { FakeStep } from '../support/fakeOpenAI';
import type { ServerProcess } from '../support/serverProcess';
import { escapeAttempts, type Attempt, type Expect } from './escapeAttempts';
import { INSIDE_MARKER, Lab, SENTINEL, SENTINEL_PATTERNS, assertNoLeak, assertValidHistory, recordFigures, runTurn, scanForLeaks, startSwapper, toolOutputs, SEARCH_ENGINES, SPLIT_WALK_ENGINE, ripgrepOnPath } from './lab';


/** Calls per model step; several steps per reply, several replies. */
const CALLS_PER_STEP = 25;
const STEPS_PER_TURN = 8;

interface Outcome {
  attempt: Attempt;
  id: string;
  ok: boolean;
  output: string;
}

async function drive(lab: Lab, s: ServerProcess, discussionId: string, attempts: Attempt[], tag: string): Promise<Outcome[]> {
  const ids = attempts.map((_, i) => `${tag}-${i}`);
  const firstRequest = lab.fake.completionRequests.length;
  const results: Array<{ ok: boolean }> = [];
  for (let start = 0, turn = 0; start < attempts.length; turn++) {
    const steps: FakeStep[] = [];
    for (let step = 0; step < STEPS_PER_TURN && start < attempts.length; step++, start += CALLS_PER_STEP) {
      steps.push({
        kind: 'toolCalls',
        interleave: step % 2 === 1,
        calls: attempts.slice(start, start + CALLS_PER_STEP).map((attempt, k) => ({
          id: ids[start + k],
          name: attempt.tool,
          arguments: typeof attempt.args === 'string' ? attempt.args : JSON.stringify(attempt.args),
        })),
      });
    }
    steps.push({ kind: 'text', text: `Batch ${turn} looked at.` });
    const events = await runTurn(s, lab.fake, discussionId, `look around, batch ${turn}`, steps);
    results.push(...events.filter((e) => e.type === 'tool_result').map((e) => e as { ok: boolean }));
    assert.equal(lab.fake.pendingSteps, 0);
  }
  const requests = lab.fake.completionRequests.slice(firstRequest);
  for (const request of requests) assertValidHistory(request);
  const outputs = toolOutputs(requests);
  assert.equal(results.length, attempts.length, 'every attempt got a tool_result event');
  return attempts.map((attempt, i) => ({ attempt, id: ids[i], ok: results[i].ok, output: outputs.get(ids[i]) ?? '(no tool message)' }));
}


describe('adversarial: escapes through the read tools, as real model tool calls', function () {
  this.timeout(120_000);
  const figures: Record<string, unknown> = {};
  let lab: Lab;

  before(async () => {
    lab = await Lab.create();
  });
  after(async () => {
    await lab.dispose();
    recordFigures('escapes', figures);
  });

  for (const config of SEARCH_ENGINES) {
    (config.available ? it : it.skip)(`refuses every path, link and pattern leading outside the folder or into a secret, and the sentinel reaches no event, model request, log or saved file (${config.name})`, async () => {
      const s = await lab.server(config.init, config.env(lab));
      const id = await lab.open(s);
      const attempts = escapeAttempts(lab);
      // A control that must succeed: the leak check is looking at real tool output.
      attempts.unshift(
        { tool: 'read_file', args: { path: 'docs/inside.txt' }, expect: 'contained' },
        { tool: 'grep_files', args: { pattern: 'INSIDE.MARKER' }, expect: 'contained' },
      );
      const outcomes = await drive(lab, s, id, attempts, config.tag);

      const [controlRead, controlGrep] = outcomes;
      assert.ok(controlRead.ok && controlRead.output.includes(INSIDE_MARKER), 'the control read shows the inside file');
      assert.ok(controlGrep.ok && controlGrep.output.includes('docs/inside.txt'), 'the control grep finds the inside file');
      assert.ok(JSON.stringify(s.events).includes(INSIDE_MARKER), 'tool output reaches the events');

      const wronglyAllowed = outcomes
        .slice(2)
        .filter((o) => o.attempt.expect === 'refused' && o.ok)
        .map((o) => `${o.attempt.tool} ${JSON.stringify(o.attempt.args).slice(0, 160)} -> ${o.output.slice(0, 200)}`);
      assert.deepEqual(wronglyAllowed, [], 'these escape attempts were not refused');

      const leaks = scanForLeaks(lab, [s]);
      assertNoLeak(leaks);
      assert.equal(s.child.exitCode, null, 'the server is still running');

      const byTool: Record<string, number> = {};
      for (const o of outcomes.slice(2)) byTool[o.attempt.tool] = (byTool[o.attempt.tool] ?? 0) + 1;
      figures[config.name] = {
        attempts: outcomes.length - 2,
        byTool,
        refused: outcomes.slice(2).filter((o) => !o.ok).length,
        answeredWithoutLeaving: outcomes.slice(2).filter((o) => o.ok).length,
        leakedBytes: leaks.bytes,
        scannedBytes: leaks.scanned,
        modelRequests: lab.fake.completionRequests.length,
        ripgrep: config.tag === 'r' ? ripgrepOnPath() : 'off',
      };
      await s.stop();
      lab.drop(s);
    });
  }
});

/**
 * Ignore files decide what find_files and grep_files show. One that is a link
 * committed to point outside makes the server read an outside file and let
 * its bytes decide what the model sees (Git itself stopped following
 * symlinked .gitignore files in 2.32 for this reason).
 *
 * Found by this suite, now fixed: the walk read `.gitignore`
 * and `.git/info/exclude` with a plain readFileSync, which follows the link
 * (ignoreRules.ts reads them now).
 */
describe('adversarial: ignore files linked outside the folder', function () {
  this.timeout(60_000);
  let lab: Lab;

  before(async () => {
    lab = await Lab.create({
      plain: true,
      build: (l) => {
        // The outside file's contents, read as ignore rules, would hide these names.
        fs.writeFileSync(path.join(l.outside, 'rules'), 'visible-*.txt\n');
        fs.writeFileSync(path.join(l.outside, 'exclude-rules'), 'shown-*.md\n');
        l.link('sub/.gitignore', '../../outside/rules');
        l.write('sub/visible-1.txt', 'hello from sub\n');
        l.write('sub/other.txt', 'hello from sub\n');
        l.link('.git/info/exclude', '../../../outside/exclude-rules');
        l.write('docs/shown-1.md', 'hello from docs\n');
      },
    });
  });
  after(() => lab.dispose());

  for (const config of SEARCH_ENGINES) {
    (config.available ? it : it.skip)(`a .gitignore or .git/info/exclude that is a link leading outside is not read, so outside bytes never decide what the model sees (${config.name})`, async () => {
      const s = await lab.server(config.init, config.env(lab));
      const id = await lab.open(s);
      const tag = `i${config.tag}`;
      await runTurn(s, lab.fake, id, 'what is in sub and docs?', [
        {
          kind: 'toolCalls',
          calls: [
            { id: `${tag}-find`, name: 'find_files', arguments: '{"pattern":"*.txt","path":"sub"}' },
            { id: `${tag}-grep`, name: 'grep_files', arguments: '{"pattern":"hello from"}' },
            { id: `${tag}-md`, name: 'find_files', arguments: '{"pattern":"docs/*.md"}' },
          ],
        },
        { kind: 'text', text: 'Listed.' },
      ]);
      const outputs = toolOutputs(lab.fake.completionRequests);
      await s.stop();
      lab.drop(s);
      const decidedByOutside = [
        !/sub\/visible-1\.txt/.test(outputs.get(`${tag}-find`) ?? '') && 'find_files hid sub/visible-1.txt by a rule read from outside (sub/.gitignore)',
        !/sub\/visible-1\.txt/.test(outputs.get(`${tag}-grep`) ?? '') && 'grep_files skipped sub/visible-1.txt by a rule read from outside (sub/.gitignore)',
        !/docs\/shown-1\.md/.test(outputs.get(`${tag}-md`) ?? '') && 'find_files hid docs/shown-1.md by a rule read from outside (.git/info/exclude)',
      ].filter(Boolean);
      assert.deepEqual(decidedByOutside, [], 'an outside file was read through a linked ignore file');
    });
  }
});

/**
 * A concurrent writer swaps a name between an inside file (or directory) and
 * a symlink to outside while the model reads, lists and searches it. Found by
 * this suite, now fixed: the path was checked, then opened (or listed) by
 * name, following a link that appeared in between; 140 of 2,000 read_file
 * calls showed the outside file, and both search engines showed outside
 * names and lines. Later, under load, about one run in thirty showed an
 * outside name: the warm index judged a new file by its path a moment after
 * checking its directory, which was a link by then (walk.ts walkVerdict).
 */
describe('adversarial: a file or directory swapped for a link while it is read', function () {
  this.timeout(300_000);
  const figures: Record<string, unknown> = {};
  const CALLS_PER_TURN = 40;
  const TURNS = 5;
  let lab: Lab;

  before(async () => {
    lab = await Lab.create({ plain: true });
  });
  after(async () => {
    await lab.dispose();
    recordFigures('swaps', figures);
  });

  /** Runs `turns` turns of the same calls (while a swapper runs); returns the outputs. */
  async function underSwaps(s: ServerProcess, id: string, tag: string, calls: Array<{ name: string; args: Record<string, unknown> }>, turns = TURNS): Promise<Array<{ ok: boolean; output: string }>> {
    const outcomes: Array<{ ok: boolean; output: string }> = [];
    for (let turn = 0; turn < turns; turn++) {
      const ids = calls.map((_, i) => `${tag}-${turn}-${i}`);
      const events = await runTurn(s, lab.fake, id, `look again, ${tag} ${turn}`, [
        { kind: 'toolCalls', calls: calls.map((call, i) => ({ id: ids[i], name: call.name, arguments: JSON.stringify(call.args) })) },
        { kind: 'text', text: 'Looked.' },
      ]);
      const results = events.filter((e) => e.type === 'tool_result') as Array<{ ok: boolean }>;
      const outputs = toolOutputs(lab.fake.completionRequests);
      ids.forEach((callId, i) => outcomes.push({ ok: results[i]?.ok ?? false, output: outputs.get(callId) ?? '' }));
    }
    return outcomes;
  }

  it('read_file of a file swapped, again and again, with a link to an outside file shows the inside file or a refusal, never a byte of the outside one', async () => {
    const swapper = startSwapper(lab, 'file', 'swap/target.txt', path.join(lab.outside, 'secret.txt'), { 'target.txt': `inside: ${INSIDE_MARKER}\n` });
    const s = await lab.server();
    const id = await lab.open(s);
    const outcomes = await underSwaps(s, id, 'rf', Array.from({ length: CALLS_PER_TURN }, () => ({ name: 'read_file', args: { path: 'swap/target.txt' } })));
    const swaps = await swapper.stop();
    // With the writer stopped and the inside file back, the same read must show
    // it: proof the check looks at real output, whatever the race gave above
    // (on a loaded machine every raced read can land on the link).
    const target = path.join(lab.repo, 'swap/target.txt');
    fs.rmSync(target, { force: true });
    fs.writeFileSync(target, `inside: ${INSIDE_MARKER}\n`);
    const control = await underSwaps(s, id, 'rf-control', [{ name: 'read_file', args: { path: 'swap/target.txt' } }], 1);
    const leaks = scanForLeaks(lab, [s]);
    figures.readFile = {
      attempts: outcomes.length,
      swaps,
      insideShown: outcomes.filter((o) => o.ok && o.output.includes(INSIDE_MARKER)).length,
      refusedAsChanged: outcomes.filter((o) => !o.ok && /changed while it was being read/.test(o.output)).length,
      refusedOtherwise: outcomes.filter((o) => !o.ok && !/changed while it was being read/.test(o.output)).length,
      refusals: [...new Set(outcomes.filter((o) => !o.ok).map((o) => o.output.slice(0, 60)))],
      leakedBytes: leaks.bytes,
    };
    await s.stop();
    lab.drop(s);
    assert.ok(swaps > 0, 'the writer swapped the file');
    assert.ok(control.every((o) => o.ok && o.output.includes(INSIDE_MARKER)), `the control read shows the inside file (the check is looking at real output): ${JSON.stringify(control)}`);
    assertNoLeak(leaks);
  });

  for (const config of [...SEARCH_ENGINES, SPLIT_WALK_ENGINE]) {
    it(`grep_files, find_files and list_dir of a directory swapped, again and again, with a link to an outside directory show inside names and lines or nothing, never an outside name or line (${config.name})`, async () => {
      const swapper = startSwapper(lab, 'directory', `swapdir-${config.tag}/d`, lab.outside, { 'inside-1.txt': `inside: ${INSIDE_MARKER}\n`, 'inside-2.txt': `also inside: ${INSIDE_MARKER}\n` });
      const s = await lab.server(config.init, config.env(lab));
      const id = await lab.open(s);
      const scope = `swapdir-${config.tag}`;
      const calls: Array<{ name: string; args: Record<string, unknown> }> = [];
      for (let i = 0; i < CALLS_PER_TURN / 8; i++) {
        calls.push(
          { name: 'grep_files', args: { pattern: SENTINEL_PATTERNS[2], path: scope } },
          { name: 'grep_files', args: { pattern: '.', path: scope } },
          { name: 'grep_files', args: { pattern: 'inside|outside' } },
          { name: 'find_files', args: { pattern: '**', path: scope } },
          { name: 'find_files', args: { pattern: '**/*.txt' } },
          { name: 'find_files', args: { pattern: '*', path: `${scope}/d` } },
          { name: 'list_dir', args: { path: `${scope}/d` } },
          { name: 'list_dir', args: { path: `${scope}/d/nested` } },
        );
      }
      const outcomes = await underSwaps(s, id, `sd${config.tag}`, calls);
      const swaps = await swapper.stop();
      // With the writer stopped and the inside directory back, a search must
      // show it: proof the check looks at real output, whatever the race gave.
      const target = path.join(lab.repo, scope, 'd');
      if (fs.lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink()) fs.unlinkSync(target);
      if (!fs.existsSync(target)) {
        fs.mkdirSync(target);
        fs.writeFileSync(path.join(target, 'inside-1.txt'), `inside: ${INSIDE_MARKER}\n`);
      }
      const control = await underSwaps(
        s,
        id,
        `sd${config.tag}-control`,
        [
          { name: 'find_files', args: { pattern: '*', path: `${scope}/d` } },
          { name: 'grep_files', args: { pattern: 'inside', path: scope } },
        ],
        1,
      );
      const leaks = scanForLeaks(lab, [s]);
      // Outside names besides the sentinel one: seen in a listing of the swapped directory, they came from outside.
      const outsideNames = outcomes.filter((o) => /secret\.txt|deeper\.txt|nested\//.test(o.output)).map((o) => o.output.slice(0, 200));
      const byTool: Record<string, { attempts: number; answered: number; insideShown: number }> = {};
      outcomes.forEach((o, i) => {
        const name = calls[i % calls.length].name;
        const entry = (byTool[name] ??= { attempts: 0, answered: 0, insideShown: 0 });
        entry.attempts += 1;
        if (o.ok) entry.answered += 1;
        if (o.output.includes('inside-1.txt') || o.output.includes(INSIDE_MARKER)) entry.insideShown += 1;
      });
      figures[config.name] = {
        attempts: outcomes.length,
        swaps,
        byTool,
        leftOutAsChanged: outcomes.filter((o) => /changed while|that changed while being searched/.test(o.output)).length,
        outsideNameLeaks: outsideNames.length,
        leakedBytes: leaks.bytes,
        ripgrep: config.tag === 'r' ? (ripgrepOnPath() ?? 'not on PATH: same as built-in') : 'off',
      };
      await s.stop();
      lab.drop(s);
      assert.ok(swaps > 0, 'the writer swapped the directory');
      assert.ok(control.every((o) => o.ok && o.output.includes('inside-1.txt')), `the control search shows the inside directory (the check is looking at real output): ${JSON.stringify(control)}`);
      assert.deepEqual(outsideNames, [], 'outside names were shown');
      assertNoLeak(leaks);
    });
  }
});

/**
 * The symbol tools read files too: through the tree-sitter index (built by a
 * walk) and through paths the model names. Source files outside the folder,
 * reached by links, secret or policy-denied, each hold the sentinel on a
 * definition's line; no answer may show it, and named paths are refused.
 */
describe('adversarial: escapes through the symbol tools', function () {
  this.timeout(120_000);
  const figures: Record<string, unknown> = {};
  let lab: Lab;

  before(async () => {
    lab = await Lab.create({
      build: (l) => {
        const leak = `export class SentinelHolder { value = '${SENTINEL}'; }\nexport function sentinelFunction() { return '${SENTINEL}'; }\n`;
        fs.writeFileSync(path.join(l.outside, 'leak.ts'), leak);
        fs.writeFileSync(path.join(l.outside, 'leak.py'), `class SentinelHolder:\n    value = '${SENTINEL}'\n`);
        l.link('src/linked.ts', path.join(l.outside, 'leak.ts'));
        l.link('src/linked-rel.py', '../../outside/leak.py');
        l.link('src/linked-dir', l.outside);
        l.write('private/keys.ts', leak);
        l.write('.env.ts', leak);
        l.link('src/env-link.ts', '../.env');
        l.write('src/use.ts', "import { greet } from './app';\n\nexport const welcome = greet('you');\n");
      },
    });
  });
  after(async () => {
    await lab.dispose();
    recordFigures('symbolEscapes', figures);
  });

  function symbolAttempts(): Attempt[] {
    const O = lab.outside;
    const out: Attempt[] = [];
    const add = (tool: Attempt['tool'], args: Record<string, unknown>, expect: Expect) => out.push({ tool, args, expect });
    for (const query of ['SentinelHolder', 'sentinelFunction', 'sH', 'value', 'Sentinel', 's']) {
      add('find_symbol', { query }, 'contained');
      add('go_to_definition', { symbol: query }, 'contained');
      add('find_references', { symbol: query }, 'contained');
    }
    add('get_diagnostics', {}, 'contained');
    add('get_diagnostics', { path: 'src' }, 'contained');
    for (const p of [
      '../outside/leak.ts', path.join(O, 'leak.ts'), `file://${O}/leak.ts`, 'src/linked.ts', 'src/linked-rel.py', 'src/linked-dir/leak.ts',
      'link-dir/leak.ts', 'private/keys.ts', '.env.ts', 'src/env-link.ts', '.env', 'src/deep/inner/leak.ts', '/proc/self/root' + O + '/leak.ts',
    ]) {
      add('list_symbols', { path: p }, 'refused');
      add('get_diagnostics', { path: p }, 'refused');
      add('go_to_definition', { symbol: 'SentinelHolder', path: p, line: 1 }, 'refused');
      add('find_references', { symbol: 'SentinelHolder', path: p, line: 1 }, 'refused');
    }
    return out;
  }

  for (const config of SEARCH_ENGINES) {
    it(`no symbol tool shows a definition or line from outside the folder, a link out, a secret or a denied file, and named paths there are refused (${config.name})`, async () => {
      const s = await lab.server(config.init, config.env(lab));
      const id = await lab.open(s);
      const attempts = symbolAttempts();
      // Controls that must succeed: the leak check is looking at real symbol answers.
      attempts.unshift(
        { tool: 'go_to_definition', args: { symbol: 'greet', path: 'src/use.ts', line: 3 }, expect: 'contained' },
        { tool: 'find_references', args: { symbol: 'greet' }, expect: 'contained' },
      );
      const outcomes = await drive(lab, s, id, attempts, `sym${config.tag}`);
      const [controlDefinition, controlReferences] = outcomes;
      assert.ok(controlDefinition.ok && /src\/app\.ts:3-5: function greet/.test(controlDefinition.output), `the control definition is found: ${controlDefinition.output}`);
      assert.ok(controlReferences.ok && /src\/use\.ts:3: /.test(controlReferences.output), `the control references are found: ${controlReferences.output}`);

      const wronglyAllowed = outcomes
        .slice(2)
        .filter((o) => o.attempt.expect === 'refused' && o.ok)
        .map((o) => `${o.attempt.tool} ${JSON.stringify(o.attempt.args).slice(0, 160)} -> ${o.output.slice(0, 200)}`);
      assert.deepEqual(wronglyAllowed, [], 'these symbol-tool paths were not refused');
      const leaks = scanForLeaks(lab, [s]);
      assertNoLeak(leaks);
      assert.equal(s.child.exitCode, null, 'the server is still running');

      const byTool: Record<string, number> = {};
      for (const o of outcomes.slice(2)) byTool[o.attempt.tool] = (byTool[o.attempt.tool] ?? 0) + 1;
      figures[config.name] = {
        attempts: outcomes.length - 2,
        byTool,
        refused: outcomes.slice(2).filter((o) => !o.ok).length,
        answeredWithoutLeaving: outcomes.slice(2).filter((o) => o.ok).length,
        leftOutNoted: outcomes.slice(2).some((o) => /files left out: outside the folder or not readable/.test(o.output)),
        leakedBytes: leaks.bytes,
        scannedBytes: leaks.scanned,
      };
      await s.stop();
      lab.drop(s);
    });
  }
});

/**
 * The symbol tools read the lines they cite again, after the index or the
 * editor named them. A file swapped for a link to an outside file between the
 * boundary's check and that read was read through the link (the read went by
 * name): go_to_definition printed the outside file's lines. Here the swap is
 * made at the worst moment, right after the check of the cited file answers,
 * by wrapping ReadBoundary.resolve; read_file under the same swap refuses.
 */
describe('adversarial: a cited file swapped for a link or a FIFO right after its check, through the symbol tools', function () {
  this.timeout(60_000);
  const DEFINITION = "export function swapped() {\n  return 'inside';\n}\n";
  let base: string;
  let repo: string;
  let outsideFile: string;
  let restoreResolve: (() => void) | undefined;

  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'swapped-definition-')));
    repo = path.join(base, 'repo');
    outsideFile = path.join(base, 'outside', 'leak.ts');
    // Every line of the outside file holds the marker, whichever lines are read.
    writeTree(path.join(base, 'outside'), { 'leak.ts': Array.from({ length: 8 }, () => `export function swapped() { return '${OUTSIDE_MARKER}'; }\n`).join('') });
    writeTree(repo, { 'src/def.ts': DEFINITION, 'src/use.ts': "import { swapped } from './def';\n\nexport const value = swapped();\n" });
  });
  afterEach(() => {
    restoreResolve?.();
    restoreResolve = undefined;
    // A read left waiting on the FIFO (the fault this guards against) is let go.
    try {
      fs.closeSync(fs.openSync(path.join(repo, 'src', 'def.ts'), fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
    } catch {
      // No reader, or not a FIFO.
    }
    fs.rmSync(base, { recursive: true, force: true });
  });
  after(closeSymbolPool);

  /** Once the boundary has approved `relative`, the first time, `swap` replaces the file; returns how many swaps were made. */
  function swapAfterCheck(relative: string, swap: (target: string) => void): () => number {
    const original = ReadBoundary.prototype.resolve;
    let swaps = 0;
    ReadBoundary.prototype.resolve = async function (this: ReadBoundary, requested: string) {
      const outcome = await original.call(this, requested);
      if (swaps === 0 && requested === relative && outcome.ok) {
        swaps += 1;
        swap(path.join(repo, relative));
      }
      return outcome;
    };
    restoreResolve = () => {
      ReadBoundary.prototype.resolve = original;
    };
    return () => swaps;
  }

  const toLinkOut = (target: string): void => {
    const temporary = `${target}.swap`;
    fs.symlinkSync(outsideFile, temporary);
    fs.renameSync(temporary, target);
  };
  const toFifo = (target: string): void => {
    const temporary = `${target}.swap`;
    execFileSync('mkfifo', [temporary]);
    fs.renameSync(temporary, target);
  };
  const putBack = (): void => {
    fs.rmSync(path.join(repo, 'src', 'def.ts'), { force: true });
    fs.writeFileSync(path.join(repo, 'src', 'def.ts'), DEFINITION);
  };

  it("go_to_definition of a name whose file is swapped for a link to an outside file right after its check shows none of the outside file's lines, and read_file under the same swap refuses", async () => {
    const toolbox = await createToolbox(repo, NO_POLICY);
    // The control: unswapped, the definition's lines are read and shown.
    assert.match(await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped' }), /^src\/def\.ts:1-3: function swapped\n {2}1: export function swapped\(\) \{\n {2}2: {3}return 'inside';$/m);

    const swaps = swapAfterCheck('src/def.ts', toLinkOut);
    const answer = await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped' });
    assert.equal(swaps(), 1, 'the file was swapped during the call');
    assert.doesNotMatch(answer, new RegExp(OUTSIDE_MARKER), 'the outside file was shown');
    assert.match(answer, /^src\/def\.ts:1-3: function swapped$/m, 'the definition is still named');

    restoreResolve?.();
    putBack();
    const readSwaps = swapAfterCheck('src/def.ts', toLinkOut);
    assert.match(await expectFailure(toolbox, 'read_file', { path: 'src/def.ts' }), /changed while it was being read/);
    assert.equal(readSwaps(), 1);
  });

  it("go_to_definition's check that the name stands on the line given does not read that line from an outside file swapped in right after the file's check", async () => {
    const toolbox = await createToolbox(repo, NO_POLICY);
    const control = await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped', path: 'src/def.ts', line: 1 });
    assert.match(control, /defined in the same file/);
    assert.doesNotMatch(control, /does not occur/);
    // Named as ./src/def.ts, so the swap comes at the line's read, not at the path's check.
    const swaps = swapAfterCheck('src/def.ts', toLinkOut);
    const answer = await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped', path: './src/def.ts', line: 1 });
    assert.equal(swaps(), 1, 'the file was swapped during the call');
    assert.doesNotMatch(answer, new RegExp(OUTSIDE_MARKER));
    // The outside line names `swapped` too: read through the link, the check passed on it. Refused, the line is said to be unreadable.
    assert.match(answer, /src\/def\.ts:1 could not be read just now/, 'the line was read from the outside file');
  });

  it("find_symbol and go_to_definition answered by the editor show none of an outside file swapped in for the file it cites, right after that file's check", async () => {
    const uri = pathToFileURL(path.join(repo, 'src', 'def.ts')).href;
    const item: IdeItem = { uri, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 1 } }, name: 'swapped', kind: 'Function' };
    const editor: IdeSource = { query: (_params: IdeQueryRequest.Params) => Promise.resolve({ items: [item] }) };
    const toolbox = await createToolbox(repo, NO_POLICY, { ide: new IdeQueries(editor) });
    // The control: the editor's answer is cited with the file's lines.
    assert.match(await expectOk(toolbox, 'find_symbol', { query: 'swapped' }), /^src\/def\.ts:1: function swapped — export function swapped\(\) \{$/m);
    assert.match(await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped' }), /language service[^]*^ {2}2: {3}return 'inside';$/m);

    for (const [tool, args] of [['find_symbol', { query: 'swapped' }], ['go_to_definition', { symbol: 'swapped' }]] as const) {
      putBack();
      const swaps = swapAfterCheck('src/def.ts', toLinkOut);
      const answer = await expectOk(toolbox, tool, args);
      restoreResolve?.();
      assert.equal(swaps(), 1, `the file was swapped during ${tool}`);
      assert.doesNotMatch(answer, new RegExp(OUTSIDE_MARKER), `${tool} showed the outside file`);
      assert.match(answer, /language service/, `${tool} was answered from the editor`);
    }
  });

  it('go_to_definition answers, from the index, when a FIFO is swapped in for the definition\'s file right after its check', async () => {
    const toolbox = await createToolbox(repo, NO_POLICY);
    await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped' });
    const swaps = swapAfterCheck('src/def.ts', toFifo);
    // Read by name, the FIFO held the call until a writer came: this call never answered.
    const answer = await expectOk(toolbox, 'go_to_definition', { symbol: 'swapped' });
    assert.equal(swaps(), 1, 'the FIFO was swapped in during the call');
    assert.match(answer, /^src\/def\.ts:1-3: function swapped$/m);
  });
});

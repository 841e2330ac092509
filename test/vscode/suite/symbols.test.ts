import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ClientDiscussion } from '../../../client/src/common/discussionHub';
import { LEDGER_USE } from '../fixture';
import { activeDiscussion, once, sendAndWait, setUp, type Harness } from './harness';

/**
 * The symbol tools against VS Code's own TypeScript service: the server asks
 * the extension (`discuss/ideQuery`), the extension asks the language
 * providers, and the server cites what comes back through its read boundary.
 * The expected answer is whatever the providers themselves return for the
 * same position, so the test pins the whole path, not TypeScript's opinions.
 */

const FROM_IDE = "from the editor's language service";
/** The project's policy (fixture's .repo-discuss/policy.json) denies this folder. */
const DENIED_PREFIX = 'src/billing/audit/';
/** A cold TypeScript server loading its first project on a loaded 2-core machine. */
const TS_READY_DEADLINE_MS = 120_000;
const TS_POLL_INTERVAL_MS = 250;

type Located = vscode.Location | vscode.LocationLink;

function startOf(location: Located): { uri: vscode.Uri; line: number } {
  return 'targetUri' in location ? { uri: location.targetUri, line: location.targetRange.start.line } : { uri: location.uri, line: location.range.start.line };
}

/** "path:line" (folder-relative, 1-based), the way the tools cite a location. */
function cited(folder: vscode.WorkspaceFolder, location: Located): string {
  const { uri, line } = startOf(location);
  return `${path.relative(folder.uri.fsPath, uri.fsPath).split(path.sep).join('/')}:${line + 1}`;
}

/** The editor position the server asks about: the first whole-word `name` on that 1-based line, as ideAnswers.positionOf finds it. */
function positionOfName(document: vscode.TextDocument, line: number, name: string): vscode.Position {
  const match = new RegExp(`(?<![\\w$])${name}(?![\\w$])`).exec(document.lineAt(line - 1).text);
  if (!match) throw new Error(`${name} is not on line ${line} of ${document.uri.fsPath}.`);
  return new vscode.Position(line - 1, match.index);
}

/**
 * The references the TypeScript service gives once it has loaded the
 * project: until then the provider is missing (the extension is still
 * activating) or answers from the open file alone. Polled with a deadline;
 * a service that never answers fails here, with what it did answer.
 */
async function referencesOnceProjectLoaded(uri: vscode.Uri, position: vscode.Position, files: string[], folder: vscode.WorkspaceFolder): Promise<Located[]> {
  await vscode.extensions.getExtension('vscode.typescript-language-features')?.activate();
  const deadline = Date.now() + TS_READY_DEADLINE_MS;
  let last: Located[] = [];
  for (;;) {
    last = (await vscode.commands.executeCommand<Located[] | undefined>('vscode.executeReferenceProvider', uri, position)) ?? [];
    const seen = new Set(last.map((l) => cited(folder, l).replace(/:\d+$/, '')));
    if (files.every((file) => seen.has(file))) return last;
    if (Date.now() > deadline) {
      const extension = vscode.extensions.getExtension('vscode.typescript-language-features');
      throw new Error(
        `The TypeScript service did not find references in ${files.join(', ')} within ${TS_READY_DEADLINE_MS / 1000} s ` +
          `(extension ${extension ? (extension.isActive ? 'active' : 'inactive') : 'missing'}; last answer: ${JSON.stringify(last.map((l) => cited(folder, l)))}).`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, TS_POLL_INTERVAL_MS));
  }
}

/** The text the server sent back to the model for one tool call, from the fake endpoint's recorded requests. */
function toolMessage(h: Harness, callId: string): string {
  for (const request of [...h.fake.completionRequests].reverse()) {
    const message = (request.body?.messages ?? []).find((m) => m.role === 'tool' && m.tool_call_id === callId);
    if (message) return String(message.content);
  }
  throw new Error(`No tool message for ${callId} reached the endpoint.`);
}

/** The "path:line" entries of a find_references answer. */
function referenceEntries(text: string): Set<string> {
  return new Set([...text.matchAll(/^([^\s:]+):(\d+): /gm)].map((m) => `${m[1]}:${m[2]}`));
}

/** The "path:start" of each "path:start-end:" block of a go_to_definition answer. */
function definitionEntries(text: string): Set<string> {
  return new Set([...text.matchAll(/^([^\s:]+):(\d+)-\d+:/gm)].map((m) => `${m[1]}:${m[2]}`));
}

describe("the symbol tools answered by the editor's TypeScript service", () => {
  let h: Harness;
  let document: vscode.TextDocument;
  let position: vscode.Position;
  let references: Located[];

  before(async () => {
    h = await setUp();
    document = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(h.folder.uri, LEDGER_USE.path));
    await vscode.window.showTextDocument(document);
    position = positionOfName(document, LEDGER_USE.line, 'Ledger');
    references = await referencesOnceProjectLoaded(
      document.uri,
      position,
      ['src/billing/ledger.ts', 'src/billing/payments.ts', 'src/billing/refunds.ts', 'src/billing/audit/vault.ts'],
      h.folder,
    );
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("find_references lists exactly the provider's locations, leaves out the policy-denied file and counts what it left out", async () => {
    const discussion = await activeDiscussion(h.ext);
    h.fake.push(
      { kind: 'toolCalls', calls: [{ id: 'call_refs', name: 'find_references', arguments: JSON.stringify({ symbol: 'Ledger', ...LEDGER_USE }) }] },
      { kind: 'text', text: 'Ledger is used by payments and refunds.' },
    );
    await sendAndWait(h.ext, discussion, 'Who uses Ledger?');
    const answer = toolMessage(h, 'call_refs');

    const all = new Set(references.map((l) => cited(h.folder, l)));
    const readable = new Set([...all].filter((entry) => !entry.startsWith(DENIED_PREFIX)));
    const deniedLocations = references.filter((l) => cited(h.folder, l).startsWith(DENIED_PREFIX)).length;
    assert.ok(deniedLocations > 0, `the provider itself names the denied file: ${JSON.stringify([...all])}`);
    assert.ok(answer.includes(FROM_IDE), `answered by the editor, not by name:\n${answer}`);
    assert.deepEqual([...referenceEntries(answer)].sort(), [...readable].sort(), answer);
    assert.doesNotMatch(answer, /audit|vault|sealed/, 'nothing of the denied file shows');
    assert.match(answer, new RegExp(`\\[${deniedLocations} location\\(s\\) the editor named were left out`), answer);
  });

  it("go_to_definition cites exactly the provider's definition of the use", async () => {
    const definitions = (await vscode.commands.executeCommand<Located[] | undefined>('vscode.executeDefinitionProvider', document.uri, position)) ?? [];
    assert.ok(definitions.length > 0, 'the TypeScript service answers the definition');
    const discussion = await activeDiscussion(h.ext);
    h.fake.push(
      { kind: 'toolCalls', calls: [{ id: 'call_def', name: 'go_to_definition', arguments: JSON.stringify({ symbol: 'Ledger', ...LEDGER_USE }) }] },
      { kind: 'text', text: 'Ledger is defined in ledger.ts.' },
    );
    await sendAndWait(h.ext, discussion, 'Where is Ledger defined?');
    const answer = toolMessage(h, 'call_def');

    assert.ok(answer.includes(FROM_IDE), `answered by the editor, not by name:\n${answer}`);
    assert.deepEqual([...definitionEntries(answer)].sort(), [...new Set(definitions.map((l) => cited(h.folder, l)))].sort(), answer);
    assert.match(answer, /export class Ledger \{/, 'the cited lines are read by the server');
  });
});

describe("the symbol index, told of changes by VS Code's file watcher", () => {
  /** A Python file: no language service in this workbench answers for it, so the server's own index does. */
  const CREATED = 'src/zebra_watch.py';
  /** Long enough for the watcher's report to arrive (the language client sends file events in batches), short of the index's one-minute safety walk. */
  const REPORT_DEADLINE_MS = 30_000;
  let h: Harness;

  before(async () => {
    h = await setUp();
  });
  after(async () => {
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(h.folder.uri, CREATED)).then(undefined, () => undefined);
  });

  async function findSymbol(discussion: ClientDiscussion, callId: string, query: string): Promise<string> {
    h.fake.push({ kind: 'toolCalls', calls: [{ id: callId, name: 'find_symbol', arguments: JSON.stringify({ query }) }] }, { kind: 'text', text: 'Looked.' });
    await sendAndWait(h.ext, discussion, `Where is ${query}?`);
    return toolMessage(h, callId);
  }

  it('shows a definition in a file made after the index was built, which only the watcher reported', async () => {
    // The suite's server keeps an index fresh for 10 minutes (REPO_DISCUSS_SYMBOL_FRESH_MS in runInCodeServer.ts): no walk of
    // its own would look before then, so the new file can only come through the watcher's report.
    const discussion = await activeDiscussion(h.ext);
    assert.match(await findSymbol(discussion, 'call_zebra_before', 'watched_zebra_thing'), /^No symbols match/);
    // Again, so that a walk the first query started in the background is over before the file exists.
    assert.match(await findSymbol(discussion, 'call_zebra_settled', 'watched_zebra_thing'), /^No symbols match/);

    const seen = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(h.folder, CREATED));
    const created = once(seen.onDidCreate);
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(h.folder.uri, CREATED), Buffer.from('def watched_zebra_thing():\n    return 1\n'));
    await created; // VS Code's watcher has seen it; the server hears of it through the language client, a moment later
    seen.dispose();

    const deadline = Date.now() + REPORT_DEADLINE_MS;
    let answer = '';
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      answer = await findSymbol(discussion, `call_zebra_${attempt}`, 'watched_zebra_thing');
      if (!/^No symbols match/.test(answer)) break;
    }
    assert.match(answer, /^src\/zebra_watch\.py:1: function watched_zebra_thing/m, `the report never reached the server's index:\n${answer}`);
  });
});

import assert from 'node:assert/strict';
import type { DiscussionEventBody, ExtensionToWebview, PreparedTask, WebviewToExtension } from '../../../shared/protocol';
import { ATTACHED, buildWebviewBundle, click, numbered, openPanel, press, type Panel } from '../../support/webviewPanel';

/**
 * The webview script itself (main.ts, bundled as the build does) in jsdom,
 * with a fake VS Code API: what it posts, what it saves, what it shows.
 */

const ONE_TURN: DiscussionEventBody[] = [
  { type: 'user_message', text: 'Where is the retry logic?' },
  { type: 'tool_call', tool: 'grep', paramsPreview: '{"pattern":"retry"}' },
  { type: 'tool_result', tool: 'grep', ok: true, preview: 'src/http.ts:40: retry(' },
  { type: 'tool_call', tool: 'write_file', paramsPreview: '{"path":"src/http.ts"}' },
  { type: 'tool_result', tool: 'write_file', ok: false, preview: 'This conversation is read-only: it cannot write or edit files.' },
  { type: 'assistant_delta', text: 'It is in src/http.ts:40.\n\n' },
  { type: 'assistant_delta', text: '```ts\nretry(3);\n```\n\nSee [the docs](https://example.com/retry).' },
];

describe('the chat panel script', function () {
  this.timeout(20_000);
  let panel: Panel | undefined;

  before(buildWebviewBundle);

  afterEach(() => panel?.close());

  it('announces itself with the seq it holds, and attaches no inline handlers', () => {
    panel = openPanel();
    assert.deepEqual(panel.posted, [{ type: 'ready', lastSeq: -1 }]);
    for (const element of Array.from(panel.document.querySelectorAll('*'))) {
      for (const attribute of Array.from(element.attributes)) assert.ok(!attribute.name.startsWith('on'), attribute.name);
    }
    assert.equal(panel.document.querySelector('[aria-live="polite"]') !== null, true);
  });

  it('shows a streamed reply in a polite live region, with tool chips and a distinct refused chip', async () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(ONE_TURN) });
    await panel.nextFrame();

    const turn = panel.document.querySelector('.turn')!;
    assert.equal(turn.querySelector('.user-text')?.textContent, 'Where is the retry logic?');
    const reply = turn.querySelector('.reply')!;
    assert.equal(reply.getAttribute('aria-live'), 'polite');
    assert.equal(reply.getAttribute('aria-busy'), 'true');
    assert.match(reply.textContent ?? '', /It is in src\/http\.ts:40\./);
    assert.ok(reply.querySelector('.code-block [data-code-action="copy"]'));
    const chips = Array.from(turn.querySelectorAll('details.tool-chip'), (chip) => chip.className);
    assert.deepEqual(chips, ['tool-chip is-ok', 'tool-chip is-refused']);

    panel.receive({ type: 'events', events: numbered([{ type: 'assistant_message', text: 'Replaced.' }, { type: 'turn_complete' }], ONE_TURN.length) });
    await panel.nextFrame();
    assert.equal(reply.textContent?.trim(), 'Replaced.');
    assert.equal(reply.getAttribute('aria-busy'), 'false');
  });

  it('sends on Enter, keeps Shift+Enter for a new line, and turns Send into Stop while answering', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    const input = panel.document.querySelector<HTMLTextAreaElement>('#message-input')!;
    assert.ok(panel.document.querySelector('label[for="message-input"]'));

    input.value = 'line one';
    assert.equal(press(panel, input, 'Enter', { shiftKey: true }).defaultPrevented, false);
    assert.equal(panel.posted.filter((m) => m.type === 'send').length, 0);
    assert.equal(press(panel, input, 'Enter').defaultPrevented, true);
    assert.deepEqual(panel.posted.at(-1), { type: 'send', text: 'line one' });
    assert.equal(input.value, '');

    panel.receive({ type: 'events', events: numbered(ONE_TURN.slice(0, 1)) });
    const send = panel.document.querySelector('.send-button')!;
    assert.equal(send.getAttribute('aria-label'), 'Stop the reply');
    panel.document.querySelector('form')!.dispatchEvent(new panel.window.Event('submit', { bubbles: true, cancelable: true }));
    assert.deepEqual(panel.posted.at(-1), { type: 'cancel' });

    panel.receive({ type: 'events', events: numbered([{ type: 'turn_complete' }], 1) });
    assert.equal(send.getAttribute('aria-label'), 'Send');
  });

  it('opens cited paths through the extension and never navigates the webview', async () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(ONE_TURN) });
    await panel.nextFrame();

    const pathClick = click(panel, panel.document.querySelector('a.path-link'));
    assert.equal(pathClick.defaultPrevented, true);
    assert.deepEqual(panel.posted.at(-1), { type: 'openFile', path: 'src/http.ts', line: 40 });

    const webClick = click(panel, panel.document.querySelector('a.external-link'));
    assert.equal(webClick.defaultPrevented, true);
    assert.deepEqual(panel.posted.at(-1), { type: 'openExternal', url: 'https://example.com/retry' });
    assert.equal(panel.window.location.href, 'https://webview.test/index.html');
  });

  it('copies a code block to the clipboard and asks the extension to insert one', async () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(ONE_TURN) });
    await panel.nextFrame();
    click(panel, panel.document.querySelector('[data-code-action="copy"]'));
    click(panel, panel.document.querySelector('[data-code-action="insert"]'));
    assert.deepEqual(panel.copied, ['retry(3);\n']);
    assert.deepEqual(panel.posted.at(-1), { type: 'insertCode', code: 'retry(3);\n' });
  });

  it('shows an error banner whose fix button runs the matching command', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({
      type: 'events',
      events: numbered([
        { type: 'user_message', text: 'q' },
        { type: 'error', message: 'The model endpoint at x rejected the API key (401).' },
        { type: 'turn_complete' },
      ]),
    });
    const banner = panel.document.querySelector('.banner.is-error')!;
    assert.equal(banner.getAttribute('role'), 'alert');
    click(panel, banner.querySelector('[data-action="run-command"]'));
    assert.deepEqual(panel.posted.at(-1), { type: 'runCommand', command: 'setApiKey' });
    click(panel, banner.querySelector('[data-action="dismiss-banner"]'));
    assert.equal(panel.document.querySelector('.banner'), null);
  });

  it('says why it lost its discussion, disables the input until attached again, and offers a new discussion', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'detached', message: 'The discussion was closed.' });
    const input = panel.document.querySelector<HTMLTextAreaElement>('#message-input')!;
    assert.equal(input.disabled, true);
    assert.match(panel.document.querySelector('.banner-region')?.textContent ?? '', /The discussion was closed\./);
    click(panel, panel.document.querySelector('.banner-region [data-action="new-discussion"]'));
    assert.deepEqual(panel.posted.at(-1), { type: 'newDiscussion' });

    panel.receive({ ...ATTACHED, discussionId: 'disc-2' } as ExtensionToWebview);
    assert.equal(input.disabled, false);
    assert.equal(panel.document.querySelector('.banner-region')?.textContent, '');
  });

  it('lets the user reword, add and remove constraints, then hands off the edited task', () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered([...ONE_TURN, { type: 'turn_complete' }]) });
    click(panel, panel.document.querySelector('[data-action="promote"]'));
    assert.deepEqual(panel.posted.at(-1), { type: 'promote' });
    panel.receive({ type: 'events', events: numbered([{ type: 'task_prepared', intent: 'Add retries', constraints: ['Keep the API', 'Drop me'] }], ONE_TURN.length + 1) });

    const intent = panel.document.querySelector<HTMLTextAreaElement>('[data-task-field="intent"]')!;
    intent.value = 'Add retries with backoff';
    intent.dispatchEvent(new panel.window.Event('input', { bubbles: true }));
    click(panel, panel.document.querySelector('[data-action="remove-constraint"][data-index="1"]'));
    click(panel, panel.document.querySelector('[data-action="add-constraint"]'));
    const fields = panel.document.querySelectorAll<HTMLTextAreaElement>('[data-task-field="constraint"]');
    assert.equal(fields.length, 2);
    assert.equal(panel.document.activeElement, fields[1]);
    fields[1].value = '  No new dependency ';
    fields[1].dispatchEvent(new panel.window.Event('input', { bubbles: true }));

    click(panel, panel.document.querySelector('[data-action="hand-off"]'));
    const handOff = panel.posted.at(-1) as Extract<WebviewToExtension, { type: 'handOff' }>;
    assert.deepEqual(handOff, {
      type: 'handOff',
      requestId: handOff.requestId,
      task: { intent: 'Add retries with backoff', constraints: ['Keep the API', 'No new dependency'] },
    });
    assert.equal(typeof handOff.requestId, 'number');
    panel.receive({ type: 'handOffResult', requestId: handOff.requestId, ok: true, message: 'Task handed off.' });
    assert.equal(panel.document.querySelector('.task-card'), null);
  });

  it('restores the conversation and draft after a reload and takes a full replay without duplicates', async () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({ type: 'events', events: numbered(ONE_TURN.slice(0, 6)) });
    await panel.nextFrame();
    const input = panel.document.querySelector<HTMLTextAreaElement>('#message-input')!;
    input.value = 'half-typed';
    input.dispatchEvent(new panel.window.Event('input', { bubbles: true }));
    const saved = panel.savedState();
    panel.close();

    panel = openPanel(saved);
    assert.deepEqual(panel.posted, [{ type: 'ready', discussionId: 'disc-1', lastSeq: 5 }]);
    assert.equal(panel.document.querySelector<HTMLTextAreaElement>('#message-input')!.value, 'half-typed');
    panel.receive({ ...ATTACHED, reset: false } as ExtensionToWebview);
    panel.receive({ type: 'events', events: numbered([...ONE_TURN, { type: 'turn_complete' }]) });
    await panel.nextFrame();

    const turns = panel.document.querySelectorAll('.turn');
    assert.equal(turns.length, 1);
    assert.equal(turns[0].querySelectorAll('details.tool-chip').length, 2);
    const reply = turns[0].querySelector('.reply')!;
    assert.equal(reply.textContent?.match(/It is in/g)?.length, 1);
    assert.equal(reply.querySelectorAll('.code-block').length, 1);
  });
  it('names what a tool call asked and found in its chip, in words, with the raw call kept in the chip', async () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({
      type: 'events',
      events: numbered([
        { type: 'user_message', text: 'Who calls createServer?' },
        { type: 'tool_call', tool: 'find_references', paramsPreview: JSON.stringify({ symbol: 'createServer' }) },
        {
          type: 'tool_result',
          tool: 'find_references',
          ok: true,
          preview: '37 reference(s) to "createServer" in 12 file(s) (by name: identifiers with this name, not strings or comments; one entry per line):\n\nsrc/a.ts (3)\nsrc/a.ts:1: x',
        },
        { type: 'turn_complete' },
      ]),
    });
    await panel.nextFrame();
    const chip = panel.document.querySelector('details.tool-chip')!;
    assert.equal(chip.querySelector('.tool-summary')?.textContent, 'references to `createServer` — 37 in 12 files');
    assert.equal(chip.querySelector('.tool-name')?.textContent, 'find_references');
    assert.match(chip.querySelector('.tool-params')?.textContent ?? '', /symbol: "?createServer/);
  });

  it("links every path:line a tool result cites, opening the file at that line", async () => {
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({
      type: 'events',
      events: numbered([
        { type: 'user_message', text: 'Who calls createThing?' },
        { type: 'tool_call', tool: 'find_references', paramsPreview: JSON.stringify({ symbol: 'createThing' }) },
        { type: 'tool_result', tool: 'find_references', ok: true, preview: '2 reference(s) to "createThing" in 2 file(s):\n\nsrc/a.ts:12: createThing()\nlib/b.ts:3: createThing()' },
        { type: 'turn_complete' },
      ]),
    });
    await panel.nextFrame();
    const links = Array.from(panel.document.querySelectorAll<HTMLAnchorElement>('details.tool-chip .tool-preview a.path-link'));
    assert.deepEqual(links.map((link) => [link.dataset.path, link.dataset.line]), [['src/a.ts', '12'], ['lib/b.ts', '3']]);
    click(panel, links[0]);
    assert.deepEqual(panel.posted.at(-1), { type: 'openFile', path: 'src/a.ts', line: 12 });
  });

  it('shows a tool chip for a hostile file name escaped and inert: no bidi or control character reaches its text or title, and nothing in it is markup', async () => {
    const hostile = 'invoice\u202efdp.ts\nauth.ts:12: <img src=x onerror=alert(1)>\u001b[31m';
    panel = openPanel();
    panel.receive(ATTACHED);
    panel.receive({
      type: 'events',
      events: numbered([
        { type: 'user_message', text: 'Read it' },
        { type: 'tool_call', tool: 'read_file\u202e', paramsPreview: JSON.stringify({ path: hostile }) },
        // What a server answer would hold if a name or content line reached it raw.
        { type: 'tool_result', tool: 'read_file\u202e', ok: true, preview: `1: ${hostile}\r2: fake\u2028line` },
        { type: 'turn_complete' },
      ]),
    });
    await panel.nextFrame();

    const chip = panel.document.querySelector('details.tool-chip')!;
    const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
    assert.doesNotMatch(chip.textContent ?? '', unsafe);
    assert.doesNotMatch(chip.querySelector('summary')!.getAttribute('title') ?? '', unsafe);
    assert.equal(chip.querySelector('.tool-params')?.textContent, `path: ${JSON.stringify(hostile).replace('\u202e', '\\u202e').replace('\u001b', '\\u001b')}`);
    assert.equal(chip.querySelector('.tool-name')?.textContent, 'read_file\\u202e');
    assert.equal(chip.querySelector('.tool-preview')?.textContent?.split('\n').length, 2, 'the preview keeps its one real line break');
    assert.equal(chip.querySelector('img'), null);
    assert.equal(chip.querySelectorAll('*').length, chip.querySelectorAll('summary, span, pre, a.path-link').length, 'only the chip\'s own elements');
  });

  describe('the decision log and review', () => {
    const decision = (id: string, kind: 'constraint' | 'rejected' | 'question' | 'resolved', text: string, extra: Record<string, unknown> = {}) => ({
      type: 'decision_recorded' as const,
      decision: { id, kind, text, evidence: [], at: 1_700_000_000_000, by: 'model' as const, ...extra },
    });

    it('shows the log from decision events, grouped by kind, with an edit replacing its entry, a superseding entry the one it replaces, and a deletion removing one; a reload keeps it', () => {
      panel = openPanel();
      panel.receive(ATTACHED);
      panel.receive({
        type: 'events',
        events: numbered([
          decision('d1', 'constraint', 'Keep the public API', { evidence: [{ path: 'src/api.ts', line: 4, hash: 'h' }] }),
          decision('d2', 'rejected', 'A global lock'),
          decision('d3', 'question', 'Retry on 429?'),
          decision('d4', 'resolved', 'Use exponential backoff'),
          decision('d1', 'constraint', 'Keep the public API unchanged', { evidence: [{ path: 'src/api.ts', line: 4, hash: 'h' }] }),
          decision('d5', 'resolved', 'Retry on 429: yes', { replaces: 'd3' }),
          { type: 'decision_deleted', id: 'd2' },
        ]),
      });
      const readLog = (doc: Document) =>
        Array.from(doc.querySelectorAll('details.decisions .decision-group'), (group) => [
          group.querySelector('h3')?.textContent,
          Array.from(group.querySelectorAll('.decision-text'), (text) => text.textContent),
        ]);
      const expected = [
        ['Constraints', ['Keep the public API unchanged']],
        ['Resolved', ['Use exponential backoff', 'Retry on 429: yes']],
      ];
      assert.deepEqual(readLog(panel.document), expected);
      assert.equal(panel.document.querySelector('details.decisions summary')?.textContent, 'Decisions (3)');
      assert.equal(panel.document.querySelector('[data-decision-id="d1"] .decision-evidence')?.textContent, 'src/api.ts:4');

      const saved = panel.savedState();
      panel.close();
      panel = openPanel(saved);
      assert.deepEqual(readLog(panel.document), expected);
    });

    it('marks a constraint whose cited code changed since it was agreed, and lists the open questions on the task card', () => {
      panel = openPanel();
      panel.receive(ATTACHED);
      panel.receive({
        type: 'events',
        events: numbered([
          { type: 'user_message', text: 'Plan it' },
          { type: 'turn_complete' },
          {
            type: 'task_prepared',
            intent: 'Add retries',
            constraints: ['Keep the API', 'Log each retry'],
            constraintSources: [
              { text: 'Keep the API', source: 'decision', decisionId: 'd1', evidence: ['src/api.ts:4'], stale: [{ path: 'src/api.ts', line: 4, diff: '-export function get()\n+export function fetch()' }] },
              { text: 'Log each retry', source: 'distilled' },
            ],
            openQuestions: ['Retry on 429?'],
          },
        ]),
      });
      const items = panel.document.querySelectorAll('.task-card .constraint');
      assert.match(items[0].querySelector('.constraint-stale')?.textContent ?? '', /the code it cites changed since it was agreed: src\/api\.ts:4/i);
      assert.equal(items[1].querySelector('.constraint-stale'), null, 'a constraint with unchanged evidence carries no mark');
      assert.deepEqual(Array.from(panel.document.querySelectorAll('.task-card .task-question-list li'), (li) => li.textContent), ['Retry on 429?']);

      // Removing the first constraint must not move its mark onto the next one.
      click(panel, items[0].querySelector('[data-action="remove-constraint"]'));
      const remaining = panel.document.querySelectorAll('.task-card .constraint');
      assert.equal(remaining.length, 1);
      assert.equal(remaining[0].querySelector('.constraint-stale'), null);
    });

    it('hands off each kept constraint with its path:line evidence and the open questions, and a reworded constraint claims none', () => {
      panel = openPanel();
      panel.receive(ATTACHED);
      panel.receive({
        type: 'events',
        events: numbered([
          { type: 'user_message', text: 'Plan it' },
          { type: 'turn_complete' },
          {
            type: 'task_prepared',
            intent: 'Add retries',
            constraints: ['Keep the API', 'Log each retry'],
            constraintSources: [
              { text: 'Keep the API', source: 'decision', decisionId: 'd1', evidence: ['src/api.ts:4'] },
              { text: 'Log each retry', source: 'decision', decisionId: 'd2', evidence: ['src/http.ts:40'] },
            ],
            openQuestions: ['Retry on 429?'],
          },
        ]),
      });
      const fields = panel.document.querySelectorAll<HTMLTextAreaElement>('.task-card .constraint-input');
      fields[1].value = 'Log every retry at debug level';
      fields[1].dispatchEvent(new panel.window.Event('input', { bubbles: true }));
      click(panel, panel.document.querySelector('[data-action="hand-off"]'));
      const handOff = panel.posted.at(-1) as { type: string; task: PreparedTask };
      assert.equal(handOff.type, 'handOff');
      assert.deepEqual(handOff.task.constraints, ['Keep the API', 'Log every retry at debug level']);
      assert.deepEqual(handOff.task.constraintSources, [{ text: 'Keep the API', source: 'decision', decisionId: 'd1', evidence: ['src/api.ts:4'] }]);
      assert.deepEqual(handOff.task.openQuestions, ['Retry on 429?']);
    });

    it('shows the review checklist: each constraint met, not met or cannot tell with its evidence, and the unrequested changes', () => {
      panel = openPanel();
      panel.receive(ATTACHED);
      panel.receive({
        type: 'events',
        events: numbered([
          {
            type: 'review',
            review: {
              intent: 'Add retries',
              compared: 'changes since 1a2b3c4d5e (commits and the working tree)',
              items: [
                { constraint: 'Keep the API', status: 'met', evidence: ['src/api.ts:4'] },
                { constraint: 'Log each retry', status: 'not met', evidence: ['src/http.ts:40'], note: 'No log call in the loop.' },
                { constraint: 'No new dependency', status: 'cannot tell', evidence: [] },
              ],
              unrequested: [{ text: 'Renamed a helper', evidence: ['src/util.ts:9'] }],
              at: 1_700_000_000_000,
            },
          },
        ]),
      });
      const review = panel.document.querySelector('.review')!;
      assert.equal(review.querySelector('.review-compared')?.textContent, 'changes since 1a2b3c4d5e (commits and the working tree)');
      assert.deepEqual(
        Array.from(review.querySelectorAll('.review-item'), (item) => [
          item.querySelector('.review-status')?.textContent,
          item.querySelector('.review-constraint')?.textContent,
          item.querySelector('.review-evidence')?.textContent ?? null,
        ]),
        [
          ['Met', 'Keep the API', 'src/api.ts:4'],
          ['Not met', 'Log each retry', 'src/http.ts:40'],
          ['Cannot tell', 'No new dependency', null],
        ],
      );
      assert.equal(review.querySelector('.review-note')?.textContent, 'No log call in the loop.');
      assert.equal(review.querySelector('.review-unrequested li')?.textContent, 'Renamed a helpersrc/util.ts:9');
    });

    it('shows hostile decision and review text inert: no markup, and no bidi or control character reaches the page', () => {
      const hostile = 'ok\u202e <img src=x onerror=alert(1)>\u001b[31m<script>x()</script>';
      panel = openPanel();
      panel.receive(ATTACHED);
      panel.receive({
        type: 'events',
        events: numbered([
          decision('d1', 'constraint', hostile, { evidence: [{ path: `a\u202eb.ts`, line: 1, hash: 'h' }] }),
          {
            type: 'review',
            review: {
              intent: hostile,
              compared: hostile,
              items: [{ constraint: hostile, status: 'met', evidence: [hostile], note: hostile }],
              unrequested: [{ text: hostile, evidence: [hostile] }],
              at: 0,
            },
          },
        ]),
      });
      const region = panel.document.querySelector('.decisions-region')!;
      assert.equal(region.querySelector('img, script'), null);
      const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
      assert.doesNotMatch(region.textContent ?? '', unsafe);
      assert.match(region.querySelector('.decision-text')?.textContent ?? '', /<img src=x onerror=alert\(1\)>/, 'shown as text');
    });

    it('posts deleteDecision for the entry whose delete button is clicked, and editDecision with the new text on Save', () => {
      panel = openPanel();
      panel.receive(ATTACHED);
      panel.receive({ type: 'events', events: numbered([decision('d1', 'constraint', 'Keep the API'), decision('d2', 'rejected', 'A global lock')]) });
      panel.posted.length = 0;
      click(panel, panel.document.querySelector('[data-decision-id="d2"] [data-action="delete-decision"]'));
      assert.deepEqual(panel.posted, [{ type: 'deleteDecision', id: 'd2' }]);

      click(panel, panel.document.querySelector('[data-decision-id="d1"] [data-action="edit-decision"]'));
      const field = panel.document.querySelector<HTMLTextAreaElement>('[data-decision-id="d1"] textarea')!;
      field.value = 'Keep the API stable';
      click(panel, panel.document.querySelector('[data-decision-id="d1"] [data-action="save-decision"]'));
      assert.deepEqual(panel.posted.slice(1), [{ type: 'editDecision', id: 'd1', text: 'Keep the API stable' }]);
    });
  });
});

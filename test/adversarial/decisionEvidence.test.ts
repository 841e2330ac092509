/**
 * Decision evidence: `record_decision` takes paths from the model and reads
 * them to hash the cited lines. Every escape a read would refuse must refuse
 * the entry too, and nothing read outside the folder may reach an event, the
 * saved log, or a later request.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FakeStep } from '../support/fakeOpenAI';
import { Lab, SENTINEL_CORE, recordFigures, runTurn } from './lab';

describe('adversarial: decision evidence goes through the read boundary', function () {
  this.timeout(60_000);
  it('refuses every hostile evidence path, records no entry for it, and leaks nothing into events, storage or requests', async () => {
    const lab = await Lab.create();
    try {
      const s = await lab.server();
      const id = await lab.open(s);
      const hostile: Array<{ path: string; line?: number }> = [
        { path: path.join(lab.outside, 'secret.txt'), line: 1 },
        { path: '../outside/secret.txt', line: 1 },
        { path: 'link-file', line: 1 },
        { path: 'link-file-rel' },
        { path: 'link-dir/secret.txt', line: 2 },
        { path: 'link-home/secret.txt' },
        { path: 'link-proc-root/etc/hostname' },
        { path: 'link-env' },
        { path: '.env', line: 1 },
        { path: '.git/config' },
        { path: 'innocent.txt' },
        { path: `file://${path.join(lab.outside, 'secret.txt')}` },
      ];
      // One round of parallel calls: a reply is capped in model calls, not in tool calls.
      const steps: FakeStep[] = [
        {
          kind: 'toolCalls',
          calls: hostile.map((evidence, i) => ({ id: `h${i}`, name: 'record_decision', arguments: JSON.stringify({ kind: 'constraint', text: `hostile ${i}`, evidence: [evidence] }) })),
        },
      ];
      // A control: an ordinary file inside the folder is cited and recorded.
      steps.push({ kind: 'toolCalls', calls: [{ id: 'ok', name: 'record_decision', arguments: JSON.stringify({ kind: 'constraint', text: 'control', evidence: [{ path: 'src/app.ts', line: 1 }] }) }] });
      steps.push({ kind: 'text', text: 'done' });
      const events = await runTurn(s, lab.fake, id, 'record these', steps);
      const recorded = events.filter((e) => e.type === 'decision_recorded');
      assert.deepEqual(recorded.map((e) => (e as { decision: { text: string } }).decision.text), ['control'], 'only the control is recorded');
      const refused = events.filter((e) => e.type === 'tool_result' && !e.ok).length;
      assert.equal(refused, hostile.length);
      assert.ok(!JSON.stringify(s.events).includes(SENTINEL_CORE), 'no event carries the sentinel');
      const record = fs.readFileSync(path.join(lab.storage, 'discussions', id, 'record.json'), 'utf8');
      assert.ok(!record.includes(SENTINEL_CORE), 'the saved log carries no sentinel');
      assert.ok(!lab.fake.completionRequests.some((r) => r.rawBody.includes(SENTINEL_CORE)), 'no request carries the sentinel');
      recordFigures('decisionEvidence', { hostileEvidencePaths: hostile.length, refused, recorded: recorded.length });
    } finally {
      await lab.dispose();
    }
  });
});

import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { busyShare, leftoverNote, LEFTOVER_BUSY_SHARE } from '../../bench/leftoverWork';

// A thread that spins until told to stop, as a left-over index build keeps a core.
const SPINNER = `
const { parentPort } = require('node:worker_threads');
let running = true;
parentPort.on('message', () => { running = false; });
parentPort.postMessage('spinning');
const spin = () => { const until = Date.now() + 20; while (Date.now() < until); if (running) setImmediate(spin); else process.exit(0); };
spin();
`;

describe('the bench\'s check for work a section leaves running', () => {
  it('finds a thread of the bench\'s process left busy, and says which section left it', async () => {
    const worker = new Worker(SPINNER, { eval: true });
    try {
      await new Promise((resolve) => worker.once('message', resolve));
      const share = await busyShare();
      assert.ok(share > LEFTOVER_BUSY_SHARE, `a spinning thread measured ${share.toFixed(2)} of a CPU`);
      assert.match(leftoverNote('discuss/start', share) ?? '', /^after the discuss\/start section the bench's own process kept \d+% of a CPU busy/);
    } finally {
      worker.postMessage('stop');
      await new Promise((resolve) => worker.once('exit', resolve));
    }
  });

  it('reports nothing for a process left idle', async () => {
    // In a process of its own: this one may still be finishing what earlier tests started.
    const measure = `require(${JSON.stringify(path.join(__dirname, '../../bench/leftoverWork.js'))}).busyShare().then((share) => process.stdout.write(String(share)))`;
    const share = Number(await new Promise<string>((resolve, reject) => execFile(process.execPath, ['-e', measure], (error, stdout) => (error ? reject(error) : resolve(stdout)))));
    assert.ok(share < LEFTOVER_BUSY_SHARE, `an idle process measured ${share.toFixed(2)} of a CPU`);
    assert.equal(leftoverNote('streaming', share), undefined);
  });
});

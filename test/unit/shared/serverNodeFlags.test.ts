import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as os from 'node:os';
import { SERVER_NODE_FLAGS, v8PoolSize } from '../../../shared/serverNodeFlags';

describe('the server\'s Node flags', () => {
  it('give V8 one background thread per CPU, where Node would start four on any machine: two on two CPUs, never more than four', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 8, 64].map(v8PoolSize), [1, 1, 2, 3, 4, 4, 4, 4]);
  });

  it('size V8\'s background threads for this machine', () => {
    assert.ok(SERVER_NODE_FLAGS.includes(`--v8-pool-size=${v8PoolSize(os.availableParallelism())}`), SERVER_NODE_FLAGS.join(' '));
  });

  it('are all flags Node accepts: a misspelt one would stop every client from starting the server', () => {
    const child = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, '-e', 'process.stdout.write("started")'], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, 'started');
  });
});

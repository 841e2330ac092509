import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS, v8PoolSize } from '../../../shared/serverNodeFlags';

describe('the server\'s Node flags', () => {
  it('give V8 one background thread per CPU, where Node would start four on any machine: two on two CPUs, never more than four', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 8, 64].map(v8PoolSize), [1, 1, 2, 3, 4, 4, 4, 4]);
  });

  it('size V8\'s background threads for the machine the client runs on, as its CPUs are counted there', () => {
    // A process whose CPU count is stubbed before the flags are worked out: a size fixed in the code would not follow it.
    const flagsWith = (cpus: number): string =>
      spawnSync(process.execPath, ['-e', `require('node:os').availableParallelism = () => ${cpus}; process.stdout.write(require(${JSON.stringify(require.resolve('../../../shared/serverNodeFlags'))}).SERVER_NODE_FLAGS.join(' '))`], { encoding: 'utf8' }).stdout;
    assert.match(flagsWith(1), /(^| )--v8-pool-size=1( |$)/);
    assert.match(flagsWith(3), /(^| )--v8-pool-size=3( |$)/);
    assert.match(flagsWith(32), /(^| )--v8-pool-size=4( |$)/);
  });

  it('are all flags Node accepts: a misspelt one would stop every client from starting the server', () => {
    const child = spawnSync(process.execPath, [...SERVER_NODE_FLAGS, '-e', 'process.stdout.write("started")'], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, 'started');
  });

  it("keep glibc giving freed large blocks back, where its moving thresholds kept them resident", function () {
    const glibc = process.platform === 'linux' && (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
    if (!glibc) this.skip();
    // Rounds of large blocks held, then freed: the resident size after the last round's collection, over the first's, in MB.
    const script = `
      const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
      const after = [];
      for (let round = 0; round < 4; round++) {
        let held = [];
        for (let i = 0; i < 40; i++) held.push(Buffer.alloc(256 * 1024 + i * 4096, 1));
        held = undefined;
        gc(); gc();
        after.push(rss());
      }
      process.stdout.write(String(after[3] - after[0]));`;
    const keptMb = (env: Record<string, string>): number => {
      const child = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });
      assert.equal(child.status, 0, child.stderr);
      return Number(child.stdout);
    };
    const plain = keptMb({});
    // Where this glibc gives them back anyway, there is nothing here to tell apart.
    if (plain < 8) this.skip();
    const fixed = keptMb({ ...SERVER_ENVIRONMENT });
    assert.ok(fixed < 4, `with the server's environment, ${fixed.toFixed(1)} MB stayed resident (${plain.toFixed(1)} MB without)`);
  });
});

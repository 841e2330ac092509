import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeReadings, readMachine } from '../../bench/machineReadings';

describe('the bench\'s readings of the machine', () => {
  it('times spawn() and a small append, and leaves nothing in the folder it was given', async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'machine-readings-'));
    try {
      const readings = await readMachine(scratch);
      assert.ok(readings.spawnMs > 0 && Number.isFinite(readings.spawnMs), `spawn() took ${readings.spawnMs} ms`);
      assert.ok(readings.appendUs > 0 && Number.isFinite(readings.appendUs), `an append took ${readings.appendUs} µs`);
      assert.ok(readings.residentMb > 0);
      assert.deepEqual(fs.readdirSync(scratch), []);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('says what each reading is, how many it is the median of, and the process\'s size', () => {
    const text = describeReadings({ spawnMs: 8.04, residentMb: 117.2, appendUs: 8.84 });
    assert.equal(text, 'spawn() held its thread 8.0 ms (median of 15, this process at 117 MB resident); a 300-byte append to a file took 8.8 µs (median of 2000)');
  });
});

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { attributeFileFault, attributeFolders } from '../../../server/src/git/attributeFiles';

describe('the .gitattributes files git reads for a diff', () => {
  it('are those of the folder, of each folder of each path below it, and of each folder up to the work tree\'s top, each once', () => {
    const folders = attributeFolders('/top', '/top/app', ['src/a/x.ts', 'src/a/y.ts', 'src/b.ts', 'README.md']);
    assert.deepEqual(folders.sort(), ['/top', '/top/app', '/top/app/src', '/top/app/src/a']);
    assert.deepEqual(attributeFolders('/top', '/top', []), ['/top']);
  });

  it('fault on a FIFO or a link to a FIFO or a device, and not on a plain file, a folder, a link to a plain file or nothing', async function () {
    if (process.platform === 'win32') this.skip();
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'repo-discuss-attributes-')));
    try {
      const named: Record<string, string> = {};
      const make = (name: string, plant: (file: string) => void): void => {
        fs.mkdirSync(path.join(base, name));
        plant(path.join(base, name, '.gitattributes'));
        named[name] = path.join(base, name);
      };
      make('plain', (file) => fs.writeFileSync(file, '* text\n'));
      make('directory', (file) => fs.mkdirSync(file));
      make('link-to-plain', (file) => fs.symlinkSync('../plain/.gitattributes', file));
      make('none', () => undefined);
      make('fifo', (file) => execFileSync('mkfifo', [file]));
      make('link-to-fifo', (file) => fs.symlinkSync('../fifo/.gitattributes', file));
      make('device', (file) => fs.symlinkSync('/dev/zero', file));
      const harmless = ['plain', 'directory', 'link-to-plain', 'none'].map((name) => named[name]);
      assert.equal(await attributeFileFault(harmless), undefined);
      for (const name of ['fifo', 'link-to-fifo', 'device']) assert.equal(await attributeFileFault([...harmless, named[name]]), path.join(named[name], '.gitattributes'), name);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '../../..');

/**
 * Builds the runtime the .vsix ships (`client/bundle.mjs --production`) into
 * `outDir`, aside from the development build in dist/: the figures measure
 * what users run.
 */
export function buildProductionBundle(outDir: string): void {
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'client', 'bundle.mjs'), '--production', `--outdir=${outDir}`], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`client/bundle.mjs exited ${result.status ?? result.signal}: ${result.stderr.trim()}`);
}

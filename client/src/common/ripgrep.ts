import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * VS Code ships ripgrep; its path moved between releases (and is unpacked
 * from the asar archive in packaged builds), so every known place is tried.
 */
export function bundledRipgrep(appRoot: string, platform = process.platform): string | null {
  const exe = platform === 'win32' ? 'rg.exe' : 'rg';
  const candidates = [
    path.join(appRoot, 'node_modules', '@vscode', 'ripgrep', 'bin', exe),
    path.join(appRoot, 'node_modules.asar.unpacked', '@vscode', 'ripgrep', 'bin', exe),
    path.join(appRoot, 'node_modules', 'vscode-ripgrep', 'bin', exe),
    path.join(appRoot, 'node_modules.asar.unpacked', 'vscode-ripgrep', 'bin', exe),
  ];
  return candidates.find((candidate) => fs.existsSync(candidate)) ?? null;
}

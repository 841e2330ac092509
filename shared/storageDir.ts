import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The platform's per-user data folder for discussions, shared by the server,
 * the VS Code extension and the terminal client so either can resume the
 * other's.
 */
export function defaultStorageDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'win32') {
    return path.join(env.LOCALAPPDATA || env.APPDATA || path.join(home, 'AppData', 'Local'), 'repo-discuss');
  }
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'repo-discuss');
  return path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'repo-discuss');
}

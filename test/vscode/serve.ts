/**
 * `npm start [folder]`: try the extension in a real VS Code without touching
 * your own editor. Installs the freshly packaged .vsix into the local
 * code-server (set up on first use) and serves the workbench on
 * http://127.0.0.1:PORT opened on the folder (default: this repository).
 * Ctrl+C stops code-server and everything it started.
 *
 *   npm start                  this repository, port 8080
 *   npm start -- ../other      another folder
 *   PORT=9000 npm start        another port
 *
 * The profile (settings, installed extension) lives in .vscode-test/start and
 * is kept between runs; the API key set with "Set API key" is kept by the
 * browser, per address.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  QUIET_USER_SETTINGS,
  REPO_ROOT,
  ensureCodeServer,
  installExtension,
  packagedVsix,
  startCodeServer,
  writeUserSettings,
} from './codeServer';

async function main(): Promise<void> {
  // npm runs scripts from the package root; a relative folder means where `npm start` was typed.
  const invokedFrom = process.env.INIT_CWD ?? process.cwd();
  const folder = path.resolve(invokedFrom, process.argv[2] ?? REPO_ROOT);
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) throw new Error(`Not a folder: ${folder}`);
  const port = Number(process.env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Not a port: ${process.env.PORT}`);

  const vsix = packagedVsix();
  if (!fs.existsSync(vsix)) throw new Error(`${vsix} is missing: \`npm start\` packages it first; run \`npm run package\`.`);
  ensureCodeServer();

  const home = path.join(REPO_ROOT, '.vscode-test', 'start');
  const profile = { userDataDir: path.join(home, 'user-data'), extensionsDir: path.join(home, 'extensions') };
  // Quiet and offline by default; what the user changed since stays theirs.
  writeUserSettings(profile.userDataDir, QUIET_USER_SETTINGS, true);
  installExtension(vsix, profile);

  const server = await startCodeServer({ ...profile, folder, port });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping VS Code…');
    await server.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGHUP', () => void stop(0));
  server.child.once('exit', (code) => {
    if (!stopping) {
      console.error(`code-server stopped by itself (exit ${code}).`);
      void stop(code ?? 1);
    }
  });

  console.log(
    [
      '',
      `Repo Discuss is running in VS Code at ${server.workbenchUrl(folder)}`,
      `  folder: ${folder}`,
      '  Open the address in a browser, run "Repo Discuss: Select endpoint" (and "Set API key" if the endpoint needs one),',
      '  then "Repo Discuss: Discuss this repo". Ctrl+C stops it.',
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

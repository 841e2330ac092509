/** The escape attempts the escapes part makes through the read tools, and the attachments part makes as attachments. */
import * as os from 'node:os';
import * as path from 'node:path';
import { SECRET_SAMPLES } from '../support/secretSamples';
import { Lab, SENTINEL_PATTERNS } from './lab';

export type Expect = 'refused' | 'contained';

export interface Attempt {
  tool: 'read_file' | 'list_dir' | 'find_files' | 'grep_files' | 'find_symbol' | 'go_to_definition' | 'find_references' | 'list_symbols' | 'get_diagnostics';
  /** A string is sent verbatim as the argument text (it may be deliberately odd JSON). */
  args: Record<string, unknown> | string;
  /**
   * `refused`: the call must fail. `contained`: it may succeed (a climbing
   * glob matches nothing outside), but must show nothing from outside.
   */
  expect: Expect;
}

/** The escape attempts, built against this lab's real paths. */
export function escapeAttempts(lab: Lab): Attempt[] {
  const R = lab.repo;
  const O = lab.outside;
  const S = path.join(O, 'secret.txt');
  const H = lab.home;
  const out: Attempt[] = [];
  const read = (p: unknown, expect: Expect = 'refused', extra: Record<string, unknown> = {}) =>
    out.push({ tool: 'read_file', args: { path: p, ...extra }, expect });
  const list = (p: unknown, expect: Expect = 'refused') => out.push({ tool: 'list_dir', args: { path: p }, expect });
  const find = (pattern: string, p?: string, expect: Expect = p === undefined ? 'contained' : 'refused') =>
    out.push({ tool: 'find_files', args: p === undefined ? { pattern } : { pattern, path: p }, expect });
  const grep = (pattern: string, p?: string, glob?: string, expect: Expect = p === undefined ? 'contained' : 'refused') =>
    out.push({
      tool: 'grep_files',
      args: { pattern, ...(p === undefined ? {} : { path: p }), ...(glob === undefined ? {} : { glob }) },
      expect,
    });

  // --- read_file: `..` chains
  read('../outside/secret.txt');
  read('../'.repeat(30) + S.slice(1));
  read('src/../../outside/secret.txt');
  read('./../outside/secret.txt');
  read('src/./../.././outside/secret.txt');
  read('src/util/../../../outside/nested/deeper.txt');
  read('..');
  read('../');
  read('.././..');
  // --- absolute paths
  read(S);
  read('/' + S);
  read(S + '/.');
  read(`${R}/../outside/secret.txt`);
  read(`${R}/src/../../outside/secret.txt`);
  read(`${R}-other/../outside/secret.txt`);
  read(path.join(H, 'secret.txt'));
  read('/etc/passwd');
  read('/etc/shadow');
  // --- file: URIs
  read('file://' + S);
  read('file://localhost' + S);
  read('FILE://' + S);
  read('file:' + S);
  read(`file://${R}/../outside/secret.txt`);
  read(`file://${R}/%2e%2e/outside/secret.txt`);
  read(`file://${R}/%2E%2E/outside/secret.txt`);
  read(`file://${R}/..%2foutside%2fsecret.txt`);
  read(`file://${R}/%252e%252e/outside/secret.txt`);
  read('file:///etc/passwd');
  read('file://evil.example.com' + S);
  read('file:../outside/secret.txt');
  read(`file://${R}/.env`);
  read(`file://${R}/.git/config`);
  // --- percent- and double-encoding
  read('..%2Foutside%2Fsecret.txt');
  read('%2e%2e/outside/secret.txt');
  read('%2E%2E%2F%2E%2E%2Foutside%2Fsecret.txt');
  read('%252e%252e%252foutside%252fsecret.txt');
  read('..%252f..%252foutside%252fsecret.txt');
  read('%c0%ae%c0%ae/outside/secret.txt');
  read('%2e%2e%5coutside%5csecret.txt');
  // --- backslashes and look-alikes
  read('..\\outside\\secret.txt');
  read('..\\..\\' + S.slice(1).replace(/\//g, '\\'));
  read('src\\..\\..\\outside\\secret.txt');
  read('..\u2215outside\u2215secret.txt');
  read('\uff0e\uff0e/outside/secret.txt');
  read('C:\\Windows\\win.ini');
  read('\\\\?\\C:\\secret.txt');
  // --- NUL bytes
  read('README.md\u0000../outside/secret.txt');
  read('../outside/secret.txt\u0000.md');
  read('\u0000');
  read(`file://${R}/README.md%00../../outside/secret.txt`);
  // --- `~` and variables
  read('~/secret.txt');
  read('~/.ssh/id_rsa');
  read('~root/.bashrc');
  read('$HOME/secret.txt');
  read('${HOME}/.ssh/id_rsa');
  read('%USERPROFILE%\\secret.txt');
  // --- very long paths
  read('a/'.repeat(2500));
  read('../'.repeat(1400) + 'outside/secret.txt');
  read('./'.repeat(1900) + '../outside/secret.txt');
  read('x'.repeat(300));
  read('src/' + '../'.repeat(900) + S.slice(1));
  // --- /proc
  read('/proc/self/root' + S);
  read('/proc/self/root' + R + '/README.md');
  read('/proc/self/cwd/package.json');
  read('/proc/self/environ');
  read('/proc/self/cmdline');
  read('/proc/self/fd/0');
  read('/proc/1/root' + S);
  read('/proc/self/root/proc/self/root' + S);
  read('/dev/stdin');
  // --- symlinks committed in the repository
  read('link-file');
  read('link-file-rel');
  read('link-dir/secret.txt');
  read('link-dir-rel/secret.txt');
  read('link-dir/nested/deeper.txt');
  read('chain-1');
  read('chain-3');
  read('chain-dir-1/secret.txt');
  read('loop-a');
  read('self-loop');
  read('loop-a/x');
  read('dangling-out');
  read('dangling-in');
  read('link-root/etc/passwd');
  read('link-root' + S);
  read('link-up/outside/secret.txt');
  read('docs/up2/outside/secret.txt');
  read('link-home/secret.txt');
  read('link-home/.ssh/id_rsa');
  read('link-proc-root' + S);
  read('link-proc-cwd/package.json');
  read('link-storage/planted.txt');
  read('link-tmp/' + path.relative(os.tmpdir(), S));
  read('link-env');
  read('innocent.txt');
  read('.env.example');
  read('src/deep/inner/secret.txt');
  read('src/deep/hop');
  read('notes/key-link');
  read('CLAUDE.md');
  read('.github/copilot-instructions.md');
  read(`${R}/link-dir/secret.txt`);
  read(`file://${R}/link-file`);
  // --- default-denied secrets and the policy
  for (const p of [
    '.env', './.env', 'src/../.env', '.env/', '.env/.', '.ENV', '.env.local', 'config/.env.production',
    '.npmrc', '.netrc', '.pypirc', 'id_rsa', 'keys/id_ed25519', 'certs/server.pem', 'certs/private.key',
    '.git/config', '.git//config', '.git/./config', 'src/../.git/config', '.git/HEAD', '.git/credentials',
    '.git/objects/ab/cdef0123', '.GIT/config', 'private/notes.txt', './private/notes.txt', 'private//notes.txt',
    `${R}/.env`, `${R}/private/notes.txt`,
  ]) {
    read(p);
  }
  // Every default rule's planted file, read and searched by name.
  for (const sample of SECRET_SAMPLES) {
    read(sample.path);
    grep(SENTINEL_PATTERNS[0], sample.path);
  }
  read('.env', 'refused', { start_line: 1, end_line: 1 });
  read('id_rsa', 'refused', { start_line: 2 });
  // --- argument-level tricks
  out.push({ tool: 'read_file', args: '{"path":"README.md","path":"../outside/secret.txt"}', expect: 'refused' });
  out.push({ tool: 'read_file', args: { path: ['../outside/secret.txt'] }, expect: 'refused' });
  out.push({ tool: 'read_file', args: { __proto__: { path: '../outside/secret.txt' } }, expect: 'refused' });
  out.push({ tool: 'read_file', args: '{"__proto__":{"path":"../outside/secret.txt"}}', expect: 'refused' });
  out.push({ tool: 'read_file', args: { path: 'README.md', file: '../outside/secret.txt' }, expect: 'refused' });
  out.push({ tool: 'read_file', args: { path: { toString: '../outside/secret.txt' } }, expect: 'refused' });

  // --- list_dir
  for (const p of [
    '..', '../', '../outside', '/', O, '/proc/self/root', '/proc/self/cwd', '/proc/self/fd', '/proc/self/root' + O,
    '~', '~/.ssh', 'link-dir', 'link-dir-rel', 'link-dir/nested', 'link-up', 'docs/up2', 'link-root', 'link-home',
    'link-storage', 'link-tmp', 'link-proc-root', 'link-proc-cwd', 'chain-dir-1', 'src/deep/inner', 'loop-a',
    'dangling-out', '.git', '.git/objects', 'private', 'file://' + O, 'file:///', `file://${R}/..`, '%2e%2e',
    '..\\', '\u0000', '../'.repeat(2000), `${R}/..`, `${R}/link-dir`,
  ]) {
    list(p);
  }
  // The folder itself lists the links by name and must not follow them.
  list('.', 'contained');
  list(undefined, 'contained');

  // --- find_files: climbing globs (may succeed, must stay inside) and outside scopes (refused)
  for (const pattern of [
    '../**', '../*', '../outside/**', '../../**/*', '**/../../**', '/**', `${O}/**`, '..\\**', '{..,.}/**',
    '**/secret.txt', '**/*-name.txt', '**/deeper.txt', '**/.env', '.git/**', '**/.git/**', '**/id_rsa',
    'link-dir/**', 'link-up/**', 'chain-dir-1/**', 'src/deep/inner/**', 'link-root/**', 'link-home/**',
    'link-storage/**', '**/planted.txt', '**', 'private/**',
  ]) {
    find(pattern);
  }
  for (const p of [
    '..', O, 'link-dir', 'link-up', '/', '~', '.git', 'private', 'link-home', 'chain-dir-1', 'src/deep/inner',
    'link-root', 'link-proc-root', 'link-storage', 'file://' + O, '/proc/self/cwd',
  ]) {
    find('**', p);
  }

  // --- grep_files: the sentinel is searched for by patterns that do not contain it
  for (const pattern of [...SENTINEL_PATTERNS, '.', 'API_TOKEN', 'password', 'BEGIN OPENSSH']) grep(pattern);
  for (const p of [
    '..', O, S, '../outside/secret.txt', '/', 'link-dir', 'link-dir-rel', 'link-file', 'chain-1', 'chain-dir-1',
    'link-up', 'link-root', 'link-home', '~', '.env', '.env.local', '.git', '.git/config', 'private',
    'private/notes.txt', 'config/.env.production', 'keys/id_ed25519', 'certs/server.pem', 'id_rsa', 'link-proc-root', '/proc/self/environ',
    '/proc/self/root' + O, 'file://' + O, '.env.example', 'innocent.txt', 'link-env', 'src/deep/inner',
    'link-storage', 'notes/key-link', 'CLAUDE.md', '.github/copilot-instructions.md',
  ]) {
    grep(SENTINEL_PATTERNS[0], p);
  }
  // Paths inside the folder whose files include secrets: allowed, but secrets stay unsearched.
  grep(SENTINEL_PATTERNS[0], 'config', undefined, 'contained');
  grep('.', 'config', undefined, 'contained');
  grep('.', 'keys', undefined, 'contained');
  grep('.', 'certs', undefined, 'contained');
  grep('.', 'notes', undefined, 'contained');
  for (const glob of ['../**', '**/.env', '.git/**', '/**', '**/*', '**/secret.txt', '**/*.pem', '{.env,id_rsa}', 'private/**']) {
    grep(SENTINEL_PATTERNS[2], undefined, glob);
  }
  grep('.', 'link-dir', '**');
  // Patterns that look like command-line flags to a search program.
  for (const pattern of ['--follow', '-L', '--no-ignore', '-uuu', '--hidden', '--files', '--search-zip', '-e', '--', '--pre=/bin/cat']) {
    grep(pattern);
    grep(pattern, '.', undefined, 'contained');
  }
  grep('.', '--follow', undefined, 'refused');
  grep('.', undefined, '--follow');
  grep('.', undefined, '!*.md');
  return out;
}

import { execFileSync } from 'node:child_process';

/**
 * The tests' own git for building fixture repositories, with the user's and
 * the system's config kept out and a fixed author and date, so a fixture is
 * the same on every machine.
 */
export function testGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Ada',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_COMMITTER_NAME: 'Ada',
      GIT_COMMITTER_EMAIL: 'ada@example.com',
      GIT_AUTHOR_DATE: '2024-03-01T10:00:00Z',
      GIT_COMMITTER_DATE: '2024-03-01T10:00:00Z',
    },
  });
}

/**
 * Whether a process with this pid runs on this machine. One of another
 * user's counts: it may not be signalled (EPERM), but it runs.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

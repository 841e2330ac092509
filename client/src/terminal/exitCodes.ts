/**
 * Exit codes of every `repo-discuss` command, so a script can tell what went
 * wrong without parsing messages. Listed in `repo-discuss --help`.
 */
export const ExitCode = {
  Ok: 0,
  /** The turn ended with an `error` event: the model failed (bad key, unknown model, endpoint down). */
  ModelFailed: 1,
  /** The command line was wrong. */
  Usage: 2,
  /** The server refused the request: unknown id, already open elsewhere, no such folder, busy. */
  Refused: 3,
  /** The server could not be started or stopped unexpectedly, or the config file is unusable. */
  ServerFailed: 4,
  /** Stopped with Ctrl+C. */
  Interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = `Exit codes:
  0    success
  1    the model failed (the message on stderr says what to fix)
  2    wrong command line
  3    the server refused the request (unknown id, already open elsewhere, no such folder)
  4    the server could not start or stopped, or the config file is unusable
  130  interrupted with Ctrl+C`;

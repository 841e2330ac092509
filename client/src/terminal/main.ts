#!/usr/bin/env node
/**
 * `repo-discuss`: the terminal client. It runs the same discussion server as
 * the VS Code extension (over stdio) on the same storage, so a discussion
 * continues from one to the other.
 */
import { UsageError, commandName, helpText, parseCommandLine } from './args';
import { runAsk, runDelete, runExport, runList, runPromote, runRename } from './commands';
import { ConfigError } from './config';
import { createContext, defaultPaths, packageVersion } from './context';
import { ExitCode } from './exitCodes';
import { inert } from './inertText';
import { runInteractive } from './repl';

async function main(argv: string[]): Promise<number> {
  let invocation: ReturnType<typeof parseCommandLine>;
  try {
    invocation = parseCommandLine(argv);
    if (invocation.kind === 'version') {
      process.stdout.write(inert(`repo-discuss ${packageVersion()}\n`));
      return ExitCode.Ok;
    }
    if (invocation.kind === 'help') {
      process.stdout.write(inert(`${helpText(invocation.command, defaultPaths(process.env))}\n`));
      return ExitCode.Ok;
    }
  } catch (err) {
    return usageFailure(err);
  }

  let built: ReturnType<typeof createContext>;
  try {
    built = createContext(invocation.options, process.env, packageVersion());
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(inert(`repo-discuss: ${err.message}\n`));
    return ExitCode.ServerFailed;
  }
  const { context, warnings } = built;
  for (const warning of warnings) context.err.line(context.err.style.yellow(`warning: ${warning}`));

  try {
    switch (invocation.command) {
      case 'interactive':
        return await runInteractive(context, invocation.options, invocation.positionals);
      case 'ask':
        return await runAsk(context, invocation.options, invocation.positionals);
      case 'list':
        return await runList(context, invocation.options);
      case 'promote':
        return await runPromote(context, invocation.options, invocation.positionals[0]);
      case 'export':
        return await runExport(context, invocation.options, invocation.positionals[0]);
      case 'delete':
        return await runDelete(context, invocation.options, invocation.positionals);
      case 'rename':
        return await runRename(context, invocation.options, invocation.positionals[0], invocation.positionals.slice(1));
    }
  } catch (err) {
    return usageFailure(err);
  }
}

function usageFailure(err: unknown): number {
  if (!(err instanceof UsageError)) throw err;
  const name = commandName(err.command);
  // The message quotes the command line, which may carry anything.
  process.stderr.write(inert(`${name}: ${err.message}\nRun '${name} --help' for usage.\n`));
  return ExitCode.Usage;
}

/** Exits once both streams have handed over what was written, so piped output is never cut short. */
function exit(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

// A reader that went away (`repo-discuss list | head -1`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(ExitCode.Ok);
});

main(process.argv.slice(2)).then(exit, (err: unknown) => {
  process.stderr.write(inert(`repo-discuss: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`));
  exit(ExitCode.ServerFailed);
});

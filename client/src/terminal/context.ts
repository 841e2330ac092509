import * as fs from 'node:fs';
import * as path from 'node:path';
import { DiscussErrorCode } from '../../../shared/protocol';
import { defaultStorageDir } from '../../../shared/storageDir';
import type { Options } from './args';
import { configFilePath, loadConfigFile, resolveSettings, type ResolvedSettings } from './config';
import { ExitCode } from './exitCodes';
import { term } from './inertText';
import { LineWriter, colourWanted, createStyle } from './render';
import { remedyLine } from './remedies';
import { Refusal, ServerGone, Session } from './session';
import { errorText } from '../../../shared/errorText';

/** What every command needs: settings, the two output streams, and a way to start the server. */
export interface Context {
  options: Options;
  settings: ResolvedSettings;
  out: LineWriter;
  err: LineWriter;
  env: NodeJS.ProcessEnv;
  verbose: boolean;
  version: string;
  startSession(): Promise<Session>;
}

/** Builds the context; throws ConfigError when the config file is unusable. */
export function createContext(options: Options, env: NodeJS.ProcessEnv, version: string): { context: Context; warnings: string[] } {
  const configPath = options.config ? path.resolve(options.config) : configFilePath(env);
  const { config, warnings } = loadConfigFile(configPath, process.platform, options.config !== undefined);
  const settings = resolveSettings(
    {
      baseUrl: options['base-url'],
      model: options.model,
      apiKey: options['api-key'],
      storageDir: options['storage-dir'],
      contextTokens: options['context-tokens'] === undefined ? undefined : Number(options['context-tokens']),
    },
    env,
    config,
    configPath,
  );
  if (options['api-key']) {
    warnings.push('--api-key puts the key in your shell history and lets other processes see it; prefer OPENAI_API_KEY or "apiKey" in the config file.');
  }
  const noColor = options['no-color'] === true;
  const out = new LineWriter(process.stdout, createStyle(colourWanted(process.stdout, env, noColor)));
  const err = new LineWriter(process.stderr, createStyle(colourWanted(process.stderr, env, noColor)));
  const verbose = options.verbose === true;
  const context: Context = {
    options,
    settings,
    out,
    err,
    env,
    verbose,
    version,
    startSession: () =>
      Session.start({
        initializationOptions: settings.initializationOptions,
        clientVersion: version,
        onLog: verbose ? (line) => err.line(err.style.dim(`server: ${line}`)) : undefined,
      }),
  };
  return { context, warnings };
}

/** The default places, for help texts. */
export function defaultPaths(env: NodeJS.ProcessEnv): { config: string; storage: string } {
  return { config: configFilePath(env), storage: defaultStorageDir(env) };
}

/** This package's version, from the package.json above this file (tsc output or a bundle). */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'repo-discuss' && pkg.version) return pkg.version;
    } catch {
      // No package.json here; keep climbing.
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

/** The exit code for a failure, and the message to print for it. */
export function failureExit(err: unknown): { code: number; message: string; refused: boolean } {
  if (err instanceof Refusal) {
    // A distillation that failed is the model failing, not the request being wrong; a storage failure is not a "no" either.
    if (err.code === DiscussErrorCode.ModelFailed) return { code: ExitCode.ModelFailed, message: err.message, refused: false };
    return { code: ExitCode.Refused, message: err.message, refused: err.code !== DiscussErrorCode.StorageFailed };
  }
  if (err instanceof ServerGone) return { code: ExitCode.ServerFailed, message: err.message, refused: false };
  return { code: ExitCode.ServerFailed, message: errorText(err), refused: false };
}

/** A failure in the terminal: the server's words, as is, marked "refused:" only when the server said no. */
export function printFailure(context: Context, err: unknown): number {
  const { code, message, refused } = failureExit(err);
  const { err: stderr } = context;
  const label = refused ? stderr.style.yellow(stderr.style.bold('refused:')) : stderr.style.red(stderr.style.bold('error:'));
  stderr.line(term`${label} ${message}`);
  const remedy = remedyLine(err instanceof Refusal ? err.remedy : undefined, context.settings);
  if (remedy) stderr.line(stderr.style.dim(remedy));
  return code;
}

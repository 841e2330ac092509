import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { InitializationOptions } from '../../../shared/protocol';

/** `config.json`: the terminal client's defaults, below flags and the environment. */
export interface ConfigFile {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  storageDir?: string;
  /** The model's context window in tokens, for a local server whose window the server cannot know (Ollama's default is small). */
  contextTokens?: number;
  /** Extra globs the model may not read, as the extension's `repoDiscuss.denyRead`. */
  denyRead?: string[];
}

/** What the command line said about the model and storage. */
export interface SettingFlags {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  storageDir?: string;
  contextTokens?: number;
}

/** `session`: changed in a discussion, with /endpoint. */
export type SettingSource = 'flag' | 'env' | 'config' | 'session';

export interface ResolvedSettings {
  initializationOptions: InitializationOptions;
  /** Where each model setting came from, so an error can say which one to fix. */
  sources: { baseUrl?: SettingSource; model?: SettingSource; apiKey?: SettingSource };
  configPath: string;
}

/** A config file that cannot be used; the message names the file and what to fix. */
export class ConfigError extends Error {}

/**
 * The platform's per-user config file. The data (discussions) lives in the
 * data folder the server picks; this is only the user's settings.
 */
export function configFilePath(env: NodeJS.ProcessEnv = process.env, platform = process.platform, home = os.homedir()): string {
  if (platform === 'win32') {
    return path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), 'repo-discuss', 'config.json');
  }
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'repo-discuss', 'config.json');
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(xdg, 'repo-discuss', 'config.json');
}

/**
 * Reads the config file; a missing default file is an empty config, but a
 * file named with --config (`required`) must exist: a typo in its name would
 * otherwise run with none of the settings it was meant to give. Warnings are
 * things worth telling the user that do not stop the run.
 */
export function loadConfigFile(file: string, platform = process.platform, required = false): { config: ConfigFile; warnings: string[] } {
  let raw: string;
  try {
    raw = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (required) throw new ConfigError(`The config file ${file} given with --config does not exist. Check its name, or leave --config out to use the default one.`);
      return { config: {}, warnings: [] };
    }
    throw new ConfigError(`Cannot read the config file ${file} (${(err as Error).message}). Fix its permissions, or remove it.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new ConfigError(`The config file ${file} is not valid JSON (${(err as Error).message}). Fix it, or remove it.`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`The config file ${file} must hold a JSON object like {"baseUrl": "http://localhost:11434/v1", "model": "qwen3"}.`);
  }
  const record = parsed as Record<string, unknown>;
  const config: ConfigFile = {};
  for (const key of ['baseUrl', 'model', 'apiKey', 'storageDir'] as const) {
    const value = record[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw new ConfigError(`In ${file}, "${key}" must be a string.`);
    if (value.trim()) config[key] = value.trim();
  }
  if (record.contextTokens !== undefined && record.contextTokens !== null) {
    const tokens = record.contextTokens;
    if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens <= 0) {
      throw new ConfigError(`In ${file}, "contextTokens" must be a whole number of tokens, e.g. 32768.`);
    }
    config.contextTokens = tokens;
  }
  if (record.denyRead !== undefined) {
    if (!Array.isArray(record.denyRead) || record.denyRead.some((g) => typeof g !== 'string')) {
      throw new ConfigError(`In ${file}, "denyRead" must be an array of glob strings.`);
    }
    config.denyRead = record.denyRead as string[];
  }
  const warnings: string[] = [];
  const known = new Set(['baseUrl', 'model', 'apiKey', 'storageDir', 'contextTokens', 'denyRead']);
  const unknown = Object.keys(record).filter((k) => !known.has(k));
  if (unknown.length) warnings.push(`${file}: ignoring unknown setting${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}.`);
  if (config.apiKey && platform !== 'win32') {
    try {
      // A key readable by other accounts on the machine is a key shared with them.
      if ((fs.statSync(file).mode & 0o077) !== 0) {
        warnings.push(`${file} holds an API key and other users can read it: run chmod 600 "${file}", or use OPENAI_API_KEY instead.`);
      }
    } catch {
      // It was just read; a stat failure here changes nothing worth reporting.
    }
  }
  return { config, warnings };
}

/**
 * Flags beat the environment, which beats the config file, field by field: a
 * config file naming a local endpoint still takes a key from OPENAI_API_KEY.
 */
export function resolveSettings(flags: SettingFlags, env: NodeJS.ProcessEnv, config: ConfigFile, configPath: string): ResolvedSettings {
  const sources: ResolvedSettings['sources'] = {};
  const pick = (key: 'baseUrl' | 'model' | 'apiKey', envName: string): string | undefined => {
    const fromFlag = flags[key]?.trim();
    // "auto" names no model: it clears a discussion's choice, it is not a default.
    if (fromFlag && !(key === 'model' && fromFlag === 'auto')) {
      sources[key] = 'flag';
      return fromFlag;
    }
    const fromEnv = env[envName]?.trim();
    if (fromEnv) {
      sources[key] = 'env';
      return fromEnv;
    }
    const fromConfig = config[key];
    if (fromConfig) {
      sources[key] = 'config';
      return fromConfig;
    }
    return undefined;
  };
  const baseUrl = pick('baseUrl', 'OPENAI_BASE_URL');
  const model = pick('model', 'OPENAI_MODEL');
  const apiKey = pick('apiKey', 'OPENAI_API_KEY');
  const storageDir = flags.storageDir?.trim() || config.storageDir;
  const contextTokens = flags.contextTokens ?? config.contextTokens;
  const initializationOptions: InitializationOptions = {
    // The server then leaves VS Code's commands out of its messages; remedies.ts words the fix.
    client: 'terminal',
    model: { baseUrl, model, apiKey, ...(contextTokens ? { contextTokens } : {}) },
    ...(storageDir ? { storageDir: path.resolve(expandHome(storageDir)) } : {}),
    ...(config.denyRead ? { denyRead: config.denyRead } : {}),
  };
  return { initializationOptions, sources, configPath };
}

/** `~/x` in a config file means the home folder, as it would in a shell. */
function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') || p.startsWith('~\\') ? path.join(os.homedir(), p.slice(1)) : p;
}

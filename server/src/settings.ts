import type { ConfigureRequest, InitializationOptions, ModelConfig, Untrusted } from '../../shared/protocol';
import type { ModelSettings } from './model/types';
import { DiscussError } from './core/errors';
import { denyReadSettingProblem } from './access/policy';

/**
 * What the client configured for the server: the endpoint and model, the
 * context window and the extra deny-read globs. Changed by `initialize` and
 * `discuss/configure`, read by the core through getters.
 */
export class ServerSettings {
  private model: ModelSettings;
  private denyRead: string[] = [];
  private contextTokens: number | undefined;

  /** Environment fallbacks (OPENAI_BASE_URL and friends) until a client says otherwise. */
  constructor(env: Record<string, string | undefined>) {
    this.model = {
      baseUrl: env.OPENAI_BASE_URL || undefined,
      apiKey: env.OPENAI_API_KEY || undefined,
      model: env.OPENAI_MODEL || undefined,
    };
  }

  readonly modelSettings = (): ModelSettings => this.model;
  readonly defaultModel = (): string | undefined => this.model.model;
  readonly denyReadGlobs = (): string[] => this.denyRead;
  readonly contextTokensSetting = (): number | undefined => this.contextTokens;

  /** From `initialize`: every field it names; deny rules it leaves out are cleared. */
  initialize(options: InitializationOptions): void {
    const invalid = invalidSettings(options);
    if (invalid) throw new DiscussError('InvalidParams', `initializationOptions: ${invalid}`);
    this.model = { ...mergeModel(this.model, options.model), audience: options.client === 'terminal' ? 'terminal' : undefined };
    this.contextTokens = positiveInt(options.model?.contextTokens) ?? this.contextTokens;
    this.denyRead = stringArray(options.denyRead);
  }

  /**
   * From `discuss/configure`: applied whole or not at all. It is checked
   * before anything changes, since a malformed field must never wipe a
   * setting (a deny rule silently dropped widens what is readable).
   */
  configure(update: Untrusted<ConfigureRequest.Params>): void {
    const invalid = invalidSettings(update);
    if (invalid) throw new DiscussError('InvalidParams', invalid);
    const model = update.model as ModelConfig | undefined;
    if (model) {
      this.model = mergeModel(this.model, model);
      if (model.contextTokens !== undefined) this.contextTokens = positiveInt(model.contextTokens);
    }
    if (update.denyRead) this.denyRead = stringArray(update.denyRead);
  }
}

/** Fields given replace the current ones; an empty string clears one. */
function mergeModel(current: ModelSettings, update: ModelConfig | undefined): ModelSettings {
  if (!update || typeof update !== 'object') return current;
  const next = { ...current };
  for (const key of ['baseUrl', 'apiKey', 'model', 'apiVersion'] as const) {
    const value = update[key];
    if (typeof value === 'string') next[key] = value.trim() === '' ? undefined : value.trim();
  }
  return next;
}

/** What is wrong with model settings or deny rules from a client, if anything. */
function invalidSettings(options: { model?: unknown; denyRead?: unknown; storageDir?: unknown }): string | undefined {
  if (options.model !== undefined && options.model !== null) {
    if (typeof options.model !== 'object' || Array.isArray(options.model)) return '"model" must be an object such as { "baseUrl": "…", "model": "…" }.';
    const model = options.model as Record<string, unknown>;
    for (const key of ['baseUrl', 'apiKey', 'model', 'apiVersion']) {
      if (model[key] !== undefined && model[key] !== null && typeof model[key] !== 'string') return `"model.${key}" must be a string.`;
    }
    if (model.contextTokens !== undefined && model.contextTokens !== null && typeof model.contextTokens !== 'number') {
      return '"model.contextTokens" must be a number of tokens.';
    }
  }
  if (options.denyRead !== undefined && options.denyRead !== null) {
    if (!Array.isArray(options.denyRead) || options.denyRead.some((g) => typeof g !== 'string')) {
      return '"denyRead" must be an array of glob strings, e.g. ["secrets/**"].';
    }
    // Checked here too, not only at start: a glob over the limits is refused before it replaces a working list.
    const problem = denyReadSettingProblem(stringArray(options.denyRead));
    if (problem) return `${problem}.`;
  }
  if (options.storageDir !== undefined && options.storageDir !== null && typeof options.storageDir !== 'string') {
    return '"storageDir" must be a folder path.';
  }
  return undefined;
}

function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : [];
}

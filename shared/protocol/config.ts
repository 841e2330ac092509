import type { ClientKind } from './errors';

/** Where a model lives and which one to use. */
export interface ModelConfig {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  /** Azure OpenAI `api-version`; also detected from the base URL. */
  apiVersion?: string;
  /** The model's context window in tokens; absent or 0 means a default for the model. */
  contextTokens?: number;
}

/** `initialize` params' `initializationOptions`. */
export interface InitializationOptions {
  /** Where discussions are saved; defaults to the platform's user data folder. */
  storageDir?: string;
  model?: ModelConfig;
  /** Extra globs the model may not read, on top of the built-in secrets rule. */
  denyRead?: string[];
  /** Path of a ripgrep binary; `null` turns ripgrep off; absent means look on PATH. */
  ripgrepPath?: string | null;
  /**
   * The client runs the code actions' commands itself (the VS Code extension
   * does). Otherwise the server offers them through `workspace/executeCommand`.
   */
  clientCommands?: boolean;
  /**
   * The client answers `discuss/ideQuery` from its own language providers
   * (the VS Code extension does); the symbol tools then ask it first.
   */
  ideQueries?: boolean;
  /**
   * The client runs `discuss/lmRequest` with VS Code's language models (the
   * VS Code extension does); model ids starting with `vscode-lm:` then work.
   */
  languageModels?: boolean;
  /**
   * Who reads the messages. A terminal client words remedies itself (from an
   * error's `remedy`), so the server leaves out the VS Code commands it would
   * otherwise name; absent means VS Code.
   */
  client?: ClientKind;
}

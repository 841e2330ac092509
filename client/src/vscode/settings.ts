import * as vscode from 'vscode';
import type { InitializationOptions, ModelConfig } from '../../../shared/protocol';

export const SECTION = 'repoDiscuss';
const API_KEY_SECRET = 'repoDiscuss.apiKey';

export type HandoffTarget = 'chat' | 'markdown' | 'clipboard' | 'command';

/** The user's settings, read fresh each time (they change at run time). */
export function readSettings() {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    baseUrl: config.get<string>('endpoint.baseUrl', '').trim(),
    model: config.get<string>('model', '').trim(),
    denyRead: config.get<string[]>('denyRead', []),
    storageDir: config.get<string>('storageDir', '').trim(),
    useRipgrep: config.get<boolean>('search.useRipgrep', true),
    handoffTarget: config.get<HandoffTarget>('handoff.target', 'chat'),
    handoffCommand: config.get<string>('handoff.command', '').trim(),
    contextTokens: config.get<number>('contextTokens', 0),
    apiVersion: config.get<string>('endpoint.apiVersion', '').trim(),
  };
}

/** The key lives in SecretStorage, never in settings.json. */
export async function readApiKey(secrets: vscode.SecretStorage): Promise<string | undefined> {
  return (await secrets.get(API_KEY_SECRET)) || undefined;
}

export async function storeApiKey(secrets: vscode.SecretStorage, key: string): Promise<void> {
  if (key) await secrets.store(API_KEY_SECRET, key);
  else await secrets.delete(API_KEY_SECRET);
}

export function onApiKeyChange(secrets: vscode.SecretStorage, listener: () => void): vscode.Disposable {
  return secrets.onDidChange((e) => {
    if (e.key === API_KEY_SECRET) listener();
  });
}

export function modelConfig(apiKey: string | undefined): ModelConfig {
  const s = readSettings();
  // Empty strings clear a value on the server, so a removed setting takes effect.
  return { baseUrl: s.baseUrl, model: s.model, apiKey: apiKey ?? '', apiVersion: s.apiVersion, contextTokens: s.contextTokens };
}

export function initializationOptions(apiKey: string | undefined, ripgrepPath: string | null): InitializationOptions {
  const s = readSettings();
  return {
    // Left to the server's default (shared with the terminal client) unless set.
    ...(s.storageDir ? { storageDir: s.storageDir } : {}),
    model: {
      baseUrl: s.baseUrl || undefined,
      model: s.model || undefined,
      apiKey,
      apiVersion: s.apiVersion || undefined,
      contextTokens: s.contextTokens || undefined,
    },
    denyRead: s.denyRead,
    // Without a bundled binary, leave the key out so the server looks on PATH; null turns ripgrep off.
    ...(s.useRipgrep ? (ripgrepPath ? { ripgrepPath } : {}) : { ripgrepPath: null }),
    // The extension registers the code actions' commands itself.
    clientCommands: true,
    // The extension answers discuss/ideQuery from VS Code's language providers (ideQueries.ts).
    ideQueries: true,
    // The extension runs discuss/lmRequest with VS Code's language models (languageModels.ts).
    languageModels: true,
  };
}

/** Endpoint presets offered by "Select endpoint". */
export const ENDPOINT_PRESETS: Array<{ label: string; baseUrl: string; detail: string }> = [
  { label: 'OpenAI', baseUrl: 'https://api.openai.com/v1', detail: 'Needs an API key' },
  { label: 'Ollama', baseUrl: 'http://localhost:11434/v1', detail: 'Local; no key needed' },
  { label: 'LM Studio', baseUrl: 'http://localhost:1234/v1', detail: 'Local; no key needed' },
  { label: 'llama.cpp server', baseUrl: 'http://localhost:8080/v1', detail: 'Local; no key needed' },
  { label: 'vLLM', baseUrl: 'http://localhost:8000/v1', detail: 'Local or self-hosted' },
];

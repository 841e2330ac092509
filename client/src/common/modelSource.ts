import { VSCODE_MODEL_PREFIX, type LmModelInfo } from '../../../shared/protocol';

/**
 * The model a new discussion starts with: the one the user chose; else, when
 * no endpoint is configured at all (no base URL, no key) and VS Code offers
 * language models, the first of those, so a person with Copilot (or another
 * provider) starts without a key; else the endpoint's default (undefined).
 */
export function defaultModelFor(configured: { model: string; baseUrl: string; hasApiKey: boolean }, vscodeModels: readonly LmModelInfo[]): string | undefined {
  if (configured.model) return configured.model;
  if (configured.baseUrl || configured.hasApiKey) return undefined;
  const first = vscodeModels[0];
  return first ? VSCODE_MODEL_PREFIX + first.id : undefined;
}

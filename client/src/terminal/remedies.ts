import type { RemedyCode } from '../../../shared/protocol';
import type { ResolvedSettings } from './config';

/**
 * The fix for a failure in this client's terms: its flags, the environment
 * and its config file, never a VS Code command. The server sends a terminal
 * client the problem alone, with a remedy code for this line.
 */
export function remedyLine(remedy: RemedyCode | undefined, settings: Pick<ResolvedSettings, 'sources' | 'configPath'>): string | undefined {
  const { configPath } = settings;
  const from = (key: 'baseUrl' | 'model' | 'apiKey'): string => {
    const source = settings.sources[key];
    if (source === 'flag') return ' (the current one came from a flag)';
    if (source === 'env') return ` (the current one came from ${ENV_NAMES[key]})`;
    if (source === 'config') return ` (the current one came from ${configPath})`;
    if (source === 'session') return ' (the current one came from /endpoint)';
    return '';
  };
  switch (remedy) {
    case 'api_key':
      return `To fix: export OPENAI_API_KEY=<key>, or set "apiKey" in ${configPath}${from('apiKey')}.`;
    case 'model':
      return `To fix: pass --model NAME (or /model NAME in a discussion; /models lists them), set OPENAI_MODEL, or set "model" in ${configPath}${from('model')}.`;
    case 'tool_model':
      return `To fix: pick a model that can call tools with --model NAME (or /model NAME in a discussion), OPENAI_MODEL, or "model" in ${configPath}${from('model')}.`;
    case 'base_url':
      return `To fix: pass --base-url URL (or /endpoint URL in a discussion), set OPENAI_BASE_URL, or set "baseUrl" in ${configPath}${from('baseUrl')}.`;
    case 'default_endpoint':
      return `To fix: name your endpoint with --base-url URL or export OPENAI_BASE_URL=URL (Ollama: http://localhost:11434/v1), or, for OpenAI itself, export OPENAI_API_KEY=<key>; "baseUrl" and "apiKey" in ${configPath} work too.`;
    case undefined:
      return undefined;
  }
}

const ENV_NAMES = { baseUrl: 'OPENAI_BASE_URL', model: 'OPENAI_MODEL', apiKey: 'OPENAI_API_KEY' } as const;

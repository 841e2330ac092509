import { ConfigureRequest } from '../../../shared/protocol';
import type { ResolvedSettings } from './config';
import type { Session } from './session';

/** OpenAI's, which the server uses when no base URL is set. */
const DEFAULT_ENDPOINT = 'https://api.openai.com/v1';

/**
 * `/endpoint [URL [$VARIABLE]]`: shows the endpoint, or moves the session to
 * another one. The API key is never typed in (it would sit in the terminal's
 * scrollback): it is read from the environment variable named. Without one,
 * the current key goes along only to the same origin, so a key meant for one
 * provider is never sent to another's server.
 */
export async function switchEndpoint(session: Session, settings: ResolvedSettings, env: NodeJS.ProcessEnv, args: string[]): Promise<string[]> {
  const model = (settings.initializationOptions.model ??= {});
  const current = model.baseUrl ?? DEFAULT_ENDPOINT;
  if (args.length === 0) {
    const where = model.baseUrl ? current : `OpenAI's default, ${DEFAULT_ENDPOINT}`;
    return [`Endpoint: ${where}${model.apiKey ? ', with an API key' : ', no API key'}. /endpoint URL [$KEY_VARIABLE] changes it.`];
  }
  const [target, keyVariable] = args;
  const url = parseHttpUrl(target);
  if (!url) return [`Not an http(s) URL: ${target} — e.g. /endpoint http://localhost:11434/v1`];
  let apiKey: string | undefined;
  let keyNote: string;
  if (keyVariable) {
    const name = keyVariable.replace(/^\$/, '');
    apiKey = env[name]?.trim();
    if (!apiKey) return [`${name} is not set in this shell's environment; the endpoint stays ${current}.`];
    keyNote = `with the key in ${name}`;
  } else if (sameOrigin(url, current)) {
    apiKey = model.apiKey;
    keyNote = model.apiKey ? 'with the same API key' : 'no API key';
  } else {
    apiKey = undefined;
    keyNote = model.apiKey ? 'no API key: the current one is not sent to another server (/endpoint URL $VARIABLE sends one)' : 'no API key';
  }
  const baseUrl = target.trim();
  // An empty string clears the key on the server; leaving it out would keep the old one.
  await session.request(ConfigureRequest.method, { model: { baseUrl, apiKey: apiKey ?? '' } });
  model.baseUrl = baseUrl;
  model.apiKey = apiKey;
  settings.sources.baseUrl = 'session';
  settings.sources.apiKey = apiKey ? 'session' : undefined;
  return [`Endpoint: ${baseUrl}, ${keyNote}. The discussion continues there; /models lists its models, /model NAME picks one.`];
}

function parseHttpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function sameOrigin(url: URL, other: string): boolean {
  try {
    return url.origin === new URL(other).origin;
  } catch {
    return false;
  }
}

/**
 * Where requests go: the model settings read into an Endpoint (base URL, key,
 * model, extra query, Azure OpenAI's dialect), the base URL as shown to
 * people, and the model ids in a /models answer.
 */
import type { ClientKind } from '../../../../shared/protocol';
import { ModelError, ModelSettings } from '../types';

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** A GA `api-version` of Azure OpenAI's data-plane API (tools, streamed usage); used when an Azure host is given without one. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** Azure OpenAI resource hosts (classic, and AI Services / Foundry). */
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i;

/** Settings cleaned up once per call, so blanks mean "unset" everywhere. */
export interface Endpoint {
  /** Without query string, fragment or trailing slash. */
  baseUrl: string;
  /** Identity of the endpoint for what is remembered about it (base URL, API version, query). */
  id: string;
  apiKey: string | undefined;
  model: string | undefined;
  /** Query parameters from the base URL other than `api-version`, sent with every request. */
  query: Record<string, string>;
  /** Present when the endpoint speaks Azure OpenAI's deployment API. */
  azure?: { apiVersion: string; deployment?: string };
  /** No base URL was set, so this is OpenAI's: a failure then says so rather than blaming a choice nobody made. */
  defaulted: boolean;
  /** Who reads failure messages (see ModelSettings.audience). */
  audience?: ClientKind;
}

/**
 * Reads the settings into an Endpoint. Azure OpenAI is recognised by its host,
 * an `api-version` in the base URL, or `apiVersion` in the settings.
 */
export function resolveEndpoint(settings: ModelSettings): Endpoint {
  const raw = settings.baseUrl?.trim() || DEFAULT_BASE_URL;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const problem = `The model base URL '${raw.replace(/\/+$/, '')}' is not an http(s) URL. Set it to the endpoint's OpenAI-compatible API, e.g. http://localhost:11434/v1`;
    throw new ModelError(
      'not_configured',
      settings.audience === 'terminal' ? `${problem}.` : `${problem} (OPENAI_BASE_URL for the server).`,
      undefined,
      'base_url',
    );
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const versionInUrl = query['api-version']?.trim() || undefined;
  delete query['api-version'];
  // The user's own spelling is kept (not URL-normalised), minus query and fragment. People paste
  // the full request URL the Azure portal or a server's docs show, so a trailing /chat/completions goes too.
  let baseUrl = raw.split(/[?#]/)[0].replace(/\/+$/, '').replace(/\/chat\/completions$/i, '');
  const path = url.pathname.replace(/\/+$/, '').replace(/\/chat\/completions$/i, '');
  const azureHost = AZURE_HOST.test(url.hostname);
  // Azure's newer /openai/v1 API is plain OpenAI (Bearer key, no deployments); only the classic one needs the dialect.
  const v1Api = /\/openai\/v1$/i.test(path);
  const apiVersion =
    settings.apiVersion?.trim() || versionInUrl || (azureHost && !v1Api ? DEFAULT_AZURE_API_VERSION : undefined);

  let azure: Endpoint['azure'];
  if (apiVersion && v1Api) {
    query['api-version'] = apiVersion;
  } else if (apiVersion) {
    // A bare resource URL gets the /openai prefix every Azure data-plane path has.
    if (azureHost && path === '') baseUrl = `${baseUrl}/openai`;
    const deployment = /\/deployments\/([^/]+)/i.exec(path)?.[1];
    azure = { apiVersion, ...(deployment ? { deployment: safeDecode(deployment) } : {}) };
  }
  return {
    baseUrl,
    id: JSON.stringify([baseUrl, azure?.apiVersion ?? null, query]),
    apiKey: settings.apiKey?.trim() || undefined,
    model: settings.model?.trim() || undefined,
    query,
    ...(azure ? { azure } : {}),
    defaulted: !settings.baseUrl?.trim(),
    ...(settings.audience ? { audience: settings.audience } : {}),
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Ids from a /models answer: OpenAI's `{data: [{id}]}`, or the `models` list or bare array some servers send. */
export function modelIdsFrom(body: unknown): string[] | undefined {
  const list = Array.isArray(body)
    ? body
    : typeof body === 'object' && body !== null
      ? ((body as { data?: unknown }).data ?? (body as { models?: unknown }).models)
      : undefined;
  if (!Array.isArray(list)) return undefined;
  const ids: string[] = [];
  for (const item of list) {
    const id =
      typeof item === 'string'
        ? item
        : typeof item === 'object' && item !== null
          ? [(item as { id?: unknown }).id, (item as { name?: unknown }).name, (item as { model?: unknown }).model].find(
              (value): value is string => typeof value === 'string',
            )
          : undefined;
    if (id) ids.push(id);
  }
  return ids;
}

/** The base URL as shown to people: no credentials or query string. */
export function displayUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return baseUrl;
  }
}

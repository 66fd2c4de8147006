/**
 * Base URLs: checked when a provider is created, so a typo fails at once with the fix instead of
 * as a connection error on the first request; and described, with where they came from, in the
 * messages of failures that depend on them.
 */
import { ConfigError } from '../core/index.js'

/** Where requests go and where that address was chosen, for failure messages. */
export type Endpoint = {
  /** The base URL (`https://api.deepseek.com`, `http://localhost:11434/v1`). */
  readonly url: string
  /** What chose it: a file path, a variable (`OPENAI_BASE_URL`), `the baseURL option`, … */
  readonly source: string
}

/** Whether `url` is an absolute http(s) URL. */
export function isHttpUrl(url: string): boolean {
  if (!URL.canParse(url)) return false
  const protocol = new URL(url).protocol
  return protocol === 'http:' || protocol === 'https:'
}

/** Throws `ConfigError` naming `who` unless `url` is undefined or an absolute http(s) URL. */
export function checkBaseURL(who: string, url: string | undefined, example: string): void {
  if (url === undefined || isHttpUrl(url)) return
  throw new ConfigError(
    `${who}: baseURL ${JSON.stringify(url)} is not an http(s) URL; give the full address, e.g. ${example}`,
  )
}

/**
 * The endpoint an adapter talks to: `baseURL` (described by `source`, default "the baseURL
 * option"), else the SDK's variable when set, else the SDK's default address.
 */
export function endpointOf(
  options: { readonly baseURL?: string | undefined; readonly baseURLSource?: string | undefined },
  variable: string,
  fallback: string,
): Endpoint {
  if (options.baseURL !== undefined)
    return { url: options.baseURL, source: options.baseURLSource ?? 'the baseURL option' }
  const fromEnv = process.env[variable]
  if (fromEnv !== undefined && fromEnv !== '') return { url: fromEnv, source: variable }
  return { url: fallback, source: options.baseURLSource ?? 'the default' }
}

/** `http://host/v1 (base URL from OPENAI_BASE_URL)` */
export function describeEndpoint(endpoint: Endpoint): string {
  return `${endpoint.url} (base URL from ${endpoint.source})`
}

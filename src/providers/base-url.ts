/**
 * Checking a base URL when a provider is created, so a typo fails at once with the fix instead
 * of as a connection error on the first request.
 */
import { ConfigError } from '../core/index.js'

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

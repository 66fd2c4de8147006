/**
 * Store URLs: `sqlite:<path>`, `jsonl:<dir>`, `memory:`. Paths may start with `~/` (the home
 * directory). Without a URL the store is `sqlite:<RUDDER_HOME>/sessions.db`, where
 * `RUDDER_HOME` defaults to `~/.rudder`.
 */
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { ConfigError } from '../core/index.js'

export type StoreLocation =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'jsonl'; readonly directory: string }
  | { readonly kind: 'memory' }

type Env = Readonly<Record<string, string | undefined>>

/** `RUDDER_HOME`, or `~/.rudder`. */
export function rudderHome(env: Env): string {
  const configured = env.RUDDER_HOME
  if (configured !== undefined && configured !== '') return resolve(expandHome(configured, env))
  return join(home(env), '.rudder')
}

/** The default store URL: `sqlite:<RUDDER_HOME>/sessions.db`. */
export function defaultStoreUrl(env: Env): string {
  return `sqlite:${join(rudderHome(env), 'sessions.db')}`
}

function home(env: Env): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir()
}

function expandHome(path: string, env: Env): string {
  if (path === '~') return home(env)
  if (path.startsWith('~/')) return join(home(env), path.slice(2))
  return path
}

const FORMS = '`sqlite:<path>`, `jsonl:<directory>` or `memory:`'

/** Parses a store URL. Throws `ConfigError` naming the URL and the accepted forms. */
export function parseStoreUrl(url: string, env: Env): StoreLocation {
  const colon = url.indexOf(':')
  const scheme = colon < 0 ? '' : url.slice(0, colon)
  // `sqlite:///abs` and `sqlite:/abs` mean the same file.
  const rest = url.slice(colon + 1).replace(/^\/\/(?=\/)/, '')
  const path = () => {
    if (rest === '')
      throw new ConfigError(`store URL ${JSON.stringify(url)} has no path; use ${FORMS}`)
    const expanded = expandHome(rest, env)
    return isAbsolute(expanded) ? expanded : resolve(expanded)
  }
  switch (scheme) {
    case 'sqlite':
      return { kind: 'sqlite', path: path() }
    case 'jsonl':
      return { kind: 'jsonl', directory: path() }
    case 'memory':
      if (rest !== '')
        throw new ConfigError(
          `store URL ${JSON.stringify(url)}: a memory store takes no path; use ${FORMS}`,
        )
      return { kind: 'memory' }
    case 'postgres':
    case 'postgresql':
      throw new ConfigError(
        `store URL ${JSON.stringify(url)}: the PostgreSQL store is not available in this build; use ${FORMS}`,
      )
    default:
      throw new ConfigError(
        `store URL ${JSON.stringify(url)} is not one rudder knows; use ${FORMS}`,
      )
  }
}

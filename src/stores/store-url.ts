/**
 * Store URLs: `sqlite:<path>`, `jsonl:<dir>`, `memory:`, `postgres://user@host:port/db`. Paths
 * may start with `~/` (the home directory). Without a URL the store is `RUDDER_STORE`, else
 * `sqlite:<RUDDER_HOME>/sessions.db`, where `RUDDER_HOME` defaults to `~/.rudder`.
 */
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { ConfigError } from '../core/index.js'

export type StoreLocation =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'jsonl'; readonly directory: string }
  | { readonly kind: 'memory' }
  | PostgresLocation

/** A PostgreSQL database, with the options rudder reads from the URL's query. */
export type PostgresLocation = {
  readonly kind: 'postgres'
  /** The URL handed to the driver (rudder's own query parameters removed). */
  readonly connectionString: string
  /** The URL as shown to people: the password replaced by `***`. */
  readonly display: string
  readonly host: string
  readonly database: string
  /** The PostgreSQL schema holding rudder's tables (`?schema=`, default `rudder`). */
  readonly schema: string
  /** Connections in the pool (`?pool=`, default 10). */
  readonly poolSize: number
  /** Longest time one statement may run, in ms (`?statement_timeout=`, default 30000). */
  readonly statementTimeoutMs: number
}

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

const FORMS =
  '`sqlite:<path>`, `jsonl:<directory>`, `postgres://user@host:port/database` or `memory:`'

/**
 * The store URL to use: the `--store` flag, else `RUDDER_STORE`, else the config's `store`,
 * else the default (`sqlite:<RUDDER_HOME>/sessions.db`). An empty value counts as unset.
 */
export function chooseStoreUrl(
  flag: string | undefined,
  env: Env,
  configured: string | undefined,
): string {
  for (const candidate of [flag, env.RUDDER_STORE, configured])
    if (candidate !== undefined && candidate !== '') return candidate
  return defaultStoreUrl(env)
}

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
      return parsePostgresUrl(url)
    default:
      throw new ConfigError(
        `store URL ${JSON.stringify(url)} is not one rudder knows; use ${FORMS}`,
      )
  }
}

/** Replaces the password of a URL with `***` (for messages: a password is never printed). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@')
}

function parsePostgresUrl(url: string): PostgresLocation {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new ConfigError(
      `store URL ${JSON.stringify(redactUrl(url))} is not a valid URL; write it as postgres://user@host:port/database`,
    )
  }
  const display = redactUrl(url)
  const number = (name: string, fallback: number, min: number): number => {
    const raw = parsed.searchParams.get(name)
    parsed.searchParams.delete(name)
    if (raw === null) return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min)
      throw new ConfigError(
        `store URL ${JSON.stringify(display)}: ${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`,
      )
    return value
  }
  const schema = parsed.searchParams.get('schema') ?? 'rudder'
  parsed.searchParams.delete('schema')
  // The schema name is put into SQL as an identifier, so only plain names are accepted.
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new ConfigError(
      `store URL ${JSON.stringify(display)}: schema ${JSON.stringify(schema)} must be lower-case letters, digits and _ (starting with a letter or _)`,
    )
  const poolSize = number('pool', 10, 1)
  const statementTimeoutMs = number('statement_timeout', 30_000, 0)
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres'
  return {
    kind: 'postgres',
    connectionString: parsed.toString(),
    display,
    host: `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`,
    database,
    schema,
    poolSize,
    statementTimeoutMs,
  }
}

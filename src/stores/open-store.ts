/**
 * `openStore(url)`: the one entry to stores. Picks the backend for the URL and wraps it in the
 * shared store implementation.
 */
import { assertNever } from '../core/index.js'
import type { Backend } from './backend.js'
import { createSessionStore } from './session-store.js'
import type { SessionStore, StoreOptions } from './store.js'
import { chooseStoreUrl, parseStoreUrl } from './store-url.js'

/**
 * Opens the store at `url` (default: `RUDDER_STORE`, else
 * `sqlite:<RUDDER_HOME or ~/.rudder>/sessions.db`),
 * creating its file or directory if needed. Throws `ConfigError` for a URL it does not know,
 * `StoreError` if the location cannot be opened, `FORMAT_TOO_NEW` for a newer database.
 * The caller owns the store and closes it.
 */
export async function openStore(url?: string, options: StoreOptions = {}): Promise<SessionStore> {
  const env = options.env ?? process.env
  const location = parseStoreUrl(url ?? chooseStoreUrl(undefined, env, undefined), env)
  let backend: Backend
  switch (location.kind) {
    case 'sqlite':
      backend = (await import('./sqlite/sqlite-backend.js')).createSqliteBackend(
        location.path,
        options.counters,
      )
      break
    case 'jsonl':
      backend = await (await import('./jsonl/jsonl-backend.js')).createJsonlBackend(
        location.directory,
        options.counters,
      )
      break
    case 'memory':
      backend = (await import('./memory/memory-backend.js')).createMemoryBackend()
      break
    case 'postgres':
      backend = await (await import('./postgres/postgres-backend.js')).createPostgresBackend(
        location,
        {
          counters: options.counters,
          leaseTtlMs: options.leaseTtlMs,
          hostName: options.hostName,
        },
      )
      break
    default:
      return assertNever(location, 'store location')
  }
  return createSessionStore(backend, options)
}

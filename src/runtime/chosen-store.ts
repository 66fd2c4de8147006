/**
 * Opening the store a person chose (`--store`, then `RUDDER_STORE`, then config, then the
 * default; docs/decisions/0062). A store that cannot be opened at all (a path that is not a
 * directory, a read-only location, a server that does not answer) is a setup problem the person
 * fixes, so it is a `ConfigError` (exit 2 in the CLI) that keeps the store's own message: what,
 * where and how to fix. Failures later, while a run writes, stay `StoreError`s.
 */
import { ConfigError, RudderError } from '../core/errors.js'
import { chooseStoreUrl, openStore } from '../stores/index.js'
import type { SessionStore } from '../stores/store.js'

export async function openChosenStore(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  configured: string | undefined,
): Promise<SessionStore> {
  try {
    return await openStore(chooseStoreUrl(flag, env, configured), { env })
  } catch (error) {
    if (error instanceof RudderError && error.code === 'STORE')
      throw new ConfigError(error.message, { cause: error })
    throw error
  }
}

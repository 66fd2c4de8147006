/**
 * Errors every backend raises the same way.
 */
import { RudderError, StoreError } from '../core/index.js'

/** `SESSION_NOT_FOUND` naming the session and the store. */
export function sessionNotFound(id: string, url: string): RudderError {
  return new RudderError(
    'SESSION_NOT_FOUND',
    `no session ${id} in ${url}; \`rudder sessions list\` shows the sessions there`,
  )
}

/** `INVALID_INPUT` for creating a session whose id is taken. */
export function sessionExists(id: string, url: string): RudderError {
  return new RudderError(
    'INVALID_INPUT',
    `a session ${id} already exists in ${url}; import it into another store or remove it first`,
  )
}

/** Wraps an I/O failure in a `StoreError` saying what was being done, unless it is ours. */
export function storeFailure(what: string, error: unknown): Error {
  if (error instanceof RudderError) return error
  return new StoreError(`${what}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  })
}

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

/**
 * Wraps an I/O failure in a `StoreError` saying what was being done and, for the failures a
 * user can fix (a full disk, a read-only file system, permissions), how; unless it is ours.
 */
export function storeFailure(what: string, error: unknown): Error {
  if (error instanceof RudderError) return error
  const failure = error as NodeJS.ErrnoException | undefined
  // A recursive mkdir through a path whose component is a file reports EEXIST.
  const code = failure?.code === 'EEXIST' && failure.syscall === 'mkdir' ? 'ENOTDIR' : failure?.code
  const fix = fixFor(code)
  return new StoreError(
    `${what}: ${error instanceof Error ? error.message : String(error)}${fix ? `; ${fix}` : ''}`,
    { cause: error },
  )
}

/** What to do about an operating-system error code, when there is something to do. */
export function fixFor(code: string | undefined): string | undefined {
  // SQLite names its own: SQLITE_FULL, SQLITE_READONLY_* and SQLITE_CANTOPEN_*.
  if (code?.startsWith('SQLITE_READONLY')) return fixFor('EROFS')
  if (code?.startsWith('SQLITE_CANTOPEN')) return fixFor('EACCES')
  switch (code) {
    case 'SQLITE_FULL':
    case 'ENOSPC':
      return 'the disk is full: free space on it, then try again'
    case 'EDQUOT':
      return 'the disk quota is used up: free space or raise the quota, then try again'
    case 'EROFS':
      return 'the file system is read-only: remount it read-write, or choose a store on a writable disk (--store or RUDDER_STORE)'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied: make the store directory writable by this user, or choose another store (--store or RUDDER_STORE)'
    case 'ENOTDIR':
      return 'a file is in the way of a store directory: move it, or choose another store'
    default:
      return undefined
  }
}

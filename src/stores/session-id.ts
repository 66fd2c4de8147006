/**
 * Session ids are opaque, but they name files and rows, so a store accepts only ids that are
 * safe as a file name on every platform.
 */
import { RudderError } from '../core/index.js'

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** Throws `INVALID_INPUT` for an id a store cannot keep (path separators, dots first, too long). */
export function checkSessionId(id: string): void {
  if (typeof id !== 'string' || !SESSION_ID.test(id))
    throw new RudderError(
      'INVALID_INPUT',
      `${JSON.stringify(id)} is not a session id: ids are 1–128 letters, digits, '.', '_' or '-', starting with a letter or digit (see \`rudder sessions list\`)`,
    )
}

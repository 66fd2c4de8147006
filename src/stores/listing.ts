/**
 * Listing order and keyset cursors, shared by every backend: newest write first (`updatedAt`
 * descending, then id descending), and a cursor that names the last row seen. A session
 * written to during paging moves to the front and is not repeated on later pages.
 */
import { RudderError, type SessionHeader } from '../core/index.js'
import type { ListOptions, SessionListing } from './store.js'

/** The default page size of `list`. */
export const DEFAULT_LIST_LIMIT = 50

export type ListKey = { readonly updatedAt: number; readonly id: string }

export function encodeCursor(key: ListKey): string {
  return Buffer.from(JSON.stringify([key.updatedAt, key.id])).toString('base64url')
}

/** Throws `INVALID_INPUT` for a cursor that `list` did not hand out. */
export function decodeCursor(cursor: string): ListKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'number' &&
      typeof value[1] === 'string'
    )
      return { updatedAt: value[0], id: value[1] }
  } catch {
    // Falls through to the error below, which says what a cursor is.
  }
  throw new RudderError(
    'INVALID_INPUT',
    `list cursor ${JSON.stringify(cursor)} is not one that list() returned; pass the \`cursor\` of the last row of the previous page`,
  )
}

/** Whether `a` sorts before `b` (newer first). */
export function isBefore(a: ListKey, b: ListKey): boolean {
  return a.updatedAt !== b.updatedAt ? a.updatedAt > b.updatedAt : a.id > b.id
}

/** A listing row from its parts. */
export function listingOf(
  header: SessionHeader,
  eventCount: number,
  updatedAt: number,
): SessionListing {
  return { ...header, eventCount, updatedAt, cursor: encodeCursor({ updatedAt, id: header.id }) }
}

/** Filters, orders and pages rows that a backend gathered from its metadata. */
export function page(
  rows: readonly SessionListing[],
  options: Required<Pick<ListOptions, 'limit'>> & ListOptions,
): SessionListing[] {
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor)
  return rows
    .filter((row) => options.cwd === undefined || row.cwd === options.cwd)
    .filter((row) => after === undefined || isBefore(after, row))
    .sort((a, b) => (isBefore(a, b) ? -1 : 1))
    .slice(0, options.limit)
}

/**
 * Session ids as people type them: any unambiguous prefix of an id names that session, as git
 * takes a short hash. Resolved from the store's listing (metadata only, no log is read).
 */
import { RudderError } from '../core/index.js'
import type { SessionStore } from '../stores/store.js'

const FULL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Rows read per page of the listing while looking for matches. */
const PAGE = 500

/**
 * The full id `text` names in `store`: itself when a session has exactly that id, else the one
 * id starting with it. Throws `SESSION_NOT_FOUND` when none does, and `INVALID_INPUT` listing
 * the candidates when several do.
 */
export async function resolveSessionId(store: SessionStore, text: string): Promise<string> {
  // A whole UUID is no prefix of another: skip the listing (resume stays flat in store size).
  if (FULL_UUID.test(text)) return text
  const matches: string[] = []
  let cursor: string | undefined
  for (;;) {
    const rows = await store.list({ limit: PAGE, ...(cursor === undefined ? {} : { cursor }) })
    for (const row of rows) {
      if (row.id === text) return text
      if (row.id.startsWith(text)) matches.push(row.id)
    }
    if (rows.length < PAGE) break
    cursor = rows.at(-1)!.cursor
  }
  if (matches.length === 1) return matches[0]!
  if (matches.length === 0)
    throw new RudderError(
      'SESSION_NOT_FOUND',
      `no session in ${store.url} has an id starting with ${JSON.stringify(text)}; rudder sessions list --all shows them`,
    )
  const shown = matches.slice(0, 10).join(', ')
  throw new RudderError(
    'INVALID_INPUT',
    `${JSON.stringify(text)} is the start of ${matches.length} session ids (${shown}${matches.length > 10 ? ', …' : ''}); type more of the id`,
  )
}

/**
 * A SQLite store whose search table cannot be loaded (its shadow table gone, as a bad copy or
 * a disk fault leaves it) is reported as damage with what to do, never as a raw SqliteError
 * (issue 9 item 15).
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { LogCorruptError, openStore } from '../../src/index.js'
import { turnEnd, turnStart, user } from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { tempDirectory } from './support/stores.js'

describe('a SQLite store with a broken search table', () => {
  it('refuses to open with LogCorruptError naming the file and the fix', async () => {
    const path = join(tempDirectory(), 'sessions.db')
    const store = await openStore(`sqlite:${path}`)
    const session = await store.create()
    appendAll(session, [turnStart(1), user('hello world'), turnEnd(1)])
    await session.close()
    await store.close()
    const db = new Database(path)
    // The way a damaged file looks to SQLite: the schema names a table that is not there.
    db.unsafeMode(true)
    db.exec(
      "PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name = 'message_fts_config'",
    )
    db.close()
    const reopened = openStore(`sqlite:${path}`)
    await expect(reopened).rejects.toBeInstanceOf(LogCorruptError)
    await expect(reopened).rejects.toThrow(/damaged .*vtable constructor failed.*restore the file/)
    await expect(reopened).rejects.toThrow(path)
  })
})

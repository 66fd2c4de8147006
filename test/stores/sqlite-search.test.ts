/**
 * SQLite search indexes lazily (decision 0068): appends write events only, and `search` first
 * indexes what each session appended since its `search_indexed_through`, so its results are
 * those of an index written with every append. A version 2 database (indexed at append) is
 * migrated and keeps its index.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import type { SessionEvent } from '../../src/index.js'
import { envelopeLine } from '../../src/stores/codec.js'
import { searchableText } from '../../src/stores/search-text.js'
import { buildLog, turnEnd, turnStart, user } from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { storeOf, tempDirectory } from './support/stores.js'

const marks = (path: string) => {
  const db = new Database(path, { readonly: true })
  const rows = db
    .prepare(
      'SELECT id, event_count AS events, search_indexed_through AS mark FROM sessions ORDER BY created_at',
    )
    .all()
  db.close()
  return rows
}

const textRows = (path: string) => {
  const db = new Database(path, { readonly: true })
  const count = db.prepare('SELECT count(*) FROM message_text').pluck().get()
  db.close()
  return count
}

/** FTS5's own check that the index holds exactly the rows of `message_text` (throws if not). */
const checkIndex = (path: string) => {
  const db = new Database(path)
  db.prepare("INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 1)").run()
  db.close()
}

describe('SQLite search, indexed when it runs', () => {
  it('appends write no search rows; search indexes them, once, and finds every message', async () => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const store = await storeOf('sqlite', directory)
    const session = await store.create()
    appendAll(session, [turnStart(1), user('alpha one'), turnEnd(1)])
    await session.flush()
    expect(textRows(path)).toBe(0)
    expect(marks(path)).toEqual([{ id: session.header.id, events: 3, mark: -1 }])

    expect((await store.search('alpha')).map((hit) => hit.seq)).toEqual([1])
    expect(marks(path)).toEqual([{ id: session.header.id, events: 3, mark: 2 }])
    expect(textRows(path)).toBe(1)

    appendAll(session, [turnStart(2), user('alpha two'), turnEnd(2)])
    await session.flush()
    expect((await store.search('alpha')).map((hit) => hit.seq).sort()).toEqual([1, 4])
    expect((await store.search('alpha')).map((hit) => hit.seq).sort()).toEqual([1, 4])
    expect(textRows(path)).toBe(2)
    await session.close()
    checkIndex(path)
  })

  it('indexes a long backlog in chunks, and another process sees what a writer appended', async () => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const writer = await storeOf('sqlite', directory)
    const searcher = await storeOf('sqlite', directory)
    const session = await writer.create()
    for (let index = 0; index < 1300; index++) appendAll(session, [user(`word${index} common`)])
    await session.flush()
    expect((await searcher.search('word1299')).map((hit) => hit.seq)).toEqual([1299])
    expect((await searcher.search('word0')).map((hit) => hit.seq)).toEqual([0])
    expect(await searcher.search('common', { limit: 2000 })).toHaveLength(1300)
    expect(marks(path)).toEqual([{ id: session.header.id, events: 1300, mark: 1299 }])
    await session.close()
  })

  it('finds a fork’s messages, and a deleted session’s no more', async () => {
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory)
    const source = await store.create()
    appendAll(source, [turnStart(1), user('kept zebra'), turnEnd(1), user('cut zebra')])
    await source.close()
    const child = await store.fork(source.header.id, { atSeq: 2 })
    await child.close()
    const hits = await store.search('zebra')
    expect(hits.map((hit) => [hit.sessionId, hit.seq]).sort()).toEqual(
      [
        [source.header.id, 1],
        [source.header.id, 3],
        [child.header.id, 1],
      ].sort(),
    )
    await store.delete(source.header.id)
    expect((await store.search('zebra')).map((hit) => [hit.sessionId, hit.seq])).toEqual([
      [child.header.id, 1],
    ])
    checkIndex(join(directory, 'sessions.db'))
  })

  it('finds the messages of a fork copied in several ranges, through its cut only', async () => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const store = await storeOf('sqlite', directory)
    const source = await store.create()
    // 2,500 events: a fork at 1,700 copies its rows in two ranges (decision 0171).
    for (let turn = 1; turn <= 500; turn++)
      appendAll(source, [turnStart(turn), user(`ibex${turn} herd`), user('herd'), turnEnd(turn)])
    await source.close()
    const child = await store.fork(source.header.id, { atSeq: 1699 })
    await child.close()
    const inChild = async (word: string, limit = 20) =>
      (await store.search(word, { limit }))
        .filter((hit) => hit.sessionId === child.header.id)
        .map((hit) => hit.seq)
    expect(await inChild('ibex1')).toEqual([1])
    expect(await inChild('ibex400')).toEqual([1597])
    expect(await inChild('ibex425')).toEqual([1697])
    expect(await inChild('ibex426')).toEqual([])
    expect(await inChild('herd', 5000)).toHaveLength(850)
    expect(marks(path)).toContainEqual({ id: child.header.id, events: 1700, mark: 1699 })
    checkIndex(path)
  })

  it('indexes a message whose text moved to a blob', async () => {
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory)
    const session = await store.create()
    appendAll(session, [user(`needle ${'x'.repeat(1100 * 1024)}`)])
    await session.close()
    expect((await store.search('needle')).map((hit) => hit.seq)).toEqual([0])
  })

  it('drops rows past the mark (an older rudder’s append) before indexing, so nothing is found twice', async () => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const store = await storeOf('sqlite', directory)
    const session = await store.create()
    appendAll(session, [user('first quokka')])
    await session.flush()
    await store.search('quokka')
    appendAll(session, [user('second quokka')])
    await session.close()
    // What a version 2 writer that had the file open does: it indexes its own append.
    const db = new Database(path)
    const row = db
      .prepare('INSERT INTO message_text (session_id, seq, text) VALUES (?, 1, ?)')
      .run(session.header.id, 'second quokka')
    db.prepare('INSERT INTO message_fts (rowid, text) VALUES (?, ?)').run(
      row.lastInsertRowid,
      'second quokka',
    )
    db.close()
    expect((await store.search('quokka')).map((hit) => hit.seq).sort()).toEqual([0, 1])
    expect(textRows(path)).toBe(2)
    checkIndex(path)
  })
})

/** The version 2 schema exactly as that rudder created it (sqlite-schema.ts before decision 0068). */
const VERSION_2 = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, header TEXT NOT NULL, cwd TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL, event_count INTEGER NOT NULL) STRICT;
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, id DESC);
CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL, PRIMARY KEY (session_id, seq)) STRICT;
CREATE TABLE leases (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, token TEXT NOT NULL, acquired_at REAL NOT NULL) STRICT;
CREATE TABLE message_text (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL, text TEXT NOT NULL) STRICT;
CREATE INDEX message_text_by_session ON message_text (session_id, seq);
CREATE VIRTUAL TABLE message_fts USING fts5 (text, content = 'message_text', content_rowid = 'id');
CREATE TABLE checkpoints (session_id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;
PRAGMA user_version = 2;
`

/** Writes a session as a version 2 writer did: events, and search rows in the same commit. */
function writeVersion2(db: Database.Database, id: string, events: readonly SessionEvent[]): void {
  const header = { id, formatVersion: 1, createdAt: 1_700_000_000_000 }
  db.transaction(() => {
    db.prepare(
      'INSERT INTO sessions (id, header, cwd, created_at, updated_at, event_count) VALUES (?, ?, NULL, ?, ?, ?)',
    ).run(id, JSON.stringify(header), header.createdAt, header.createdAt, events.length)
    for (const event of events) {
      db.prepare('INSERT INTO events (session_id, seq, line) VALUES (?, ?, ?)').run(
        id,
        event.seq,
        envelopeLine(event),
      )
      const text = searchableText(event)
      if (text === undefined) continue
      const row = db
        .prepare('INSERT INTO message_text (session_id, seq, text) VALUES (?, ?, ?)')
        .run(id, event.seq, text)
      db.prepare('INSERT INTO message_fts (rowid, text) VALUES (?, ?)').run(
        row.lastInsertRowid,
        text,
      )
    }
  }).immediate()
}

describe('a version 2 SQLite database', () => {
  it('is migrated to version 3 with its index kept: it opens, searches and appends without duplicates', async () => {
    const directory = tempDirectory()
    const path = join(directory, 'sessions.db')
    const id = '0b5c6f8e-1111-4aaa-8bbb-000000000001'
    const old = new Database(path)
    old.pragma('journal_mode = WAL')
    old.exec(VERSION_2)
    writeVersion2(old, id, buildLog([turnStart(1), user('old walrus'), turnEnd(1)]))
    old.close()

    const store = await storeOf('sqlite', directory)
    expect(marks(path)).toEqual([{ id, events: 3, mark: 2 }])
    expect((await store.search('walrus')).map((hit) => [hit.sessionId, hit.seq])).toEqual([[id, 1]])
    const session = await store.open(id)
    expect(session.residentEvents.map((event) => event.type)).toEqual([
      'turn/start',
      'user/message',
      'turn/end',
    ])
    appendAll(session, [turnStart(2), user('new walrus'), turnEnd(2)])
    await session.close()
    expect((await store.search('walrus')).map((hit) => hit.seq).sort()).toEqual([1, 4])
    expect(textRows(path)).toBe(2)
    checkIndex(path)
    const check = new Database(path, { readonly: true })
    expect(check.pragma('user_version', { simple: true })).toBe(3)
    check.close()
  })
})

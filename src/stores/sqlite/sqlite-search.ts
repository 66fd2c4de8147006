/**
 * SQLite full-text search, indexed lazily (decision 0068). Appends write only `events`; each
 * session's `search_indexed_through` says through which seq its `message_text` and FTS5 rows
 * exist. `search` first brings every session whose log is ahead of its mark up to date, in
 * chunks of rows, each chunk one short immediate transaction, then queries FTS5: the results
 * are those of an index written with every append, and a durability point pays nothing for
 * search.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import type { BlobStore } from '../blob-store.js'
import { searchableTextOfLine } from '../search-text.js'
import type { SearchHit } from '../store.js'

/** Events read and indexed per transaction: the write lock is held for one chunk only. */
const CHUNK_ROWS = 500

export type SqliteSearch = {
  /** Indexes what appends left unindexed, then finds messages with every word. */
  search(words: readonly string[], limit: number): Promise<SearchHit[]>
}

export type SqliteSearchOptions = {
  readonly db: Database.Database
  readonly blobs: BlobStore
  /**
   * Runs a write transaction, turning failures into store errors. Unsynced is enough: the
   * index is derived from the log, and a chunk lost to a power cut is lost with its mark.
   */
  readonly commit: <T>(what: string, work: () => T) => T
  /** Runs a read, turning a damaged file into `LogCorruptError` (the backend's `reading`). */
  readonly reading: <T>(work: () => T, id?: string) => T
  readonly describe: (id: string) => string
}

type Row = { seq: number; line: string }

export function createSqliteSearch(options: SqliteSearchOptions): SqliteSearch {
  const { db, commit, reading } = options
  const statements = {
    behind: db.prepare<[], { id: string; mark: number }>(
      'SELECT id, search_indexed_through AS mark FROM sessions WHERE search_indexed_through < event_count - 1',
    ),
    mark: db.prepare<[string], { mark: number }>(
      'SELECT search_indexed_through AS mark FROM sessions WHERE id = ?',
    ),
    rows: db.prepare<[string, number, number], Row>(
      'SELECT seq, line FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    // Rows past the mark come from no chunk (each commits its rows with its mark) but from an
    // older rudder indexing its own append: they go, from the index first.
    unindexPast: db.prepare(
      "INSERT INTO message_fts (message_fts, rowid, text) SELECT 'delete', id, text FROM message_text WHERE session_id = ? AND seq > ?",
    ),
    deletePast: db.prepare('DELETE FROM message_text WHERE session_id = ? AND seq > ?'),
    insertText: db.prepare('INSERT INTO message_text (session_id, seq, text) VALUES (?, ?, ?)'),
    insertFts: db.prepare('INSERT INTO message_fts (rowid, text) VALUES (?, ?)'),
    setMark: db.prepare('UPDATE sessions SET search_indexed_through = ? WHERE id = ?'),
    query: db.prepare<[string, number], SearchHit>(
      `SELECT t.session_id AS sessionId, t.seq AS seq, snippet(message_fts, 0, '', '', '…', 12) AS snippet
       FROM message_fts JOIN message_text t ON t.id = message_fts.rowid
       WHERE message_fts MATCH ? ORDER BY rank LIMIT ?`,
    ),
  }

  /** Indexes one chunk of session `id` after `mark`; returns whether the session is done. */
  async function indexChunk(id: string, mark: number): Promise<{ mark: number } | 'done'> {
    const rows = reading(() => statements.rows.all(id, mark, CHUNK_ROWS), id)
    if (rows.length === 0) return 'done'
    const texts: (string | undefined)[] = []
    for (const row of rows)
      texts.push(
        await searchableTextOfLine(
          row.line,
          options.blobs,
          `${options.describe(id)} seq ${row.seq}`,
        ),
      )
    const through = rows[rows.length - 1]!.seq
    const now = commit(`cannot index session ${id} for search`, () => {
      // Another process may have indexed (or deleted) the session since the rows were read.
      const current = statements.mark.get(id)?.mark
      if (current !== mark) return current
      statements.unindexPast.run(id, mark)
      statements.deletePast.run(id, mark)
      for (let index = 0; index < rows.length; index++) {
        const text = texts[index]
        if (text === undefined) continue
        const inserted = statements.insertText.run(id, rows[index]!.seq, text)
        statements.insertFts.run(inserted.lastInsertRowid, text)
      }
      statements.setMark.run(through, id)
      return through
    })
    if (now === undefined) return 'done'
    return rows.length < CHUNK_ROWS && now === through ? 'done' : { mark: now }
  }

  /** Brings every session's index up to its log (docs/spec.md §9.1: search sees every durable event). */
  async function catchUp(): Promise<void> {
    for (const { id, mark: first } of reading(() => statements.behind.all())) {
      let mark = first
      for (;;) {
        const next = await indexChunk(id, mark)
        if (next === 'done') break
        mark = next.mark
        // Indexing is synchronous: give the event loop a turn between chunks.
        await yieldToEventLoop()
      }
    }
  }

  return {
    async search(words, limit) {
      const phrases = words
        .filter((word) => /[\p{L}\p{N}]/u.test(word))
        .map((word) => `"${word.replaceAll('"', '""')}"`)
      if (phrases.length === 0) return []
      await catchUp()
      return reading(() => statements.query.all(phrases.join(' '), limit))
    },
  }
}

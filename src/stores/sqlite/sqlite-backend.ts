/**
 * `sqlite:<path>`: the default store. One database file (WAL mode) holds every session; the
 * writer lease is a row in `leases`, taken inside an immediate transaction so that two
 * processes cannot both win it. Readers use their own WAL snapshot and never wait for a writer.
 * Large payloads live in `<path>.blobs/`.
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import Database from 'better-sqlite3'
import {
  LogCorruptError,
  SessionBusyError,
  type SessionEvent,
  type SessionHeader,
} from '../../core/index.js'
import type { Backend, StoredRecord } from '../backend.js'
import { createBlobStore } from '../blob-store.js'
import { sessionExists, sessionNotFound, storeFailure } from '../errors.js'
import { currentHolder, isHolderAlive, type Lease } from '../lease.js'
import { decodeCursor, listingOf } from '../listing.js'
import type { SessionListing, StoreCounters } from '../store.js'
import { isValidHeader } from '../stored-shapes.js'
import { nativeBindingOption } from './native-addon.js'
import { prepareDatabase } from './sqlite-schema.js'
import { createSqliteSearch } from './sqlite-search.js'
import { createWalSync, type WalSync } from './wal-sync.js'

/** Rows per read, between event-loop turns (about 1 MiB of typical events). */
const PAGE_ROWS = 1000
/**
 * Rows a fork copies per `INSERT … SELECT` (decision 0171). SQLite copies rows within their
 * own table through a temporary table; a whole prefix in one statement spills it to a
 * temporary file, a range of about 1 MiB stays in memory and costs about half the CPU.
 */
const COPY_ROWS = 1000
/**
 * Rows per `INSERT` of an append, largest first: a batch goes in as few statements as these
 * sizes allow (a batch of 50 in five, not fifty), each row's values bound as for one.
 */
const INSERT_ROWS = [32, 8, 1] as const
/**
 * A row (`[seq, line]`) read back as a stored record. A module function, not an arrow at the
 * `map`: an arrow there is a new closure per page, whose optimised code V8 dropped at each full
 * collection, so every load compiled it again (bench B2, decision 0187).
 */
function recordOfRow(row: readonly [number, string]): StoredRecord {
  return { kind: 'line', text: row[1], where: row[0], position: row[0] }
}

/**
 * Inserts `events`, stored as `lines`, into session `id` with `inserts` (one statement per size
 * of `INSERT_ROWS`, in that order), and returns the characters of the lines. A module function,
 * not part of the closure made per batch: V8 holds a closure's optimised code only while a
 * closure made at that place is alive, so after each full collection the loop was compiled
 * again (bench B4, decision 0187).
 */
function insertEvents(
  inserts: readonly Database.Statement[],
  id: string,
  events: readonly SessionEvent[],
  lines: readonly string[],
): number {
  let characters = 0
  let index = 0
  for (let size = 0; size < INSERT_ROWS.length; size++) {
    const rows = INSERT_ROWS[size]!
    if (events.length - index < rows) continue
    const values: unknown[] = new Array(rows * 3)
    for (; events.length - index >= rows; index += rows) {
      for (let row = 0; row < rows; row++) {
        const line = lines[index + row]!
        characters += line.length
        values[row * 3] = id
        values[row * 3 + 1] = events[index + row]!.seq
        values[row * 3 + 2] = line
      }
      inserts[size]!.run(values)
    }
  }
  return characters
}

/**
 * An append batch moves `updated_at` (indexed twice, for `list`) only when it is this far from
 * the value in the row, and a writer's close moves it to its last event: a batch then updates
 * one page of `sessions` instead of three (decision 0076). `event_count` moves every batch.
 */
const UPDATED_AT_INTERVAL_MS = 1000

/** Thrown inside a fork's transaction to roll it back when the copy is refused. */
const REFUSED = new Error('the fork copy was refused')

type ListRow = { header: string; event_count: number; updated_at: number }

export function createSqliteBackend(path: string, counters: StoreCounters | undefined): Backend {
  const url = `sqlite:${path}`
  let db: Database.Database
  try {
    mkdirSync(dirname(path), { recursive: true })
    db = new Database(path, nativeBindingOption())
    prepareDatabase(db, path)
    // Loads the search table now, so a broken one is reported as damage below.
    db.prepare('SELECT 1 FROM message_fts LIMIT 0').all()
  } catch (error) {
    // Only a file that is not a database gets the question; permissions and missing
    // directories speak for themselves in the cause.
    const code = (error as { code?: unknown }).code
    const isNotDatabase = code === 'SQLITE_NOTADB'
    throw (
      damaged(error, path) ??
      storeFailure(
        `cannot open the SQLite store ${path}${isNotDatabase ? ' (is it a rudder database?)' : ''}`,
        error,
      )
    )
  }

  // Appends commit unsynced and sync the WAL on the thread pool (decision 0146).
  const walSync = ((): WalSync | undefined => {
    try {
      return createWalSync(db, path)
    } catch (error) {
      db.close()
      throw storeFailure(`cannot open the SQLite store ${path}`, error)
    }
  })()

  const statements = {
    exists: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM sessions WHERE id = ?'),
    ids: db.prepare<[], { id: string }>('SELECT id FROM sessions'),
    header: db.prepare<[string], { header: string }>('SELECT header FROM sessions WHERE id = ?'),
    insertSession: db.prepare(
      'INSERT INTO sessions (id, header, cwd, created_at, updated_at, event_count) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    updateSession: db.prepare('UPDATE sessions SET updated_at = ?, event_count = ? WHERE id = ?'),
    updateCount: db.prepare('UPDATE sessions SET event_count = ? WHERE id = ?'),
    updateTime: db.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?'),
    // Rows as arrays (`raw`): an object per row has a hidden class only rows have, which died
    // with each load's rows, and the loops that read them were compiled again at every load
    // (bench B2, decision 0187).
    page: db
      .prepare<[string, number, number, number], readonly [number, string]>(
        'SELECT seq, line FROM events WHERE session_id = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?',
      )
      .raw(true),
    insertEvents: INSERT_ROWS.map((rows) =>
      db.prepare(
        `INSERT INTO events (session_id, seq, line) VALUES ${'(?, ?, ?), '.repeat(rows - 1)}(?, ?, ?)`,
      ),
    ),
    lease: db.prepare<[string], { pid: number; host: string }>(
      'SELECT pid, host FROM leases WHERE session_id = ?',
    ),
    takeLease: db.prepare(
      'INSERT OR REPLACE INTO leases (session_id, pid, host, token, acquired_at) VALUES (?, ?, ?, ?, ?)',
    ),
    releaseLease: db.prepare('DELETE FROM leases WHERE session_id = ? AND token = ?'),
    unindexText: db.prepare(
      "INSERT INTO message_fts (message_fts, rowid, text) SELECT 'delete', id, text FROM message_text WHERE session_id = ?",
    ),
    deleteText: db.prepare('DELETE FROM message_text WHERE session_id = ?'),
    deleteEvents: db.prepare('DELETE FROM events WHERE session_id = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE id = ?'),
    readCheckpoint: db.prepare<[string], { body: string }>(
      'SELECT body FROM checkpoints WHERE session_id = ?',
    ),
    writeCheckpoint: db.prepare(
      'INSERT INTO checkpoints (session_id, body) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET body = excluded.body',
    ),
    deleteCheckpoint: db.prepare('DELETE FROM checkpoints WHERE session_id = ?'),
  }
  /** A fork's statements: it reads and copies a range of seqs at a time (`COPY_ROWS`). */
  const forkStatements = {
    /** The lines of seqs `[from, to]`, in order. */
    lines: db
      .prepare<[string, number, number], string>(
        'SELECT line FROM events WHERE session_id = ? AND seq >= ? AND seq <= ? ORDER BY seq',
      )
      .pluck(true),
    /** Copies the source's rows of seqs `[from, to]` into the child, inside SQLite. */
    copy: db.prepare<[string, string, number, number]>(
      'INSERT INTO events (session_id, seq, line) SELECT ?, seq, line FROM events WHERE session_id = ? AND seq >= ? AND seq <= ?',
    ),
  }
  const listStatements = new Map<string, Database.Statement<unknown[], ListRow>>()
  function listStatement(byCwd: boolean, afterCursor: boolean) {
    const key = `${byCwd}:${afterCursor}`
    let statement = listStatements.get(key)
    if (!statement) {
      const where = [
        ...(byCwd ? ['cwd = @cwd'] : []),
        ...(afterCursor ? ['(updated_at < @at OR (updated_at = @at AND id < @id))'] : []),
      ]
      statement = db.prepare<unknown[], ListRow>(
        `SELECT header, event_count, updated_at FROM sessions ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY updated_at DESC, id DESC LIMIT @limit`,
      )
      listStatements.set(key, statement)
    }
    return statement
  }

  const describe = (id: string) => `${path} (session ${id})`
  const blobs = createBlobStore(`${path}.blobs`, counters)

  /** Takes the lease inside the caller's transaction. */
  function takeLease(id: string): Lease {
    const held = statements.lease.get(id)
    if (held && isHolderAlive(held)) throw new SessionBusyError(id, held.pid, held.host)
    const holder = currentHolder()
    const token = randomUUID()
    statements.takeLease.run(id, holder.pid, holder.host, token, Date.now())
    let isReleased = false
    return {
      async release() {
        if (isReleased || !db.open) return
        isReleased = true
        statements.releaseLease.run(id, token)
      },
    }
  }

  function insertSession(header: SessionHeader, eventCount: number): void {
    if (statements.exists.get(header.id)) throw sessionExists(header.id, url)
    statements.insertSession.run(
      header.id,
      JSON.stringify(header),
      header.cwd ?? null,
      header.createdAt,
      header.createdAt,
      eventCount,
    )
  }

  function commit<T>(what: string, work: () => T): T {
    try {
      const result = db.transaction(work).immediate()
      if (counters) counters.syncs++
      return result
    } catch (error) {
      throw damaged(error, path) ?? storeFailure(`${what} in ${path}`, error)
    }
  }

  /** Runs a read, turning a damaged file into `LogCorruptError` (at `seq` when known). */
  function reading<T>(work: () => T, id?: string, seq?: number): T {
    try {
      return work()
    } catch (error) {
      throw (
        damaged(error, seq === undefined ? path : `${describe(id ?? '')} seq ${seq}`, id) ?? error
      )
    }
  }

  const search = createSqliteSearch({
    db,
    blobs,
    describe,
    reading,
    commit(what, work) {
      if (!walSync) return commit(what, work)
      try {
        return walSync.commitUnsynced(work)
      } catch (error) {
        throw damaged(error, path) ?? storeFailure(`${what} in ${path}`, error)
      }
    },
  })

  function mustExist(id: string): void {
    if (!reading(() => statements.exists.get(id), id)) throw sessionNotFound(id, url)
  }

  return {
    url,
    blobs,
    describe,
    locate: (id, seq) => `${describe(id)} seq ${seq}`,
    exists: async (id) => reading(() => statements.exists.get(id), id) !== undefined,
    ids: async () => reading(() => statements.ids.all()).map((row) => row.id),
    create: async (header) =>
      commit(`cannot create session ${header.id}`, () => {
        insertSession(header, 0)
        return takeLease(header.id)
      }),
    acquire: async (id) =>
      commit(`cannot take the writer lease of session ${id}`, () => {
        mustExist(id)
        return takeLease(id)
      }),
    async readHeader(id) {
      const row = reading(() => statements.header.get(id), id)
      if (!row) throw sessionNotFound(id, url)
      return { text: row.header, location: `${describe(id)} header` }
    },
    async *records(id, options = {}) {
      mustExist(id)
      const last = options.throughSeq ?? Number.MAX_SAFE_INTEGER
      let next = options.fromSeq ?? 0
      for (;;) {
        let rows: (readonly [number, string])[]
        try {
          rows = statements.page.all(id, next, last, PAGE_ROWS)
        } catch (error) {
          if (!damaged(error, path)) throw error
          // A damaged page: read row by row, so everything before the damage is still read
          // (salvage keeps it) and the error names the first seq that cannot be.
          for (let seq = next; seq <= last; seq++) {
            const row = reading(() => statements.page.get(id, seq, seq, 1), id, seq)
            if (!row) return
            yield [recordOfRow(row)]
          }
          return
        }
        if (rows.length === 0) return
        const records: StoredRecord[] = rows.map(recordOfRow)
        yield records
        if (rows.length < PAGE_ROWS) return
        next = rows[rows.length - 1]![0] + 1
        // Reads are synchronous: give the event loop a turn between pages.
        await yieldToEventLoop()
      }
    },
    async openWriter(id, start) {
      /** The `updated_at` this writer last put in the row (none yet: the first batch does). */
      let rowUpdatedAt: number | undefined
      /** The time of the last event written. */
      let updatedAt = start.updatedAt
      return {
        async write(events, lines) {
          const what = `cannot write ${describe(id)}`
          let bytes = 0
          const last = events[events.length - 1]
          // Taken as the row's time only once the commit holds it (a failed one rolls back).
          const movesTime =
            last !== undefined &&
            (rowUpdatedAt === undefined ||
              Math.abs(last.time - rowUpdatedAt) >= UPDATED_AT_INTERVAL_MS)
          // Events only: search indexes them when it runs (sqlite-search.ts, decision 0068).
          const work = () => {
            bytes = insertEvents(statements.insertEvents, id, events, lines)
            if (!last) return
            if (movesTime) statements.updateSession.run(last.time, last.seq + 1, id)
            else statements.updateCount.run(last.seq + 1, id)
          }
          if (!walSync) commit(what, work)
          else {
            try {
              walSync.commitUnsynced(work)
            } catch (error) {
              throw damaged(error, path) ?? storeFailure(`${what} in ${path}`, error)
            }
          }
          if (last) {
            if (movesTime) rowUpdatedAt = last.time
            updatedAt = last.time
          }
          if (walSync) {
            // Durable only now: the flush resolves after this sync, off the main thread.
            try {
              await walSync.sync()
            } catch (error) {
              throw storeFailure(
                `${what}: the write-ahead log ${path}-wal could not be synced`,
                error,
              )
            }
            if (counters) counters.syncs++
          }
          if (counters) counters.bytesWritten += bytes
        },
        // Rows and lines are keyed by seq: a prefix needs no byte position.
        positionOf: (seq) => seq,
        async close() {
          if (rowUpdatedAt === undefined || rowUpdatedAt === updatedAt || !db.open) return
          const time = updatedAt
          const work = () => statements.updateTime.run(time, id)
          const what = `cannot update the listing of ${describe(id)}`
          // Listing metadata only: it needs no sync of its own (the next commit's carries it).
          if (!walSync) commit(what, work)
          else
            try {
              walSync.commitUnsynced(work)
            } catch (error) {
              throw damaged(error, path) ?? storeFailure(`${what} in ${path}`, error)
            }
          rowUpdatedAt = time
        },
      }
    },
    async copyPrefix(sourceId, header, throughSeq, _position, options) {
      // Positions are seqs, the same in the child. The checkpoint goes in the copy's commit,
      // not in one more synced commit when the child closes (decision 0019).
      const checkpoint = options?.checkpoint?.((seq) => seq)
      const lease = commit(`cannot fork session ${sourceId}`, () => {
        // The child is indexed for search when a search runs, like any append.
        insertSession(header, throughSeq + 1)
        for (let from = 0; from <= throughSeq; from += COPY_ROWS)
          forkStatements.copy.run(
            header.id,
            sourceId,
            from,
            Math.min(throughSeq, from + COPY_ROWS - 1),
          )
        if (checkpoint !== undefined) statements.writeCheckpoint.run(header.id, checkpoint)
        return takeLease(header.id)
      })
      return { lease, isCheckpointed: checkpoint !== undefined }
    },
    async copyInspected(sourceId, header, options) {
      // One pass (decisions 0019, 0171), in one transaction: each range of kept rows is read
      // once as text and inspected, then copied inside SQLite (`forkStatements.copy`), so no
      // line goes back through JavaScript to be inserted.
      const { throughSeq } = options
      let count = 0
      let checkpoint: string | undefined
      let lease: Lease
      try {
        lease = db
          .transaction(() => {
            insertSession(header, throughSeq === undefined ? 0 : throughSeq + 1)
            const positions: number[] = []
            const last = throughSeq ?? Number.MAX_SAFE_INTEGER
            for (let from = 0; from <= last; from += COPY_ROWS) {
              const to = Math.min(last, from + COPY_ROWS - 1)
              const texts = forkStatements.lines.all(sourceId, from, to)
              // Rows are keyed by seq, so line `i` is seq `from + i` unless the keys have a
              // gap: then a line names another seq than the scan expects, or the count falls
              // short of the cut below, and the copy is refused either way.
              positions.length = texts.length
              for (let index = 0; index < texts.length; index++) positions[index] = from + index
              if (texts.length > 0 && !options.inspect({ texts, positions })) throw REFUSED
              // The same rows the read just gave: this transaction holds the write lock.
              forkStatements.copy.run(header.id, sourceId, from, to)
              count += texts.length
              if (texts.length < to - from + 1) break
            }
            if (throughSeq === undefined) statements.updateCount.run(count, header.id)
            else if (count !== throughSeq + 1) throw REFUSED
            checkpoint = options.checkpoint?.((seq) => seq)
            if (checkpoint !== undefined) statements.writeCheckpoint.run(header.id, checkpoint)
            return takeLease(header.id)
          })
          .immediate()
        if (counters) counters.syncs++
      } catch (error) {
        // Refused, or a damaged page: nothing was kept; the store reads and checks the source
        // instead, which reports the damage where it is.
        if (error === REFUSED || damaged(error, path)) return undefined
        throw storeFailure(`cannot fork session ${sourceId} in ${path}`, error)
      }
      return { lease, eventCount: count, isCheckpointed: checkpoint !== undefined }
    },
    readCheckpoint: async (id) => reading(() => statements.readCheckpoint.get(id), id)?.body,
    async writeCheckpoint(id, text) {
      commit(`cannot write the checkpoint of ${describe(id)}`, () => {
        statements.writeCheckpoint.run(id, text)
      })
    },
    async list(options) {
      const cursor = options.cursor === undefined ? undefined : decodeCursor(options.cursor)
      const rows = reading(() =>
        listStatement(options.cwd !== undefined, cursor !== undefined).all({
          limit: options.limit,
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
          ...(cursor === undefined ? {} : { at: cursor.updatedAt, id: cursor.id }),
        }),
      )
      const out: SessionListing[] = []
      for (const row of rows) {
        const header: unknown = JSON.parse(row.header)
        // A row this rudder cannot read is left out of lists; opening it reports why.
        if (isValidHeader(header))
          out.push(listingOf(header as SessionHeader, row.event_count, row.updated_at))
      }
      return out
    },
    async remove(id) {
      // The lease row stays until the caller releases it, so nobody takes the id meanwhile.
      commit(`cannot delete session ${id}`, () => {
        statements.unindexText.run(id)
        statements.deleteText.run(id)
        statements.deleteEvents.run(id)
        statements.deleteCheckpoint.run(id)
        statements.deleteSession.run(id)
      })
    },
    search: (words, limit) => search.search(words, limit),
    async close() {
      await walSync?.close()
      if (db.open) db.close()
    },
  }
}

/**
 * A damaged database file as `LogCorruptError` at `location`, with what to do; undefined for
 * any other failure. SQLite reports damage as SQLITE_CORRUPT (and its variants), and a search
 * table it cannot load as "vtable constructor failed"; a file that is no database at all (SQLITE_NOTADB) is a StoreError.
 */
function damaged(error: unknown, location: string, id?: string): LogCorruptError | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code !== 'string') return undefined
  // A search table whose shadow tables are gone fails to load as a plain SQLITE_ERROR.
  const isBrokenTable =
    code === 'SQLITE_ERROR' && /vtable constructor failed/.test((error as Error).message)
  if (!code.startsWith('SQLITE_CORRUPT') && !isBrokenTable) return undefined
  return new LogCorruptError(
    location,
    `the SQLite database is damaged (${(error as Error).message}); ${id ? `run \`rudder sessions repair ${id}\` to copy every readable event into a new session, or ` : ''}restore the file from a backup`,
    { cause: error },
  )
}

/**
 * `postgres://…`: sessions in a PostgreSQL database that many hosts share (decision 0060).
 * Events are the same text lines as the other formats; one batch is one statement and one
 * commit, made only while the writer's lease row still carries its token, so a writer whose
 * lease was taken over can never write again (decision 0061). Commits notify followers on the
 * `rudder_events` channel (decision 0063).
 */
import { createHash, randomUUID } from 'node:crypto'
import pg from 'pg'
import {
  LogCorruptError,
  RudderError,
  SessionBusyError,
  type SessionHeader,
  StoreError,
} from '../../core/index.js'
import type { Backend, StoredRecord } from '../backend.js'
import type { BlobAddress, BlobStore } from '../blob-store.js'
import { checksumOfLines } from '../checkpoint.js'
import { sessionExists, sessionNotFound } from '../errors.js'
import { currentHolder, isHolderAlive, type Lease } from '../lease.js'
import { decodeCursor, listingOf } from '../listing.js'
import type { SessionListing, StoreCounters } from '../store.js'
import type { PostgresLocation } from '../store-url.js'
import { isValidHeader } from '../stored-shapes.js'
import { decodeUtf8 } from '../utf8-slices.js'
import { prepareSchema } from './postgres-schema.js'
import { createPostgresSearch } from './postgres-search.js'

/** Rows per read. */
const PAGE_ROWS = 1000
/** The notification channel; the payload is the session id. */
export const EVENTS_CHANNEL = 'rudder_events'

/**
 * Appends one batch (docs/spec.md §9.1): $1 session, $2 lease token, $3 the first event's seq
 * (the batch's seqs follow on, one per line), $4 the lines joined by newlines, $5 the last
 * event's time, $6 the event count after it. A piece past the batch's count gets no seq, which
 * fails the statement (a stored line is JSON and never holds a newline; if one did, nothing of
 * the batch would be written). It updates the session row, so its row count is 1 if the
 * lease held (the rows went in and followers were notified) and 0 if not (nothing was written):
 * no result row to describe and parse. Search rows are written by search itself
 * (postgres-search.ts, decision 0068).
 */
const APPEND_STATEMENT = `WITH lease AS (
   UPDATE leases SET heartbeat_at = clock_timestamp() WHERE session_id = $1 AND token = $2 RETURNING 1
 ), ev AS (
   INSERT INTO events (session_id, seq, line)
   SELECT $1, CASE WHEN n <= $6::integer - $3::integer THEN $3::integer + n::integer - 1 END, l
   FROM unnest(string_to_array($4::text, E'\\n')) WITH ORDINALITY AS t(l, n)
   WHERE EXISTS (SELECT 1 FROM lease)
 ), notified AS (
   SELECT pg_notify('${EVENTS_CHANNEL}', $1) FROM lease
 )
 UPDATE sessions SET updated_at = $5, event_count = $6
 WHERE id = $1 AND EXISTS (SELECT 1 FROM lease) AND EXISTS (SELECT 1 FROM notified)`

export type PostgresOptions = {
  readonly counters?: StoreCounters | undefined
  /** A lease whose heartbeat is older than this is taken over (default 15 s). */
  readonly leaseTtlMs?: number | undefined
  /** The name this process goes by in leases (default the host name). */
  readonly hostName?: string | undefined
}

/** Connects, creates or migrates the schema, and returns the backend. */
export async function createPostgresBackend(
  location: PostgresLocation,
  options: PostgresOptions = {},
): Promise<Backend> {
  const { schema, display } = location
  const counters = options.counters
  const ttlMs = options.leaseTtlMs ?? 15_000
  const holder = { ...currentHolder(), ...(options.hostName ? { host: options.hostName } : {}) }
  const config: pg.ClientConfig = {
    connectionString: location.connectionString,
    options: `-c search_path=${schema} -c statement_timeout=${location.statementTimeoutMs}`,
    connectionTimeoutMillis: 10_000,
  }
  const pool = new pg.Pool({ ...config, max: location.poolSize })
  // An idle connection that dies (a restart, pg_terminate_backend) must not crash the process;
  // the next query on the pool opens a new one, and a query in flight reports its own error.
  pool.on('error', () => {})

  const fail = (what: string, error: unknown): Error => postgresFailure(what, error, location)
  async function query<R extends pg.QueryResultRow>(
    what: string,
    text: string,
    values: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await pool.query<R>(text, values)
    } catch (error) {
      throw fail(what, error)
    }
  }

  try {
    const client = await pool.connect()
    try {
      await prepareSchema(client, schema, `the PostgreSQL store ${display}`)
    } finally {
      client.release()
    }
  } catch (error) {
    await pool.end().catch(() => {})
    throw fail(`cannot open the PostgreSQL store ${display}`, error)
  }

  const describe = (id: string) => `${display} (session ${id})`

  /**
   * Takes (or takes over) the lease of an existing session inside the caller's transaction and
   * returns its token; busy if a live holder has it. The heartbeat starts once that commits.
   */
  async function takeLease(client: pg.ClientBase, id: string): Promise<string> {
    const held = (
      await client.query<{ host: string; pid: number; token: string }>(
        'SELECT host, pid, token FROM leases WHERE session_id = $1',
        [id],
      )
    ).rows[0]
    // On this host a dead holder is known dead now; elsewhere only a lapsed heartbeat says so.
    const deadHere =
      held && held.host === holder.host && !isHolderAlive({ pid: held.pid, host: held.host })
    const token = randomUUID()
    const taken = await client.query(
      `INSERT INTO leases AS l (session_id, host, pid, token, heartbeat_at)
       VALUES ($1, $2, $3, $4, clock_timestamp())
       ON CONFLICT (session_id) DO UPDATE SET host = $2, pid = $3, token = $4, heartbeat_at = clock_timestamp()
       WHERE l.heartbeat_at < clock_timestamp() - make_interval(secs => $5::double precision / 1000) OR l.token = $6`,
      [id, holder.host, holder.pid, token, ttlMs, deadHere ? held.token : ''],
    )
    if (taken.rowCount !== 1) {
      const now = (
        await client.query<{ host: string; pid: number }>(
          'SELECT host, pid FROM leases WHERE session_id = $1',
          [id],
        )
      ).rows[0]
      throw new SessionBusyError(id, now?.pid ?? held?.pid ?? 0, now?.host ?? held?.host)
    }
    return token
  }

  /** A lease this process holds: a heartbeat keeps it, release deletes it. */
  function heldLease(id: string, token: string): Lease & { readonly token: string } {
    let released = false
    const beat = setInterval(
      () => {
        pool
          .query(
            'UPDATE leases SET heartbeat_at = clock_timestamp() WHERE session_id = $1 AND token = $2',
            [id, token],
          )
          .catch(() => {
            // A missed beat only shortens the lease; a write checks the token itself.
          })
      },
      Math.max(50, Math.floor(ttlMs / 3)),
    )
    // The heartbeat must not keep a process alive; closing the session releases the lease.
    beat.unref()
    leases.add(beat)
    return {
      token,
      async release() {
        if (released) return
        released = true
        clearInterval(beat)
        leases.delete(beat)
        await pool
          .query('DELETE FROM leases WHERE session_id = $1 AND token = $2', [id, token])
          .catch(() => {
            // Unreachable database: the lease lapses by itself after its time to live.
          })
      },
    }
  }
  const leases = new Set<ReturnType<typeof setInterval>>()
  const tokens = new Map<string, string>()

  async function transaction<T>(
    what: string,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await pool.connect()
    } catch (error) {
      throw fail(what, error)
    }
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      if (counters) counters.syncs++
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw fail(what, error)
    } finally {
      client.release()
    }
  }

  async function insertSession(client: pg.ClientBase, header: SessionHeader, eventCount: number) {
    const inserted = await client.query(
      `INSERT INTO sessions (id, header, cwd, created_at, updated_at, event_count)
       VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (id) DO NOTHING`,
      [header.id, JSON.stringify(header), header.cwd ?? null, header.createdAt, eventCount],
    )
    if (inserted.rowCount !== 1) throw sessionExists(header.id, display)
  }

  async function mustExist(id: string): Promise<void> {
    const found = await query(
      'cannot read the session list',
      'SELECT 1 FROM sessions WHERE id = $1',
      [id],
    )
    if (found.rowCount === 0) throw sessionNotFound(id, display)
  }

  /** Starts holding a lease whose row committed: its heartbeat, and its token for writes. */
  function remember(id: string, token: string): Lease {
    const lease = heldLease(id, token)
    tokens.set(id, token)
    return {
      async release() {
        if (tokens.get(id) === lease.token) tokens.delete(id)
        await lease.release()
      },
    }
  }

  async function readBlob(address: BlobAddress, location: string): Promise<Buffer> {
    const row = (
      await query<{ content: Buffer }>(
        'cannot read a large payload',
        'SELECT content FROM blobs WHERE sha256 = $1',
        [address.sha256],
      )
    ).rows[0]
    if (!row || row.content.length !== address.bytes)
      throw new LogCorruptError(
        location,
        `the event refers to the large payload ${address.sha256}, which is ${row ? `${row.content.length} bytes instead of ${address.bytes}` : 'missing from the blobs table'}; restore it, or run \`rudder sessions repair\` to salvage the events before it`,
      )
    return row.content
  }

  const blobs: BlobStore = {
    async sweep(referenced, graceMs) {
      const result = await query(
        'cannot remove unused large payloads',
        `DELETE FROM blobs WHERE touched_at < now() - make_interval(secs => $1) AND NOT (sha256 = ANY($2::text[]))`,
        [graceMs / 1000, [...referenced]],
      )
      return result.rowCount ?? 0
    },
    async put(content) {
      const buffer = Buffer.from(content, 'utf8')
      const sha256 = createHash('sha256').update(buffer).digest('hex')
      await query(
        `cannot write a large payload (${buffer.length} bytes)`,
        // Reuse touches the row, so a concurrent sweep spares it (docs/decisions/0134).
        'INSERT INTO blobs (sha256, bytes, content) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO UPDATE SET touched_at = now()',
        [sha256, buffer.length, buffer],
      )
      if (counters) {
        counters.syncs++
        counters.bytesWritten += buffer.length
      }
      return { sha256, bytes: buffer.length }
    },
    get: async (address, location, signal) =>
      decodeUtf8(await readBlob(address, location), { signal }),
    read: readBlob,
  }

  let listener: { client: pg.Client; handlers: Map<string, Set<() => void>> } | undefined
  async function listen(): Promise<NonNullable<typeof listener>> {
    if (listener) return listener
    const client = new pg.Client(config)
    const handlers = new Map<string, Set<() => void>>()
    client.on('error', () => {
      // The connection died: followers fall back to their periodic catch-up read.
      if (listener?.client === client) listener = undefined
      for (const set of handlers.values()) for (const handler of set) handler()
    })
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.payload ?? '') ?? []) handler()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${EVENTS_CHANNEL}`)
    } catch (error) {
      await client.end().catch(() => {})
      throw fail('cannot follow sessions', error)
    }
    listener ??= { client, handlers }
    return listener
  }

  return {
    url: display,
    blobs,
    async remove(id) {
      // Events, search rows and the lease go with the session row (ON DELETE CASCADE).
      await query(`cannot delete ${describe(id)}`, 'DELETE FROM sessions WHERE id = $1', [id])
    },
    describe,
    locate: (id, seq) => `${describe(id)} seq ${seq}`,
    exists: async (id) =>
      ((await query('cannot read the session list', 'SELECT 1 FROM sessions WHERE id = $1', [id]))
        .rowCount ?? 0) > 0,
    ids: async () =>
      (
        await query<{ id: string }>('cannot read the session list', 'SELECT id FROM sessions')
      ).rows.map((row) => row.id),
    create: async (header) =>
      remember(
        header.id,
        await transaction(`cannot create session ${header.id}`, async (client) => {
          await insertSession(client, header, 0)
          return takeLease(client, header.id)
        }),
      ),
    acquire: async (id) =>
      remember(
        id,
        await transaction(`cannot take the writer lease of session ${id}`, async (client) => {
          const found = await client.query('SELECT 1 FROM sessions WHERE id = $1', [id])
          if (found.rowCount === 0) throw sessionNotFound(id, display)
          return takeLease(client, id)
        }),
      ),
    async readHeader(id) {
      const row = (
        await query<{ header: string }>(
          `cannot read session ${id}`,
          'SELECT header FROM sessions WHERE id = $1',
          [id],
        )
      ).rows[0]
      if (!row) throw sessionNotFound(id, display)
      return { text: row.header, location: `${describe(id)} header` }
    },
    async *records(id, options = {}) {
      await mustExist(id)
      const last = options.throughSeq ?? 2 ** 31 - 1
      let next = options.fromSeq ?? 0
      for (;;) {
        const rows = (
          await query<{ seq: number; line: string }>(
            `cannot read session ${id}`,
            'SELECT seq, line FROM events WHERE session_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4',
            [id, next, last, PAGE_ROWS],
          )
        ).rows
        if (rows.length === 0) return
        yield rows.map(
          (row): StoredRecord => ({
            kind: 'line',
            text: row.line,
            where: row.seq,
            position: row.seq,
          }),
        )
        if (rows.length < PAGE_ROWS) return
        next = rows[rows.length - 1]!.seq + 1
      }
    },
    async openWriter(id) {
      const token = tokens.get(id)
      if (token === undefined)
        throw new StoreError(
          `cannot write ${describe(id)}: this process holds no writer lease for it`,
        )
      return {
        async write(events, lines, checksum) {
          const first = events[0]!.seq
          let bytes = 0
          for (let index = 0; index < events.length; index++) {
            // Seqs are sent as the first one and the lines' order: a gap would store wrong seqs.
            if (events[index]!.seq !== first + index)
              throw new StoreError(
                `cannot write ${describe(id)}: the batch's seqs are not consecutive from ${first} (seq ${events[index]!.seq} at position ${index})`,
              )
            bytes += lines[index]!.length
          }
          const last = events[events.length - 1]!
          let client: pg.PoolClient
          try {
            client = await pool.connect()
          } catch (error) {
            throw fail('the batch was not committed', error)
          }
          // A connection that fails while held fails the query below; unheard, its 'error'
          // event would end the process (the pool listens only while a connection is idle).
          client.on('error', ignoreHeldError)
          let result: pg.QueryResult
          let summed: number | undefined
          try {
            // One statement, one commit: the rows go in only while our token holds the lease
            // (the lease row is locked for the statement, so a takeover waits or wins first).
            // Lines travel as one text split on newlines: as a text[] every quote in them was
            // escaped by the client and unescaped by the server, most of the client's time;
            // seqs as an integer[] cost a quoted element each. Named, so a connection plans it
            // once. Sent before the batch is summed: the sum (the session's running checksum,
            // which it would otherwise take after the commit) is made while the server
            // commits, which is most of a batch's time.
            const committing = client.query({
              name: 'rudder_append',
              text: APPEND_STATEMENT,
              values: [id, token, first, lines.join('\n'), last.time, last.seq + 1],
            })
            summed = checksum === undefined ? undefined : checksumOfLines('text', lines, checksum)
            result = await committing
          } catch (error) {
            client.off('error', ignoreHeldError)
            // Not reused: the connection may be broken, or inside a failed transaction.
            client.release(true)
            throw fail('the batch was not committed', error)
          }
          client.off('error', ignoreHeldError)
          client.release()
          if (result.rowCount !== 1) {
            const now = (
              await query<{ host: string; pid: number }>(
                `cannot write ${describe(id)}`,
                'SELECT host, pid FROM leases WHERE session_id = $1',
                [id],
              )
            ).rows[0]
            throw new StoreError(
              `this process lost the writer lease of ${describe(id)}${now ? ` to process ${now.pid} on host ${now.host}` : ''} (its heartbeat lapsed), so the database refused the write`,
            )
          }
          if (counters) {
            counters.syncs++
            counters.bytesWritten += bytes
          }
          return summed
        },
        // Rows are keyed by seq: a prefix needs no byte position.
        positionOf: (seq) => seq,
        async close() {},
      }
    },
    copyPrefix: async (sourceId, header, throughSeq) => ({
      lease: remember(
        header.id,
        await transaction(`cannot fork session ${sourceId}`, async (client) => {
          await insertSession(client, header, throughSeq + 1)
          await client.query(
            'INSERT INTO events (session_id, seq, line) SELECT $1, seq, line FROM events WHERE session_id = $2 AND seq <= $3',
            [header.id, sourceId, throughSeq],
          )
          // The child is indexed for search when a search runs, like any append.
          return takeLease(client, header.id)
        }),
      ),
      isCheckpointed: false,
    }),
    async readCheckpoint(id) {
      const row = (
        await query<{ body: string }>(
          `cannot read the checkpoint of ${describe(id)}`,
          'SELECT body FROM checkpoints WHERE session_id = $1',
          [id],
        )
      ).rows[0]
      return row?.body
    },
    async writeCheckpoint(id, text) {
      await query(
        `cannot write the checkpoint of ${describe(id)}`,
        `INSERT INTO checkpoints (session_id, body) VALUES ($1, $2)
         ON CONFLICT (session_id) DO UPDATE SET body = EXCLUDED.body`,
        [id, text],
      )
    },
    async list(options) {
      const cursor = options.cursor === undefined ? undefined : decodeCursor(options.cursor)
      const values: unknown[] = [options.limit]
      const conditions: string[] = []
      if (options.cwd !== undefined) {
        values.push(options.cwd)
        conditions.push(`cwd = $${values.length}`)
      }
      if (cursor !== undefined) {
        values.push(cursor.updatedAt, cursor.id)
        conditions.push(`(updated_at, id) < ($${values.length - 1}, $${values.length})`)
      }
      const rows = (
        await query<{ header: string; event_count: number; updated_at: number }>(
          'cannot list sessions',
          `SELECT header, event_count, updated_at FROM sessions ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
           ORDER BY updated_at DESC, id DESC LIMIT $1`,
          values,
        )
      ).rows
      const out: SessionListing[] = []
      for (const row of rows) {
        const parsed: unknown = JSON.parse(row.header)
        // A row this rudder cannot read is left out of lists; opening it reports why.
        if (isValidHeader(parsed))
          out.push(listingOf(parsed as SessionHeader, row.event_count, row.updated_at))
      }
      return out
    },
    search: createPostgresSearch({ blobs, query, describe }),
    async watch(id, onChange) {
      const active = await listen()
      const set = active.handlers.get(id) ?? new Set()
      active.handlers.set(id, set)
      set.add(onChange)
      return async () => {
        set.delete(onChange)
        if (set.size === 0) active.handlers.delete(id)
      }
    },
    async close() {
      for (const beat of leases) clearInterval(beat)
      leases.clear()
      const closing = listener
      listener = undefined
      await closing?.client.end().catch(() => {})
      await pool.end().catch(() => {})
    },
  }
}

/** Listens to a held connection's 'error' event, which its query reports too. */
function ignoreHeldError(): void {}

/** A driver failure as a `StoreError` naming the server, the database and the fix. */
function postgresFailure(what: string, error: unknown, location: PostgresLocation): Error {
  if (error instanceof RudderError) return error
  const code = (error as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : String(error)
  const server = `PostgreSQL at ${location.host} (database ${location.database})`
  let fix = ''
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EHOSTUNREACH':
    case 'ETIMEDOUT':
      fix = `; start the server (or fix the host and port in the store URL ${location.display})`
      break
    case '3D000':
      fix = `; create it (\`createdb ${location.database}\`) or fix the database in the store URL`
      break
    case '28P01':
    case '28000':
      fix = "; fix the user and password in the store URL (or the server's pg_hba.conf)"
      break
    case '57P01':
    case '57P02':
    case '57P03':
      fix = '; the server ended the connection: check that it is running, then try again'
      break
    case '57014':
      fix = `; a statement ran longer than statement_timeout (${location.statementTimeoutMs} ms): raise it with ?statement_timeout= in the store URL`
      break
    default:
      break
  }
  return new StoreError(`${what}: ${server}: ${message}${fix}`, { cause: error })
}

/**
 * PostgreSQL events without a foreign key (schema 5, decision 0164): the per-row check is gone
 * from the append statement, and deleting a session still deletes its events, from any rudder
 * (a trigger on `sessions`), also a batch that was in flight under the lease when it ran. A
 * version 4 database is migrated with its sessions kept.
 */
import { describe, expect, it } from 'vitest'
import { type SessionEvent, StoreError } from '../../src/index.js'
import { createPostgresBackend } from '../../src/stores/postgres/postgres-backend.js'
import { PG_SCHEMA_VERSION } from '../../src/stores/postgres/postgres-schema.js'
import { parseStoreUrl } from '../../src/stores/store-url.js'
import { turnEnd, turnStart, user } from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { adminQuery, placeSchema, TEST_POSTGRES_URL } from './support/postgres.js'

async function place() {
  const { schema, url, open, done } = placeSchema()
  const events = async (id: string) =>
    Number(
      (await adminQuery(`SELECT count(*) AS n FROM ${schema}.events WHERE session_id = $1`, [id]))
        .rows[0].n,
    )
  const foreignKeys = async () =>
    Number(
      (
        await adminQuery(
          `SELECT count(*) AS n FROM pg_constraint WHERE conrelid = '${schema}.events'::regclass AND contype = 'f'`,
        )
      ).rows[0].n,
    )
  const backend = async () => {
    const location = parseStoreUrl(url, {})
    if (location.kind !== 'postgres') throw new Error('not a PostgreSQL URL')
    return createPostgresBackend(location)
  }
  return { schema, open, done, events, foreignKeys, backend }
}

/** A client of its own on the test server (a transaction held open across awaits). */
async function client() {
  const pg = await import('pg')
  const connected = new pg.default.Client({ connectionString: TEST_POSTGRES_URL })
  await connected.connect()
  return connected
}

describe('PostgreSQL events, schema 5', () => {
  it('has no foreign key on events; deleting a session row deletes its events, as an older rudder deletes', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      appendAll(session, [turnStart(1), user('kept apart'), turnEnd(1)])
      await session.close()
      const other = await store.create()
      appendAll(other, [user('stays')])
      await other.close()
      expect(await here.foreignKeys()).toBe(0)
      expect(await here.events(session.header.id)).toBe(3)
      // What `remove` does, and what a version 4 rudder (which relied on ON DELETE CASCADE) does.
      await adminQuery(`DELETE FROM ${here.schema}.sessions WHERE id = $1`, [session.header.id])
      expect(await here.events(session.header.id)).toBe(0)
      expect(await here.events(other.header.id)).toBe(1)
      await store.delete(other.header.id)
      expect(await here.events(other.header.id)).toBe(0)
    } finally {
      await here.done()
    }
  })

  it('deletes a batch that was in flight under the lease when the session row was deleted', async () => {
    const here = await place()
    const batch = await client()
    const deleter = await client()
    try {
      const store = await here.open()
      const session = await store.create()
      appendAll(session, [user('durable')])
      await session.flush()
      const id = session.header.id
      const deleterPid = (await deleter.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
      // A batch as the append statement makes it: the lease row by token (locked until commit),
      // then the rows; not committed yet.
      await batch.query('BEGIN')
      const held = await batch.query(
        `UPDATE ${here.schema}.leases SET heartbeat_at = clock_timestamp() WHERE session_id = $1 RETURNING 1`,
        [id],
      )
      expect(held.rowCount).toBe(1)
      await batch.query(
        `INSERT INTO ${here.schema}.events (session_id, seq, line) VALUES ($1, 1, '{}'), ($1, 2, '{}')`,
        [id],
      )
      const deleted = deleter.query(`DELETE FROM ${here.schema}.sessions WHERE id = $1`, [id])
      // The delete waits for the batch (on the lease row) instead of missing its rows.
      let waiting = false
      while (!waiting)
        waiting =
          (
            await adminQuery(
              `SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`,
              [deleterPid],
            )
          ).rowCount === 1
      await batch.query('COMMIT')
      await deleted
      expect(await here.events(id)).toBe(0)
      const rest = await adminQuery(
        `SELECT (SELECT count(*) FROM ${here.schema}.sessions) AS sessions, (SELECT count(*) FROM ${here.schema}.leases) AS leases`,
      )
      expect(rest.rows[0]).toEqual({ sessions: '0', leases: '0' })
      // The writer finds its lease gone and refuses the next batch.
      appendAll(session, [user('after the delete')])
      await expect(session.flush()).rejects.toThrow(/lost the writer lease/)
      await session.close().catch(() => {})
      expect(await here.events(id)).toBe(0)
    } finally {
      await batch.end()
      await deleter.end()
      await here.done()
    }
  })

  it('migrates a version 4 database (events with a foreign key), keeping its sessions', async () => {
    const here = await place()
    try {
      const first = await here.open()
      const session = await first.create()
      appendAll(session, [turnStart(1), user('from version 4'), turnEnd(1)])
      await session.close()
      await first.close()
      // Back to what version 4 left: the foreign key, no trigger.
      await adminQuery(
        `DROP TRIGGER sessions_delete_events ON ${here.schema}.sessions;
         DROP FUNCTION ${here.schema}.delete_session_events();
         ALTER TABLE ${here.schema}.events ADD CONSTRAINT events_session_id_fkey
           FOREIGN KEY (session_id) REFERENCES ${here.schema}.sessions (id) ON DELETE CASCADE;
         UPDATE ${here.schema}.schema_version SET version = 4;`,
      )
      expect(await here.foreignKeys()).toBe(1)
      const store = await here.open()
      expect(
        (await adminQuery(`SELECT version FROM ${here.schema}.schema_version`)).rows[0].version,
      ).toBe(PG_SCHEMA_VERSION)
      expect(await here.foreignKeys()).toBe(0)
      const opened = await store.open(session.header.id)
      appendAll(opened, [turnStart(2), user('from version 5'), turnEnd(2)])
      await opened.close()
      expect((await store.read(session.header.id)).events).toHaveLength(6)
      await store.delete(session.header.id)
      expect(await here.events(session.header.id)).toBe(0)
    } finally {
      await here.done()
    }
  })
})

/** Events of seqs `seqs` whose stored lines are `{"seq":N}`. */
function batch(seqs: readonly number[]): { events: SessionEvent[]; lines: string[] } {
  return {
    events: seqs.map((seq) => ({ seq, time: 1_000 + seq, type: 'x', data: null }) as never),
    lines: seqs.map((seq) => `{"seq":${seq}}`),
  }
}

describe('a PostgreSQL batch', () => {
  it('stores each line at its seq, counted from the first, and the count and time of the last', async () => {
    const here = await place()
    const backend = await here.backend()
    try {
      const header = { id: 'b1', formatVersion: 1, createdAt: 1 }
      const lease = await backend.create(header)
      const writer = await backend.openWriter('b1', { header, eventCount: 0, updatedAt: 1 })
      for (const seqs of [[0, 1, 2], [3], [4, 5]]) {
        const { events, lines } = batch(seqs)
        await writer.write(events, lines)
      }
      const rows = await adminQuery(
        `SELECT seq, line FROM ${here.schema}.events WHERE session_id = 'b1' ORDER BY seq`,
      )
      expect(rows.rows).toEqual([0, 1, 2, 3, 4, 5].map((seq) => ({ seq, line: `{"seq":${seq}}` })))
      const meta = await adminQuery(
        `SELECT event_count, updated_at FROM ${here.schema}.sessions WHERE id = 'b1'`,
      )
      expect(meta.rows[0]).toEqual({ event_count: 6, updated_at: 1_005 })
      await lease.release()
    } finally {
      await backend.close()
      await here.done()
    }
  })

  it('writes nothing of a batch whose lines hold a newline or whose seqs have a gap', async () => {
    const here = await place()
    const backend = await here.backend()
    try {
      const header = { id: 'b2', formatVersion: 1, createdAt: 1 }
      const lease = await backend.create(header)
      const writer = await backend.openWriter('b2', { header, eventCount: 0, updatedAt: 1 })
      const split = batch([0, 1])
      // Never made by the codec (a line is JSON): one more piece than events must not be stored.
      split.lines[0] = '{"seq":0}\n{"seq":9}'
      await expect(writer.write(split.events, split.lines)).rejects.toBeInstanceOf(StoreError)
      const gap = batch([0, 2])
      await expect(writer.write(gap.events, gap.lines)).rejects.toThrow(/not consecutive/)
      expect(await here.events('b2')).toBe(0)
      const meta = await adminQuery(
        `SELECT event_count FROM ${here.schema}.sessions WHERE id = 'b2'`,
      )
      expect(meta.rows[0]).toEqual({ event_count: 0 })
      await lease.release()
    } finally {
      await backend.close()
      await here.done()
    }
  })

  it('notifies followers on rudder_events with the session id when it commits', async () => {
    const here = await place()
    const listener = await client()
    try {
      const store = await here.open()
      const session = await store.create()
      await listener.query('LISTEN rudder_events')
      const heard = new Promise<string | undefined>((resolve) =>
        listener.once('notification', (message) => resolve(message.payload)),
      )
      appendAll(session, [user('heard')])
      await session.flush()
      expect(await heard).toBe(session.header.id)
      await session.close()
    } finally {
      await listener.end()
      await here.done()
    }
  })
})

/**
 * PostgreSQL search indexes lazily (decision 0068): appends write events only, and `search`
 * first indexes what each session appended since its `search_indexed_through`, on the real
 * server. A version 3 schema (indexed at append) is migrated and keeps its index.
 */
import { describe, expect, it } from 'vitest'
import { PG_SCHEMA_VERSION } from '../../src/stores/postgres/postgres-schema.js'
import { turnEnd, turnStart, user } from '../support/log-builder.js'
import { appendAll } from './support/events.js'
import { adminQuery, placeSchema } from './support/postgres.js'

async function place() {
  const { schema, open, done } = placeSchema()
  const marks = async () =>
    (
      await adminQuery(
        `SELECT id, event_count AS events, search_indexed_through AS mark FROM ${schema}.sessions ORDER BY created_at`,
      )
    ).rows
  const texts = async () =>
    Number((await adminQuery(`SELECT count(*) AS n FROM ${schema}.message_text`)).rows[0].n)
  return { schema, open, done, marks, texts }
}

describe('PostgreSQL search, indexed when it runs', () => {
  it('appends write no search rows; search indexes them once, from another host too', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const other = await here.open()
      const session = await store.create()
      appendAll(session, [turnStart(1), user('alpha one'), turnEnd(1)])
      await session.flush()
      expect(await here.texts()).toBe(0)
      expect(await here.marks()).toEqual([{ id: session.header.id, events: 3, mark: -1 }])
      expect((await other.search('alpha')).map((hit) => hit.seq)).toEqual([1])
      expect(await here.marks()).toEqual([{ id: session.header.id, events: 3, mark: 2 }])
      appendAll(session, [turnStart(2), user('alpha two'), turnEnd(2)])
      for (let index = 0; index < 600; index++) appendAll(session, [user(`bulk${index} alpha`)])
      await session.flush()
      expect(await store.search('alpha', { limit: 1000 })).toHaveLength(602)
      expect((await store.search('bulk599')).map((hit) => hit.seq)).toEqual([605])
      expect(await here.texts()).toBe(602)
      await session.close()
      const child = await store.fork(session.header.id, { atSeq: 2 })
      await child.close()
      expect((await store.search('one')).map((hit) => hit.sessionId).sort()).toEqual(
        [session.header.id, child.header.id].sort(),
      )
    } finally {
      await here.done()
    }
  })

  it('replaces rows past the mark (a version 3 host’s append), so nothing is found twice', async () => {
    const here = await place()
    try {
      const store = await here.open()
      const session = await store.create()
      appendAll(session, [user('first quokka')])
      await session.flush()
      await store.search('quokka')
      appendAll(session, [user('second quokka'), turnStart(1), turnEnd(1)])
      await session.close()
      // What a version 3 host does with its appends: a text row for each message, and one for a
      // seq whose event has no text here (so a stale row is dropped, not kept).
      await adminQuery(
        `INSERT INTO ${here.schema}.message_text (session_id, seq, text) VALUES ($1, 1, 'second quokka'), ($1, 2, 'stale quokka')`,
        [session.header.id],
      )
      expect((await store.search('quokka')).map((hit) => hit.seq).sort()).toEqual([0, 1])
      expect(await here.texts()).toBe(2)
    } finally {
      await here.done()
    }
  })
})

describe('a version 3 PostgreSQL schema', () => {
  it('is migrated to version 4 with its index kept: it searches and appends without duplicates', async () => {
    const here = await place()
    try {
      const first = await here.open()
      const session = await first.create()
      appendAll(session, [turnStart(1), user('old walrus'), turnEnd(1)])
      await session.close()
      await first.close()
      // Back to what version 3 left: no mark, and the search rows its appends wrote.
      await adminQuery(
        `ALTER TABLE ${here.schema}.sessions DROP COLUMN search_indexed_through;
         UPDATE ${here.schema}.schema_version SET version = 3;
         INSERT INTO ${here.schema}.message_text (session_id, seq, text) VALUES ('${session.header.id}', 1, 'old walrus');`,
      )
      const store = await here.open()
      expect(await here.marks()).toEqual([{ id: session.header.id, events: 3, mark: 2 }])
      expect((await store.search('walrus')).map((hit) => hit.seq)).toEqual([1])
      const opened = await store.open(session.header.id)
      appendAll(opened, [turnStart(2), user('new walrus'), turnEnd(2)])
      await opened.close()
      expect((await store.search('walrus')).map((hit) => hit.seq).sort()).toEqual([1, 4])
      expect(await here.texts()).toBe(2)
      expect(
        (await adminQuery(`SELECT version FROM ${here.schema}.schema_version`)).rows[0].version,
      ).toBe(PG_SCHEMA_VERSION)
    } finally {
      await here.done()
    }
  })
})

/**
 * The SQLite format on disk: a write-ahead log cut at any point after a crash, schema
 * versioning, damaged rows, one commit per flush, and the WAL synced off the main thread.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { checkLog, LogCorruptError, RudderError, type SessionEvent } from '../../src/index.js'
import { openStore, type StoreCounters } from '../../src/stores/index.js'
import { createWalSync } from '../../src/stores/sqlite/wal-sync.js'
import { user } from '../support/log-builder.js'
import { startChild } from './support/child-process.js'
import { appendAll } from './support/events.js'
import { storeOf, tempDirectory, urlOf } from './support/stores.js'

const dbPath = (directory: string) => join(directory, 'sessions.db')

/** The repair a crash inside the child's tool call gets, in event types. */
const REPAIR_TYPES = ['tool/result', 'tool/result', 'step/end', 'turn/end']

describe('the SQLite store on disk', () => {
  it('opens a database whose WAL was cut anywhere at a commit, or refuses it clearly', async () => {
    const directory = tempDirectory()
    const child = startChild('store-child.ts', [urlOf('sqlite', directory), 'write-open-turn'])
    const ready = await child.next()
    await child.kill()
    const id = ready.id as string
    const events = ready.events as SessionEvent[]
    const durable = ready.durable as number[]
    const wal = readFileSync(`${dbPath(directory)}-wal`)
    expect(wal.length).toBeGreaterThan(32)
    // Frames are a 24-byte header and a page after the 32-byte file header. Cut at every frame
    // boundary, one byte either side, and in the middle of every frame.
    const pageSize = wal.readUInt32BE(8)
    const frame = 24 + pageSize
    const cuts = new Set<number>([0, 16, 32])
    for (let end = 32 + frame; end <= wal.length; end += frame)
      for (const cut of [end - 1, end, end + 1, end - Math.floor(frame / 2)])
        if (cut <= wal.length) cuts.add(cut)
    const outcomes = new Set<number>()
    for (const cut of [...cuts].sort((a, b) => a - b)) {
      const copy = tempDirectory()
      copyFileSync(dbPath(directory), dbPath(copy))
      writeFileSync(`${dbPath(copy)}-wal`, wal.subarray(0, cut))
      const store = await openStore(urlOf('sqlite', copy))
      const outcome = await store.open(id).then(
        (session) => ({ session }),
        (error: unknown) => ({ error }),
      )
      if ('error' in outcome) {
        // Cut before the session was committed: it does not exist yet, and says so.
        expect(outcome.error, `cut ${cut}`).toBeInstanceOf(RudderError)
        expect((outcome.error as RudderError).code).toBe('SESSION_NOT_FOUND')
        outcomes.add(-1)
      } else {
        const opened = outcome.session
        const repairStart = opened.residentEvents.findIndex(
          (event, seq) => !isDeepStrictEqual(event, events[seq]),
        )
        const kept = repairStart < 0 ? opened.residentEvents.length : repairStart
        // Whole commits only: the session's creation, then one commit per flush.
        expect([0, ...durable], `cut ${cut}: ${kept} events kept`).toContain(kept)
        expect(opened.residentEvents.slice(0, kept)).toEqual(events.slice(0, kept))
        expect(checkLog(opened.residentEvents), `cut ${cut}`).toEqual([])
        outcomes.add(kept)
        await opened.close()
      }
      await store.close()
    }
    // The whole WAL keeps every event and closes the turn the kill left open.
    expect(outcomes).toContain(events.length)
    expect(outcomes.size).toBeGreaterThan(3)
    // Hundreds of opens, each with a synced repair: ~14 s alone, over 30 s on a loaded machine.
  }, 180_000)

  it('recovers the whole log after a kill and repairs the open turn (scenario 25)', async () => {
    const directory = tempDirectory()
    const child = startChild('store-child.ts', [urlOf('sqlite', directory), 'write-open-turn'])
    const ready = await child.next()
    await child.kill()
    const store = await storeOf('sqlite', directory)
    const opened = await store.open(ready.id as string)
    const events = ready.events as SessionEvent[]
    expect(opened.residentEvents.slice(0, events.length)).toEqual(events)
    expect(opened.residentEvents.slice(events.length).map((event) => event.type)).toEqual(
      REPAIR_TYPES,
    )
    expect(opened.residentEvents[events.length]!.data).toMatchObject({
      callId: 'c1',
      error: { code: 'outcome-unknown' },
    })
    expect(opened.residentEvents[events.length + 1]!.data).toMatchObject({
      callId: 'c2',
      error: { code: 'interrupted' },
    })
    await opened.close()
  })

  it('versions its schema with user_version and refuses a newer one', async () => {
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory)
    await (await store.create()).close()
    await store.close()
    const db = new Database(dbPath(directory))
    expect(db.pragma('user_version', { simple: true })).toBe(3)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    db.pragma('user_version = 4')
    db.close()
    await expect(openStore(urlOf('sqlite', directory))).rejects.toMatchObject({
      code: 'FORMAT_TOO_NEW',
      message: expect.stringMatching(/newer rudder.*upgrade/),
    })
  })

  it('refuses a damaged row, naming the database, the seq and the repair command', async () => {
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory)
    const session = await store.create()
    appendAll(session, [user('a', 'ctx'), user('b', 'ctx'), user('c', 'ctx')])
    await session.close()
    const db = new Database(dbPath(directory))
    db.prepare('UPDATE events SET line = ? WHERE session_id = ? AND seq = 1').run(
      '{"seq":1,',
      session.header.id,
    )
    db.close()
    const attempt = store.open(session.header.id)
    await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
    await expect(attempt).rejects.toThrowError(`seq 1`)
    await expect(attempt).rejects.toThrowError(`rudder sessions repair ${session.header.id}`)
    const salvage = await store.repair(session.header.id)
    expect(salvage.keptEvents).toBe(1)
    expect(salvage.session.residentEvents).toEqual(session.residentEvents.slice(0, 1))
    await salvage.session.close()
  })

  it('reports a damaged database page as LogCorruptError with the repair hint, and repair salvages every readable event', async () => {
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory)
    const session = await store.create()
    for (let index = 0; index < 300; index++)
      appendAll(session, [user(`event ${index} ${'x'.repeat(1000)}`, 'ctx')])
    await session.close()
    await store.close()
    // Checkpoint the WAL into the file, then overwrite the table page holding seq 150's row.
    const db = new Database(dbPath(directory))
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.close()
    const bytes = readFileSync(dbPath(directory))
    const at = bytes.indexOf('{"seq":150,')
    expect(at).toBeGreaterThan(0)
    const pageSize = bytes.readUInt16BE(16)
    bytes.fill(0xff, at - (at % pageSize), at - (at % pageSize) + pageSize)
    writeFileSync(dbPath(directory), bytes)

    const damaged = await storeOf('sqlite', directory)
    const id = session.header.id
    // Opening reads past the checkpoint only (decision 0161): the damage is met when the
    // history is read.
    const opened = await damaged.open(id)
    expect(opened.residentFrom).toBe(300)
    for (const attempt of [opened.loadProjection(), damaged.read(id)]) {
      await expect(attempt).rejects.toBeInstanceOf(LogCorruptError)
      await expect(attempt).rejects.toThrowError(/the SQLite database is damaged/)
      await expect(attempt).rejects.toThrowError(`rudder sessions repair ${id}`)
    }
    await opened.close()
    const salvage = await damaged.repair(id)
    // Every row before the damaged page is kept; the cut names the first seq it could not read.
    expect(salvage.keptEvents).toBeGreaterThan(100)
    expect(salvage.keptEvents).toBeLessThanOrEqual(150)
    expect(salvage.problem?.location).toMatch(new RegExp(`seq ${salvage.keptEvents}$`))
    expect(salvage.session.residentEvents).toEqual(
      session.residentEvents.slice(0, salvage.keptEvents),
    )
    await salvage.session.close()
  })

  it('refuses a file that is not a database with a StoreError naming it', async () => {
    const directory = tempDirectory()
    writeFileSync(
      dbPath(directory),
      'not a database, just text that is long enough to look like one'.repeat(20),
    )
    await expect(openStore(urlOf('sqlite', directory))).rejects.toMatchObject({
      code: 'STORE',
      message: expect.stringContaining(dbPath(directory)),
    })
  })

  it('commits once per flush, never per event', async () => {
    const counters: StoreCounters = { syncs: 0, bytesWritten: 0, batches: 0 }
    const directory = tempDirectory()
    const store = await storeOf('sqlite', directory, { counters })
    const session = await store.create()
    const before = counters.syncs
    for (let index = 0; index < 100; index++) appendAll(session, [user(`context ${index}`, 'ctx')])
    await session.flush()
    await session.flush()
    expect(counters.syncs - before).toBe(1)
    expect(existsSync(`${dbPath(directory)}-wal`)).toBe(true)
    await session.close()
  })

  it('moves the listed update time at most once a second while open, and to the last write at close (decision 0076)', async () => {
    const directory = tempDirectory()
    let time = 1_700_000_000_000
    const store = await storeOf('sqlite', directory, { now: () => time })
    const session = await store.create()
    const row = () => {
      const reader = new Database(dbPath(directory), { readonly: true })
      try {
        return reader
          .prepare('SELECT updated_at, event_count FROM sessions WHERE id = ?')
          .get(session.header.id)
      } finally {
        reader.close()
      }
    }
    const appendAt = async (advance: number, text: string) => {
      time += advance
      appendAll(session, [user(text, 'ctx')])
      await session.flush()
      return time
    }
    const first = await appendAt(0, 'first')
    expect(row()).toEqual({ updated_at: first, event_count: 1 })
    // Within a second of the row's time: the count moves, the indexed time waits.
    await appendAt(400, 'second')
    expect(row()).toEqual({ updated_at: first, event_count: 2 })
    const third = await appendAt(700, 'third')
    expect(row()).toEqual({ updated_at: third, event_count: 3 })
    const last = await appendAt(10, 'fourth')
    expect(row()).toEqual({ updated_at: third, event_count: 4 })
    await session.close()
    expect(row()).toEqual({ updated_at: last, event_count: 4 })
    expect((await store.list())[0]).toMatchObject({ eventCount: 4, updatedAt: last })
  })

  describe('appends sync the WAL off the main thread (decision 0146)', () => {
    function database(journal: 'wal' | 'delete') {
      const directory = tempDirectory()
      const db = new Database(dbPath(directory))
      db.pragma(`journal_mode = ${journal}`)
      db.pragma('synchronous = FULL')
      db.exec('CREATE TABLE t (x INTEGER)')
      return { db, path: dbPath(directory) }
    }
    const level = (db: Database.Database) => db.pragma('synchronous', { simple: true })

    it('commits an append unsynced, and every other commit stays synchronous=FULL', async () => {
      const { db, path } = database('wal')
      const wal = createWalSync(db, path)!
      const inside = wal.commitUnsynced(() => {
        db.prepare('INSERT INTO t VALUES (1)').run()
        return level(db)
      })
      expect(inside).toBe(1)
      expect(level(db)).toBe(2)
      expect(() =>
        wal.commitUnsynced(() => {
          db.prepare('INSERT INTO t VALUES (2)').run()
          throw new Error('refused')
        }),
      ).toThrow('refused')
      expect(level(db)).toBe(2)
      // The refused transaction rolled back; the committed one is visible before the sync.
      expect(db.prepare('SELECT x FROM t').pluck().all()).toEqual([1])
      await wal.sync()
      await wal.sync()
      await wal.close()
      db.close()
    })

    it('leaves a database that is not in WAL mode to synchronous commits', () => {
      const { db, path } = database('delete')
      expect(createWalSync(db, path)).toBeUndefined()
      db.close()
    })

    it('counts one sync per flush: the WAL fdatasync, after the commit', async () => {
      const counters: StoreCounters = { syncs: 0, bytesWritten: 0, batches: 0 }
      const directory = tempDirectory()
      const store = await storeOf('sqlite', directory, { counters })
      const session = await store.create()
      const before = counters.syncs
      appendAll(session, [user('one', 'ctx')])
      const flushed = session.flush()
      // The commit happened synchronously; the flush resolves only once the WAL is synced.
      expect(counters.syncs).toBe(before)
      await flushed
      expect(counters.syncs - before).toBe(1)
      const reader = new Database(dbPath(directory), { readonly: true })
      expect(reader.prepare('SELECT count(*) FROM events').pluck().get()).toBe(1)
      reader.close()
      await session.close()
    })
  })
})

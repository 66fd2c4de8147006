/**
 * Following a stored log (docs/spec.md §9.1, decisions 0063 and 0165), in the memory, JSONL
 * and SQLite stores: from seq 0, a late seq, with the checkpoint beside the log, without one
 * and with a stale one, exactly the stored events in order; a corrupt record is reported with
 * its location; a follow from after a matching checkpoint never reads the records it covers.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { LogCorruptError, type SessionEvent } from '../../src/core/index.js'
import type { Backend, RecordBatch } from '../../src/stores/backend.js'
import { type Checkpoint, encodeCheckpoint, parseCheckpoint } from '../../src/stores/checkpoint.js'
import { encodeEvents } from '../../src/stores/codec.js'
import { followLog, logEnd } from '../../src/stores/follow.js'
import type { SessionStore, StoreOptions } from '../../src/stores/index.js'
import { loadEvents } from '../../src/stores/log-loader.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import { buildLog, turnEnd } from '../support/log-builder.js'
import { appendEvents, closedTurn } from './support/events.js'
import { backendOf, type StoreKind, tempDirectory } from './support/stores.js'

const KINDS: readonly StoreKind[] = ['memory', 'jsonl', 'sqlite']

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

type Read = {
  readonly fromSeq?: number
  readonly throughSeq?: number
  readonly fromPosition?: number
}

/** The backend, with every `records` call it is asked for noted in `reads`. */
function recording(
  backend: Backend,
  onRead: (read: Read) => void = () => {},
): { backend: Backend; reads: Read[] } {
  const reads: Read[] = []
  return {
    reads,
    backend: {
      ...backend,
      records(id, options) {
        reads.push({ ...options })
        onRead({ ...options })
        return backend.records(id, options)
      },
    },
  }
}

/** Appends `events` to session `id` as a process that keeps no checkpoint would. */
async function appendRaw(backend: Backend, id: string, events: readonly SessionEvent[]) {
  const lease = await backend.acquire(id)
  try {
    const header = JSON.parse((await backend.readHeader(id)).text)
    const writer = await backend.openWriter(id, {
      header,
      eventCount: events[0]!.seq,
      updatedAt: header.createdAt,
    })
    await writer.write(events, await encodeEvents(events, backend.blobs))
    await writer.close()
  } finally {
    await lease.release()
  }
}

/** Four closed turns (48 events): 24 written by a store (a checkpoint through seq 23), then 24 raw. */
const LOG = buildLog([
  ...closedTurn(1, 'one'),
  ...closedTurn(2, 'two'),
  ...closedTurn(3, 'three'),
  ...closedTurn(4, 'four'),
])
const COVERED = 24

/** The events `followLog` yields from `fromSeq` through `lastSeq`, then it is left. */
async function followed(
  backend: Backend,
  id: string,
  fromSeq: number,
  lastSeq: number,
): Promise<SessionEvent[]> {
  const seen: SessionEvent[] = []
  const signal = new AbortController().signal
  for await (const event of followLog(backend, id, { fromSeq, signal, pollMs: 60_000 })) {
    seen.push(event)
    if (event.seq >= lastSeq) break
  }
  return seen
}

/** A follower from the log's last seq, polling every 5 ms: its first event checked, its next read begun. */
async function followingLast(backend: Backend, id: string, last: SessionEvent) {
  const controller = new AbortController()
  const follower = followLog(backend, id, {
    fromSeq: LOG.length - 1,
    signal: controller.signal,
    pollMs: 5,
  })
  expect((await follower.next()).value).toEqual(last)
  return { controller, follower, pending: follower.next() }
}

describe.each(KINDS)('following a %s log', (kind) => {
  async function stored() {
    const backend = await backendOf(kind, tempDirectory())
    const store = createSessionStore(backend, EVERY_CLOSE)
    stores.push(store)
    const session = await store.create()
    const id = session.header.id
    appendEvents(session, LOG.slice(0, COVERED))
    await session.close()
    await appendRaw(backend, id, LOG.slice(COVERED))
    const checkpoint = parseCheckpoint(await backend.readCheckpoint!(id))
    expect(checkpoint?.throughSeq).toBe(COVERED - 1)
    const { events } = await loadEvents(backend, id)
    expect(events.map((event) => event.type)).toEqual(LOG.map((event) => event.type))
    return { backend, id, events, checkpoint: checkpoint! }
  }

  const SEQS = [0, 1, COVERED - 1, COVERED, 30, LOG.length - 1]

  it('yields exactly the events from any seq; after a matching checkpoint, reads none it covers', async () => {
    const { backend: inner, id, events } = await stored()
    for (const fromSeq of SEQS) {
      const { backend, reads } = recording(inner)
      expect(await followed(backend, id, fromSeq, LOG.length - 1)).toEqual(events.slice(fromSeq))
      const firstRead = Math.min(...reads.map((read) => read.fromSeq ?? 0))
      // From before the checkpoint's seq the log is checked from seq 0; after it, from there.
      expect(firstRead).toBe(fromSeq >= COVERED ? COVERED - 1 : 0)
      expect(
        reads.every((read) => read.throughSeq === undefined || read.fromSeq === read.throughSeq),
      ).toBe(true)
    }
  })

  it('yields exactly the events from any seq without a checkpoint, checking from seq 0', async () => {
    const { backend: inner, id, events } = await stored()
    await inner.writeCheckpoint!(id, 'not a checkpoint')
    for (const fromSeq of SEQS) {
      const { backend, reads } = recording(inner)
      expect(await followed(backend, id, fromSeq, LOG.length - 1)).toEqual(events.slice(fromSeq))
      expect(reads.map((read) => read.fromSeq ?? 0)).toEqual([0])
    }
  })

  it('ignores a stale checkpoint (beyond the log, or its record elsewhere) and still yields exactly', async () => {
    const { backend: inner, id, events, checkpoint } = await stored()
    const end = LOG.length
    const beyond: Checkpoint = {
      ...checkpoint,
      throughSeq: end + 4,
      position: checkpoint.position + 10_000,
      checker: { ...checkpoint.checker, nextSeq: end + 5, boundaries: new Uint8Array(end + 5) },
    }
    const moved: Checkpoint = { ...checkpoint, position: checkpoint.position + 1 }
    for (const stale of [beyond, moved]) {
      await inner.writeCheckpoint!(id, encodeCheckpoint(stale))
      for (const fromSeq of [COVERED + 2, end - 1]) {
        const { backend, reads } = recording(inner)
        expect(await followed(backend, id, fromSeq, end - 1)).toEqual(events.slice(fromSeq))
        // Tried, found not to fit, then the log is checked from seq 0.
        expect(reads.at(-1)?.fromSeq ?? 0).toBe(0)
      }
    }
  })

  it('reports a corrupt record with its location, after yielding every event before it', async () => {
    const { backend: inner, id, events } = await stored()
    // Seq 48 closes a turn that was never started: it breaks an invariant.
    const [bad] = buildLog([...LOG.map(() => turnEnd(0)), turnEnd(9)]).slice(-1)
    await appendRaw(inner, id, [bad!])
    let where: string | undefined
    for await (const batch of inner.records(id, { fromSeq: LOG.length }))
      for (const record of batch) if (record.kind === 'line') where = inner.locate(id, record.where)
    for (const isCheckpointed of [true, false]) {
      if (!isCheckpointed) await inner.writeCheckpoint!(id, 'not a checkpoint')
      const seen: SessionEvent[] = []
      let failure: unknown
      try {
        for await (const event of followLog(inner, id, {
          fromSeq: 30,
          signal: new AbortController().signal,
          pollMs: 60_000,
        }))
          seen.push(event)
      } catch (error) {
        failure = error
      }
      expect(seen).toEqual(events.slice(30))
      expect(failure).toBeInstanceOf(LogCorruptError)
      expect((failure as LogCorruptError).location).toBe(where)
      expect((failure as Error).message).toMatch(/turn-balance|turn 9/)
    }
  })

  it('goes on after the end: new records are read from where the last one ended', async () => {
    const { backend: inner, id, events } = await stored()
    let reachedEnd: () => void = () => {}
    const atEnd = new Promise<void>((resolve) => {
      reachedEnd = resolve
    })
    const { backend, reads } = recording(inner, (read) => {
      if (read.fromSeq === LOG.length) reachedEnd()
    })
    const { controller, follower, pending } = await followingLast(backend, id, events.at(-1)!)
    // The follower read to the end and looks again from the next seq: now append.
    await atEnd
    const more = buildLog([...LOG.map(() => turnEnd(0)), ...closedTurn(5, 'five')]).slice(
      LOG.length,
    )
    await appendRaw(inner, id, more)
    const seen: SessionEvent[] = []
    for (let next = await pending; ; next = await follower.next()) {
      if (next.done) throw new Error('the follow ended early')
      seen.push(next.value)
      if (seen.length === more.length) break
    }
    expect(seen.map(({ seq, type, data }) => ({ seq, type, data }))).toEqual(
      more.map(({ seq, type, data }) => ({ seq, type, data })),
    )
    controller.abort()
    expect((await follower.next()).done).toBe(true)
    // Every read after the first pass starts at the next seq, where the last record read ended.
    const ends: number[] = []
    for await (const batch of inner.records(id))
      for (const record of batch) if (record.kind === 'line') ends.push(record.position)
    const later = reads.filter((read) => (read.fromSeq ?? 0) >= LOG.length)
    expect(later.length).toBeGreaterThan(0)
    for (const read of later) expect(read.fromPosition).toBe(ends[read.fromSeq! - 1])
  })

  it('ends when stopped under a read that then fails (a store closing its backend), and reports the failure otherwise', async () => {
    const { backend: inner, id, events } = await stored()
    for (const stopFirst of [true, false]) {
      let release: () => void = () => {}
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      let reading: () => void = () => {}
      const atRead = new Promise<void>((resolve) => {
        reading = resolve
      })
      // The read after the first pass waits on `held`, then fails as a closed pool does.
      const backend: Backend = {
        ...inner,
        records(sessionId, options) {
          if ((options?.fromSeq ?? 0) < LOG.length) return inner.records(sessionId, options)
          const failing: AsyncIterator<RecordBatch> = {
            async next() {
              reading()
              await held
              throw new Error('Cannot use a pool after calling end on the pool')
            },
          }
          return { [Symbol.asyncIterator]: () => failing }
        },
      }
      const { controller, pending } = await followingLast(backend, id, events.at(-1)!)
      await atRead
      if (stopFirst) controller.abort()
      release()
      if (stopFirst) expect((await pending).done).toBe(true)
      else await expect(pending).rejects.toThrow('Cannot use a pool after calling end')
    }
  })

  it('finds where the log ends (stat) from a matching checkpoint without reading what it covers', async () => {
    const { backend: inner, id, events } = await stored()
    const store = createSessionStore(inner, EVERY_CLOSE)
    stores.push(store)
    const { backend, reads } = recording(inner)
    expect(await logEnd(backend, id)).toEqual({ nextSeq: LOG.length })
    expect(Math.min(...reads.map((read) => read.fromSeq ?? 0))).toBe(COVERED - 1)
    const stat = await store.stat(id)
    expect(stat.header).toEqual((await store.read(id)).header)
    expect(stat.nextSeq).toBe(events.length)
    expect(stat.openTurn).toBeUndefined()
    // Without a usable checkpoint, from seq 0; a turn left open is reported as `read` does.
    await inner.writeCheckpoint!(id, 'not a checkpoint')
    const open = buildLog([...LOG.map(() => turnEnd(0)), ...closedTurn(5, 'five')]).slice(
      LOG.length,
      LOG.length + 3,
    )
    await appendRaw(inner, id, open)
    const again = recording(inner)
    expect(await logEnd(again.backend, id)).toEqual({ nextSeq: LOG.length + 3, openTurn: 5 })
    expect(again.reads.map((read) => read.fromSeq ?? 0)).toEqual([0])
    expect((await store.read(id)).openTurn).toBe(5)
  })

  it('stat reports a corrupt record with its location, as read does', async () => {
    const { backend, id } = await stored()
    const store = createSessionStore(backend, EVERY_CLOSE)
    stores.push(store)
    const [bad] = buildLog([...LOG.map(() => turnEnd(0)), turnEnd(9)]).slice(-1)
    await appendRaw(backend, id, [bad!])
    const failures = await Promise.all(
      [store.stat(id), store.read(id)].map((pending) =>
        pending.then(
          () => undefined,
          (error) => error,
        ),
      ),
    )
    expect(failures[0]).toBeInstanceOf(LogCorruptError)
    expect((failures[0] as LogCorruptError).location).toBe(
      (failures[1] as LogCorruptError).location,
    )
  })
})

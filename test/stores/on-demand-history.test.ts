/**
 * A session opened from its checkpoint reads its history on demand (docs/spec.md §9.2,
 * decision 0161), in every store: opening reads only the records after the checkpoint, the
 * covered part is read when asked for (`readEvents`, `loadProjection`), an agent resumes
 * over it and sends the whole transcript, a crashed turn is closed from the fold, and a fork
 * at the end copies bytes without reading any event.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { crashRepairOf } from '../../src/core/index.js'
import {
  createAgent,
  type EventMap,
  project,
  RudderError,
  type SessionEvent,
} from '../../src/index.js'
import type { Backend } from '../../src/stores/backend.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import type { SessionStore, StoreOptions } from '../../src/stores/store.js'
import { scriptedProvider } from '../../src/testing.js'
import {
  assistant,
  compaction,
  header,
  stepStart,
  toolCall,
  turnStart,
  user,
} from '../support/log-builder.js'
import { allEvents } from '../support/session-events.js'
import { appendAll, closedTurn } from './support/events.js'
import { backendOf, STORE_KINDS, type StoreKind, tempDirectory } from './support/stores.js'

/** Every close writes a checkpoint, however small the log. */
const EVERY_CLOSE: StoreOptions = { checkpointPolicy: { minCharacters: 0 } }

const stores: SessionStore[] = []
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close()
})

/** A store whose backend counts the event records it reads (or copies and reads). */
async function countingStore(kind: StoreKind, options: StoreOptions = EVERY_CLOSE) {
  const inner = await backendOf(kind, tempDirectory())
  const reads = { records: 0 }
  const backend: Backend = {
    ...inner,
    async *records(id, range) {
      for await (const batch of inner.records(id, range)) {
        reads.records += batch.filter((record) => record.kind === 'line').length
        yield batch
      }
    },
    // A fork's one-pass copy reads the records it copies (decisions 0069, 0019).
    ...(inner.copyInspected
      ? {
          copyInspected: (sourceId, header, copy) =>
            inner.copyInspected!(sourceId, header, {
              ...copy,
              inspect: (records) => {
                reads.records += records.positions.length
                return copy.inspect(records)
              },
            }),
        }
      : {}),
  }
  const store = createSessionStore(backend, options)
  stores.push(store)
  return { store, reads }
}

describe.each(STORE_KINDS)('on-demand history in the %s store', (kind) => {
  /** A closed session of `turns` turns, closed with a checkpoint of all of it. */
  async function written(turns: number) {
    const context = await countingStore(kind)
    const session = await context.store.create()
    for (let turn = 1; turn <= turns; turn++) appendAll(session, closedTurn(turn, `prompt ${turn}`))
    const events = [...session.residentEvents]
    const messages = session.messages()
    await session.close()
    return { ...context, id: session.header.id, events, messages }
  }

  it('projects a long log loaded in full when asked, as a checkpointed one', async () => {
    const { store } = await countingStore(kind, {
      checkpointPolicy: {
        minCharacters: Infinity,
        everyCharacters: Infinity,
        everyEvents: Infinity,
      },
    })
    const session = await store.create()
    for (let turn = 1; turn <= 1_400; turn++) appendAll(session, closedTurn(turn, `prompt ${turn}`))
    const messages = session.messages()
    await session.close()
    const opened = await store.open(session.header.id)
    expect(opened.residentFrom).toBe(0)
    expect(opened.isProjectionLoaded).toBe(false)
    expect(() => opened.messages()).toThrow(/loadProjection/)
    await opened.loadProjection()
    expect(opened.messages()).toEqual(messages)
    await opened.close()
  })

  it('opens reading only the record of the checkpoint, and reads the rest when asked', async () => {
    const { store, reads, id, events, messages } = await written(5)
    reads.records = 0
    const session = await store.open(id)
    expect(reads.records).toBe(1)
    expect(session.nextSeq).toBe(60)
    expect(session.residentFrom).toBe(60)
    expect(session.residentEvents).toEqual([])
    expect(session.eventAt(10)).toBeUndefined()
    expect(session.state()).toEqual({ lastTurn: 5, openTurn: undefined, step: undefined })
    expect(session.isProjectionLoaded).toBe(false)
    expect(() => session.messages()).toThrow(RudderError)
    expect(() => session.requestHeader()).toThrow(/loadProjection/)

    // Appends need none of the history: they are checked from the checkpoint's state.
    appendAll(session, closedTurn(6, 'after'))
    expect(() => session.append('turn/end', { turn: 6, reason: { kind: 'completed' } })).toThrow(
      /INVARIANT|turn/,
    )
    const all = await allEvents(session)
    expect(all.slice(0, 60)).toEqual(events)
    expect(all).toHaveLength(72)
    expect(session.residentFrom).toBe(60)

    await session.loadProjection()
    expect(session.residentFrom).toBeLessThanOrEqual(1)
    expect(session.messages().slice(0, messages.length)).toEqual([...messages])
    expect(session.messages()).toEqual(project(all))
    expect(session.requestHeader()).toEqual(header()[1])
    await session.close()
  })

  it('reads any range across the part held in memory, in order', async () => {
    const { store, id, events } = await written(3)
    const session = await store.open(id)
    appendAll(session, closedTurn(4, 'after'))
    const tail = session.residentEvents
    const whole = [...events, ...tail]
    for (const [fromSeq, throughSeq] of [
      [0, 47],
      [5, 30],
      [30, 40],
      [36, 36],
      [40, 47],
      [47, 100],
      [20, 10],
    ] as const) {
      const read: SessionEvent[] = []
      for await (const batch of session.readEvents({ fromSeq, throughSeq })) read.push(...batch)
      expect(read).toEqual(whole.slice(fromSeq, throughSeq + 1))
    }
    const aborted = new AbortController()
    aborted.abort()
    await expect(allEventsWith(session.readEvents({ signal: aborted.signal }))).rejects.toThrow()
    await session.close()
  })

  it('resumes an agent whose first request holds the whole transcript, header logged once', async () => {
    const context = await countingStore(kind)
    const first = await context.store.create()
    const provider = scriptedProvider([{ text: 'one' }, { text: 'two' }])
    const agent = createAgent({ session: first, provider, system: 'be brief' })
    await agent.send('first prompt')
    await agent.idle()
    await agent.dispose()
    await first.close()

    const session = await context.store.open(first.header.id)
    expect(session.residentFrom).toBe(first.nextSeq)
    const resumed = createAgent({ session, provider, system: 'be brief' })
    expect(session.isProjectionLoaded).toBe(false)
    await resumed.send('second prompt')
    await resumed.idle()
    await resumed.dispose()
    const log = await allEvents(session)
    // The second request is the projection of everything before it: both prompts, one answer.
    expect(provider.requests[1]?.messages).toEqual(project(log.slice(0, -4)))
    expect(log.filter((event) => event.type === 'request/header')).toHaveLength(1)
    await session.close()
  })

  it('closes a turn a crash left open before the checkpoint, from the fold alone', async () => {
    const context = await countingStore(kind)
    const first = await context.store.create()
    appendAll(first, [
      ...closedTurn(1, 'done'),
      turnStart(2),
      user('crashed'),
      stepStart(2, 1),
      assistant('', [{ id: 'a' }, { id: 'b' }]),
      toolCall('a'),
    ])
    const crashed = [...first.residentEvents]
    await first.close()
    context.reads.records = 0
    const session = await context.store.open(first.header.id)
    expect(context.reads.records).toBe(1)
    const plan = crashRepairOf(crashed)!
    expect(session.repairs).toEqual([
      expect.objectContaining({ kind: 'turn-closed', turn: 2, fromSeq: 17, toSeq: 20 }),
    ])
    expect(session.residentEvents.map((event) => [event.type, event.data])).toEqual(
      plan.appends.map((append) => [append[0], append[1]]),
    )
    expect(session.state().openTurn).toBeUndefined()
    await session.close()
  })

  it('forks the end of a session opened from its checkpoint without reading an event', async () => {
    const { store, reads, id, events } = await written(4)
    const source = await store.open(id)
    appendAll(source, closedTurn(5, 'fifth'))
    await source.flush()
    reads.records = 0
    const child = await store.fork(id)
    // No event is parsed; a store that copies by reading the records sums them once against
    // what the source wrote (decisions 0069, 0019); memory and PostgreSQL copy blind.
    expect(reads.records).toBe(kind === 'jsonl' || kind === 'sqlite' ? 60 : 0)
    expect(child.header.parent).toEqual({ sessionId: id, seq: 59 })
    expect(child.residentFrom).toBe(60)
    expect(child.state()).toEqual(source.state())
    expect(await allEvents(child)).toEqual(await allEvents(source))
    await child.loadProjection()
    await source.loadProjection()
    expect(child.messages()).toEqual(source.messages())
    // The child goes on as any session: checked appends, then a checkpoint of its own.
    appendAll(child, closedTurn(6, 'in the child'))
    expect(() => child.append('step/end', { turn: 6, step: 1 })).toThrow(/INVARIANT|step/)
    await child.close()
    await source.close()
    const reopened = await store.open(child.header.id)
    expect(reopened.residentFrom).toBe(72)
    expect((await allEvents(reopened)).slice(0, 48)).toEqual(events)
    await reopened.close()
  })

  it('forks at a middle seq by a scan of the kept records, source closed or opened from its checkpoint', async () => {
    const { store, reads, id, events } = await written(4)
    for (const isOpen of [false, true]) {
      const source = isOpen ? await store.open(id) : undefined
      reads.records = 0
      const child = await store.fork(id, { atSeq: 23 })
      // One pass over the kept records, none parsed but turn starts and compactions.
      expect(reads.records).toBe(24)
      expect(child.residentFrom).toBe(24)
      expect(child.state()).toEqual({ lastTurn: 2, openTurn: undefined, step: undefined })
      expect(await allEvents(child)).toEqual(events.slice(0, 24))
      await child.loadProjection()
      expect(child.messages()).toEqual(project(events.slice(0, 24)))
      expect(child.requestHeader()).toEqual(header()[1])
      // The child's checker starts at the cut: turn numbers go on, a keep inside a step is refused.
      expect(codeOf(() => child.append('turn/start', { turn: 2, trigger: 'prompt' }))).toBe(
        'INVARIANT_VIOLATION',
      )
      const inStep = compaction(16)[1] as EventMap['compaction']
      expect(codeOf(() => child.append('compaction', inStep))).toBe('INVARIANT_VIOLATION')
      appendAll(child, closedTurn(3, 'in the child'))
      await child.close()
      await expect(store.fork(id, { atSeq: 30 })).rejects.toMatchObject({ code: 'OPEN_TURN' })
      await expect(store.fork(id, { atSeq: 48 })).rejects.toMatchObject({ code: 'INVALID_INPUT' })
      await source?.close()
    }
  })

  it('refuses a compaction keeping events it does not hold, and takes one after loading', async () => {
    const context = await countingStore(kind)
    const first = await context.store.create()
    for (let turn = 1; turn <= 3; turn++) appendAll(first, closedTurn(turn, `prompt ${turn}`))
    appendAll(first, [compaction(24), ...closedTurn(4, 'after the compaction')])
    const messages = first.messages()
    await first.close()
    const session = await context.store.open(first.header.id)
    const keepFrom = (seq: number) => compaction(seq)[1] as EventMap['compaction']
    expect(() => session.append('compaction', keepFrom(37))).toThrow(/loadProjection/)
    context.reads.records = 0
    await session.loadProjection()
    // Only what the projection needs is kept: from the kept events on. (A read starts where
    // the range holding its first seq starts, to be checked against that range's CRC: this
    // small log is one range, so it reads from 0; decision 0178.)
    expect(session.residentFrom).toBe(24)
    expect(context.reads.records).toBe(49)
    expect(session.messages()).toEqual(messages)
    expect(() => session.append('compaction', keepFrom(0))).toThrow(/firstKeptSeq 0 is before/)
    const kept = session.append('compaction', keepFrom(37))
    expect(session.messages()[0]?.content).toEqual(kept.data.summary)
    await session.close()
  })
})

/** The code of what `append` throws. */
function codeOf(append: () => unknown): string | undefined {
  try {
    append()
    return undefined
  } catch (error) {
    return error instanceof RudderError ? error.code : String(error)
  }
}

async function allEventsWith(batches: AsyncIterable<readonly SessionEvent[]>) {
  const events: SessionEvent[] = []
  for await (const batch of batches) events.push(...batch)
  return events
}

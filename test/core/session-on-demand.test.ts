/**
 * A live session over a partial log (docs/spec.md §9.2): the events before `fromSeq` come from
 * its history only when read, and appends made while they are being read keep their place.
 * The history here is a hand-made one whose reads wait on promises the test holds.
 */
import { describe, expect, it } from 'vitest'
import {
  createProjector,
  foldLog,
  LogCorruptError,
  openLiveSession,
  project,
  type SessionEvent,
  type SessionHistory,
} from '../../src/core/index.js'
import { buildLog, header, turnEnd, turnStart, user } from '../support/log-builder.js'

const LOG = buildLog([
  turnStart(1),
  user('one'),
  header(),
  turnEnd(1),
  turnStart(2),
  user('two'),
  turnEnd(2),
])

/** A history over `events` whose every read waits for `gate`; it counts the reads. */
function gatedHistory(events: readonly SessionEvent[], gate: Promise<void>) {
  const reads: [number, number][] = []
  const history: SessionHistory = {
    async *read(fromSeq, throughSeq) {
      reads.push([fromSeq, throughSeq])
      await gate
      yield events.slice(fromSeq, throughSeq + 1)
    },
    mismatch: (reason) => new LogCorruptError('test', reason),
  }
  return { history, reads }
}

/** The session a store opens after a checkpoint through seq `throughSeq`. */
function opened(throughSeq: number, history: SessionHistory) {
  const projector = createProjector((seq) => LOG[seq])
  for (const event of LOG.slice(0, throughSeq + 1)) projector.apply(event)
  return openLiveSession({
    header: { id: 's', formatVersion: 1, createdAt: 0 },
    events: LOG.slice(throughSeq + 1),
    fromSeq: throughSeq + 1,
    history,
    state: foldLog(LOG.slice(0, throughSeq + 1)),
    projection: { state: projector.snapshot(), throughSeq },
  })
}

describe('a session over a partial log', () => {
  it('keeps appends made while its projection loads after the events read', async () => {
    let open!: () => void
    const { history, reads } = gatedHistory(
      LOG,
      new Promise((resolve) => {
        open = resolve
      }),
    )
    const session = opened(3, history)
    expect(session.residentFrom).toBe(4)
    const loading = session.loadProjection()
    // A second call shares the first load.
    const again = session.loadProjection()
    const during = session.append('user/message', {
      id: 'm',
      content: [{ type: 'text', text: 'while loading' }],
      source: { kind: 'user' },
    })
    expect(during.seq).toBe(7)
    open()
    await Promise.all([loading, again])
    expect(reads).toEqual([[0, 3]])
    expect(session.residentFrom).toBe(0)
    expect(session.eventAt(7)).toBe(during)
    expect(session.residentEvents.map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(session.messages()).toEqual(project([...LOG, during]))
    expect(session.requestHeader()).toEqual(header()[1])
    expect(session.state()).toEqual(foldLog([...LOG, during]))
  })

  it('reads across the boundary it had when the read began', async () => {
    const { history } = gatedHistory(LOG, Promise.resolve())
    const session = opened(4, history)
    const read: SessionEvent[] = []
    for await (const batch of session.readEvents({ fromSeq: 2 })) {
      read.push(...batch)
      if (read.length === 3) await session.loadProjection()
    }
    expect(read).toEqual(LOG.slice(2))
  })

  it('refuses a projection that does not fit what its history gives', async () => {
    // The header at seq 2 read back as another event.
    const shifted = LOG.map((event, seq) => (seq === 2 ? { ...LOG[3]!, seq: 2 } : event))
    const { history } = gatedHistory(shifted, Promise.resolve())
    const session = opened(3, history)
    await expect(session.loadProjection()).rejects.toThrow(/no request\/header was read at seq 2/)
    expect(session.isProjectionLoaded).toBe(false)
  })
})

describe('a long log projected on demand', () => {
  const turns = 6_000
  const long = buildLog(
    Array.from({ length: turns }, (_, index) => [
      turnStart(index + 1),
      user(`prompt ${index}`),
      turnEnd(index + 1),
    ]).flat(),
  )
  const whole = () =>
    openLiveSession({ header: { id: 's', formatVersion: 1, createdAt: 0 }, events: long })

  it('lets the event loop run between stretches and projects what a ready session holds', async () => {
    const session = openLiveSession({
      header: { id: 's', formatVersion: 1, createdAt: 0 },
      events: long,
      projection: { state: { from: 0 }, throughSeq: -1 },
    })
    expect(session.isProjectionLoaded).toBe(false)
    const order: string[] = []
    setImmediate(() => order.push('event loop'))
    await session.loadProjection()
    order.push('loaded')
    // Projected in one stretch, loading would resolve before the event loop's next turn.
    expect(order).toEqual(['event loop', 'loaded'])
    expect(session.messages()).toEqual(whole().messages())
    expect(session.transcriptCharacters()).toBe(whole().transcriptCharacters())
  })

  it('stops at an abort between stretches and projects in full when asked again', async () => {
    const session = openLiveSession({
      header: { id: 's', formatVersion: 1, createdAt: 0 },
      events: long,
      projection: { state: { from: 0 }, throughSeq: -1 },
    })
    const controller = new AbortController()
    const loading = session.loadProjection(controller.signal)
    controller.abort()
    await expect(loading).rejects.toThrow()
    expect(session.isProjectionLoaded).toBe(false)
    await session.loadProjection()
    expect(session.messages()).toEqual(whole().messages())
  })
})

describe('a session opened over events a store already folded', () => {
  it('folds only the events after the fold it is given, and refuses one outside its events', () => {
    const given = foldLog(LOG.slice(0, 4))
    const session = openLiveSession({
      header: { id: 's', formatVersion: 1, createdAt: 0 },
      events: LOG,
      folded: { fold: given, nextSeq: 4 },
    })
    expect(session.state()).toEqual(foldLog(LOG))
    // A fold given through the last event is the state: no event is folded again.
    const trusted = foldLog(LOG.slice(0, 2))
    const whole = openLiveSession({
      header: { id: 's', formatVersion: 1, createdAt: 0 },
      events: LOG,
      folded: { fold: trusted, nextSeq: LOG.length },
    })
    expect(whole.state()).toBe(trusted)
    expect(() =>
      openLiveSession({
        header: { id: 's', formatVersion: 1, createdAt: 0 },
        events: LOG,
        folded: { fold: given, nextSeq: LOG.length + 1 },
      }),
    ).toThrow(/folded/)
  })
})

/**
 * A live session lets go of its resident events and projection when it is quiet (decision
 * 0166) and reads them back through the history it is given, as a session opened from a
 * checkpoint does. Reads and loads in flight keep their place; a hold, a load, a notification
 * or an append in between keeps the session as it is. Histories here wait on promises the
 * test holds.
 */
import { describe, expect, it } from 'vitest'
import {
  createSession,
  foldLog,
  holdSession,
  LogCorruptError,
  openLiveSession,
  project,
  type SessionEvent,
  type SessionHistory,
} from '../../src/core/index.js'
import { buildLog, header, turnEnd, turnStart, user } from '../support/log-builder.js'

const ID = { id: 's', formatVersion: 1, createdAt: 0 }

/** A history over `log` (the whole log, as the store holds it) whose reads wait for `gate`. */
function historyOver(log: () => readonly SessionEvent[], gate: Promise<void> = Promise.resolve()) {
  const reads: [number, number][] = []
  const history: SessionHistory = {
    async *read(fromSeq, throughSeq) {
      reads.push([fromSeq, throughSeq])
      await gate
      for (let seq = fromSeq; seq <= throughSeq; seq += 100)
        yield log().slice(seq, Math.min(seq + 100, throughSeq + 1))
    },
    mismatch: (reason) => new LogCorruptError('test', reason),
  }
  return { history, reads }
}

function held(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** `turns` closed turns, a header in the first. */
function turns(count: number) {
  return buildLog(
    Array.from({ length: count }, (_, index) => [
      turnStart(index + 1),
      user(`prompt ${index}`),
      ...(index === 0 ? [header()] : []),
      turnEnd(index + 1),
    ]).flat(),
  )
}

/** A session holding all of `log` (as one loaded in full by a store). */
function whole(log: readonly SessionEvent[]) {
  return openLiveSession({ header: ID, events: structuredClone(log) })
}

const userEntry = (text: string) => ({
  id: `m-${text}`,
  content: [{ type: 'text' as const, text }],
  source: { kind: 'user' as const },
})

describe('releasing a live session', () => {
  it('holds nothing afterwards and reads the transcript back as it was', async () => {
    const log = turns(5)
    const session = whole(log)
    const before = [...session.messages()]
    const state = session.state()
    const { history, reads } = historyOver(() => log)
    expect(session.release(history, log.length - 1)).toBe(true)
    expect(session.residentFrom).toBe(log.length)
    expect(session.residentEvents).toEqual([])
    expect(session.eventAt(0)).toBeUndefined()
    expect(session.isProjectionLoaded).toBe(false)
    expect(() => session.messages()).toThrow(/loadProjection/)
    expect(session.state()).toBe(state)
    expect(session.nextSeq).toBe(log.length)

    await session.loadProjection()
    expect(reads).toEqual([[0, log.length - 1]])
    expect([...session.messages()]).toEqual(before)
    expect(session.requestHeader()).toEqual(header()[1])
    expect(session.residentFrom).toBe(0)
  })

  it('takes appends after a release as after a resume, and projects them once loaded', async () => {
    const log = turns(3)
    const session = whole(log)
    const { history } = historyOver(() => log)
    session.release(history, log.length - 1)
    const appended = [
      session.append('turn/start', { turn: 4, trigger: 'prompt' }),
      session.append('user/message', userEntry('after')),
      session.append('turn/end', { turn: 4, reason: { kind: 'completed' } }),
    ]
    expect(session.residentFrom).toBe(log.length)
    expect(session.residentEvents).toEqual(appended)
    const all = [...log, ...appended]
    expect(session.projectionState()).toEqual(whole(all).projectionState())
    await session.loadProjection()
    expect([...session.messages()]).toEqual(project(all))
    expect(session.state()).toEqual(foldLog(all))
  })

  it('refuses while held, loading, notifying, checking its own invariants, or after an append', async () => {
    const log = turns(2)
    const { history } = historyOver(() => log)
    const session = whole(log)
    const release = holdSession(session)
    expect(session.release(history, log.length - 1)).toBe(false)
    release()
    release() // a second call gives back nothing more
    const second = holdSession(session)
    expect(session.release(history, log.length - 1)).toBe(false)
    second()
    // The seq it was asked for is no longer the last one.
    expect(session.release(history, log.length - 2)).toBe(false)

    let fromListener: boolean | undefined
    const unsubscribe = session.subscribe(() => {
      fromListener = session.release(history, session.nextSeq - 1)
    })
    session.append('user/message', userEntry('between turns'))
    unsubscribe()
    expect(fromListener).toBe(false)
    expect(session.isProjectionLoaded).toBe(true)

    const checked = createSession({ checkInvariants: true }) as ReturnType<typeof whole>
    checked.append('user/message', userEntry('x'))
    expect(checked.release(history, 0)).toBe(false)
    await expect(checked.releaseHistory()).resolves.toBe(false)

    const gate = held()
    const released = whole(log)
    const all = () => log
    expect(released.release(historyOver(all).history, log.length - 1)).toBe(true)
    // Nothing held: nothing to let go of.
    expect(released.release(historyOver(all).history, log.length - 1)).toBe(false)
    const slow = historyOver(all, gate.promise)
    expect(released.release(slow.history, log.length - 1)).toBe(false)
    const loading = released.loadProjection()
    released.append('user/message', userEntry('while loading'))
    expect(released.release(slow.history, released.nextSeq - 1)).toBe(false)
    gate.open()
    await loading
    expect(released.release(slow.history, released.nextSeq - 1)).toBe(true)
  })

  it('keeps a read of held events in flight whole across a release', async () => {
    const log = turns(800) // 2 401 events: three batches from memory
    const session = whole(log)
    const { history, reads } = historyOver(() => log)
    const read: SessionEvent[] = []
    for await (const batch of session.readEvents({ fromSeq: 5 })) {
      read.push(...batch)
      if (read.length === 1024) expect(session.release(history, log.length - 1)).toBe(true)
    }
    expect(read).toEqual(log.slice(5))
    expect(reads).toEqual([[1029, log.length - 1]])
  })

  it('keeps a read of stored events in flight whole across a release', async () => {
    const log = turns(40)
    const gate = held()
    // Opened as from a checkpoint through seq 59; the events after it are held.
    const resumed = openLiveSession({
      header: ID,
      events: structuredClone(log.slice(60)),
      fromSeq: 60,
      history: historyOver(() => log, gate.promise).history,
      state: foldLog(log.slice(0, 60)),
      projection: { state: whole(log.slice(0, 60)).projectionState(), throughSeq: 59 },
    })
    const reading = (async () => {
      const read: SessionEvent[] = []
      for await (const batch of resumed.readEvents({ fromSeq: 10 })) read.push(...batch)
      return read
    })()
    // The read waits in the stored part; the session lets go of its tail meanwhile.
    const later = historyOver(() => log)
    expect(resumed.release(later.history, log.length - 1)).toBe(true)
    gate.open()
    expect(await reading).toEqual(log.slice(10))
    expect(later.reads).toEqual([[60, log.length - 1]])
    await resumed.loadProjection()
    expect([...resumed.messages()]).toEqual(project(log))
  })

  it('resolves false from releaseHistory when nothing can be read back', async () => {
    const session = createSession()
    session.append('user/message', userEntry('x'))
    await expect(session.releaseHistory()).resolves.toBe(false)
    expect(session.residentEvents).toHaveLength(1)
  })
})

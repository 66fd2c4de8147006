/**
 * An idle session from a store lets go of its history (decision 0166): `releaseHistory` makes
 * everything durable, writes a checkpoint and leaves the session holding what an open from it
 * holds; the next load, read or turn reads the rest back. The model sees exactly what a
 * session that never let go sees. Concurrent calls wait on promises the test holds.
 */
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import {
  createAgent,
  createSession,
  RudderError,
  type Session,
  type SessionEvent,
} from '../../src/index.js'
import type { Backend } from '../../src/stores/backend.js'
import { createSessionStore } from '../../src/stores/session-store.js'
import { scriptedProvider } from '../../src/testing.js'
import { validLog } from '../support/arbitraries.js'
import { buildLog, turnEnd, user } from '../support/log-builder.js'
import '../support/property-seed.js'
import { allEvents } from '../support/session-events.js'
import { appendAll, closedTurn } from './support/events.js'
import { backendOf, FILE_STORE_KINDS, storeOf, tempDirectory } from './support/stores.js'

/** Two closed turns. */
const turnsLog = buildLog([...closedTurn(1, 'one'), ...closedTurn(2, 'two')])

/**
 * What the log says of an event, without the time a clock gave it. Data is compared as stored:
 * JSON has no -0, which the generated logs may hold (seed 1168332279 found it).
 */
const logged = (events: readonly SessionEvent[]) =>
  events.map(({ seq, type, data }) => ({ seq, type, data: JSON.parse(JSON.stringify(data)) }))

function held<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/**
 * `log` with every compaction keeping from the last one's kept events on, as the agent's do: a
 * session that released (like one resumed) holds no event before them, so it refuses a
 * compaction keeping from earlier (decision 0161, choice 3).
 */
function keepingForward(log: readonly SessionEvent[]): SessionEvent[] {
  let kept = 0
  return log.map((event) => {
    if (event.type !== 'compaction') return event
    const data = event.data as { firstKeptSeq: number }
    kept = Math.max(kept, data.firstKeptSeq)
    return { ...event, data: { ...data, firstKeptSeq: kept } } as SessionEvent
  })
}

/** Appends `event`'s type and data to both sessions, loading the projection a compaction needs. */
async function appendBoth(session: Session, reference: Session, event: SessionEvent) {
  if (event.type === 'compaction' && !session.isProjectionLoaded) await session.loadProjection()
  session.append(event.type as never, event.data as never)
  reference.append(event.type as never, event.data as never)
}

async function expectSameTranscript(session: Session, reference: Session) {
  await session.loadProjection()
  expect([...session.messages()]).toEqual([...reference.messages()])
  expect(session.requestHeader()).toEqual(reference.requestHeader())
  expect(session.transcriptCharacters()).toBe(reference.transcriptCharacters())
}

describe.each(FILE_STORE_KINDS)('releasing an idle session in the %s store', (kind) => {
  it('gives the same messages as a session that never released, at random idle points', async () => {
    const directory = tempDirectory()
    const store = await storeOf(kind, directory)
    let releases = 0
    await fc.assert(
      fc.asyncProperty(
        validLog(8).map(keepingForward),
        fc.array(fc.nat(7), { minLength: 64, maxLength: 64 }),
        async (log, choices) => {
          const session = await store.create()
          const reference = createSession({ checkInvariants: true })
          for (const [index, event] of log.entries()) {
            await appendBoth(session, reference, event)
            const choice = choices[index % choices.length]!
            // Half the idle points release.
            if (choice > 3 || session.state().openTurn !== undefined) continue
            const held = session.residentEvents.length > 0 || session.isProjectionLoaded
            const released = await session.releaseHistory()
            expect(released).toBe(held)
            if (released) {
              releases++
              expect(session.residentFrom).toBe(session.nextSeq)
              expect(session.isProjectionLoaded).toBe(false)
            }
            if (choice === 0) await expectSameTranscript(session, reference)
            if (choice === 2)
              expect(logged(await allEvents(session))).toEqual(logged(log.slice(0, index + 1)))
          }
          await expectSameTranscript(session, reference)
          expect(session.state()).toEqual(reference.state())
          await session.close()
          // The checkpoint written at the last release opens the session again.
          const reopened = await store.open(session.header.id)
          await expectSameTranscript(reopened, reference)
          expect(logged(await allEvents(reopened))).toEqual(logged(log))
          await reopened.close()
        },
      ),
      { numRuns: 50 },
    )
    expect(releases).toBeGreaterThan(20)
  }, 120_000)

  it('checks appends after a release from the state it released at', async () => {
    const store = await storeOf(kind, tempDirectory())
    const session = await store.create()
    appendAll(session, [user('one'), user('two')])
    expect(await session.releaseHistory()).toBe(true)
    expect(() => appendAll(session, [turnEnd(1)])).toThrow(/turn\/end/)
    appendAll(session, [user('three')])
    expect(() => appendAll(session, [turnEnd(1)])).toThrow(RudderError)
    await session.close()
    const reopened = await store.open(session.header.id)
    expect((await allEvents(reopened)).map((event) => event.seq)).toEqual([0, 1, 2])
    await reopened.close()
  })

  it('forks a released session at its end and in its middle', async () => {
    const store = await storeOf(kind, tempDirectory())
    const session = await store.create()
    const reference = createSession()
    for (const event of keepingForward(turnsLog)) await appendBoth(session, reference, event)
    expect(await session.releaseHistory()).toBe(true)
    const atEnd = await store.fork(session.header.id)
    await expectSameTranscript(atEnd, reference)
    const middle = await store.fork(session.header.id, { atSeq: 11 })
    expect(logged(await allEvents(middle))).toEqual(logged(turnsLog.slice(0, 12)))
    await Promise.all([atEnd.close(), middle.close(), session.close()])
  })

  it('gives up when the session closes while it flushes', async () => {
    const store = await storeOf(kind, tempDirectory())
    const session = await store.create()
    appendAll(session, [user('one')])
    const releasing = session.releaseHistory()
    const closing = session.close()
    expect(await releasing).toBe(false)
    await closing
    expect(session.residentEvents).toHaveLength(1)
  })

  it('keeps the session when a send arrives while the checkpoint is written', async () => {
    const inner = await backendOf(kind, tempDirectory())
    const writing = held()
    let gate: Promise<void> | undefined
    const backend: Backend = {
      ...inner,
      async writeCheckpoint(id, text) {
        if (gate) {
          writing.open()
          await gate
        }
        return inner.writeCheckpoint!(id, text)
      },
    }
    const store = createSessionStore(backend)
    const session = await store.create()
    const steps = [{ text: 'one' }, { text: 'two' }]
    const provider = scriptedProvider(steps)
    const agent = createAgent({
      session,
      provider,
      releaseHistoryAfterMs: Number.POSITIVE_INFINITY,
    })
    await agent.send('first').result

    const open = held()
    gate = open.promise
    const releasing = session.releaseHistory()
    await writing.promise
    const second = agent.send('second')
    open.open()
    expect(await releasing).toBe(false)
    expect(session.isProjectionLoaded).toBe(true)
    expect(await second.result).toMatchObject({ status: 'completed' })

    // The same two turns over a session that never released.
    const reference = createSession()
    const again = scriptedProvider(steps)
    const twin = createAgent({ session: reference, provider: again })
    await twin.send('first').result
    await twin.send('second').result
    expect(provider.requests.map((request) => request.messages)).toEqual(
      again.requests.map((request) => request.messages),
    )
    await Promise.all([agent.dispose(), twin.dispose()])
    await store.close()
  })

  it('does not release while a turn runs', async () => {
    const store = await storeOf(kind, tempDirectory())
    const session = await store.create()
    const agent = createAgent({
      session,
      provider: scriptedProvider([{ text: 'one' }]),
      releaseHistoryAfterMs: Number.POSITIVE_INFINITY,
    })
    const entered = held()
    const gate = held()
    agent.on('step', async () => {
      entered.open()
      await gate.promise
    })
    const delivery = agent.send('first')
    // The turn waits before its first request: nothing is appended meanwhile.
    await entered.promise
    expect(await session.releaseHistory()).toBe(false)
    expect(session.isProjectionLoaded).toBe(true)
    gate.open()
    expect(await delivery.result).toMatchObject({ status: 'completed' })
    await agent.dispose()
  })

  it('releases after the agent has been idle, and its next turn sends the whole transcript', async () => {
    const store = await storeOf(kind, tempDirectory())
    const session = await store.create()
    const called = held<Promise<boolean>>()
    const release = session.releaseHistory.bind(session)
    vi.spyOn(session, 'releaseHistory').mockImplementation(() => {
      const releasing = release()
      called.open(releasing)
      return releasing
    })
    const steps = [{ text: 'one' }, { text: 'two' }]
    const provider = scriptedProvider(steps)
    const agent = createAgent({ session, provider, releaseHistoryAfterMs: 0 })
    await agent.send('first').result
    expect(await called.promise).toBe(true)
    expect(session.residentEvents).toEqual([])
    expect(session.isProjectionLoaded).toBe(false)
    await agent.send('second').result

    const reference = createSession()
    const again = scriptedProvider(steps)
    const twin = createAgent({ session: reference, provider: again })
    await twin.send('first').result
    await twin.send('second').result
    expect(provider.requests[1]?.messages).toEqual(again.requests[1]?.messages)
    expect(logged(await allEvents(session)).map(({ type }) => type)).toEqual(
      reference.residentEvents.map(({ type }) => type),
    )
    await Promise.all([agent.dispose(), twin.dispose()])
  })
})

describe('sessions that do not release', () => {
  it('a memory store, and a store that does not check invariants, keep their events', async () => {
    const memory = await storeOf('memory', tempDirectory())
    const unchecked = await storeOf('jsonl', tempDirectory(), { checkInvariants: false })
    for (const store of [memory, unchecked]) {
      const session = await store.create()
      appendAll(session, [user('one')])
      await expect(session.releaseHistory()).resolves.toBe(false)
      expect(session.residentEvents).toHaveLength(1)
      await session.close()
    }
  })

  it('refuses a release delay that is not a number of ms', () => {
    const session = createSession()
    const provider = scriptedProvider([])
    expect(() => createAgent({ session, provider, releaseHistoryAfterMs: -1 })).toThrow(
      /releaseHistoryAfterMs/,
    )
  })
})

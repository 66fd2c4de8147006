/**
 * What a projection load reads from the history is frozen when it leaves the session, not as
 * it is read (decision 0175): a history may hand over events nobody froze, and every way out
 * of the session (messages, the request header, `eventAt`, `residentEvents`, `readEvents`)
 * still gives only deeply frozen values, so no reader can change what the log or the
 * projection hold.
 */
import { describe, expect, it } from 'vitest'
import {
  createProjector,
  foldLog,
  type LiveSession,
  LogCorruptError,
  openLiveSession,
  project,
  type SessionEvent,
  type SessionHistory,
} from '../../src/core/index.js'
import {
  assistant,
  buildLog,
  compaction,
  header,
  stepEnd,
  stepStart,
  toolCall,
  toolResult,
  turnEnd,
  turnStart,
  user,
} from '../support/log-builder.js'

const LOG = buildLog([
  turnStart(1),
  user('one'),
  stepStart(1, 1),
  header(),
  assistant('', [{ id: 'c1' }]),
  toolCall('c1'),
  toolResult('c1'),
  stepEnd(1, 1),
  turnEnd(1),
  compaction(1, 'so far'),
  turnStart(2),
  user('two'),
  stepStart(2, 1),
  assistant('done'),
  stepEnd(2, 1),
  turnEnd(2),
])

/** The path of the first object in `value` that is not frozen, or undefined. */
function firstUnfrozen(value: unknown, path = '$'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (!Object.isFrozen(value)) return path
  for (const [key, item] of Object.entries(value)) {
    const found = firstUnfrozen(item, `${path}.${key}`)
    if (found) return found
  }
  return undefined
}

/** A history that hands out fresh, unfrozen copies of the log, as a parser would. */
const thawedHistory: SessionHistory = {
  async *read(fromSeq, throughSeq) {
    yield JSON.parse(JSON.stringify(LOG.slice(fromSeq, throughSeq + 1))) as SessionEvent[]
  },
  mismatch: (reason) => new LogCorruptError('test', reason),
}

/** The session a store opens after a checkpoint through seq `throughSeq`. */
function opened(throughSeq: number): LiveSession {
  const projector = createProjector((seq) => LOG[seq])
  for (const event of LOG.slice(0, throughSeq + 1)) projector.apply(event)
  const frozen = JSON.parse(JSON.stringify(LOG)) as SessionEvent[]
  return openLiveSession({
    header: { id: 's', formatVersion: 1, createdAt: 0 },
    events: frozen.slice(throughSeq + 1),
    fromSeq: throughSeq + 1,
    history: thawedHistory,
    state: foldLog(frozen.slice(0, throughSeq + 1)),
    projection: { state: projector.snapshot(), throughSeq },
  })
}

/**
 * Each way out of a loaded session, read alone on a fresh one: the values it gives, each to be
 * deeply frozen (the arrays holding them are the session's views or the test's own).
 */
const EXITS: Record<string, (session: LiveSession) => Promise<unknown[]> | unknown[]> = {
  'messages()': (session) => [...session.messages()],
  'requestHeader()': (session) => [session.requestHeader()],
  'eventAt()': (session) => LOG.map((event) => session.eventAt(event.seq)),
  residentEvents: (session) => [...session.residentEvents],
  'readEvents()': async (session) => {
    const read: SessionEvent[] = []
    for await (const batch of session.readEvents()) read.push(...batch)
    return read
  },
}

describe('a session whose projection load read unfrozen events', () => {
  it.each(Object.keys(EXITS))('gives out only frozen values through %s', async (exit) => {
    const session = opened(12)
    await session.loadProjection()
    const values = await EXITS[exit]!(session)
    expect(values.filter((value) => value !== undefined).length).toBeGreaterThan(0)
    expect(values.map((value) => firstUnfrozen(value)).filter(Boolean)).toEqual([])
  })

  it('gives out the events and projection of the log as written', async () => {
    const session = opened(12)
    await session.loadProjection()
    expect(session.messages()).toEqual(project(LOG))
    expect(session.residentFrom).toBe(1)
    expect(session.residentEvents).toEqual(LOG.slice(1))
    expect(session.residentEvents.map((event) => firstUnfrozen(event)).filter(Boolean)).toEqual([])
  })

  it('freezes the history it reads for a reader before the projection is loaded', async () => {
    const session = opened(12)
    for await (const batch of session.readEvents({ fromSeq: 2, throughSeq: 14 }))
      expect(batch.map((event) => firstUnfrozen(event)).filter(Boolean)).toEqual([])
  })

  it('refuses changes made through what it gave out', async () => {
    const session = opened(12)
    await session.loadProjection()
    const message = session.messages()[1]!
    expect(() => {
      ;(message.content as unknown[]).push({ type: 'text', text: 'x' })
    }).toThrow(TypeError)
    const event = session.eventAt(4) as { data: { model: string } }
    expect(() => {
      event.data.model = 'changed'
    }).toThrow(TypeError)
    expect(session.eventAt(4)).toEqual(LOG[4])
  })
})

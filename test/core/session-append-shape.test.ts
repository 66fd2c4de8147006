/**
 * What a memory session's append and flush hand back, kept exact while their allocations were
 * cut (bench B5+): an event is one frozen object with its fields in log order, and a flush
 * with nothing to write is a settled promise nobody can change.
 */
import { describe, expect, it } from 'vitest'
import { createSession } from '../../src/index.js'

describe('a memory session', () => {
  it('makes each event one frozen object, fields in order, ignorable only for extensions', () => {
    const session = createSession()
    const core = session.append('turn/start', { turn: 1, trigger: 'prompt' })
    expect(Object.isFrozen(core)).toBe(true)
    expect(Object.keys(core)).toEqual(['seq', 'time', 'type', 'data'])
    expect(core).toMatchObject({ seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'prompt' } })
    const extension = session.append('x/note', { n: 1 }, { ignorable: true })
    expect(Object.isFrozen(extension)).toBe(true)
    expect(Object.keys(extension)).toEqual(['seq', 'time', 'type', 'data', 'ignorable'])
    expect(extension).toMatchObject({ seq: 1, type: 'x/note', data: { n: 1 }, ignorable: true })
    expect(JSON.parse(JSON.stringify(session.residentEvents))).toEqual([
      { seq: 0, time: core.time, type: 'turn/start', data: { turn: 1, trigger: 'prompt' } },
      { seq: 1, time: extension.time, type: 'x/note', data: { n: 1 }, ignorable: true },
    ])
  })

  it('names the event type and the field in a refusal, every time, core or extension', () => {
    const session = createSession()
    for (let round = 0; round < 2; round++) {
      expect(() => session.append('turn/start', { turn: Number.NaN, trigger: 'prompt' })).toThrow(
        'cannot append "turn/start": data.turn is NaN',
      )
      expect(() => session.append('x/note', { n: [1, Infinity] }, { ignorable: true })).toThrow(
        'cannot append "x/note": data.n[1] is Infinity',
      )
    }
    expect(session.nextSeq).toBe(0)
  })

  it('flushes with nothing to write to a settled promise that cannot be changed', async () => {
    const session = createSession()
    const flushed = session.flush()
    expect(flushed).toBeInstanceOf(Promise)
    expect(Object.isFrozen(flushed)).toBe(true)
    expect(() => {
      ;(flushed as unknown as { marked: unknown }).marked = true
    }).toThrow(TypeError)
    await expect(flushed).resolves.toBeUndefined()
    let isSettled = false
    void session.flush().then(() => {
      isSettled = true
    })
    await Promise.resolve()
    expect(isSettled).toBe(true)
  })
})

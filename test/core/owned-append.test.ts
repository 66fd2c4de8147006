/**
 * `appendOwned` (decision 0077): the agent's own data is checked and frozen in place, not
 * copied; what the log holds still cannot change, and data that is not plain JSON is refused
 * as `append` refuses it.
 */
import { describe, expect, it } from 'vitest'
import {
  appendOwned,
  createSession,
  type EventMap,
  RudderError,
  type Session,
  toFrozenJson,
} from '../../src/core/index.js'

const turnStart = (turn: number): EventMap['turn/start'] => ({ turn, trigger: 'prompt' })

describe('appendOwned', () => {
  it('takes the data over: the event holds the same objects, frozen', () => {
    const session = createSession()
    appendOwned(session, 'turn/start', turnStart(1))
    const data: EventMap['user/message'] = {
      id: 'm1',
      content: [{ type: 'text', text: 'hi' }],
      source: { kind: 'user' },
    }
    const event = appendOwned(session, 'user/message', data)
    expect(event.data).toBe(data)
    expect(Object.isFrozen(data)).toBe(true)
    expect(Object.isFrozen(data.content)).toBe(true)
    expect(Object.isFrozen(data.content[0])).toBe(true)
    expect(Object.isFrozen(data.source)).toBe(true)
    expect(() => {
      ;(data.content as unknown as unknown[]).push({ type: 'text', text: 'later' })
    }).toThrow(TypeError)
    expect(session.messages()[0]?.content).toEqual([{ type: 'text', text: 'hi' }])
  })

  it('reuses frozen values the log holds without copying them', () => {
    const session = createSession()
    appendOwned(session, 'turn/start', turnStart(1))
    const held = toFrozenJson({ path: 'a', nested: [1, 2] }, 'test')
    appendOwned(session, 'step/start', { turn: 1, step: 1 })
    const message = appendOwned(session, 'assistant/message', {
      id: 'a1',
      content: [{ type: 'tool-call', id: 'c1', name: 'read', args: held }],
      provider: 'p',
      model: 'm',
      stopReason: 'tool-calls',
      usage: { inputTokens: 1, outputTokens: 1 },
    })
    const block = message.data.content[0]
    expect(block?.type === 'tool-call' && block.args).toBe(held)
  })

  it('refuses data that is not plain JSON, naming the field, and appends nothing', () => {
    const session = createSession()
    appendOwned(session, 'turn/start', turnStart(1))
    const bad = {
      id: 'm1',
      content: [{ type: 'text', text: 'hi', at: new Date(0) }],
      source: { kind: 'user' },
    } as unknown as EventMap['user/message']
    const refused = (() => {
      try {
        appendOwned(session, 'user/message', bad)
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(RudderError)
    expect((refused as RudderError).code).toBe('INVALID_EVENT_DATA')
    expect((refused as RudderError).message).toContain('data.content[0].at is a Date')
    expect(session.nextSeq).toBe(1)
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, undefined])
      expect(() =>
        appendOwned(session, 'step/start', { turn: 1, step: value } as unknown as {
          turn: number
          step: number
        }),
      ).toThrow(/INVALID_EVENT_DATA|is (NaN|Infinity|undefined)/)
    expect(session.nextSeq).toBe(1)
  })

  it('writes -0 as 0, as append does (the event equals what a store reads back)', () => {
    const session = createSession()
    appendOwned(session, 'turn/start', turnStart(1))
    appendOwned(session, 'step/start', { turn: 1, step: 1 })
    const event = appendOwned(session, 'assistant/message', {
      id: 'a1',
      content: [{ type: 'text', text: 'x' }],
      provider: 'p',
      model: 'm',
      stopReason: 'stop',
      usage: { inputTokens: -0, outputTokens: 0 },
    })
    expect(Object.is(event.data.usage.inputTokens, 0)).toBe(true)
    expect(Object.isFrozen(event.data)).toBe(true)
  })

  it('refuses a cycle as append does', () => {
    const session = createSession()
    const source: Record<string, unknown> = { kind: 'user' }
    source.self = source
    expect(() =>
      appendOwned(session, 'user/message', {
        id: 'm1',
        content: [],
        source,
      } as unknown as EventMap['user/message']),
    ).toThrow(/refers back to itself/)
    expect(session.nextSeq).toBe(0)
  })

  it('falls back to append (a copy) for a session it did not make', () => {
    const inner = createSession()
    const wrapped: Session = { ...inner, append: inner.append.bind(inner) } as Session
    const data = turnStart(1)
    const event = appendOwned(wrapped, 'turn/start', data)
    expect(event.data).not.toBe(data)
    expect(event.data).toEqual(data)
    expect(Object.isFrozen(data)).toBe(false)
  })
})

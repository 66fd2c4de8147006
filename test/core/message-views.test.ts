import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { prefixOf, prefixView } from '../../src/core/prefix-view.js'
import {
  createSession,
  type EventType,
  estimateTokens,
  type Message,
  project,
  type SessionEvent,
} from '../../src/index.js'
import { validLog } from '../support/arbitraries.js'
import { compaction } from '../support/log-builder.js'

function sessionWith(texts: readonly string[]) {
  const session = createSession()
  for (const text of texts)
    session.append('user/message', {
      id: text,
      content: [{ type: 'text', text }],
      source: { kind: 'user' },
    })
  return session
}

const said = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

describe('messages() views are immutable to callers', () => {
  const writes: Record<string, (view: Message[]) => unknown> = {
    'an index': (view) => {
      view[0] = said('x')
    },
    'an index past the end': (view) => {
      view[5] = said('x')
    },
    length: (view) => {
      view.length = 0
    },
    push: (view) => view.push(said('x')),
    pop: (view) => view.pop(),
    shift: (view) => view.shift(),
    unshift: (view) => view.unshift(said('x')),
    splice: (view) => view.splice(0, 1),
    sort: (view) => view.sort(),
    reverse: (view) => view.reverse(),
    fill: (view) => view.fill(said('x')),
    copyWithin: (view) => view.copyWithin(0, 1),
    delete: (view) => delete view[0],
    'Object.defineProperty': (view) => Object.defineProperty(view, '0', { value: said('x') }),
    'Object.setPrototypeOf': (view) => Object.setPrototypeOf(view, null),
    'Object.freeze': (view) => Object.freeze(view),
    'Object.assign': (view) => Object.assign(view, [said('x')]),
  }

  for (const [what, write] of Object.entries(writes)) {
    it(`refuses a write through ${what} and leaves the view and the session as they were`, () => {
      const session = sessionWith(['a', 'b'])
      const view = session.messages()
      expect(() => write(view as Message[])).toThrow(TypeError)
      expect([...view]).toEqual([said('a'), said('b')])
      expect([...session.messages()]).toEqual([said('a'), said('b')])
      session.append('user/message', {
        id: 'c',
        content: [{ type: 'text', text: 'c' }],
        source: { kind: 'user' },
      })
      expect([...session.messages()]).toEqual([said('a'), said('b'), said('c')])
    })
  }

  it('hands out frozen messages and content', () => {
    const [message] = sessionWith(['a']).messages()
    expect(Object.isFrozen(message)).toBe(true)
    expect(Object.isFrozen(message!.content)).toBe(true)
    expect(() => {
      ;(message as { role: string }).role = 'assistant'
    }).toThrow(TypeError)
  })

  it('keeps an old view fixed across later appends and a compaction', () => {
    const session = sessionWith(['a', 'b'])
    const early = session.messages()
    const [type, data] = compaction(1, 'S')
    session.append(type as EventType, data as never)
    const compacted = session.messages()
    session.append('user/message', {
      id: 'c',
      content: [{ type: 'text', text: 'c' }],
      source: { kind: 'user' },
    })
    expect([...early]).toEqual([said('a'), said('b')])
    expect([...compacted]).toEqual([said('S'), said('b')])
    expect([...session.messages()]).toEqual([said('S'), said('b'), said('c')])
  })

  it('returns the same view while nothing new is projected', () => {
    const session = sessionWith(['a'])
    const view = session.messages()
    session.append('turn/start', { turn: 1, trigger: 'prompt' })
    expect(session.messages()).toBe(view)
  })
})

describe('messages() views behave as arrays', () => {
  const session = sessionWith(['a', 'b', 'c'])
  const view = session.messages()
  const plain = [said('a'), said('b'), said('c')]

  it('reads like the plain array of the same messages', () => {
    expect(Array.isArray(view)).toBe(true)
    expect(view).toBeInstanceOf(Array)
    expect(view).toEqual(plain)
    expect(view.length).toBe(3)
    expect(view[2]).toEqual(said('c'))
    expect(view[3]).toBeUndefined()
    expect(view.at(-1)).toEqual(said('c'))
    expect([...view]).toEqual(plain)
    expect(Array.from(view)).toEqual(plain)
    expect([...view.entries()]).toEqual([...plain.entries()])
    expect([...view.values()]).toEqual(plain)
    expect(view.map((message) => message.role)).toEqual(['user', 'user', 'user'])
    expect(view.slice(1)).toEqual(plain.slice(1))
    expect(view.concat([said('d')])).toEqual([...plain, said('d')])
    expect(view.indexOf(view[1]!)).toBe(1)
    expect(view.findLast(() => true)).toEqual(said('c'))
    expect(Object.keys(view)).toEqual(['0', '1', '2'])
    expect(0 in view).toBe(true)
    expect(3 in view).toBe(false)
    expect('map' in view).toBe(true)
    expect(JSON.stringify(view)).toBe(JSON.stringify(plain))
    expect(JSON.stringify({ messages: view })).toBe(JSON.stringify({ messages: plain }))
  })

  it('gives plain arrays from array methods, which the caller may change', () => {
    const mapped = view.map((message) => message)
    mapped.push(said('d'))
    expect(mapped).toHaveLength(4)
    expect(view).toHaveLength(3)
  })

  it('shows only its prefix of the shared storage', () => {
    const items = [1, 2, 3, 4]
    const prefix = prefixView(items, 2)
    items.push(5)
    expect([...prefix]).toEqual([1, 2])
    expect(prefix).toHaveLength(2)
    expect(prefix[2]).toBeUndefined()
    expect(prefix.includes(3)).toBe(false)
  })

  it('reads only canonical index keys as items, as an array does', () => {
    const items = Array.from({ length: 12 }, (_, index) => index * 10)
    const view = prefixView(items) as unknown as Record<string, unknown>
    const keys = ['0', '7', '11', '12', '00', '01', '-0', '-1', '1.0', '1e1', ' 1', '1 ', '+1', '']
    keys.push('1'.repeat(16), '9007199254740993', 'Infinity', 'NaN', '0x1')
    for (const key of keys) {
      expect(view[key], key).toBe((items as unknown as Record<string, unknown>)[key])
      expect(key in view, key).toBe(key in items)
    }
  })
})

describe('transcriptCharacters()', () => {
  it('agrees with estimateTokens over messages() at every prefix of random logs', () => {
    fc.assert(
      fc.property(validLog(), fc.string(), (events: readonly SessionEvent[], system) => {
        const session = createSession()
        for (const event of events) {
          session.append(event.type as EventType, event.data as never)
          expect(Math.ceil((session.transcriptCharacters() + system.length) / 4)).toBe(
            estimateTokens(session.messages(), system),
          )
        }
        expect(session.messages()).toEqual(project(session.residentEvents))
      }),
      { numRuns: 200 },
    )
  })
})

describe('prefixOf (the package reading a view through its backing array)', () => {
  it('gives a view its backing array and length, and nothing for anything else', () => {
    const items = [1, 2, 3]
    const view = prefixView(items, 2)
    expect(prefixOf(view)).toEqual({ items, length: 2 })
    expect(prefixOf(view)?.items).toBe(items)
    expect(prefixOf(items)).toBeUndefined()
    expect(prefixOf([...view])).toBeUndefined()
  })

  it('leaves the state out of what a caller can see of a view', () => {
    const view = prefixView([1, 2, 3])
    expect(Reflect.ownKeys(view)).toEqual(['0', '1', '2', 'length'])
    expect(Object.getOwnPropertySymbols(view)).toEqual([])
    expect({ ...view }).toEqual({ 0: 1, 1: 2, 2: 3 })
  })
})

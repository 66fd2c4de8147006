import { describe, expect, it } from 'vitest'
import { createSession, RudderError, type SessionEvent } from '../../src/index.js'

const text = (value: string) => [{ type: 'text' as const, text: value }]
const userData = (value: string) => ({ id: value, content: text(value), source: { kind: 'user' } })

describe('createSession', () => {
  it('assigns contiguous seqs and times and exposes a header', () => {
    let clock = 100
    const session = createSession({ id: 's1', cwd: '/w', now: () => clock++ })
    const first = session.append('user/message', userData('a'))
    const second = session.append('user/message', userData('b'))
    expect([first.seq, second.seq]).toEqual([0, 1])
    expect([first.time, second.time]).toEqual([101, 102])
    expect(session.header).toEqual({ id: 's1', formatVersion: 1, createdAt: 100, cwd: '/w' })
    expect(session.residentEvents).toEqual([first, second])
  })

  it('deep-copies and deep-freezes appended data', () => {
    const session = createSession()
    const data = {
      id: 'm',
      content: [{ type: 'text' as const, text: 'before' }],
      source: { kind: 'user' },
      meta: { tags: ['x'] },
    }
    const event = session.append('user/message', data)
    data.content[0]!.text = 'after'
    data.meta.tags.push('y')
    expect(event.data.content[0]).toEqual({ type: 'text', text: 'before' })
    expect(event.data.meta).toEqual({ tags: ['x'] })
    expect(Object.isFrozen(event)).toBe(true)
    expect(Object.isFrozen(event.data.content[0])).toBe(true)
    expect(Object.isFrozen((event.data.meta as { tags: string[] }).tags)).toBe(true)
  })

  it.each([
    ['undefined', { when: undefined }, 'data.meta.when is undefined'],
    ['a Date', { when: new Date(0) }, 'data.meta.when is a Date'],
    ['a Map', { when: new Map() }, 'data.meta.when is a Map'],
    ['a function', { when: () => 1 }, 'data.meta.when is a function'],
    ['NaN', { when: Number.NaN }, 'data.meta.when is NaN'],
    [
      'Infinity in an array',
      { list: [1, Number.POSITIVE_INFINITY] },
      'data.meta.list[1] is Infinity',
    ],
    ['a class instance', { when: new (class Point {})() }, 'data.meta.when is a Point'],
  ])(
    'rejects %s, naming the event type and the field, and appends nothing',
    (_, meta, fragment) => {
      const session = createSession()
      const attempt = () => session.append('user/message', { ...userData('x'), meta } as never)
      expect(attempt).toThrowError(RudderError)
      expect(attempt).toThrowError(/cannot append "user\/message"/)
      expect(attempt).toThrowError(fragment)
      expect(session.residentEvents).toEqual([])
    },
  )

  it('rejects a cycle', () => {
    const session = createSession()
    const meta: Record<string, unknown> = {}
    meta.self = meta
    expect(() => session.append('user/message', { ...userData('x'), meta } as never)).toThrowError(
      'data.meta.self refers back to itself',
    )
  })

  it('copies data nested deeper than the fast path goes, and an object referred to twice', () => {
    const session = createSession()
    let deep: Record<string, unknown> = { leaf: -0 }
    for (let level = 0; level < 400; level++) deep = { next: deep }
    const shared = { n: 1 }
    const meta = { deep, twice: [shared, shared] }
    const event = session.append('user/message', { ...userData('x'), meta } as never)
    expect(JSON.parse(JSON.stringify(event.data.meta))).toEqual(JSON.parse(JSON.stringify(meta)))
    let node = (event.data.meta as { deep: Record<string, unknown> }).deep
    for (let level = 0; level < 400; level++) node = node.next as Record<string, unknown>
    expect(Object.is(node.leaf, 0)).toBe(true)
    expect(Object.isFrozen(node)).toBe(true)
    expect(node).not.toBe(deep)
  })

  it('names the field of a cycle deeper than the fast path goes', () => {
    const session = createSession()
    const inner: Record<string, unknown> = {}
    let deep: Record<string, unknown> = inner
    for (let level = 0; level < 300; level++) deep = { next: deep }
    inner.back = deep
    expect(() =>
      session.append('user/message', { ...userData('x'), meta: { deep } } as never),
    ).toThrowError(/data\.meta\.deep(\.next){300}\.back refers back to itself/)
    expect(session.residentEvents).toEqual([])
  })

  it('refuses an unknown event type unless it is ignorable', () => {
    const session = createSession()
    expect(() => session.append('plugin/x' as never, {} as never)).toThrowError(
      expect.objectContaining({ code: 'UNKNOWN_EVENT_TYPE' }),
    )
    const event = session.append('plugin/x', { n: 1 }, { ignorable: true })
    expect(event).toMatchObject({ seq: 0, type: 'plugin/x', ignorable: true })
  })

  it('with checkInvariants, refuses an append that breaks an invariant and keeps the log as it was', () => {
    const session = createSession({ checkInvariants: true })
    session.append('turn/start', { turn: 1, trigger: 'prompt' })
    let caught: unknown
    try {
      session.append('steering/message', { ...userData('s'), turn: 2 })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(RudderError)
    expect((caught as RudderError).code).toBe('INVARIANT_VIOLATION')
    expect((caught as RudderError).message).toContain('seq 1 (steering/message)')
    expect(session.residentEvents).toHaveLength(1)
    session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    expect(session.residentEvents.map((e) => e.type)).toEqual(['turn/start', 'turn/end'])
  })

  it('refuses appends after close', async () => {
    const session = createSession()
    await session.close()
    expect(() => session.append('user/message', userData('x'))).toThrowError(
      expect.objectContaining({ code: 'DISPOSED' }),
    )
  })
})

describe('subscribe: order and re-entrancy (docs/spec.md §5.6)', () => {
  it('delivers each event once, in seq order, even when listeners append while notified', () => {
    const session = createSession()
    const seen: Record<string, number[]> = { a: [], b: [] }
    session.subscribe((event) => {
      seen.a!.push(event.seq)
      // An append made during a notification takes the next seq at once.
      if (event.seq < 3) {
        const appended = session.append('user/message', userData(`from-a-${event.seq}`))
        expect(appended.seq).toBe(session.residentEvents.length - 1)
      }
    })
    session.subscribe((event) => {
      seen.b!.push(event.seq)
      if (event.seq === 1) session.append('user/message', userData('from-b'))
    })
    session.append('user/message', userData('start'))
    // a appends on 0, 1 and 2; b appends on 1: five events, in the order they were appended.
    expect(session.residentEvents.map((e) => (e.data as { id: string }).id)).toEqual([
      'start',
      'from-a-0',
      'from-a-1',
      'from-b',
      'from-a-2',
    ])
    expect(seen.a).toEqual([0, 1, 2, 3, 4])
    expect(seen.b).toEqual([0, 1, 2, 3, 4])
  })

  it('notifies a listener subscribed during delivery only of later events', () => {
    const session = createSession()
    const late: number[] = []
    session.subscribe((event) => {
      if (event.seq === 0) {
        session.subscribe((e) => late.push(e.seq))
        session.append('user/message', userData('next'))
      }
    })
    session.append('user/message', userData('first'))
    expect(late).toEqual([1])
  })

  it('stops notifying a listener once it unsubscribes, even mid-delivery', () => {
    const session = createSession()
    const seen: number[] = []
    let unsubscribeB = () => {}
    session.subscribe((event) => {
      if (event.seq === 1) unsubscribeB()
    })
    unsubscribeB = session.subscribe((event) => seen.push(event.seq))
    session.append('user/message', userData('0'))
    session.append('user/message', userData('1'))
    session.append('user/message', userData('2'))
    expect(seen).toEqual([0])
  })

  it('reports a throwing listener and never breaks the append or other listeners', () => {
    const session = createSession()
    const errors: [string, number][] = []
    const seen: number[] = []
    session.subscribeListenerErrors((error, event) =>
      errors.push([(error as Error).message, event.seq]),
    )
    session.subscribe(() => {
      throw new Error('listener broke')
    })
    session.subscribe((event) => seen.push(event.seq))
    const event: SessionEvent = session.append('user/message', userData('x'))
    expect(event.seq).toBe(0)
    expect(session.residentEvents).toHaveLength(1)
    expect(seen).toEqual([0])
    expect(errors).toEqual([['listener broke', 0]])
  })
})

describe('keys that are data whatever their name (issue 9 item 5)', () => {
  it('keeps a __proto__ key as an own data property, live and after JSON', () => {
    const session = createSession()
    const meta = JSON.parse('{"__proto__":{"x":1},"constructor":2,"a":{"__proto__":null}}')
    const event = session.append('user/message', { ...userData('m'), meta })
    expect(Object.keys(event.data.meta as object)).toEqual(['__proto__', 'constructor', 'a'])
    expect(Object.getPrototypeOf(event.data.meta)).toBe(Object.prototype)
    expect(JSON.stringify(event.data.meta)).toBe(JSON.stringify(meta))
    expect(JSON.parse(JSON.stringify(event.data))).toEqual(
      JSON.parse(JSON.stringify({ ...userData('m'), meta })),
    )
  })
})

/**
 * `toFrozenJson` and `freezeOwnedJson` check own keys with `Object.prototype.hasOwnProperty`
 * instead of `Object.hasOwn` (decision 0172, for speed). Nothing else may change: the copy keeps
 * own enumerable string keys only, throws the same errors, and freezes deeply. Compared here
 * with the walk as it was, kept below, on arbitrary JSON and on the awkward cases.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RudderError, toFrozenJson } from '../../src/core/index.js'
import { freezeOwnedJson } from '../../src/core/owned-json.js'

/** The fast copy as it was before decision 0172 (`Object.hasOwn`); its errors are the same. */
function copyBefore(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (Number.isFinite(value)) return value === 0 ? 0 : value
      return NOT_PLAIN
    case 'object': {
      if (value === null) return null
      if (depth > 256) return NOT_PLAIN
      if (Array.isArray(value)) {
        const out: unknown[] = new Array(value.length)
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return NOT_PLAIN
          const copied = copyBefore(value[i], depth + 1)
          if (copied === NOT_PLAIN) return NOT_PLAIN
          out[i] = copied
        }
        return Object.freeze(out)
      }
      const proto: unknown = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return NOT_PLAIN
      const out: Record<string, unknown> = {}
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        const copied = copyBefore((value as Record<string, unknown>)[key], depth + 1)
        if (copied === NOT_PLAIN) return NOT_PLAIN
        if (key === '__proto__')
          Object.defineProperty(out, key, {
            value: copied,
            enumerable: true,
            writable: true,
            configurable: true,
          })
        else out[key] = copied
      }
      return Object.freeze(out)
    }
    default:
      return NOT_PLAIN
  }
}
const NOT_PLAIN = Symbol('not plain')

type Outcome = { copy: unknown } | { error: string }

function outcome(run: () => unknown): Outcome {
  try {
    return { copy: run() }
  } catch (error) {
    expect(error).toBeInstanceOf(RudderError)
    return { error: `${(error as RudderError).code}: ${(error as Error).message}` }
  }
}

/** Every own key (symbols too), descriptor and prototype, and frozen at every level. */
function described(value: unknown): unknown {
  if (typeof value !== 'object' || value === null)
    return Object.is(value, -0) ? '-0' : (value as unknown)
  const keys = Reflect.ownKeys(value).map((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)!
    return [String(key), descriptor.enumerable, described(descriptor.value)]
  })
  return {
    isArray: Array.isArray(value),
    isFrozen: Object.isFrozen(value),
    isPlain:
      Object.getPrototypeOf(value) === (Array.isArray(value) ? Array.prototype : Object.prototype),
    keys,
  }
}

/** Asserts that today's `toFrozenJson` does what the walk before did with `make()`'s value. */
function expectSame(make: () => unknown): void {
  const expected = outcome(() => {
    const copied = copyBefore(make(), 0)
    // A value the fast walk refuses is worded by the slow walk, unchanged by decision 0172.
    return copied === NOT_PLAIN ? toFrozenJson(make(), 'test') : copied
  })
  const actual = outcome(() => toFrozenJson(make(), 'test'))
  if ('error' in expected) expect(actual).toEqual(expected)
  else {
    expect('copy' in actual).toBe(true)
    expect(described((actual as { copy: unknown }).copy)).toEqual(described(expected.copy))
  }
  // Owned values: frozen in place or copied; either way the same JSON, or the same error.
  const owned = outcome(() => freezeOwnedJson(make(), 'test'))
  if ('error' in expected) expect(owned).toEqual(expected)
  else expect(JSON.stringify((owned as { copy: unknown }).copy)).toBe(JSON.stringify(expected.copy))
}

class Point {
  x = 1
}

const AWKWARD: readonly [string, () => unknown][] = [
  ['a symbol key', () => ({ a: 1, [Symbol('s')]: 2 })],
  ['a non-enumerable key', () => Object.defineProperty({ a: 1 }, 'hidden', { value: 2 })],
  [
    'a getter',
    () => ({
      get a() {
        return 3
      },
    }),
  ],
  [
    'a throwing getter',
    () => ({
      get a(): number {
        throw new RudderError('INVALID_EVENT_DATA', 'from the getter')
      },
    }),
  ],
  ['a class instance', () => ({ point: new Point() })],
  ['a Date', () => ({ at: new Date(0) })],
  ['a Map', () => [new Map()]],
  ['an undefined field', () => ({ a: undefined })],
  ['a function field', () => ({ f: () => 1 })],
  ['a bigint', () => ({ n: 1n })],
  [
    'a hole',
    () => {
      const array = [1, 2, 3]
      delete array[1]
      return array
    },
  ],
  ['undefined in an array', () => [1, undefined]],
  ['toJSON', () => ({ toJSON: () => 'x' })],
  ['a toJSON object', () => ({ a: { toJSON: () => 'x', b: 1 } })],
  ['a null prototype', () => Object.assign(Object.create(null), { a: { b: [1] } })],
  ['an own __proto__ key', () => JSON.parse('{"__proto__": {"a": 1}, "b": 2}')],
  ['-0', () => ({ zero: -0, list: [-0] })],
  ['NaN and Infinity', () => [Number.NaN, Number.POSITIVE_INFINITY]],
  [
    'a cycle',
    () => {
      const a: Record<string, unknown> = {}
      a.self = a
      return a
    },
  ],
  ['deep nesting', () => JSON.parse(`${'['.repeat(300)}1${']'.repeat(300)}`)],
  ['a frozen part', () => ({ a: Object.freeze({ b: 1 }) })],
  ['integer-like keys', () => ({ b: 1, 2: 'two', a: 3, 1: 'one' })],
  ['an array with an extra key', () => Object.assign([1, 2], { extra: 3 })],
]

describe('toFrozenJson and freezeOwnedJson keep their semantics', () => {
  it('on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expectSame(() => structuredClone(value))
      }),
    )
  })

  it('on arbitrary values with awkward fields', () => {
    const awkwardLeaf = fc.constantFrom(...AWKWARD.map(([, make]) => make))
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }),
        fc.array(fc.tuple(fc.string(), awkwardLeaf), { maxLength: 3 }),
        (value, extras) => {
          expectSame(() => {
            const holder: Record<string, unknown> = { value: structuredClone(value) }
            for (const [key, make] of extras) holder[`x${key}`] = make()
            return holder
          })
        },
      ),
    )
  })

  for (const [name, make] of AWKWARD) it(`with ${name}`, () => expectSame(make))

  it('with keys Object.prototype would add, when it is polluted', () => {
    const proto = Object.prototype as Record<string, unknown>
    proto.polluted = 1
    try {
      expectSame(() => ({ a: 1, nested: { b: 2 } }))
      expect(Object.keys(toFrozenJson({ a: 1 }, 'test') as object)).toEqual(['a'])
    } finally {
      delete proto.polluted
    }
  })
})

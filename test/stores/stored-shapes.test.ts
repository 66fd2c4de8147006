/**
 * The hand-written checks of stored-shapes.ts against the zod schemas of schema.ts they mirror:
 * the same verdict and the same first message, on random valid data of every event type and on
 * random mutations of it (issue 17 item 3), plus the edge cases zod decides in its own way.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { EVENT_TYPES, RudderError, type SessionEvent } from '../../src/core/index.js'
import { decodeLine } from '../../src/stores/codec.js'
import { checkForWrite, createEventCheck, parseHeader } from '../../src/stores/event-check.js'
import {
  blobReference,
  describeIssue,
  EVENT_DATA,
  headerSchema,
  storedEnvelope,
} from '../../src/stores/schema.js'
import { type Check, describeShapeIssue } from '../../src/stores/shape-check.js'
import {
  BLOB_REFERENCE_CHECK,
  ENVELOPE_CHECK,
  EVENT_DATA_CHECK,
  EVENT_DATA_FULL_CHECK,
  HEADER_CHECK,
  isCommonDataValid,
} from '../../src/stores/stored-shapes.js'

/** Both verdicts, worded as the stores word them. */
function verdicts(schema: z.ZodType, check: Check, value: unknown) {
  const result = schema.safeParse(value)
  const found = check(value)
  return {
    zod: result.success ? 'valid' : describeIssue(result.error, 'data'),
    fast: found === undefined ? 'valid' : describeShapeIssue(found, 'data'),
  }
}

function expectAgreement(schema: z.ZodType, check: Check, value: unknown): void {
  const { zod, fast } = verdicts(schema, check, value)
  expect(fast).toBe(zod)
}

class Point {
  x = 1
  y = 2
}

/** Values zod judges in its own ways: non-finite, -0, unsafe integers, non-plain objects. */
const ODD_VALUES: readonly unknown[] = [
  undefined,
  null,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  -0,
  0,
  1,
  1.5,
  -1,
  -2,
  2 ** 53,
  2 ** 60,
  -(2 ** 60),
  '',
  'x',
  'text',
  'image',
  'thinking',
  'tool-call',
  'completed',
  'canceled',
  'error',
  'prompt',
  'stop',
  'manual',
  true,
  false,
  [],
  [1],
  {},
  { type: 'text' },
  { kind: 'error' },
  new Date(0),
  new Map(),
  Object.create(null),
  new Point(),
  Object.create(Point.prototype),
  { [Symbol('key')]: 1 },
  Object.defineProperty({}, Symbol('hidden'), { value: 1, enumerable: false }),
  { constructor: 1 },
  { constructor: () => 1 },
  { constructor: Point },
  10n,
  Symbol('s'),
  () => 1,
]

const text = fc.string({ maxLength: 6 })
const finite = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
const int = fc.integer({ min: -5, max: 1000 })
const json = fc.jsonValue({ maxDepth: 2 })
const textBlock = fc.record({ type: fc.constant('text'), text })
const imageBlock = fc.record({ type: fc.constant('image'), mediaType: text, data: text })
const content = fc.array(fc.oneof(textBlock, imageBlock), { maxLength: 3 })
const source = fc.record({ kind: text })
const extra = fc.dictionary(fc.constantFrom('extra', 'meta2', 'x'), json, { maxKeys: 1 })
const withExtra = <T extends object>(arbitrary: fc.Arbitrary<T>) =>
  fc.tuple(arbitrary, extra).map(([value, more]) => ({ ...more, ...value }))

const DATA: { readonly [K in (typeof EVENT_TYPES)[number]]: fc.Arbitrary<unknown> } = {
  'user/message': withExtra(
    fc.record(
      { id: text, content, source, meta: json },
      { requiredKeys: ['id', 'content', 'source'] },
    ),
  ),
  'steering/message': fc.record(
    { id: text, content, source, meta: json, turn: int },
    { requiredKeys: ['id', 'content', 'source', 'turn'] },
  ),
  'turn/start': fc.record({ turn: int, trigger: fc.constantFrom('prompt', 'continue') }),
  'turn/end': fc.record({
    turn: int,
    reason: fc.oneof(
      fc.constantFrom(
        { kind: 'completed' },
        { kind: 'max-tokens' },
        { kind: 'step-limit' },
        { kind: 'interrupted' },
        { kind: 'stop-limit' },
      ),
      fc.record({ kind: fc.constant('canceled'), cause: text }),
      fc.record({ kind: fc.constant('error'), code: text, message: text }),
    ),
  }),
  'step/start': fc.record({ turn: int, step: int }),
  'request/header': fc.record({
    provider: text,
    model: text,
    system: text,
    tools: fc.array(
      fc.record({ name: text, description: text, parameters: fc.dictionary(text, json) }),
      { maxLength: 2 },
    ),
    params: fc.dictionary(text, json, { maxKeys: 3 }),
  }),
  'assistant/message': withExtra(
    fc.record(
      {
        id: text,
        content: fc.array(
          fc.oneof(
            textBlock,
            fc.record(
              { type: fc.constant('thinking'), text, signature: text },
              { requiredKeys: ['type', 'text'] },
            ),
            fc.record({ type: fc.constant('tool-call'), id: text, name: text, args: json }),
          ),
          { maxLength: 3 },
        ),
        provider: text,
        model: text,
        stopReason: fc.constantFrom('stop', 'tool-calls', 'max-tokens', 'canceled', 'error'),
        usage: fc.record(
          {
            inputTokens: finite,
            outputTokens: finite,
            cacheReadTokens: finite,
            cacheWriteTokens: finite,
            reasoningTokens: finite,
          },
          { requiredKeys: ['inputTokens', 'outputTokens'] },
        ),
        interrupted: fc.constant(true as const),
      },
      {
        requiredKeys: ['id', 'content', 'provider', 'model', 'stopReason', 'usage'],
      },
    ),
  ),
  'tool/call': fc.record({ callId: text, name: text, args: json }),
  'tool/result': fc.record(
    {
      callId: text,
      name: text,
      content,
      isError: fc.boolean(),
      error: fc.record({ code: text, message: text }),
      meta: json,
    },
    { requiredKeys: ['callId', 'name', 'content', 'isError'] },
  ),
  'step/end': fc.record({ turn: int, step: int }),
  compaction: fc.record(
    {
      id: text,
      summary: content,
      firstKeptSeq: int,
      reason: fc.constantFrom('manual', 'auto', 'overflow'),
      tokensBefore: finite,
      tokensAfter: finite,
      request: fc.record({ model: text, system: text, messageCount: finite }),
    },
    { requiredKeys: ['id', 'summary', 'firstKeptSeq', 'reason', 'tokensBefore'] },
  ),
}

const sha = fc.constantFrom('0'.repeat(64), 'ab'.repeat(32))
const blob = fc.record(
  {
    path: fc.array(fc.oneof(text, fc.nat(5)), { maxLength: 3 }),
    sha256: sha,
    bytes: fc.nat(),
    json: fc.constant(true as const),
  },
  { requiredKeys: ['path', 'sha256', 'bytes'] },
)
const envelope = fc.record(
  {
    seq: fc.nat(),
    time: finite,
    type: fc.constantFrom(...EVENT_TYPES, 'plugin/x'),
    data: json,
    ignorable: fc.constant(true as const),
    blobs: fc.array(blob, { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: ['seq', 'time', 'type', 'data'] },
)
const sessionHeader = fc.record(
  {
    id: text,
    formatVersion: fc.integer({ min: -1, max: 3 }),
    createdAt: finite,
    cwd: text,
    parent: fc.record({ sessionId: text, seq: fc.integer({ min: -2, max: 5 }) }),
    title: text,
  },
  { requiredKeys: ['id', 'formatVersion', 'createdAt'] },
)

type Container = Record<PropertyKey, unknown> | unknown[]

/** Every object and array inside `value` (itself included). */
function containers(value: unknown, out: Container[] = []): Container[] {
  if (typeof value !== 'object' || value === null) return out
  out.push(value as Container)
  for (const item of Object.values(value)) containers(item, out)
  return out
}

/** One change to a deep copy of `value`: a replaced, removed or added key, or a new root. */
const mutation = fc.record({
  at: fc.nat(),
  key: fc.nat(),
  kind: fc.constantFrom('replace', 'replace', 'replace', 'remove', 'add', 'root'),
  odd: fc.constantFrom(...ODD_VALUES),
  name: fc.constantFrom('extra', '__proto__', 'type', 'kind', 'id', 'text', 'seq'),
})

/** A deep copy of plain objects and arrays; anything else (a Date, a class instance) is shared. */
function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone)
  if (typeof value !== 'object' || value === null) return value
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return value
  const copy: Record<string, unknown> = Object.create(prototype as object | null)
  for (const [key, item] of Object.entries(value))
    Object.defineProperty(copy, key, {
      value: clone(item),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  return copy
}

type Change = { at: number; key: number; kind: string; odd: unknown; name: string }

function mutate(value: unknown, change: Change): unknown {
  if (change.kind === 'root') return change.odd
  const copy = clone(value)
  const places = containers(copy)
  if (places.length === 0) return change.odd
  const place = places[change.at % places.length]!
  const keys = Object.keys(place)
  const key = keys.length === 0 ? change.name : keys[change.key % keys.length]!
  if (change.kind === 'remove') {
    if (Array.isArray(place)) place.splice(Number(key), 1)
    else delete (place as Record<string, unknown>)[key]
  } else {
    const target = change.kind === 'add' ? change.name : key
    Object.defineProperty(place, target, {
      value: change.odd,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return copy
}

const RUNS = { seed: 17, numRuns: 300 }

describe('the stored-shape checks and the zod schemas', () => {
  for (const type of EVENT_TYPES) {
    it(`agree on valid and mutated ${type} data`, () => {
      fc.assert(
        fc.property(DATA[type], fc.array(mutation, { maxLength: 2 }), (data, changes) => {
          // The check loads and appends use (quick verdict first) and the full one alone.
          for (const check of [EVENT_DATA_CHECK[type], EVENT_DATA_FULL_CHECK[type]])
            expectAgreement(EVENT_DATA[type], check, data)
          expect(EVENT_DATA_CHECK[type](data)).toBeUndefined()
          let changed: unknown = data
          for (const change of changes) changed = mutate(changed, change)
          for (const check of [EVENT_DATA_CHECK[type], EVENT_DATA_FULL_CHECK[type]])
            expectAgreement(EVENT_DATA[type], check, changed)
        }),
        RUNS,
      )
    })
  }

  it('agree on valid and mutated envelopes, blob references and headers', () => {
    fc.assert(
      fc.property(
        envelope,
        sessionHeader,
        fc.array(mutation, { maxLength: 2 }),
        (line, head, changes) => {
          expectAgreement(storedEnvelope, ENVELOPE_CHECK, line)
          expectAgreement(headerSchema, HEADER_CHECK, head)
          let changedLine: unknown = line
          let changedHead: unknown = head
          for (const change of changes) {
            changedLine = mutate(changedLine, change)
            changedHead = mutate(changedHead, change)
          }
          expectAgreement(storedEnvelope, ENVELOPE_CHECK, changedLine)
          expectAgreement(headerSchema, HEADER_CHECK, changedHead)
          if (line.blobs?.[0]) {
            const reference = mutate(
              line.blobs[0],
              changes[0] ?? { at: 0, key: 0, kind: 'root', odd: 1, name: 'x' },
            )
            expectAgreement(blobReference, BLOB_REFERENCE_CHECK, reference)
          }
        },
      ),
      RUNS,
    )
  })

  it('agree on arbitrary values of any shape', () => {
    const checks = [
      ...EVENT_TYPES.map((type) => [EVENT_DATA[type], EVENT_DATA_CHECK[type]] as const),
      ...EVENT_TYPES.map((type) => [EVENT_DATA[type], EVENT_DATA_FULL_CHECK[type]] as const),
      [storedEnvelope, ENVELOPE_CHECK] as const,
      [headerSchema, HEADER_CHECK] as const,
    ]
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true }), (value) => {
        for (const [schema, check] of checks) expectAgreement(schema, check, value)
      }),
      RUNS,
    )
  })
})

/** Every change of one key (or item) of `value` to each odd value, and every removal. */
function* pointChanges(value: unknown): Generator<unknown> {
  const places = containers(value)
  for (let at = 0; at < places.length; at++) {
    const keys = Object.keys(places[at]!)
    for (let key = 0; key < keys.length; key++) {
      yield mutate(value, { at, key, kind: 'remove', odd: undefined, name: 'x' })
      for (const odd of ODD_VALUES)
        yield mutate(value, { at, key, kind: 'replace', odd, name: 'x' })
    }
  }
}

/** The types an agent's turn appends at every step, which the quick verdict decides. */
const COMMON_TYPES = [
  'turn/start',
  'user/message',
  'step/start',
  'assistant/message',
  'tool/call',
  'tool/result',
  'step/end',
  'turn/end',
] as const

describe('the quick verdict on common event data (decision 0174)', () => {
  // Unsound if it ever says valid where the full check finds a problem: an append would then
  // write data a store refuses to read back.
  const expectSound = (type: string, value: unknown) => {
    if (!isCommonDataValid(type, value)) return
    expect(EVENT_DATA_FULL_CHECK[type as (typeof EVENT_TYPES)[number]](value)).toBeUndefined()
  }

  for (const type of EVENT_TYPES) {
    it(`is never valid where the full check refuses ${type} data, changed anywhere`, () => {
      fc.assert(
        fc.property(DATA[type], fc.array(mutation, { maxLength: 3 }), (data, changes) => {
          for (const changed of pointChanges(data)) expectSound(type, changed)
          let changed: unknown = data
          for (const change of changes) {
            changed = mutate(changed, change)
            expectSound(type, changed)
          }
        }),
        { seed: 17, numRuns: 40 },
      )
    })
  }

  it('is never valid where the full check refuses a value of any shape, under any type', () => {
    fc.assert(
      fc.property(fc.anything({ withObjectString: true, withNullPrototype: true }), (value) => {
        for (const type of EVENT_TYPES) expectSound(type, value)
        expect(isCommonDataValid('plugin/event', value)).toBe(false)
      }),
      RUNS,
    )
  })

  it('decides the valid data of the common types itself', () => {
    for (const type of COMMON_TYPES)
      fc.assert(
        fc.property(DATA[type], (data) => {
          expect(isCommonDataValid(type, data)).toBe(true)
        }),
        { seed: 17, numRuns: 100 },
      )
  })

  it('leaves refusals to the full check, worded as before', () => {
    const event = {
      seq: 0,
      time: 1,
      type: 'step/start',
      data: { turn: 1, step: 1.5 },
    } as unknown as SessionEvent
    expect(() => checkForWrite(event)).toThrow(
      'cannot append "step/start": data.step: Invalid input: expected int, received number',
    )
  })
})

describe('edge cases the stored-shape checks decide as zod does', () => {
  const user = (fields: Record<string, unknown>) => ({
    id: 'u1',
    content: [{ type: 'text', text: 'hi' }],
    source: { kind: 'user' },
    ...fields,
  })
  const cases: readonly [string, (typeof EVENT_TYPES)[number], unknown, string][] = [
    ['keeps unknown keys', 'user/message', user({ extra: { deep: [1] } }), 'valid'],
    ['takes -0 as an integer', 'step/start', { turn: -0, step: 0 }, 'valid'],
    [
      'refuses NaN',
      'step/start',
      { turn: Number.NaN, step: 1 },
      'data.turn: Invalid input: expected number, received NaN',
    ],
    [
      'refuses Infinity',
      'compaction',
      {
        id: 'c',
        summary: [],
        firstKeptSeq: 1,
        reason: 'auto',
        tokensBefore: Number.POSITIVE_INFINITY,
      },
      'data.tokensBefore: Invalid input: expected number, received Infinity',
    ],
    [
      'refuses an unsafe integer',
      'step/end',
      { turn: 2 ** 60, step: 1 },
      'data.turn: Too big: expected int to be <=9007199254740991',
    ],
    [
      'requires tool-call args to be there, undefined allowed',
      'tool/call',
      { callId: 'c', name: 'n' },
      'data.args: Invalid input: expected nonoptional, received undefined',
    ],
    [
      'takes an args key holding undefined',
      'tool/call',
      { callId: 'c', name: 'n', args: undefined },
      'valid',
    ],
    ['takes an optional key holding undefined', 'user/message', user({ meta: undefined }), 'valid'],
    [
      'names an unknown block type and the options',
      'user/message',
      user({ content: [{ type: 'video' }] }),
      "data.content[0].type: Invalid discriminator value. Expected 'text' | 'image'",
    ],
    [
      'names the class of a non-plain record',
      'request/header',
      { provider: 'p', model: 'm', system: '', tools: [], params: new Point() },
      'data.params: Invalid input: expected record, received Point',
    ],
    [
      'refuses an enumerable symbol key in a record',
      'request/header',
      { provider: 'p', model: 'm', system: '', tools: [], params: { [Symbol('k')]: 1 } },
      'data.params.Symbol(k): Invalid key in record',
    ],
    [
      'takes a class instance where an object is asked for',
      'user/message',
      user({ source: Object.assign(new Point(), { kind: 'user' }) }),
      'valid',
    ],
    [
      'lists the allowed options',
      'turn/start',
      { turn: 1, trigger: 'later' },
      'data.trigger: Invalid option: expected one of "prompt"|"continue"',
    ],
  ]
  for (const [name, type, data, expected] of cases)
    it(name, () => {
      const { zod, fast } = verdicts(EVENT_DATA[type], EVENT_DATA_CHECK[type], data)
      expect(zod).toBe(expected)
      expect(fast).toBe(expected)
    })

  it('reports every unknown header key, inherited ones included', () => {
    const inherited = Object.assign(Object.create({ stray: 1 }), {
      id: 's',
      formatVersion: 1,
      createdAt: 0,
      other: 2,
    })
    const { zod, fast } = verdicts(headerSchema, HEADER_CHECK, inherited)
    expect(zod).toBe('data: Unrecognized keys: "other", "stray"')
    expect(fast).toBe(zod)
  })

  it('refuses an own "__proto__" key in a strict envelope', () => {
    const line = JSON.parse('{"seq":0,"time":1,"type":"t","data":null,"__proto__":1}')
    const { zod, fast } = verdicts(storedEnvelope, ENVELOPE_CHECK, line)
    expect(zod).toBe('data: Unrecognized key: "__proto__"')
    expect(fast).toBe(zod)
  })

  it('words a bad blob path element as zod words its union', () => {
    const reference = (part: unknown) => ({ path: [part], sha256: 'a'.repeat(64), bytes: 1 })
    for (const [part, expected] of [
      [-1, 'data.path[0]: Too small: expected number to be >=0'],
      [1.5, 'data.path[0]: Invalid input'],
      [true, 'data.path[0]: Invalid input'],
      [2 ** 60, 'data.path[0]: Too big: expected int to be <=9007199254740991'],
    ] as const) {
      const { zod, fast } = verdicts(blobReference, BLOB_REFERENCE_CHECK, reference(part))
      expect(zod).toBe(expected)
      expect(fast).toBe(expected)
    }
  })
})

describe("the store's open, append, load and list path", () => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/stores')

  /** Modules reached by static value imports (not `import type`, not `import()`) from `file`. */
  function reached(file: string, seen = new Set<string>()): Set<string> {
    if (seen.has(file)) return seen
    seen.add(file)
    const text = readFileSync(file, 'utf8')
    for (const match of text.matchAll(/(?:^|\n)import\s+(?!type\b)[^'"]*?['"]([^'"]+)['"]/g)) {
      const specifier = match[1]!
      if (!specifier.startsWith('.')) seen.add(specifier)
      else reached(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')), seen)
    }
    return seen
  }

  it('imports no zod (schema.ts is the reference, for tests)', () => {
    const modules = new Set<string>()
    for (const entry of [
      'index.ts',
      'session-store.ts',
      'log-loader.ts',
      'event-check.ts',
      'codec.ts',
      'open-store.ts',
      'jsonl/jsonl-backend.ts',
      'sqlite/sqlite-backend.ts',
      'postgres/postgres-backend.ts',
      'memory/memory-backend.ts',
    ])
      for (const module of reached(join(root, entry))) modules.add(module)
    expect(modules.has(join(root, 'event-check.ts'))).toBe(true)
    expect(
      [...modules].filter((module) => module === 'zod' || module === join(root, 'schema.ts')),
    ).toEqual([])
  })
})

describe('the messages stores give for bad data', () => {
  const event = (type: string, data: unknown) => ({ seq: 0, time: 1, type, data }) as SessionEvent

  it('refuses an append naming the type, the field and the fix', () => {
    expect(() =>
      checkForWrite(
        event('user/message', {
          id: 'u',
          content: [{ type: 'text', text: 1 }],
          source: { kind: 'k' },
        }),
      ),
    ).toThrowError(
      new RudderError(
        'INVALID_EVENT_DATA',
        'cannot append "user/message": data.content[0].text: Invalid input: expected string, received number; a store would refuse to read this event back, so fix the value before appending',
      ),
    )
  })

  it('refuses a stored line whose envelope or data is wrong, naming the field', () => {
    expect(() => decodeLine('{"seq":"0","time":1,"type":"turn/start","data":{}}')).toThrowError(
      'event.seq: Invalid input: expected number, received string',
    )
    expect(() => decodeLine('{"seq":0,"time":1,"type":"turn/start","data":{},"x":1}')).toThrowError(
      'event: Unrecognized key: "x"',
    )
    const line = decodeLine(
      '{"seq":0,"time":1,"type":"turn/start","data":{"turn":1,"trigger":"soon"}}',
    )
    expect(() => createEventCheck().accept(line)).toThrowError(
      'turn/start data.trigger: Invalid option: expected one of "prompt"|"continue"',
    )
  })

  it('refuses a header naming the field', () => {
    expect(() =>
      parseHeader('{"id":"","formatVersion":1,"createdAt":0}', 'here', undefined),
    ).toThrowError('here: the header.id: Too small: expected string to have >=1 characters')
  })
})

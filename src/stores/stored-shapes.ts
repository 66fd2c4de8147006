/**
 * The checks a store runs on what it reads and writes (docs/spec.md §3): the header, the stored
 * envelope and the data of each core event type. Files and rows are a trust boundary: anything
 * read is checked here before the live session or the projection sees it, and every append is
 * checked so a store never writes what it would refuse to read.
 *
 * These mirror the zod schemas of schema.ts key for key (schema.ts is the readable reference;
 * test/stores/stored-shapes.test.ts holds the two to the same verdict and the same message).
 * They exist because zod cost 2–3× the write floor per append and most of a load (issue 17).
 *
 * Data objects are loose (unknown keys are kept) because `append` accepts any plain JSON and a
 * store must give back exactly what was appended. Header and envelope are strict: rudder alone
 * writes them, so an unknown key there means another writer or damage.
 */
import type { EventType } from '../core/index.js'
import {
  anyOptional,
  anyValue,
  arrayOf,
  boolean,
  byKey,
  type Check,
  integer,
  keyOrIndex,
  literal,
  looseObject,
  matching,
  nonEmptyString,
  number,
  oneOf,
  optional,
  recordOfAny,
  strictObject,
  string,
} from './shape-check.js'

const int = integer()
const nonNegative = integer({ minimum: 0 })

const textBlock = looseObject({ type: literal('text'), text: string })
const imageBlock = looseObject({ type: literal('image'), mediaType: string, data: string })
const content = arrayOf(byKey('type', { text: textBlock, image: imageBlock }))
const assistantBlock = byKey('type', {
  text: textBlock,
  thinking: looseObject({ type: literal('thinking'), text: string, signature: optional(string) }),
  'tool-call': looseObject({
    type: literal('tool-call'),
    id: string,
    name: string,
    args: anyValue,
  }),
})
const source = looseObject({ kind: string })
const turnEndReason = byKey('kind', {
  completed: looseObject({ kind: literal('completed') }),
  'max-tokens': looseObject({ kind: literal('max-tokens') }),
  'step-limit': looseObject({ kind: literal('step-limit') }),
  canceled: looseObject({ kind: literal('canceled'), cause: string }),
  error: looseObject({ kind: literal('error'), code: string, message: string }),
  interrupted: looseObject({ kind: literal('interrupted') }),
  'stop-limit': looseObject({ kind: literal('stop-limit') }),
})
const usage = looseObject({
  inputTokens: number,
  outputTokens: number,
  cacheReadTokens: optional(number),
  cacheWriteTokens: optional(number),
  reasoningTokens: optional(number),
})
const toolSpec = looseObject({ name: string, description: string, parameters: recordOfAny })

/**
 * The full check of `data` for each core event type (schema.ts: `EVENT_DATA`), key by key: the
 * one that words a refusal. Callers use `EVENT_DATA_CHECK`, which asks the quick verdict first.
 */
export const EVENT_DATA_FULL_CHECK: { readonly [K in EventType]: Check } = {
  'user/message': looseObject({ id: string, content, source, meta: anyOptional }),
  'steering/message': looseObject({ id: string, content, source, meta: anyOptional, turn: int }),
  'turn/start': looseObject({ turn: int, trigger: oneOf(['prompt', 'continue']) }),
  'turn/end': looseObject({ turn: int, reason: turnEndReason }),
  'step/start': looseObject({ turn: int, step: int }),
  'request/header': looseObject({
    provider: string,
    model: string,
    system: string,
    tools: arrayOf(toolSpec),
    params: recordOfAny,
  }),
  'assistant/message': looseObject({
    id: string,
    content: arrayOf(assistantBlock),
    provider: string,
    model: string,
    stopReason: oneOf(['stop', 'tool-calls', 'max-tokens', 'canceled', 'error']),
    usage,
    interrupted: optional(literal(true)),
  }),
  'tool/call': looseObject({ callId: string, name: string, args: anyValue }),
  'tool/result': looseObject({
    callId: string,
    name: string,
    content,
    isError: boolean,
    error: optional(looseObject({ code: string, message: string })),
    meta: anyOptional,
  }),
  'step/end': looseObject({ turn: int, step: int }),
  compaction: looseObject({
    id: string,
    summary: content,
    firstKeptSeq: int,
    reason: oneOf(['manual', 'auto', 'overflow']),
    tokensBefore: number,
    tokensAfter: optional(number),
    request: optional(looseObject({ model: string, system: string, messageCount: number })),
  }),
}

/**
 * The check of `data` for each core event type (schema.ts: `EVENT_DATA`): no problem where the
 * quick verdict (`isCommonDataValid`) finds the data valid, else the full check's verdict and
 * wording. The same verdicts as the full check (the quick one is never true where it finds a
 * problem), at a quarter of its cost for the types a turn appends at every step: a load without
 * a checkpoint checks every event's data (decision 0179).
 */
export const EVENT_DATA_CHECK: { readonly [K in EventType]: Check } =
  withQuickVerdict(EVENT_DATA_FULL_CHECK)

function withQuickVerdict(full: { readonly [K in EventType]: Check }): {
  readonly [K in EventType]: Check
} {
  const checks = {} as { [K in EventType]: Check }
  for (const type of Object.keys(full) as EventType[]) {
    const check = full[type]
    checks[type] = (value) => (isCommonDataValid(type, value) ? undefined : check(value))
  }
  return checks
}

/** A reference from a stored event to a content-addressed blob (see blob-store.ts). */
export type BlobReference = {
  /** Where in `data` the value goes: keys and array indexes. Empty means the whole `data`. */
  readonly path: readonly (string | number)[]
  readonly sha256: string
  readonly bytes: number
  /** The blob holds JSON text to parse (a whole `data`), not a string value. */
  readonly json?: true
}

/** The check of a `BlobReference` (schema.ts: `blobReference`). */
export const BLOB_REFERENCE_CHECK = strictObject({
  path: arrayOf(keyOrIndex),
  sha256: matching(/^[0-9a-f]{64}$/),
  bytes: nonNegative,
  json: optional(literal(true)),
})

/** One stored event (schema.ts: `storedEnvelope`). */
export const ENVELOPE_CHECK = strictObject({
  seq: nonNegative,
  time: number,
  type: nonEmptyString,
  data: anyValue,
  ignorable: optional(literal(true)),
  blobs: optional(arrayOf(BLOB_REFERENCE_CHECK, { nonEmpty: true })),
})

/** The session header (schema.ts: `headerSchema`), checked after `formatVersion`. */
export const HEADER_CHECK = strictObject({
  id: nonEmptyString,
  formatVersion: integer({ minimum: 0, exclusive: true }),
  createdAt: number,
  cwd: optional(string),
  parent: optional(strictObject({ sessionId: nonEmptyString, seq: integer({ minimum: -1 }) })),
  title: optional(string),
})

/** Whether a value is a header this rudder can read (for listings, which skip the others). */
export function isValidHeader(value: unknown): boolean {
  return HEADER_CHECK(value) === undefined
}

/** An object as the shapes take one: not null, not an array (a class instance passes). */
type Fields = { readonly [key: string]: unknown }
const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isString = (value: unknown) => typeof value === 'string'
const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value)
const isInt = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value)
const isOptionalNumber = (value: unknown) => value === undefined || isNumber(value)

function isContent(value: unknown): boolean {
  if (!Array.isArray(value)) return false
  for (let index = 0; index < value.length; index++) {
    const block: unknown = value[index]
    if (!isObject(block)) return false
    const type = block.type
    if (type === 'text') {
      if (!isString(block.text)) return false
    } else if (type !== 'image' || !isString(block.mediaType) || !isString(block.data)) return false
  }
  return true
}

function isAssistantContent(value: unknown): boolean {
  if (!Array.isArray(value)) return false
  for (let index = 0; index < value.length; index++) {
    const block: unknown = value[index]
    if (!isObject(block)) return false
    const type = block.type
    if (type === 'text') {
      if (!isString(block.text)) return false
    } else if (type === 'tool-call') {
      if (!isString(block.id) || !isString(block.name) || block.args === undefined) return false
    } else if (
      type !== 'thinking' ||
      !isString(block.text) ||
      (block.signature !== undefined && !isString(block.signature))
    )
      return false
  }
  return true
}

function isTurnEndReason(value: unknown): boolean {
  if (!isObject(value)) return false
  switch (value.kind) {
    case 'completed':
    case 'max-tokens':
    case 'step-limit':
    case 'interrupted':
    case 'stop-limit':
      return true
    case 'canceled':
      return isString(value.cause)
    case 'error':
      return isString(value.code) && isString(value.message)
    default:
      return false
  }
}

function isUsage(value: unknown): boolean {
  return (
    isObject(value) &&
    isNumber(value.inputTokens) &&
    isNumber(value.outputTokens) &&
    isOptionalNumber(value.cacheReadTokens) &&
    isOptionalNumber(value.cacheWriteTokens) &&
    isOptionalNumber(value.reasoningTokens)
  )
}

/**
 * A quick verdict on the data of the event types a turn appends most: true only for data
 * `EVENT_DATA_CHECK[type]` accepts; false for anything else, including valid data it does not
 * decide (an unknown type, a `request/header`, a `compaction`, a `z.unknown()` key present but
 * undefined), which then takes the full check, the one that words the refusal. The full checks
 * read each key through a lookup by name that sees every shape (V8's megamorphic keyed load,
 * about half of an append's check, decision 0174); each read here has a site of its own. A test
 * (stored-shapes.test.ts) holds it to that: never true where the full check finds a problem.
 */
export function isCommonDataValid(type: string, data: unknown): boolean {
  if (!isObject(data)) return false
  switch (type) {
    case 'step/start':
    case 'step/end':
      return isInt(data.turn) && isInt(data.step)
    case 'turn/start':
      return isInt(data.turn) && (data.trigger === 'prompt' || data.trigger === 'continue')
    case 'turn/end':
      return isInt(data.turn) && isTurnEndReason(data.reason)
    case 'user/message':
      return (
        isString(data.id) &&
        isContent(data.content) &&
        isObject(data.source) &&
        isString(data.source.kind)
      )
    case 'assistant/message': {
      const stop = data.stopReason
      return (
        isString(data.id) &&
        isAssistantContent(data.content) &&
        isString(data.provider) &&
        isString(data.model) &&
        (stop === 'stop' ||
          stop === 'tool-calls' ||
          stop === 'max-tokens' ||
          stop === 'canceled' ||
          stop === 'error') &&
        isUsage(data.usage) &&
        (data.interrupted === undefined || data.interrupted === true)
      )
    }
    case 'tool/call':
      return isString(data.callId) && isString(data.name) && data.args !== undefined
    case 'tool/result': {
      const error = data.error
      return (
        isString(data.callId) &&
        isString(data.name) &&
        isContent(data.content) &&
        typeof data.isError === 'boolean' &&
        (error === undefined ||
          (isObject(error) && isString(error.code) && isString(error.message)))
      )
    }
    default:
      return false
  }
}

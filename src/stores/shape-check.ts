/**
 * Small, allocation-free checkers for the shapes a store reads and writes (see stored-shapes.ts).
 * They accept exactly what the zod schemas of schema.ts accept and word the first problem as zod
 * does (a property test holds them to it), at a fraction of zod's cost per event and without
 * loading zod: every append and every event loaded goes through one (issue 17 item 3).
 *
 * A check returns undefined for a valid value, or the first problem found, in the order zod
 * reports them: keys in the order the shape lists them, then unknown keys of a strict object.
 */

/** The first problem found: where (keys and indexes, outermost first) and what. */
export type ShapeIssue = { readonly path: PropertyKey[]; readonly message: string }

/** Checks one value; returns undefined if it is valid. */
export type Check = (value: unknown) => ShapeIssue | undefined

/** How a key of an object is checked when it is missing or undefined. */
type Field =
  /** The check sees `value[key]`, undefined included (it words "received undefined"). */
  | { readonly key: string; readonly kind: 'required'; readonly check: Check }
  /** Missing or undefined is fine; anything else goes through the check. */
  | { readonly key: string; readonly kind: 'optional'; readonly check: Check }
  /** Any value, but the key must be there (zod 4's `z.unknown()` as an object key). */
  | { readonly key: string; readonly kind: 'present' }

/** Builds a field list from a shape written as `{ key: check | optional(check) | anyValue }`. */
export type ShapeSpec = { readonly [key: string]: Check | OptionalMark | AnyMark }
type OptionalMark = { readonly optional: Check }
type AnyMark = { readonly any: 'required' | 'optional' }

/** Marks a key of a shape as optional. */
export function optional(check: Check): OptionalMark {
  return { optional: check }
}

/** Any value, the key required (zod 4: `z.unknown()`) or not (`z.unknown().optional()`). */
export const anyValue: AnyMark = { any: 'required' }
export const anyOptional: AnyMark = { any: 'optional' }

function issue(message: string): ShapeIssue {
  return { path: [], message }
}

function within(part: PropertyKey, found: ShapeIssue): ShapeIssue {
  found.path.unshift(part)
  return found
}

/** The name zod gives the type of a value it did not expect ("received ..."). */
function receivedName(value: unknown): string {
  if (typeof value === 'number')
    return Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? 'number' : String(value)
  if (typeof value === 'object') {
    if (value === null) return 'null'
    if (Array.isArray(value)) return 'array'
    const object = value as { constructor?: { name?: unknown } }
    if (Object.getPrototypeOf(object) !== Object.prototype && 'constructor' in object)
      if (object.constructor) return String(object.constructor.name)
    return 'object'
  }
  return typeof value
}

function typeIssue(expected: string, value: unknown): ShapeIssue {
  return issue(`Invalid input: expected ${expected}, received ${receivedName(value)}`)
}

function quoted(value: string | boolean): string {
  return typeof value === 'string' ? `"${value}"` : String(value)
}

export const string: Check = (value) =>
  typeof value === 'string' ? undefined : typeIssue('string', value)

export const boolean: Check = (value) =>
  typeof value === 'boolean' ? undefined : typeIssue('boolean', value)

/** A finite number (zod's `z.number()` refuses NaN and ±Infinity). */
export const number: Check = (value) =>
  typeof value === 'number' && Number.isFinite(value) ? undefined : typeIssue('number', value)

/** A safe integer, optionally at least `minimum` (`exclusive`: greater than it). */
export function integer(bound?: { readonly minimum: number; readonly exclusive?: true }): Check {
  return (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return typeIssue('number', value)
    if (!Number.isInteger(value)) return typeIssue('int', value)
    if (!Number.isSafeInteger(value))
      return issue(
        value > 0
          ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`
          : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`,
      )
    if (bound === undefined) return undefined
    if (bound.exclusive ? value > bound.minimum : value >= bound.minimum) return undefined
    return issue(`Too small: expected number to be ${bound.exclusive ? '>' : '>='}${bound.minimum}`)
  }
}

/** A string of at least one character. */
export const nonEmptyString: Check = (value) =>
  typeof value !== 'string'
    ? typeIssue('string', value)
    : value.length === 0
      ? issue('Too small: expected string to have >=1 characters')
      : undefined

/** A string matching `pattern` (anchored by the caller). */
export function matching(pattern: RegExp): Check {
  return (value) =>
    typeof value !== 'string'
      ? typeIssue('string', value)
      : pattern.test(value)
        ? undefined
        : issue(`Invalid string: must match pattern ${pattern}`)
}

/** Exactly `expected` (a string or `true`). */
export function literal(expected: string | boolean): Check {
  return (value) =>
    value === expected ? undefined : issue(`Invalid input: expected ${quoted(expected)}`)
}

/** One of a few strings. */
export function oneOf(options: readonly string[]): Check {
  const allowed = new Set<unknown>(options)
  const message = `Invalid option: expected one of ${options.map(quoted).join('|')}`
  return (value) => (allowed.has(value) ? undefined : issue(message))
}

/** An array whose items all pass `item`; `nonEmpty`: at least one. */
export function arrayOf(item: Check, options: { readonly nonEmpty?: true } = {}): Check {
  return (value) => {
    if (!Array.isArray(value)) return typeIssue('array', value)
    for (let index = 0; index < value.length; index++) {
      const found = item(value[index])
      if (found) return within(index, found)
    }
    if (options.nonEmpty && value.length === 0)
      return issue('Too small: expected array to have >=1 items')
    return undefined
  }
}

/**
 * A plain object with string keys and any values (zod: `z.record(z.string(), z.unknown())`),
 * which refuses class instances and enumerable symbol keys.
 */
export const recordOfAny: Check = (value) => {
  if (!isPlainObject(value)) return typeIssue('record', value)
  const symbols = Object.getOwnPropertySymbols(value)
  for (const symbol of symbols)
    if (Object.prototype.propertyIsEnumerable.call(value, symbol))
      return within(symbol, issue('Invalid key in record'))
  return undefined
}

function isObject(value: unknown): value is Record<PropertyKey, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** zod's test for a record: an object whose constructor (if any) looks like `Object`. */
function isPlainObject(value: unknown): value is Record<PropertyKey, unknown> {
  if (!isObject(value)) return false
  const maker: unknown = value.constructor
  if (maker === undefined || typeof maker !== 'function') return true
  const prototype: unknown = maker.prototype
  return isObject(prototype) && Object.hasOwn(prototype, 'isPrototypeOf')
}

function fieldsOf(spec: ShapeSpec): Field[] {
  return Object.entries(spec).map(([key, entry]): Field => {
    if (typeof entry === 'function') return { key, kind: 'required', check: entry }
    if ('optional' in entry) return { key, kind: 'optional', check: entry.optional }
    return entry.any === 'required'
      ? { key, kind: 'present' }
      : { key, kind: 'optional', check: () => undefined }
  })
}

function checkFields(fields: readonly Field[], value: Record<PropertyKey, unknown>) {
  for (const field of fields) {
    const item = value[field.key]
    let found: ShapeIssue | undefined
    switch (field.kind) {
      case 'required':
        found = field.check(item)
        break
      case 'optional':
        found = item === undefined ? undefined : field.check(item)
        break
      case 'present':
        found =
          item === undefined && !(field.key in value)
            ? issue('Invalid input: expected nonoptional, received undefined')
            : undefined
        break
    }
    if (found) return within(field.key, found)
  }
  return undefined
}

/** An object with these keys; other keys are allowed and kept (zod: `z.looseObject`). */
export function looseObject(spec: ShapeSpec): Check {
  const fields = fieldsOf(spec)
  return (value) => (isObject(value) ? checkFields(fields, value) : typeIssue('object', value))
}

/** An object with these keys and no others, inherited enumerable ones included (`z.strictObject`). */
export function strictObject(spec: ShapeSpec): Check {
  const fields = fieldsOf(spec)
  const known = new Set(Object.keys(spec))
  return (value) => {
    if (!isObject(value)) return typeIssue('object', value)
    const found = checkFields(fields, value)
    if (found) return found
    // Allocated only when a key is unknown: every envelope read passes through here.
    let unknown: string[] | undefined
    for (const key in value) {
      if (known.has(key)) continue
      if (unknown === undefined) unknown = []
      unknown.push(key)
    }
    if (unknown === undefined) return undefined
    return issue(
      `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map(quoted).join(', ')}`,
    )
  }
}

/**
 * One of several object shapes, chosen by the string at `key` (`z.discriminatedUnion`): each
 * option's check must itself require that literal.
 */
export function byKey(key: string, options: { readonly [tag: string]: Check }): Check {
  const chosen = new Map<unknown, Check>(Object.entries(options))
  const message = `Invalid discriminator value. Expected ${Object.keys(options)
    .map((tag) => `'${tag}'`)
    .join(' | ')}`
  return (value) => {
    if (!isObject(value)) return typeIssue('object', value)
    const option = chosen.get(value[key])
    return option ? option(value) : within(key, issue(message))
  }
}

/**
 * A key or an index in a path (`z.union([z.string(), z.number().int().nonnegative()])`): a
 * number that is an integer but out of range gets the range message, as zod's union words it
 * when only the number option came close; anything else gets zod's bare "Invalid input".
 */
const index = integer({ minimum: 0 })
export const keyOrIndex: Check = (value) => {
  if (typeof value === 'string') return undefined
  if (typeof value !== 'number' || !Number.isInteger(value)) return issue('Invalid input')
  return index(value)
}

/** An issue as `root.path[0].key: message`, the form of every store error about data. */
export function describeShapeIssue(found: ShapeIssue, root: string): string {
  const path = found.path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
  return `${root}${path}: ${found.message}`
}

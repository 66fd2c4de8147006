/**
 * Plain-JSON checking, copying and freezing. The log holds only plain JSON so that every
 * store writes exactly what the live session holds.
 */
import { RudderError } from './errors.js'
import type { JsonValue } from './values.js'

/**
 * Deep-copies `value` into frozen plain JSON. Throws `INVALID_EVENT_DATA` naming `what` and the
 * path of the first field that is not plain JSON (undefined, a function, a Date, a Map, a class
 * instance, a cycle, a non-finite number).
 */
export function toFrozenJson(value: unknown, what: string, root = 'data'): JsonValue {
  // The fast path builds no path strings (they were most of an append's allocation, B5+); a
  // value it refuses is walked again, with paths and a cycle check, to word the error.
  const copied = copy(value, 0)
  return copied === NOT_PLAIN ? describeProblem(value, root, new Set(), what) : copied
}

/**
 * `Object.prototype.hasOwnProperty`, called on a `for…in` key of the same object: optimised
 * code (Node 20's V8) then answers it from the key cache with a map check, where
 * `Object.hasOwn` stays a call per key (0.9k instructions an event of the B4 fixture, decision
 * 0172). Taken once, so a later change to `Object.prototype` does not reach it.
 */
export const ownKeyCheck: (this: object, key: PropertyKey) => boolean =
  Object.prototype.hasOwnProperty

/** What `copy` returns for a value that is not plain JSON (or nested too deep to tell fast). */
const NOT_PLAIN = Symbol('not plain JSON')
/** Deeper than this, `copy` gives up and the walk with a cycle check decides. */
const FAST_DEPTH = 256

function copy(value: unknown, depth: number): JsonValue | typeof NOT_PLAIN {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      // JSON has no -0 (it is written as 0), so it becomes 0 here: the live event then equals
      // the one every store reads back (docs/spec.md §3.1, decision 0066).
      if (Number.isFinite(value)) return value === 0 ? 0 : value
      return NOT_PLAIN
    case 'object': {
      if (value === null) return null
      // A cycle also ends here: it is deeper than any depth.
      if (depth > FAST_DEPTH) return NOT_PLAIN
      if (Array.isArray(value)) {
        const out: JsonValue[] = new Array(value.length)
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return NOT_PLAIN
          const copied = copy(value[i], depth + 1)
          if (copied === NOT_PLAIN) return NOT_PLAIN
          out[i] = copied
        }
        return Object.freeze(out)
      }
      const proto: unknown = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return NOT_PLAIN
      const out: Record<string, JsonValue> = {}
      // for…in walks V8's cached key list where Object.keys allocates an array per object;
      // the own check skips what a polluted Object.prototype would add.
      for (const key in value) {
        if (!ownKeyCheck.call(value, key)) continue
        const copied = copy((value as Record<string, unknown>)[key], depth + 1)
        if (copied === NOT_PLAIN) return NOT_PLAIN
        setDataProperty(out, key, copied)
      }
      return Object.freeze(out)
    }
    default:
      return NOT_PLAIN
  }
}

/**
 * The slow path: walks `value` with paths and a cycle check, and returns its frozen copy if it
 * is plain JSON after all (only nested deeper than `FAST_DEPTH`), else throws at the first
 * field that is not.
 */
function describeProblem(
  value: unknown,
  path: string,
  ancestors: Set<object>,
  what: string,
): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (Number.isFinite(value)) return value === 0 ? 0 : value
      return reject(what, path, `is ${value}, and JSON has no non-finite numbers`)
    case 'object': {
      if (value === null) return null
      if (ancestors.has(value)) return reject(what, path, 'refers back to itself (a cycle)')
      ancestors.add(value)
      try {
        if (Array.isArray(value)) {
          const out: JsonValue[] = new Array(value.length)
          for (let i = 0; i < value.length; i++) {
            if (!(i in value)) return reject(what, `${path}[${i}]`, 'is a hole in a sparse array')
            out[i] = describeProblem(value[i], `${path}[${i}]`, ancestors, what)
          }
          return Object.freeze(out)
        }
        const proto: unknown = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null) {
          const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object'
          return reject(what, path, `is a ${name}, not a plain object`)
        }
        const out: Record<string, JsonValue> = {}
        for (const key of Object.keys(value)) {
          const field = describeProblem(
            (value as Record<string, unknown>)[key],
            fieldPath(path, key),
            ancestors,
            what,
          )
          setDataProperty(out, key, field)
        }
        return Object.freeze(out)
      } finally {
        ancestors.delete(value)
      }
    }
    default:
      return reject(
        what,
        path,
        `is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}`,
      )
  }
}

/**
 * Sets `target[key] = value` as an own, enumerable data property. Plain assignment of the key
 * `__proto__` changes the prototype instead (or is ignored for a primitive), so a key a model
 * or a file supplied would silently vanish from event data (issue 9 item 5). Use this wherever
 * keys come from outside: tool arguments, JSON from the wire or a file.
 */
export function setDataProperty<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  else target[key] = value
}

function fieldPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

function reject(what: string, path: string, problem: string): never {
  throw new RudderError(
    'INVALID_EVENT_DATA',
    `${what}: ${path} ${problem}; event data must be plain JSON (objects, arrays, strings, finite numbers, booleans, null). Convert or remove that field before appending.`,
  )
}

/**
 * Freezes a value already known to be plain JSON (for example the result of `JSON.parse`)
 * in place, without copying.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) freezeTree(value)
  return value
}

// Loading freezes every stored event, so this walk is on the resume path: it allocates nothing
// (no `Object.keys` array per object) and does not call itself for strings and numbers.
function freezeTree(value: object): void {
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (const item of value)
      if (typeof item === 'object' && item !== null && !Object.isFrozen(item)) freezeTree(item)
    return
  }
  const record = value as Record<string, unknown>
  for (const key in record) {
    const item = record[key]
    if (typeof item === 'object' && item !== null && !Object.isFrozen(item)) freezeTree(item)
  }
}

/** Deep structural equality of two JSON values (key order ignored). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const aKeys = Object.keys(a)
  const bObject = b as Record<string, JsonValue>
  if (aKeys.length !== Object.keys(bObject).length) return false
  for (const key of aKeys) {
    if (!Object.hasOwn(bObject, key)) return false
    if (!jsonEqual((a as Record<string, JsonValue>)[key], bObject[key])) return false
  }
  return true
}

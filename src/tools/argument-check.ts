/**
 * A check of tool arguments against the small part of JSON Schema the built-in tools' written
 * schemas use (an object of strings, numbers, integers and booleans, with length and range
 * bounds), so a run takes well-formed arguments without loading zod (bench B10,
 * docs/decisions/0147).
 *
 * It only ever says "accepted, and this is what zod would return" or "not sure": anything it
 * does not plainly accept (a bad value, a keyword it does not know, a value that is not plain
 * JSON) is left to the zod schema, which stays the authority and words the failure.
 * test/tools/argument-check.test.ts checks it against zod on random arguments.
 */
import type { JsonObject, JsonValue } from '../core/index.js'

/** The arguments as zod would return them (known properties only, in schema order), or undefined. */
export function checkArguments(schema: JsonObject, args: unknown): JsonObject | undefined {
  if (!isPlainObject(args)) return undefined
  if (!hasOnlyKeys(schema, OBJECT_KEYWORDS) || schema.type !== 'object') return undefined
  const properties = schema.properties
  if (!isPlainObject(properties)) return undefined
  const required = schema.required ?? []
  if (!Array.isArray(required)) return undefined
  for (const name of required)
    if (typeof name !== 'string' || !Object.hasOwn(args, name)) return undefined
  const out: Record<string, JsonValue> = {}
  for (const [name, property] of Object.entries(properties)) {
    if (!Object.hasOwn(args, name)) continue
    const value = args[name]
    if (!isPlainObject(property) || !accepts(property, value)) return undefined
    out[name] = value as JsonValue
  }
  return out
}

const OBJECT_KEYWORDS = new Set(['type', 'properties', 'required'])
const VALUE_KEYWORDS = new Set([
  'type',
  'description',
  'minLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
])

function accepts(property: Record<string, unknown>, value: unknown): boolean {
  if (!hasOnlyKeys(property, VALUE_KEYWORDS)) return false
  const { minLength, minimum, maximum, exclusiveMinimum } = property
  const hasBounds = minimum !== undefined || maximum !== undefined || exclusiveMinimum !== undefined
  switch (property.type) {
    case 'string':
      return (
        typeof value === 'string' &&
        !hasBounds &&
        (minLength === undefined || (typeof minLength === 'number' && value.length >= minLength))
      )
    case 'boolean':
      return typeof value === 'boolean' && !hasBounds && minLength === undefined
    case 'integer':
    case 'number':
      return (
        typeof value === 'number' &&
        (property.type === 'integer' ? Number.isSafeInteger(value) : Number.isFinite(value)) &&
        minLength === undefined &&
        (minimum === undefined || (typeof minimum === 'number' && value >= minimum)) &&
        (maximum === undefined || (typeof maximum === 'number' && value <= maximum)) &&
        (exclusiveMinimum === undefined ||
          (typeof exclusiveMinimum === 'number' && value > exclusiveMinimum))
      )
    default:
      return false
  }
}

function hasOnlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key of Object.keys(value)) if (!allowed.has(key)) return false
  return true
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * Freezing in place the event data a caller built for the log and hands over (the agent's own
 * events), instead of the deep copy `toFrozenJson` makes of data a caller may still hold
 * (decision 0077). The check is the same: plain JSON, or `INVALID_EVENT_DATA` at the first
 * field that is not.
 */
import { ownKeyCheck, toFrozenJson } from './json.js'
import type { JsonValue } from './values.js'

/** Deeper than this the walk gives up and `toFrozenJson` decides (it has a cycle check). */
const OWNED_DEPTH = 256

/**
 * Checks that `value` is plain JSON and freezes it in place, without copying. The caller gives
 * up `value`: nobody may hold a reference to any unfrozen object or array in it, now or later
 * (the log's immutability rests on it, docs/spec.md §3). An object or array already frozen is
 * taken as it is, unchecked: it must be plain JSON the log already holds (part of an earlier
 * event, or made by `toFrozenJson`), never a caller's own frozen value. A value holding a -0
 * (or nested deeper than 256) is copied by `toFrozenJson` instead, which also throws
 * `INVALID_EVENT_DATA` naming `what` and the field when `value` is not plain JSON; the
 * unfrozen parts walked before such a field are left frozen.
 */
export function freezeOwnedJson(value: unknown, what: string): JsonValue {
  return isOwnedPlain(value, 0) ? (value as JsonValue) : toFrozenJson(value, what)
}

/** Whether `value` is plain JSON without a -0, freezing what it walks, children first. */
function isOwnedPlain(value: unknown, depth: number): boolean {
  if (typeof value !== 'object') return isLeaf(value)
  if (value === null || Object.isFrozen(value)) return true
  if (depth > OWNED_DEPTH) return false
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) return false
      const item: unknown = value[index]
      if (typeof item === 'object' ? !isOwnedPlain(item, depth + 1) : !isLeaf(item)) return false
    }
    Object.freeze(value)
    return true
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  const record = value as Record<string, unknown>
  for (const key in record) {
    if (!ownKeyCheck.call(record, key)) continue
    const field = record[key]
    if (typeof field === 'object' ? !isOwnedPlain(field, depth + 1) : !isLeaf(field)) return false
  }
  Object.freeze(value)
  return true
}

/** Whether a value that is not an object is a JSON leaf (a finite number, string, boolean). */
function isLeaf(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return isFiniteNumber(value)
    default:
      return false
  }
}

/**
 * A finite number other than -0. JSON has no -0 (it is written as 0): `toFrozenJson` makes it 0
 * in its copy, so a value holding one is copied (rare) rather than changed in place.
 */
const isFiniteNumber = (value: number) => Number.isFinite(value) && (value !== 0 || 1 / value > 0)

/**
 * V8's own answers about hidden classes and number representation, for the tests that hold
 * the store's and core's objects to the classes kept alive for the process (decisions 0175,
 * 0179, 0182, 0183, 0187). Natives syntax is allowed once, here, before the functions are made.
 */
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--allow-natives-syntax')

/** Whether `a` and `b` have the same hidden class (map). */
export const haveSameClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: unknown,
  b: unknown,
) => boolean

/** Whether `value` is held as a small integer, not a boxed number. */
export const isSmallInteger = new Function('value', 'return %IsSmi(value)') as (
  value: unknown,
) => boolean

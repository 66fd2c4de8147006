/**
 * Empty arrays made for holding objects (events, messages) from their first element on.
 *
 * V8 gives an array written `[]` small-integer elements; its first `push` of an object moves
 * it to object elements. Optimised code whose `push` has seen both kinds (last session's
 * array, already moved, and this session's fresh one) handles the small-integer kind by
 * checking that the value is a small integer, so the first event or message pushed onto each
 * new array threw that code away ("not a Smi") and it was compiled again, session after
 * session (decision 0172). An array made here has object elements while still empty, so every
 * such `push` sees one kind.
 */

/** A placeholder that gives the literal below object elements; never left in an array. */
const PLACEHOLDER: object = Object.freeze({})

/**
 * A new, empty array whose elements are objects from the start (see the module comment). It is
 * an ordinary array: the caller may put anything in it, at the cost of another transition.
 */
export function emptyObjectArray<T extends object>(): T[] {
  const array = [PLACEHOLDER] as T[]
  array.pop()
  return array
}

/**
 * `optional(key, value)`: the object `{ [key]: value }`, or `{}` when `value` is undefined, for
 * spreading into a value under `exactOptionalPropertyTypes` (an absent field is never written as
 * `undefined`, which plain JSON and the log refuse).
 */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]?: V })
}

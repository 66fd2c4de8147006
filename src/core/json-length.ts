/**
 * The length of a value's JSON text without building the text: the projection's character
 * estimate (docs/spec.md §4) and the scripted provider's usage (§8) count tool arguments by it.
 */

/**
 * `JSON.stringify(value).length`, counted without building the string for plain JSON (a
 * string per tool call a step was the largest cost of the scripted provider, bench B5+); anything
 * else (a number, a value with `toJSON`, a class instance) is measured by `JSON.stringify`.
 */
export function jsonLength(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringLength(value)
    case 'boolean':
      return value ? 4 : 5
    case 'object': {
      if (value === null) return 4
      if (Array.isArray(value)) {
        let length = value.length > 0 ? value.length + 1 : 2
        // Indexed, not `for…of`: no iterator per array (bench B5+, decision 0168).
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index]
          length += isSkipped(item) ? 4 : jsonLength(item)
        }
        return length
      }
      const proto: unknown = Object.getPrototypeOf(value)
      if ((proto !== Object.prototype && proto !== null) || 'toJSON' in value)
        return JSON.stringify(value).length
      let length = 1
      let fields = 0
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue
        const field = (value as Record<string, unknown>)[key]
        if (isSkipped(field)) continue
        length += stringLength(key) + 1 + jsonLength(field)
        fields++
      }
      return length + (fields > 0 ? fields : 1)
    }
    default:
      return JSON.stringify(value)?.length ?? 0
  }
}

/** Fields JSON leaves out of an object (and writes as `null` in an array). */
const isSkipped = (value: unknown) =>
  value === undefined || typeof value === 'function' || typeof value === 'symbol'

/** The length of a string as JSON writes it: quoted, with its escapes. */
function stringLength(text: string): number {
  let length = text.length + 2
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x22 || code === 0x5c) length += 1
    else if (code < 0x20)
      length += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 1 : 5
    else if (code >= 0xd800 && code <= 0xdfff) {
      // A lone surrogate is written as \uXXXX; a pair is written as it is.
      const next = text.charCodeAt(i + 1)
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++
      else length += 5
    }
  }
  return length
}

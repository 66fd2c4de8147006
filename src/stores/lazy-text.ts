/**
 * Payload text made on first use (B13, decision 0176). A blob's bytes are read, and checked
 * against its reference, when its event is loaded, as always; an ASCII blob's string is made
 * only when something reads it (a request's `JSON.stringify`, a front end, an export), from the
 * bytes held until then. Resuming a log to a loaded projection therefore makes no string of a
 * 50 MB tool output: that copy into fresh memory was most of what such a log cost over the same
 * log without it, and the first whole use paid a second copy (flattening the sliced decode,
 * decision 0169). The first use now pays the one decode instead.
 *
 * Only ASCII text is held as bytes: its length, which the projection counts, is its byte count
 * (`TEXT_LENGTH`). Anything else is decoded at load, as before.
 */
import { isAscii } from 'node:buffer'
import { deepFreeze } from '../core/index.js'
import { TEXT_LENGTH } from '../core/text-length.js'

/** Whether `bytes` can be placed by `placeLazyText`: UTF-8 whose string length is its size. */
export function canDecodeLater(bytes: Buffer): boolean {
  return isAscii(bytes)
}

/**
 * Makes `parent[key]` a read-only property whose value is `bytes` decoded, decoded once, on
 * first read. The property stays enumerable, in its place among the keys, so that
 * `JSON.stringify`, spreads, `structuredClone` and equality see the same value as before.
 * A `text` key also gets its length (`TEXT_LENGTH`, not enumerable). The caller freezes
 * `parent` with `freezeHolder` after its last placement: a frozen object is one the loader's
 * deep freeze does not walk into, and walking would read (and so decode) the text.
 */
export function placeLazyText(parent: object, key: string | number, bytes: Buffer): void {
  let held: Buffer | undefined = bytes
  let text: string | undefined
  Object.defineProperty(parent, key, {
    enumerable: true,
    configurable: false,
    get(): string {
      if (text === undefined) {
        text = held!.toString('utf8')
        held = undefined
      }
      return text
    },
  })
  if (key === 'text')
    Object.defineProperty(parent, TEXT_LENGTH, { value: bytes.length, enumerable: false })
}

/**
 * Freezes an object that holds text placed by `placeLazyText`, and deeply what else it holds,
 * without reading the lazy properties (`lazy`, the keys placed, as strings).
 */
export function freezeHolder(parent: object, lazy: ReadonlySet<string>): void {
  for (const key of Object.keys(parent))
    if (!lazy.has(key)) deepFreeze((parent as Record<string, unknown>)[key])
  Object.freeze(parent)
}

/**
 * Payload text made on first use (B13, decision 0176). A blob's bytes are read, and checked
 * against its reference, when its event is loaded, as always; an ASCII blob's string is made
 * only when something reads it (a request's `JSON.stringify`, a front end, an export), from the
 * bytes held until then. Resuming a log to a loaded projection therefore makes no string of a
 * 50 MB tool output: that copy into fresh memory was most of what such a log cost over the same
 * log without it, and the first whole use paid a second copy (flattening the sliced decode,
 * decision 0169). The first use now pays the one decode instead.
 *
 * A `text` (a text or thinking block) is held as bytes only if it is ASCII: its length, which
 * the projection counts, is then its byte count (`TEXT_LENGTH`); other text is decoded at load,
 * as before. Any other string (an image's `data`, an argument) is held whatever its bytes.
 */
import { isAscii } from 'node:buffer'
import { deepFreeze } from '../core/index.js'
import { TEXT_LENGTH } from '../core/text-length.js'
import { DECODE_SLICE_BYTES, DECODE_WHOLE_BYTES } from './utf8-slices.js'

/**
 * Whether `bytes`, the value of `key`, can be placed by `placeLazyText`. A `text` must be
 * ASCII, so that its string length (which the projection counts) is its size; any other
 * value's length is not needed, and its bytes are not scanned. The first read of a freshly
 * read buffer is the costly one (~1.3 ms per MB here, against ~0.05 ms once touched), so a
 * large text is scanned a slice per event-loop turn, as `decodeUtf8` decodes (decision 0169).
 * Throws the reason of `signal` if it aborts between slices.
 */
export async function canDecodeLater(
  bytes: Buffer,
  key: string | number,
  signal?: AbortSignal,
): Promise<boolean> {
  if (key !== 'text') return true
  if (bytes.length <= DECODE_WHOLE_BYTES) return isAscii(bytes)
  for (let start = 0; start < bytes.length; start += DECODE_SLICE_BYTES) {
    if (start > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      signal?.throwIfAborted()
    }
    if (!isAscii(bytes.subarray(start, start + DECODE_SLICE_BYTES))) return false
  }
  return true
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

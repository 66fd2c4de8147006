/**
 * Payload text made on first use (B13, decision 0176). A blob's bytes are read, and checked
 * against its reference, when its event is loaded, as always; an ASCII blob's string is made
 * only when something reads it (a request's `JSON.stringify`, a front end, an export), from the
 * bytes held until then. Resuming a log to a loaded projection therefore makes no string of a
 * 50 MB tool output: that copy into fresh memory was most of what such a log cost over the same
 * log without it, and the first whole use paid a second copy (flattening the sliced decode,
 * decision 0169). The first use now pays the one decode instead.
 *
 * A `text` (a text or thinking block) is held as bytes when they are valid UTF-8, which the
 * bytes of every text this store wrote are: the length the projection counts (`TEXT_LENGTH`)
 * is counted off them, the byte count for ASCII, else one per character's first byte and two
 * for a character past U+FFFF (a surrogate pair). Other bytes are decoded at load, as before.
 * Any other string (an image's `data`, an argument) is held whatever its bytes.
 */
import { isAscii, isUtf8 } from 'node:buffer'
import { deepFreeze } from '../core/index.js'
import { TEXT_LENGTH } from '../core/text-length.js'
import { DECODE_SLICE_BYTES, DECODE_WHOLE_BYTES } from './utf8-slices.js'

/**
 * Whether `bytes`, the value of `key`, can be placed by `placeLazyText`: the length its text
 * will have (a `text`'s, which the projection counts; for any other key the byte count, not
 * used, and the bytes are not scanned), or undefined when it must be decoded now (a `text`
 * whose bytes are not valid UTF-8). The first read of a freshly read buffer is the costly one
 * (~1.3 ms per MB here, against ~0.05 ms once touched), so a large text is scanned a slice per
 * event-loop turn, as `decodeUtf8` decodes (decision 0169), each slice ending where a
 * character starts. Throws the reason of `signal` if it aborts between slices.
 */
export async function laterTextLength(
  bytes: Buffer,
  key: string | number,
  signal?: AbortSignal,
): Promise<number | undefined> {
  if (key !== 'text') return bytes.length
  if (bytes.length <= DECODE_WHOLE_BYTES) return textLength(bytes)
  let length = 0
  for (let start = 0; start < bytes.length; ) {
    if (start > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      signal?.throwIfAborted()
    }
    let end = Math.min(bytes.length, start + DECODE_SLICE_BYTES)
    // Back to where a character starts (at most three continuation bytes end a valid one).
    for (let back = 0; back < 3 && end < bytes.length && isContinuation(bytes[end]!); back++) end--
    const slice = textLength(bytes.subarray(start, end))
    if (slice === undefined) return undefined
    length += slice
    start = end
  }
  return length
}

/** The length of the string `bytes` decode to, or undefined if they are not valid UTF-8. */
function textLength(bytes: Buffer): number | undefined {
  if (isAscii(bytes)) return bytes.length
  if (!isUtf8(bytes)) return undefined
  let length = 0
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!
    // A character's first byte counts one; one of four bytes (past U+FFFF) counts two.
    if (!isContinuation(byte)) length += byte >= 0xf0 ? 2 : 1
  }
  return length
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80
}

/**
 * Makes `parent[key]` a read-only property whose value is `bytes` decoded, decoded once, on
 * first read. The property stays enumerable, in its place among the keys, so that
 * `JSON.stringify`, spreads, `structuredClone` and equality see the same value as before.
 * A `text` key also gets its length (`length`, from `laterTextLength`; `TEXT_LENGTH`, not
 * enumerable). The caller freezes
 * `parent` with `freezeHolder` after its last placement: a frozen object is one the loader's
 * deep freeze does not walk into, and walking would read (and so decode) the text.
 */
export function placeLazyText(
  parent: object,
  key: string | number,
  bytes: Buffer,
  length: number,
): void {
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
    Object.defineProperty(parent, TEXT_LENGTH, { value: length, enumerable: false })
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

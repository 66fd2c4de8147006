/**
 * UTF-8 bytes made into a string a slice at a time, the event loop turning between slices, so
 * that the text of a large blob (tens of MB) is not made in one synchronous stretch while a
 * log loads (B13, decision 0169).
 */

/**
 * Bytes decoded per slice. Making a string writes memory the process has not touched before,
 * which costs ~1.5 ms per MB on the benchmark machine and up to ~3 ms per MB when its memory
 * is cold (a slice of non-ASCII text makes a string of twice its bytes): 1 MiB keeps a slice
 * to a few ms.
 */
export const DECODE_SLICE_BYTES = 1024 * 1024

/**
 * Blobs of at most this many bytes are decoded at once, into a flat string: a stretch of a few
 * ms, and no copy later. A larger blob's joined slices are copied once more, into one flat
 * string, by the first operation that reads the text (decision 0169).
 */
export const DECODE_WHOLE_BYTES = 2 * 1024 * 1024

export type DecodeOptions = {
  /** Checked before the first slice and after each turn of the event loop; throws its reason. */
  readonly signal?: AbortSignal | undefined
  /** Bytes per slice (tests; at least 4); default `DECODE_SLICE_BYTES`. */
  readonly sliceBytes?: number
  /** Most bytes decoded at once (tests); default `DECODE_WHOLE_BYTES`. */
  readonly wholeBytes?: number
}

/**
 * `bytes` as a string: exactly what `bytes.toString('utf8')` gives, invalid sequences
 * replaced alike (slices are cut only where the decoder of the whole would start a new
 * character). More than `DECODE_WHOLE_BYTES` are decoded a slice per event-loop turn and
 * joined: a V8 rope, which the first operation that reads its characters (`JSON.stringify`,
 * `slice`, `===`, a write) copies into one flat string in one stretch, as long as a decode of
 * the whole. Throws the signal's reason if it aborts before the last slice; `bytes` must not
 * change meanwhile.
 */
export async function decodeUtf8(bytes: Buffer, options: DecodeOptions = {}): Promise<string> {
  const { signal } = options
  // Four at least, so that a slice moved back to a character's start is never empty.
  const sliceBytes = Math.max(4, options.sliceBytes ?? DECODE_SLICE_BYTES)
  signal?.throwIfAborted()
  if (bytes.length <= (options.wholeBytes ?? DECODE_WHOLE_BYTES)) return bytes.toString('utf8')
  let text = ''
  for (let start = 0; ; ) {
    const end = sliceEnd(bytes, start, sliceBytes)
    text += bytes.toString('utf8', start, end)
    if (end === bytes.length) return text
    start = end
    await new Promise<void>((resolve) => setImmediate(resolve))
    signal?.throwIfAborted()
  }
}

/**
 * Where the slice from `start` ends: `sliceBytes` on, moved back to the first byte of a
 * character. A UTF-8 sequence is a lead byte and at most three continuation bytes
 * (`10xxxxxx`), so one of the four bytes up to the cut is not a continuation byte, or none
 * of them is part of a sequence still open there (then the decoder of the whole starts afresh
 * at the cut anyway). At a byte that is not a continuation byte, the decoder of the whole ends
 * whatever sequence was open (a replacement character, as at the end of a slice) and starts
 * afresh, so the slices decode to the same characters as the whole.
 */
function sliceEnd(bytes: Buffer, start: number, sliceBytes: number): number {
  const end = start + sliceBytes
  if (end >= bytes.length) return bytes.length
  for (let cut = end; cut > end - 4; cut--) if ((bytes[cut]! & 0xc0) !== 0x80) return cut
  return end
}

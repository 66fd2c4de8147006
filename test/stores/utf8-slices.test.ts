/**
 * Large blobs decoded a slice per event-loop turn (decision 0169): the joined slices are the
 * string a decode of the whole gives, for any bytes (characters cut at a slice's end, invalid
 * sequences), the event loop turns between slices, and an abort ends the decode.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeUtf8 } from '../../src/stores/utf8-slices.js'

/** What happened first: an immediate scheduled before the decode, or the decode's end. */
async function firstOf(decoding: () => Promise<string>): Promise<string[]> {
  const order: string[] = []
  const turned = new Promise<void>((resolve) =>
    setImmediate(() => {
      order.push('immediate')
      resolve()
    }),
  )
  const decoded = decoding().then(() => {
    order.push('decoded')
  })
  await Promise.all([turned, decoded])
  return order
}

describe('decodeUtf8', () => {
  it('gives what a decode of the whole gives, for any bytes and any slice size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          // Mostly valid text, multi-byte characters included, with stray bytes put in.
          fc
            .tuple(
              fc.string({ unit: 'binary', maxLength: 100 }),
              fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0x80, max: 0xff })), {
                maxLength: 3,
              }),
            )
            .map(([text, strays]) => {
              const bytes = [...Buffer.from(text, 'utf8')]
              for (const [at, byte] of strays) bytes.splice(at % (bytes.length + 1), 0, byte)
              return Uint8Array.from(bytes)
            }),
        ),
        fc.integer({ min: 4, max: 40 }),
        async (array, sliceBytes) => {
          const bytes = Buffer.from(array)
          expect(await decodeUtf8(bytes, { sliceBytes, wholeBytes: sliceBytes })).toBe(
            bytes.toString('utf8'),
          )
        },
      ),
    )
  })

  it('keeps every character whole when slices end inside it', async () => {
    // Two-, three- and four-byte characters at every offset from a slice's end.
    for (let lead = 0; lead < 8; lead++) {
      const text = `${'a'.repeat(lead)}é漢😀${'b'.repeat(lead)}😀漢é`.repeat(3)
      for (const sliceBytes of [4, 5, 6, 7, 8, 9]) {
        const decoded = await decodeUtf8(Buffer.from(text, 'utf8'), {
          sliceBytes,
          wholeBytes: 0,
        })
        expect(decoded).toBe(text)
      }
    }
  })

  it('lets the event loop turn between slices, and not for a blob decoded whole', async () => {
    const bytes = Buffer.from('ünïcødé 漢字 😀\n'.repeat(1000), 'utf8')
    expect(await firstOf(() => decodeUtf8(bytes, { sliceBytes: 1024, wholeBytes: 1024 }))).toEqual([
      'immediate',
      'decoded',
    ])
    expect(await firstOf(() => decodeUtf8(bytes))).toEqual(['decoded', 'immediate'])
  })

  it('ends with the abort when the signal aborts between slices, or before the first', async () => {
    const bytes = Buffer.from('a slice of text\n'.repeat(1000), 'utf8')
    const controller = new AbortController()
    const reason = new Error('stopped by the test')
    // The first slice is decoded before `decodeUtf8` returns; the abort comes before the next.
    const decoding = decodeUtf8(bytes, {
      sliceBytes: 1024,
      wholeBytes: 1024,
      signal: controller.signal,
    })
    controller.abort(reason)
    await expect(decoding).rejects.toBe(reason)
    await expect(decodeUtf8(bytes, { signal: controller.signal })).rejects.toBe(reason)
  })
})

/**
 * `checksumOfRecords` over record texts (a backend without stored bytes): summed a stretch of
 * records per CRC call through a scratch buffer, it must equal the CRC-32 of each text's UTF-8
 * bytes chained record by record (with a `\n` each in the `bytes` form), for any texts: ASCII,
 * multi-byte, astral, lone surrogates, and texts longer than the scratch buffer.
 */
import { crc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RecordBatch } from '../../src/stores/backend.js'
import { checksumOfRecords } from '../../src/stores/checkpoint.js'

/** The sum one call per record, as the loader summed before (and as the form defines it). */
function reference(form: 'bytes' | 'text', texts: readonly string[], previous: number): number {
  let checksum = previous
  for (const text of texts) {
    checksum = crc32(text, checksum)
    if (form === 'bytes') checksum = crc32('\n', checksum)
  }
  return checksum
}

function batchOf(texts: readonly string[]): RecordBatch {
  let position = 0
  return texts.map((text, index) => {
    position += text.length + 1
    return { kind: 'line' as const, text, where: index, position }
  })
}

const text = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('a', 'é', '✓', '😀', '\ud800'), fc.integer({ min: 1, max: 40_000 }))
      .map(([unit, count]) => unit.repeat(count)),
  },
)

describe('checksumOfRecords without stored bytes', () => {
  it.each(['bytes', 'text'] as const)(
    'equals the CRC-32 of each text’s UTF-8 bytes, chained (%s form)',
    (form) => {
      fc.assert(
        fc.property(
          fc.array(text, { maxLength: 40 }),
          fc.nat(),
          fc.nat(),
          fc.integer({ min: 0, max: 0xffff_ffff }),
          (texts, a, b, previous) => {
            const from = texts.length === 0 ? 0 : a % (texts.length + 1)
            const to = from + (texts.length === from ? 0 : b % (texts.length - from + 1))
            const batch = batchOf(texts)
            expect(checksumOfRecords(form, batch, from, to, previous)).toBe(
              reference(form, texts.slice(from, to), previous),
            )
          },
        ),
        { numRuns: 200 },
      )
    },
  )

  it('skips a torn end', () => {
    const batch: RecordBatch = [
      ...batchOf(['{"seq":0}', 'ü']),
      { kind: 'torn', location: 'x', bytes: 3, position: 20 },
    ]
    expect(checksumOfRecords('bytes', batch, 0, 3, 0)).toBe(
      reference('bytes', ['{"seq":0}', 'ü'], 0),
    )
  })
})

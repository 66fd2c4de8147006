/**
 * The length a held text will have, counted off its bytes (src/stores/lazy-text.ts): exactly the
 * length of the string they decode to, for any text this store could have written; undefined for
 * bytes that are not valid UTF-8 (then the text is decoded at load).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { laterTextLength } from '../../src/stores/lazy-text.js'

describe('laterTextLength', () => {
  it("is the decoded string's length for the UTF-8 of any text, lone surrogates included", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 400 }), async (text) => {
        const bytes = Buffer.from(text, 'utf8')
        expect(await laterTextLength(bytes, 'text')).toBe(bytes.toString('utf8').length)
      }),
    )
  })

  it('is undefined for bytes that are not UTF-8, else the decoded length', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (raw) => {
        const bytes = Buffer.from(raw)
        const length = await laterTextLength(bytes, 'text')
        const decoded = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes)
        if (Buffer.from(decoded, 'utf8').equals(bytes)) expect(length).toBe(decoded.length)
        else expect(length).toBeUndefined()
      }),
    )
  })

  it('does not scan a value that is not a text: its byte count', async () => {
    expect(await laterTextLength(Buffer.from([0xff, 0xfe]), 'data')).toBe(2)
  })
})

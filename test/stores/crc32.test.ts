/** The store's CRC-32 (src/stores/crc32.ts) gives zlib's sums, so logs and checkpoints written with either read back. */
import { crc32 as zlibCrc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { crc32, isCrc32Native } from '../../src/stores/crc32.js'

describe('crc32', () => {
  it('sums with the SIMD build where one is installed (this platform has one)', () => {
    expect(isCrc32Native()).toBe(true)
    // The check value of CRC-32 (IEEE).
    expect(crc32('123456789')).toBe(0xcbf43926)
  })

  it('equals zlib.crc32 on any bytes, chained at any cut', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), fc.nat(), fc.nat(), (bytes, cut, start) => {
        const at = bytes.length === 0 ? 0 : cut % (bytes.length + 1)
        const previous = start >>> 0
        const whole = zlibCrc32(bytes, previous)
        expect(crc32(bytes, previous)).toBe(whole)
        expect(crc32(bytes.subarray(at), crc32(bytes.subarray(0, at), previous))).toBe(whole)
      }),
    )
  })

  it('sums a string as its UTF-8 bytes, as zlib.crc32 does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.nat(), (text, start) => {
        expect(crc32(text, start >>> 0)).toBe(zlibCrc32(text, start >>> 0))
        expect(crc32(text)).toBe(zlibCrc32(Buffer.from(text, 'utf8')))
      }),
    )
  })

  it('sums a typed array that views part of a larger buffer by its own bytes', () => {
    const buffer = Buffer.from('xxhello worldxx')
    const view = new Uint8Array(buffer.buffer, buffer.byteOffset + 2, 11)
    expect(crc32(view)).toBe(zlibCrc32('hello world'))
  })
})

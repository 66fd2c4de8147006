/**
 * The store's CRC-32 (src/stores/crc32.ts) gives zlib's sums, so logs and checkpoints written with
 * either read back: the SIMD build's own, and `crc32`'s as it passes from zlib to that build.
 */
import { crc32 as zlibCrc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { nativeCrc32 } from '../../src/stores/crc32.js'

/** A fresh instance of the module: its choice of implementation is made once per process. */
async function freshModule(): Promise<typeof import('../../src/stores/crc32.js')> {
  vi.resetModules()
  return import('../../src/stores/crc32.js')
}

describe('crc32', () => {
  it('has the SIMD build where one is installed (this platform has one)', () => {
    const native = nativeCrc32()
    expect(native).toBeDefined()
    // The check value of CRC-32 (IEEE).
    expect(native!('123456789')).toBe(0xcbf43926)
  })

  it('equals zlib.crc32 on any bytes, chained at any cut, in the SIMD build', () => {
    const native = nativeCrc32()!
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), fc.nat(), fc.nat(), (bytes, cut, start) => {
        const at = bytes.length === 0 ? 0 : cut % (bytes.length + 1)
        const previous = start >>> 0
        const whole = zlibCrc32(bytes, previous)
        expect(native(bytes, previous)).toBe(whole)
        expect(native(bytes.subarray(at), native(bytes.subarray(0, at), previous))).toBe(whole)
      }),
    )
  })

  it('sums a string as its UTF-8 bytes, as zlib.crc32 does, in the SIMD build', () => {
    const native = nativeCrc32()!
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.nat(), (text, start) => {
        expect(native(text, start >>> 0)).toBe(zlibCrc32(text, start >>> 0))
        expect(native(text)).toBe(zlibCrc32(Buffer.from(text, 'utf8')))
      }),
    )
  })

  it('sums a typed array that views part of a larger buffer by its own bytes', () => {
    const buffer = Buffer.from('xxhello worldxx')
    const view = new Uint8Array(buffer.buffer, buffer.byteOffset + 2, 11)
    expect(nativeCrc32()!(view)).toBe(zlibCrc32('hello world'))
  })

  it('sums with zlib until enough bytes were summed, then with the SIMD build, the same sums', async () => {
    const { crc32, isCrc32Native, NATIVE_AFTER_BYTES } = await freshModule()
    const chunk = Buffer.alloc(256 * 1024)
    for (let index = 0; index < chunk.length; index++) chunk[index] = (index * 31 + 7) & 0xff
    // A short session's sums: the SIMD build is not loaded for them.
    let running = crc32('a line')
    let expected = zlibCrc32('a line')
    expect(isCrc32Native()).toBe(false)
    // A large load's: the running sum goes on across the change of implementation.
    for (let summed = 0; summed <= NATIVE_AFTER_BYTES; summed += chunk.length) {
      running = crc32(chunk, running)
      expected = zlibCrc32(chunk, expected)
      expect(running).toBe(expected)
    }
    expect(isCrc32Native()).toBe(true)
    expect(crc32('123456789')).toBe(0xcbf43926)
  })
})

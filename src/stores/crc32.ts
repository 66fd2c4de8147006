/**
 * CRC-32 (zlib's: IEEE polynomial, reflected), the checksum of JSONL writes and checkpoint ranges
 * (docs/log-format.md). `@node-rs/crc32`'s SIMD build sums about three times as fast as
 * `zlib.crc32` on this project's machines (20 MiB: 3 ms against 9), and summing the bytes read
 * was the largest single cost a load adds to parsing them (bench B2, decision 0184). Its loader
 * costs a few ms, so it is loaded at the first sum, not at import; where no build of it is
 * installed for the platform, `zlib.crc32` gives the same values.
 */
import { createRequire } from 'node:module'
import { crc32 as zlibCrc32 } from 'node:zlib'

/** The CRC-32 of `data` (a string's is that of its UTF-8 bytes), continuing from `previous`. */
type Crc32 = (data: string | Uint8Array, previous?: number) => number

let sum: Crc32 | undefined

/** The CRC-32 of `data` continuing `previous` (start from 0), as `zlib.crc32` gives it. */
export function crc32(data: string | Uint8Array, previous = 0): number {
  sum ??= loadCrc32()
  return sum(data, previous)
}

/** Whether sums are made by `@node-rs/crc32` (else by `zlib.crc32`), for tests and diagnostics. */
export function isCrc32Native(): boolean {
  sum ??= loadCrc32()
  return sum !== zlibCrc32
}

/** `@node-rs/crc32`'s function, or `zlib.crc32` where it cannot be loaded. */
function loadCrc32(): Crc32 {
  try {
    const native = createRequire(import.meta.url)('@node-rs/crc32') as { crc32: Crc32 }
    return native.crc32
  } catch {
    // No build for this platform (an optional dependency npm skipped): the same sums, slower.
    return zlibCrc32
  }
}

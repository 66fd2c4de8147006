/**
 * CRC-32 (zlib's: IEEE polynomial, reflected), the checksum of JSONL writes and checkpoint ranges
 * (docs/log-format.md). `@node-rs/crc32`'s SIMD build sums about three times as fast as
 * `zlib.crc32` on this project's machines (20 MiB: 3 ms against 9), and summing the bytes read
 * was the largest single cost a load adds to parsing them (bench B2, decision 0184). Its loader
 * costs 2–7 ms, which a short session (a one-answer run, B10) never earns back, so sums start
 * with `zlib.crc32` and the SIMD build is loaded once `NATIVE_AFTER_BYTES` were summed (a load
 * or a fork of a large log reaches that in its first chunks). Both give the same values, so a
 * running sum may pass from one to the other; where no build is installed for the platform,
 * `zlib.crc32` sums everything.
 */
import { createRequire } from 'node:module'
import { crc32 as zlibCrc32 } from 'node:zlib'

/** The CRC-32 of `data` (a string's is that of its UTF-8 bytes), continuing from `previous`. */
export type Crc32 = (data: string | Uint8Array, previous?: number) => number

/**
 * Bytes (a string's length stands for its) summed with `zlib.crc32` before the SIMD build is
 * loaded: past this, what it saves (about 0.3 ns a byte) repays its loader within a few MiB.
 */
export const NATIVE_AFTER_BYTES = 4 * 1024 * 1024

// A process-wide choice of implementation, as a module's own cache of a loaded dependency is:
// the sums are the same whichever makes them.
/** The SIMD build's function once loaded (`zlib.crc32` where none is installed). */
let loaded: Crc32 | undefined
/** Bytes summed before `loaded` was chosen. */
let summedBefore = 0

/** The CRC-32 of `data` continuing `previous` (start from 0), as `zlib.crc32` gives it. */
export function crc32(data: string | Uint8Array, previous = 0): number {
  if (loaded) return loaded(data, previous)
  summedBefore += data.length
  if (summedBefore < NATIVE_AFTER_BYTES) return zlibCrc32(data, previous)
  loaded = loadCrc32()
  return loaded(data, previous)
}

/** Whether `crc32` sums with `@node-rs/crc32` by now, for tests and diagnostics. */
export function isCrc32Native(): boolean {
  return loaded !== undefined && loaded !== zlibCrc32
}

/** `@node-rs/crc32`'s function, loaded now if it was not, or undefined where none is installed. */
export function nativeCrc32(): Crc32 | undefined {
  const sum = loaded ?? loadCrc32()
  return sum === zlibCrc32 ? undefined : sum
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

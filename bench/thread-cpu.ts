/**
 * The CPU time of the calling thread alone, in ms, for benchmarks of work whose latency is the
 * main thread's (a keystroke's frame, B7). `process.cpuUsage()` counts every thread of the
 * process: V8's background compilers, concurrent markers and sweepers run beside the main
 * thread, and Linux accounts a thread other than the caller only at its next tick (4 ms here),
 * so a frame measured with it now and then carries 4 ms of another thread's work. Node 20 has
 * no per-thread CPU clock; WASI's `clock_time_get` with the thread CPU clock (id 3) reads
 * `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, so a 20-byte WebAssembly function calls it. A
 * reading costs ~1.5 µs. Returns undefined where WASI cannot be loaded.
 */
import { createRequire } from 'node:module'

/** A WebAssembly module exporting `now(): i64`, the thread CPU clock in ns (WASI clock id 3). */
function moduleBytes(): Uint8Array {
  const name = (text: string) => [text.length, ...Buffer.from(text)]
  const section = (id: number, bytes: number[]) => [id, bytes.length, ...bytes]
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    // types: (i32, i64, i32) -> i32 for clock_time_get; () -> i64 for now
    ...section(1, [0x02, 0x60, 0x03, 0x7f, 0x7e, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7e]),
    ...section(2, [0x01, ...name('wasi_snapshot_preview1'), ...name('clock_time_get'), 0x00, 0x00]),
    ...section(3, [0x01, 0x01]),
    ...section(5, [0x01, 0x00, 0x01]),
    ...section(7, [0x02, ...name('memory'), 0x02, 0x00, ...name('now'), 0x00, 0x01]),
    // now: clock_time_get(3, 1, 0); i64.load(0)
    ...section(10, [
      ...[0x01, 0x10, 0x00, 0x41, 0x03, 0x42, 0x01, 0x41, 0x00, 0x10, 0x00, 0x1a],
      ...[0x41, 0x00, 0x29, 0x03, 0x00, 0x0b],
    ]),
  ])
}

/** The part of the WebAssembly API used here (the project's lib has no DOM types). */
type WebAssemblyApi = {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (
    module: object,
    imports: object,
  ) => { readonly exports: Record<string, unknown> }
}

/** A clock of the calling thread's CPU time in ms, or undefined without WASI. */
export function threadCpuClock(): (() => number) | undefined {
  try {
    // `node:wasi` warns once that it is experimental; the bench's output is a table on stdout.
    const { WASI } = createRequire(import.meta.url)('node:wasi') as typeof import('node:wasi')
    const wasi = new WASI({ version: 'preview1' })
    const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly
    const instance = new wasm.Instance(new wasm.Module(moduleBytes()), wasi.getImportObject())
    wasi.initialize(instance)
    const now = instance.exports.now as () => bigint
    return () => Number(now()) / 1e6
  } catch {
    // No WASI (another runtime, or a Node without it): the caller falls back to process CPU.
    return undefined
  }
}

/** The calling thread's CPU time of a synchronous function, in ms, with `clock`. */
export function threadMs(clock: () => number, run: () => void): number {
  const start = clock()
  run()
  return clock() - start
}

/**
 * Copying the lines of a JSONL log into another file (decision 0069): reads run a chunk ahead
 * and writes behind, at their offsets, in the thread pool, while the main thread finds each
 * chunk's complete lines and hands them to an inspector, if any. A fork copies without one and
 * then reads its copy back for the inspector while the copy syncs (decision 0192).
 */
import { isAscii } from 'node:buffer'
import { type FileHandle, open } from 'node:fs/promises'
import type { CopiedLines } from '../backend.js'

/** What a copy wrote: bytes, and the events (lines) they hold. */
export type Copied = { readonly bytes: number; readonly events: number }

/**
 * Keeps `promise` in `all` (awaited before the file handles close) and returns it. It is
 * marked handled: a failure that lands before its turn to be awaited is reported then.
 */
function settled<T>(all: Promise<unknown>[], promise: Promise<T>): Promise<T> {
  all.push(promise)
  promise.catch(() => {
    // Reported where the promise is awaited (or by `Promise.all` below).
  })
  return promise
}

/**
 * Copy buffers kept for the next copy: forks often follow each other (a script, a bench), and
 * fresh buffers cost page faults and garbage collection each time. Dropped a second after the
 * last copy, so an idle store holds none.
 */
export type BufferPool = {
  /** A buffer of `size` bytes (pooled when it is a whole chunk). */
  take(size: number): Buffer
  give(buffers: readonly Buffer[]): void
}

export function createBufferPool(): BufferPool {
  let spare: Buffer[] = []
  let release: ReturnType<typeof setTimeout> | undefined
  return {
    take: (size) => (size === COPY_CHUNK ? spare.pop() : undefined) ?? Buffer.allocUnsafe(size),
    give(buffers) {
      for (const buffer of buffers)
        if (buffer.length === COPY_CHUNK && spare.length < 4) spare.push(buffer)
      if (release) clearTimeout(release)
      release = setTimeout(() => {
        spare = []
        release = undefined
      }, 1000)
      release.unref()
    },
  }
}

/** Bytes per read of a copy; three buffers of it are in flight (read, scanned, written). */
const COPY_CHUNK = 2 * 1024 * 1024

const EMPTY = Buffer.alloc(0)

/** The complete lines of one chunk, as handed to the inspector; reused chunk after chunk. */
type Batch = {
  bytes: Buffer
  readonly starts: number[]
  readonly ends: number[]
  readonly positions: number[]
  isAscii: boolean
  scratch: Buffer | undefined
}

/**
 * Puts in `batch` the complete lines of `view` from `start` on, at most `most` of them
 * (`chunkStart` is where `view` starts, in the positions handed out); returns where the last
 * one taken ends in `view` (past its newline), `start` when none is complete. A plain
 * function, not a loop inside the copy, so V8 optimizes it once for every copy (B11).
 */
function collectLines(
  view: Buffer,
  start: number,
  chunkStart: number,
  batch: Batch,
  most: number,
): number {
  const { starts, ends, positions } = batch
  let count = 0
  let from = start
  while (count < most) {
    const newline = view.indexOf(10, from)
    if (newline < 0) break
    starts[count] = from
    ends[count] = newline
    positions[count] = chunkStart + newline + 1
    count++
    from = newline + 1
  }
  starts.length = count
  ends.length = count
  positions.length = count
  return from
}

/** Writes all of `buffer[0, length)` at `position` of `target`. */
async function writeAt(
  target: FileHandle,
  buffer: Buffer,
  length: number,
  position: number,
): Promise<void> {
  for (let written = 0; written < length; ) {
    const { bytesWritten } = await target.write(
      buffer,
      written,
      length - written,
      position + written,
    )
    written += bytesWritten
  }
}

/**
 * Copies bytes `[from, to)` of `sourcePath` into `target` at byte `at`; returns the count.
 * The next chunk is read while the current one is written, so the copy costs about the larger
 * of the reads and the writes, not their sum (B11).
 */
export async function copyRange(options: {
  readonly pool: BufferPool
  readonly sourcePath: string
  readonly from: number
  readonly to: number
  readonly target: FileHandle
  readonly at: number
}): Promise<number> {
  const copied = await copyLines({
    ...options,
    lines: undefined,
    size: options.to,
    inspect: undefined,
  })
  return copied?.bytes ?? 0
}

/**
 * Copies the lines of `sourcePath` from byte `from` (a line start) into `target` at byte
 * `at`, reading each byte once: the first `lines` lines (all complete ones when undefined),
 * handed to `inspect` first, when given, a chunk's lines at a time. Reads run one chunk ahead
 * and writes behind (at their offsets, in the thread pool) while the main thread inspects the
 * current chunk. A torn last line is not copied. Undefined when `inspect` refuses or the file
 * holds fewer than `lines` lines; then some bytes may have been written, and the caller
 * discards `target`. Without a `target` nothing is written: the lines are only inspected (a
 * copy read back, decision 0192).
 */
export async function copyLines(options: {
  readonly sourcePath: string
  readonly from: number
  readonly lines: number | undefined
  readonly target: FileHandle | undefined
  readonly at: number
  /**
   * Copy only bytes below this offset, else the file's size. Without `inspect` or `byLine`
   * the copy is raw: no lines are looked for.
   */
  readonly size?: number
  readonly inspect: ((lines: CopiedLines) => boolean) | undefined
  /** Copy whole lines (`lines` of them, a torn last one left out) with no `inspect`. */
  readonly byLine?: boolean
  /**
   * What `from` is in the positions handed to `inspect` (else `from` itself): a copy read
   * back reports its lines where they ended in its source.
   */
  readonly positionsFrom?: number
  readonly pool: BufferPool
}): Promise<Copied | undefined> {
  const { from, target, at, inspect, pool } = options
  const isLined = inspect !== undefined || options.byLine === true
  const shift = (options.positionsFrom ?? from) - from
  const source = await open(options.sourcePath, 'r')
  const reads: Promise<unknown>[] = []
  const writes: Promise<unknown>[] = []
  /** Taken from the pool when first needed, given back at the end: a small log needs one. */
  const buffers: Buffer[] = []
  let scratch: Buffer | undefined
  try {
    const size = options.size ?? (await source.stat()).size
    const chunk = Math.max(1, Math.min(COPY_CHUNK, size - from))
    const pendingWrites: (Promise<void> | undefined)[] = [undefined, undefined, undefined]
    const readAt = async (index: number, offset: number) => {
      // A buffer is read into again only once its last write has finished.
      await pendingWrites[index]
      buffers[index] ??= pool.take(chunk)
      return source.read(buffers[index], 0, Math.min(chunk, size - offset), offset)
    }
    let index = 0
    let offset = from
    let reading = offset < size ? settled(reads, readAt(0, offset)) : undefined
    /** Offset just past the last complete line taken (the end of the copy). */
    let complete = from
    let lines = 0
    const most = options.lines ?? Number.POSITIVE_INFINITY
    /** Bytes of the current line from earlier chunks (copies: the buffers are reused). */
    let spill: Buffer[] = []
    let isDone = false
    // Every field is in the literal: a field added later changes the object's shape, which V8
    // holds weakly, so the code optimized for it would be dropped after each fork (kept-scan.ts).
    const batch: Batch = {
      bytes: EMPTY,
      starts: [],
      ends: [],
      positions: [],
      isAscii: false,
      scratch: undefined,
    }
    while (reading && !isDone) {
      const { bytesRead } = await reading
      if (bytesRead === 0) break
      const buffer = buffers[index]!
      const chunkStart = offset
      const current = index
      offset += bytesRead
      index = (index + 1) % pendingWrites.length
      reading = offset < size ? settled(reads, readAt(index, offset)) : undefined
      let length = bytesRead
      if (isLined) {
        const view = buffer.subarray(0, bytesRead)
        let start = 0
        if (spill.length > 0) {
          // A line begun in an earlier chunk goes alone, joined, before this chunk's lines.
          const newline = view.indexOf(10)
          if (newline >= 0) {
            spill.push(view.subarray(0, newline))
            const joined = Buffer.concat(spill)
            spill = []
            const end = chunkStart + newline + 1
            const alone: Batch = {
              bytes: joined,
              starts: [0],
              ends: [joined.length],
              positions: [end + shift],
              isAscii: false,
              scratch: undefined,
            }
            if (inspect && !inspect(alone)) return undefined
            complete = end
            start = newline + 1
            if (++lines === most) {
              isDone = true
              length = start
            }
          }
        }
        if (!isDone && spill.length === 0) {
          batch.bytes = view
          if (inspect) {
            batch.isAscii = isAscii(view)
            batch.scratch = scratch ??= pool.take(chunk)
          }
          const end = collectLines(view, start, chunkStart + shift, batch, most - lines)
          const count = batch.positions.length
          if (count > 0) {
            if (inspect && !inspect(batch)) return undefined
            lines += count
            complete = chunkStart + end
            start = end
            if (lines === most) {
              isDone = true
              length = end
            }
          }
        }
        if (!isDone && start < bytesRead) spill.push(Buffer.from(view.subarray(start)))
      } else complete = offset
      if (target)
        pendingWrites[current] = settled(
          writes,
          writeAt(target, buffer, length, at + (chunkStart - from)),
        )
    }
    await Promise.all(writes)
    if (options.lines !== undefined && lines < options.lines) return undefined
    // The bytes of a torn last line were written with their chunk: cut them off.
    if (offset > complete && isLined && !isDone) await target?.truncate(at + (complete - from))
    return { bytes: complete - from, events: lines }
  } finally {
    // A failure with reads or writes in flight: let them settle before closing the handle.
    await Promise.allSettled([...reads, ...writes])
    pool.give(scratch ? [...buffers, scratch] : buffers)
    await source.close()
  }
}

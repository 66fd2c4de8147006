/**
 * Reads a JSONL file in large chunks and hands out its complete lines in batches, with byte
 * offsets and line numbers; a last segment without `\n` is reported as torn. Reading in chunks
 * keeps memory flat and gives the event loop a turn between batches.
 */
import { type FileHandle, open } from 'node:fs/promises'

/**
 * One complete line: its text (without `\n`), its number and where it ends in the file. Shaped
 * as a stored record (backend.ts) so the JSONL backend hands lines on without copying them.
 */
export type Line = {
  readonly kind: 'line'
  readonly text: string
  /** The 1-based line number. */
  readonly where: number
  /** Byte offset just past the `\n`. */
  readonly position: number
}

/** A last segment with no `\n`. */
export type TornSegment = {
  readonly number: number
  readonly start: number
  readonly bytes: number
}

export type LineBatch = {
  readonly lines: readonly Line[]
  readonly torn?: TornSegment
  /**
   * The bytes of `lines`, each with its `\n`, from where the first begins (the file offset
   * `start`), for a checksum of the batch in one call. Valid only until the next batch is asked
   * for: the buffer is reused.
   */
  readonly bytes?: Buffer
  readonly start?: number
}

// About 1 MiB of lines is what one event-loop turn parses and checks (a few ms, well under
// the 50 ms block budget of B2).
const CHUNK_BYTES = 1024 * 1024

export type ReadLinesOptions = {
  /** Start at this byte offset, which begins line `line` (a line start the caller knows). */
  readonly from?: { readonly offset: number; readonly line: number }
  /** Lines numbered below this are counted but not decoded or yielded. */
  readonly firstLine?: number
}

/**
 * Yields the lines of `path` in order, one batch per chunk read. The next chunk is read (in the
 * thread pool) while the caller takes the batch before it: read one after another, a load of a
 * 20 MB log waited ~10 ms for the disk between batches with nothing to do.
 */
export async function* readLines(
  path: string,
  options: ReadLinesOptions = {},
): AsyncGenerator<LineBatch> {
  const handle = await open(path, 'r')
  let reading: Promise<number> | undefined
  try {
    const startOffset = smallInteger(options.from?.offset ?? 0)
    // Small files (most sessions) get a small buffer: a large one costs page faults per read.
    const size = (await handle.stat()).size
    let buffer: Buffer = Buffer.allocUnsafe(
      Math.max(1024, Math.min(CHUNK_BYTES, size - startOffset + 1)),
    )
    /** The other buffer: the next chunk is read into it while a batch of `buffer` is taken. */
    let spare: Buffer | undefined
    let filled = 0
    let bufferOffset = startOffset
    let number = smallInteger(options.from?.line ?? 1) - 1
    const firstLine = options.firstLine ?? 0
    reading = readChunk(handle, buffer, 0, bufferOffset)
    for (;;) {
      const bytesRead = await reading
      reading = undefined
      if (bytesRead === 0) break
      filled += bytesRead
      const view = buffer.subarray(0, filled)
      const split = splitLines(view, bufferOffset, number, firstLine)
      number = split.number
      // The part of a line not complete yet goes to the front of the other buffer, which grows
      // when that part fills a whole buffer (a line longer than the buffer is read whole).
      const rest = filled - split.end
      let next: Buffer = spare ?? Buffer.allocUnsafe(buffer.length)
      if (rest === next.length) next = Buffer.allocUnsafe(next.length * 2)
      buffer.copy(next, 0, split.end, filled)
      const nextOffset = bufferOffset + split.end
      reading = readChunk(handle, next, rest, nextOffset)
      if (split.lines.length > 0)
        yield {
          lines: split.lines,
          bytes: view.subarray(split.first, split.end),
          start: bufferOffset + split.first,
        }
      spare = buffer.length === next.length ? buffer : undefined
      buffer = next
      bufferOffset = nextOffset
      filled = rest
    }
    if (filled > 0)
      yield { lines: [], torn: { number: number + 1, start: bufferOffset, bytes: filled } }
  } finally {
    // A caller that stopped early leaves a read under way: it ends before the file closes.
    await reading?.catch(() => undefined)
    await handle.close()
  }
}

/**
 * Starts reading the chunk of `handle` after the `filled` bytes already at the start of
 * `buffer` (which hold the file from `offset`) into the rest of `buffer`; resolves to the bytes
 * read. Its failure is reported where the chunk is awaited, not as an unhandled rejection
 * while the caller takes the batch before it.
 */
function readChunk(
  handle: FileHandle,
  buffer: Buffer,
  filled: number,
  offset: number,
): Promise<number> {
  const read = handle
    .read(buffer, filled, buffer.length - filled, offset + filled)
    .then((result) => result.bytesRead)
  read.catch(() => {
    // Observed where the chunk is awaited.
  })
  return read
}

/**
 * A `Line` made by a constructor, not an object literal. V8 tracks how many of the objects a
 * literal makes survive a scavenge and, past a threshold, makes that literal allocate in the old
 * generation (allocation-site pretenuring). A scavenge in the middle of a batch finds most of its
 * lines alive, so in some processes the literal was pretenured: every line then lived in the old
 * generation until a full collection, and kept its text alive through every scavenge, which
 * copied all 20 MB of a B2 load's line text and doubled the load's time for the rest of the
 * process (bench B2, decision 0175). Objects made by `new` have no allocation site.
 */
class LineRecord implements Line {
  // Declared, then assigned in the constructor: a class field is defined on each instance
  // before the constructor runs, a slower path than plain assignment (bench B2).
  declare readonly kind: 'line'
  declare readonly text: string
  declare readonly where: number
  declare readonly position: number
  constructor(text: string, where: number, position: number) {
    this.kind = 'line'
    this.text = text
    this.where = where
    this.position = position
  }
}

/**
 * A line held for the life of the process: an instance's hidden class is a transition from the
 * class's initial one, held weakly, so when the last line of a read was collected it died and
 * the loops that read lines (`splitLines`, the loader's) were compiled again at every load
 * (decision 0175; as `COVERED_READ_SHAPE` in log-loader.ts). Exported: a module binding.
 */
export const LINE_SHAPE: Line = new LineRecord('', 0, 0)

/**
 * `value` (a non-negative integer) held as V8 holds a small integer, when it is one. A number
 * read from an object field V8 stores as a double (one that held a double before: the parsed
 * checkpoint's `start` came so in B2's process, which had written the log) comes boxed even when
 * it is a small integer, and every position added to it stays boxed: the first line made with such a
 * position turned `LineRecord`'s `position` into a double field, which retires the class
 * `LINE_SHAPE` holds and gives lines a class nothing holds past the load. So the load loops were
 * compiled again at every load after a full collection (decision 0179). Positions of 2 GiB and
 * more stay doubles (and would retire it once more).
 */
function smallInteger(value: number): number {
  return value < 2 ** 31 ? value | 0 : value
}

/** What `splitLines` found in a chunk. */
type Split = {
  readonly lines: Line[]
  /** The number of the last complete line. */
  readonly number: number
  /** Where the first line handed out begins in the chunk, and where the last complete one ends. */
  readonly first: number
  readonly end: number
}

/**
 * The complete lines of `view` (the file from offset `offset`), the line before it numbered
 * `number`; lines numbered below `firstLine` are counted but not decoded. The per-line loop
 * lives here, outside the generator: in the generator, V8 optimised the loop, then dropped
 * that code where the generator ran its once-per-file code (the end, closing the file; "type
 * feedback" deopts) and compiled it again in every read of a file, 15–30 ms of compile each
 * on a background thread (bench B2, decision 0162).
 */
function splitLines(view: Buffer, offset: number, number: number, firstLine: number): Split {
  const lines: Line[] = []
  let start = 0
  let first = 0
  for (let newline = view.indexOf(10, start); newline >= 0; newline = view.indexOf(10, start)) {
    number++
    if (number < firstLine) {
      start = newline + 1
      first = start
      continue
    }
    lines.push(new LineRecord(view.toString('utf8', start, newline), number, offset + newline + 1))
    start = newline + 1
  }
  return { lines, number, first, end: start }
}

/** The first line of `path` (read with a bounded read), or undefined if it has no `\n`. */
export async function readFirstLine(
  path: string,
  maxBytes = 1024 * 1024,
): Promise<string | undefined> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(maxBytes)
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0)
    const newline = buffer.subarray(0, bytesRead).indexOf(10)
    return newline < 0 ? undefined : buffer.toString('utf8', 0, newline)
  } finally {
    await handle.close()
  }
}

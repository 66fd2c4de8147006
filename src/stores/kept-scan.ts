/**
 * What a fork needs of the kept records of its source (docs/spec.md §9.4, decisions 0067, 0069),
 * read off their envelopes without checking the events again: their checksum, where the cut
 * ends, the turn structure at the cut and where the projection starts. From text records
 * (`scanKept`) or from the bytes a one-pass copy reads (`createKeptScanner`, `sumKept`).
 */
import { crc32 } from 'node:zlib'
import type { ProjectionState } from '../core/index.js'
import type { Backend, ChecksumForm, CopiedLines, RecordBatch } from './backend.js'
import { checksumOfRecords } from './checkpoint.js'

/** What a fork needs of the kept events `[0..cut]`, read off their envelopes (`scanKept`). */
export type KeptScan = {
  /** Where the record of the cut ends. */
  readonly position: number
  readonly checksum: number
  readonly characters: number
  /** The number of the last turn started, and the seq of a turn open at the cut, if any. */
  readonly lastTurn: number
  readonly openTurnSeq: number | undefined
  /** The projection's state at the cut (`ProjectionState`). */
  readonly projection: ProjectionState
}

/** A kept scan with the seq of the last record read. */
export type KeptScanResult = KeptScan & { readonly lastSeq: number }

/**
 * Takes the kept records of a fork in order from seq 0 and gathers what the child needs
 * (`KeptScan`) off each envelope, without checking the events again (decision 0067). Records
 * come as a batch `records` yielded (`addRecords`, its line records; a torn end is no event)
 * or as the stored bytes a copy read (`addLines`, so a byte copy need not decode them). Each
 * returns false when a record is not in the form this store writes, after which the scanner
 * takes no more. The checksum is summed in the backend's `form`.
 */
export type KeptScanner = {
  addRecords(batch: RecordBatch): boolean
  addLines(lines: CopiedLines): boolean
  /**
   * What the records taken so far add up to, or undefined when one was refused or fewer than
   * `cut + 1` were taken (a log that ends before the cut).
   */
  result(cut: number | undefined): KeptScanResult | undefined
}

export function createKeptScanner(form: ChecksumForm): KeptScanner {
  let seq = 0
  let position = 0
  let checksum = 0
  let characters = 0
  let lastTurn = 0
  let openTurnSeq: number | undefined
  let from = 0
  let headerSeq: number | undefined
  let isRefused = false
  const sum = createLinesChecksum(form)

  /** Takes the record of `seq` once its type is known; `text` parses it (turn starts, compactions). */
  function take(type: string | undefined, text: () => string, end: number): boolean {
    if (type === undefined) return refuse()
    position = end
    if (type === 'turn/start') {
      const turn = (JSON.parse(text()) as { data?: { turn?: unknown } }).data?.turn
      if (typeof turn !== 'number') return refuse()
      lastTurn = turn
      openTurnSeq = seq
    } else if (type === 'turn/end') openTurnSeq = undefined
    else if (type === 'request/header') headerSeq = seq
    else if (type === 'compaction') {
      const kept = (JSON.parse(text()) as { data?: { firstKeptSeq?: unknown } }).data?.firstKeptSeq
      if (typeof kept !== 'number') return refuse()
      from = kept
    }
    seq++
    return true
  }

  function refuse(): false {
    isRefused = true
    return false
  }

  return {
    addRecords(batch) {
      if (isRefused) return false
      let count = 0
      for (; count < batch.length; count++) {
        const record = batch[count]!
        if (record.kind === 'torn') break
        const { text } = record
        if (!take(envelopeType(text, seq), () => text, record.position)) return false
        characters += text.length
      }
      checksum = checksumOfRecords(form, batch, 0, count, checksum)
      return true
    },
    addLines(lines) {
      if (isRefused) return false
      const { bytes, starts, ends, positions } = lines
      for (let index = 0; index < positions.length; index++) {
        const start = starts[index]!
        const end = ends[index]!
        const type = envelopeTypeOfBytes(bytes, start, end, seq)
        if (!take(type, () => bytes.toString('utf8', start, end), positions[index]!)) return false
        characters += lines.isAscii ? end - start : bytes.toString('utf8', start, end).length
      }
      checksum = sum(lines, checksum)
      return true
    },
    result(cut) {
      if (isRefused || (cut !== undefined && seq !== cut + 1)) return undefined
      return {
        lastSeq: seq - 1,
        position,
        checksum,
        characters,
        lastTurn,
        openTurnSeq,
        projection: { from, ...(headerSeq === undefined ? {} : { headerSeq }) },
      }
    },
  }
}

/**
 * Continues `checksumOfRecords` over copied lines, in one call, not one per line. In the
 * `bytes` form the lines are summed where they lie with their newlines, when they follow one
 * another in `bytes` (a line begun in an earlier chunk comes alone, without it). In the `text`
 * form (the CRC-32 of a string is that of its UTF-8 bytes, and a chained CRC is the CRC of the
 * lines joined) they are joined without their newlines in a scratch buffer.
 */
function createLinesChecksum(form: ChecksumForm): (lines: CopiedLines, previous: number) => number {
  let own: Buffer = Buffer.allocUnsafe(0)
  return (lines, previous) => {
    const count = lines.positions.length
    if (count === 0) return previous
    const { bytes, starts, ends } = lines
    if (form === 'bytes') return sumWithNewlines(lines, previous)
    const first = starts[0]!
    const span = ends[count - 1]! - first
    // The backend's spare buffer if it has one (used during this call only), else our own.
    if (own.length < span && !(lines.scratch && lines.scratch.length >= span))
      own = Buffer.allocUnsafe(Math.max(span, 64 * 1024))
    const scratch = lines.scratch && lines.scratch.length >= span ? lines.scratch : own
    scratch.set(new Uint8Array(bytes.buffer, bytes.byteOffset + first, span))
    let joined = ends[0]! - first
    for (let index = 1; index < count; index++) {
      const start = starts[index]! - first
      const end = ends[index]! - first
      if (start !== joined) scratch.copyWithin(joined, start, end)
      joined += end - start
    }
    return crc32(new Uint8Array(scratch.buffer, scratch.byteOffset, joined), previous)
  }
}

const NEWLINE = new Uint8Array([10])

/** `checksumOfRecords` in the `bytes` form over copied lines (`createLinesChecksum`). */
function sumWithNewlines(lines: CopiedLines, previous: number): number {
  const { bytes, starts, ends } = lines
  const count = starts.length
  let isContiguous = bytes[ends[count - 1]!] === 10
  for (let index = 1; isContiguous && index < count; index++)
    isContiguous = starts[index] === ends[index - 1]! + 1
  if (isContiguous) return crc32(bytes.subarray(starts[0]!, ends[count - 1]! + 1), previous)
  let checksum = previous
  for (let index = 0; index < count; index++)
    checksum = crc32(NEWLINE, crc32(bytes.subarray(starts[index]!, ends[index]!), checksum))
  return checksum
}

/** What a byte copy of records `[0..lastSeq]` adds up to (`sumKept`). */
export type KeptSum = {
  readonly lastSeq: number
  /** Where the record of `lastSeq` ends. */
  readonly position: number
  readonly checksum: number
}

/**
 * Sums the records a fork copies from a source that knows what it wrote (checksum and where
 * its last record ends), to compare: bytes only, no record parsed.
 */
export function sumKept(form: ChecksumForm): {
  addLines(lines: CopiedLines): true
  result(): KeptSum
} {
  let count = 0
  let position = 0
  let checksum = 0
  const sum = createLinesChecksum(form)
  return {
    addLines(lines) {
      checksum = sum(lines, checksum)
      count += lines.positions.length
      position = lines.positions.at(-1) ?? position
      return true
    },
    result: () => ({ lastSeq: count - 1, position, checksum }),
  }
}

/** The types a kept scan looks into, as bytes; every other type is only passed over. */
const SCANNED_TYPES = ['turn/start', 'turn/end', 'request/header', 'compaction'].map(
  (type) => [type, Buffer.from(type, 'latin1')] as const,
)
const SEQ_KEY = Buffer.from('{"seq":', 'latin1')
const TIME_KEY = Buffer.from(',"time":', 'latin1')
const TYPE_KEY = Buffer.from(',"type":"', 'latin1')

/**
 * `envelopeType` read off the bytes `[at, end)` of a stored line, without decoding it: the
 * type when it is one the scan looks into, '' for any other, undefined when the line does not
 * start `{"seq":<seq>,"time":<number>,"type":"…"`.
 */
function envelopeTypeOfBytes(
  bytes: Buffer,
  start: number,
  end: number,
  seq: number,
): string | undefined {
  if (!hasAt(bytes, start, end, SEQ_KEY)) return undefined
  const digits = start + SEQ_KEY.length
  let at = digits
  let value = 0
  for (; at < end && bytes[at]! >= 48 && bytes[at]! <= 57; at++)
    value = value * 10 + bytes[at]! - 48
  // As `{"seq":${seq},` writes it: no sign, no leading zero.
  if (at === digits || value !== seq || (bytes[digits] === 48 && at - digits > 1)) return undefined
  if (!hasAt(bytes, at, end, TIME_KEY)) return undefined
  at += TIME_KEY.length
  while (at < end && bytes[at] !== 44) at++
  if (!hasAt(bytes, at, end, TYPE_KEY)) return undefined
  const typeStart = at + TYPE_KEY.length
  const typeEnd = bytes.indexOf(34, typeStart)
  if (typeEnd < 0 || typeEnd >= end) return undefined
  for (const [type, typeBytes] of SCANNED_TYPES)
    if (typeBytes.length === typeEnd - typeStart && hasAt(bytes, typeStart, end, typeBytes))
      return type
  return ''
}

function hasAt(bytes: Buffer, at: number, end: number, expected: Buffer): boolean {
  if (at + expected.length > end) return false
  for (let index = 0; index < expected.length; index++)
    if (bytes[at + index] !== expected[index]) return false
  return true
}

/**
 * Reads the records `[0..cut]` of session `id` for a fork without checking them again (the
 * store wrote and checked them, decision 0067): their checksum, where the cut ends, the turn
 * structure at the cut and where the projection starts, from each envelope's `type` (parsing
 * only turn starts and compactions). Undefined when the log ends before the cut or a record is
 * not in the form this store writes: the caller then reads and checks the events.
 */
export async function scanKept(
  backend: Backend,
  id: string,
  cut: number | undefined,
): Promise<KeptScanResult | undefined> {
  const scanner = createKeptScanner(backend.checksumForm ?? 'text')
  for await (const batch of backend.records(id, cut === undefined ? {} : { throughSeq: cut }))
    if (!scanner.addRecords(batch)) return undefined
  return scanner.result(cut)
}

/** The type of a stored line as `envelopeLine` writes it (`{"seq":N,"time":T,"type":"…"`). */
function envelopeType(text: string, seq: number): string | undefined {
  const head = `{"seq":${seq},"time":`
  if (!text.startsWith(head)) return undefined
  const at = text.indexOf(',"type":"', head.length)
  if (at < 0) return undefined
  const end = text.indexOf('"', at + 9)
  return end < 0 ? undefined : text.slice(at + 9, end)
}

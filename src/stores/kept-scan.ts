/**
 * What a fork needs of the kept records of its source (docs/spec.md §9.4, decisions 0067, 0069),
 * read off their envelopes without checking the events again: their checksum, where the cut
 * ends, the turn structure at the cut and where the projection starts. From text records
 * (`scanKept`) or from the bytes a one-pass copy reads (`createKeptScanner`, `sumKept`).
 */

import type { ProjectionState } from '../core/index.js'
import type { Backend, ChecksumForm, CopiedLines, CopiedTexts, RecordBatch } from './backend.js'
import { checksumOfRecords, checksumOfTexts, DEFAULT_CHECKPOINT_POLICY } from './checkpoint.js'
import { type CheckpointRange, closeRangeIfDue, type RangeSums } from './checkpoint-ranges.js'
import { crc32 } from './crc32.js'

/** What a fork needs of the kept events `[0..cut]`, read off their envelopes (`scanKept`). */
export type KeptScan = {
  /** Where the record of the cut ends. */
  readonly position: number
  /** Where the record of the cut starts (the end of the one before), for a cut past seq 0. */
  readonly start?: number
  /**
   * The kept records' ranges, closed where a batch ends past about 1 MiB, and the open one's
   * CRC (checkpoint-ranges.ts); a copy of the scanner's, the caller's to go on with.
   */
  readonly sums: RangeSums
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
 * come as text (`addTexts`), as a batch `records` yielded (`addRecords`, its line records; a
 * torn end is no event) or as the stored bytes a copy read (`addLines`, so a byte copy need not
 * decode them). Each returns false when a record is not in the form this store writes, after
 * which the scanner takes no more. The checksum is summed in the backend's form (decision 0162).
 */
export type KeptScanner = {
  /** The records `texts[i]`, ending at `positions[i]`, in order. */
  addTexts(texts: readonly string[], positions: readonly number[]): boolean
  addRecords(batch: RecordBatch): boolean
  addLines(lines: CopiedLines): boolean
  /** `addTexts` or `addLines`, whichever `records` are. */
  add(records: CopiedLines | CopiedTexts): boolean
  /**
   * What the records taken so far add up to, or undefined when one was refused or fewer than
   * `cut + 1` were taken (a log that ends before the cut).
   */
  result(cut: number | undefined): KeptScanResult | undefined
}

/*
 * The scan's state lives in a Float64Array and its loops in module functions, not in an
 * object per fork: V8 compiles optimized code against the shapes of the objects it meets,
 * holds those shapes weakly, and a fork's objects die with it, so after the next full
 * collection the code was thrown away and every fork compiled it again (about 30 ms of CPU on
 * V8's threads per 20 MB fork, B11). A typed array's shape lives as long as the program.
 */
const SEQ = 0
const POSITION = 1
const CHECKSUM = 2
const CHARACTERS = 3
const LAST_TURN = 4
/** The seq of the turn open at the last record taken, or -1. */
const OPEN_TURN_SEQ = 5
const FROM = 6
/** The seq of the last `request/header`, or -1. */
const HEADER_SEQ = 7
const IS_REFUSED = 8
/** Where the last record taken starts, once one was taken before it. */
const START = 9
/** The characters before the open range (`RangeSums.fromCharacters`). */
const RANGE_FROM = 10
/** The index in `expected` of the next range of the source's to check. */
const EXPECTED = 11

/**
 * `rangeCharacters`: where ranges close (`CheckpointPolicy.rangeCharacters`). `expected`: the
 * ranges of the source's checkpoint, when it has one. The kept records are summed range by
 * range as the source summed them, and a record is refused where one does not match (its CRC,
 * where it ends, the characters through it): a fork then reads and checks the log rather than
 * vouch for bytes its source did not write (decision 0192). Those that match are the child's
 * ranges too; past the last of them, ranges close at `rangeCharacters`.
 */
export function createKeptScanner(
  form: ChecksumForm,
  rangeCharacters: number = DEFAULT_CHECKPOINT_POLICY.rangeCharacters,
  expected: readonly CheckpointRange[] = [],
): KeptScanner {
  const state = new Float64Array(12)
  state[OPEN_TURN_SEQ] = -1
  state[HEADER_SEQ] = -1
  /** The closed ranges; `state[CHECKSUM]` is the open one's CRC. */
  const ranges: CheckpointRange[] = []
  const closeRange = () => {
    // Inside the source's ranges, they alone close one (`closeExpected`).
    if (state[EXPECTED]! >= expected.length) closeScannedRange(state, ranges, rangeCharacters)
  }
  return {
    addTexts(texts, positions) {
      if (state[IS_REFUSED]) return false
      let summed = 0
      for (let index = 0; index < texts.length; index++) {
        const text = texts[index]!
        if (!takeText(state, text, positions[index]!)) return false
        state[CHARACTERS]! += text.length
        if (isExpectedEnd(state, expected)) {
          state[CHECKSUM] = checksumOfTexts(
            form,
            texts,
            summed,
            index + 1,
            itself,
            state[CHECKSUM]!,
          )
          if (!closeExpected(state, ranges, expected)) return false
          summed = index + 1
        }
      }
      state[CHECKSUM] = checksumOfTexts(form, texts, summed, texts.length, itself, state[CHECKSUM]!)
      closeRange()
      return true
    },
    addRecords(batch) {
      if (state[IS_REFUSED]) return false
      let count = 0
      let summed = 0
      for (; count < batch.length; count++) {
        const record = batch[count]!
        if (record.kind === 'torn') break
        if (!takeText(state, record.text, record.position)) return false
        state[CHARACTERS]! += record.text.length
        if (isExpectedEnd(state, expected)) {
          state[CHECKSUM] = checksumOfRecords(form, batch, summed, count + 1, state[CHECKSUM]!)
          if (!closeExpected(state, ranges, expected)) return false
          summed = count + 1
        }
      }
      // In the `bytes` form, one CRC over the bytes the batch was read from.
      state[CHECKSUM] = checksumOfRecords(form, batch, summed, count, state[CHECKSUM]!)
      closeRange()
      return true
    },
    addLines(lines) {
      const isTaken = scanLines(state, lines, form, ranges, expected)
      if (isTaken) closeRange()
      return isTaken
    },
    add(records) {
      return 'texts' in records
        ? this.addTexts(records.texts, records.positions)
        : this.addLines(records)
    },
    result(cut) {
      const seq = state[SEQ]!
      if (state[IS_REFUSED] || (cut !== undefined && seq !== cut + 1)) return undefined
      const openTurnSeq = state[OPEN_TURN_SEQ]!
      const headerSeq = state[HEADER_SEQ]!
      return {
        lastSeq: seq - 1,
        position: state[POSITION]!,
        ...(seq > 1 ? { start: state[START]! } : {}),
        sums: {
          ranges: [...ranges],
          crc: state[CHECKSUM]!,
          fromCharacters: state[RANGE_FROM]!,
          size: rangeCharacters,
        },
        characters: state[CHARACTERS]!,
        lastTurn: state[LAST_TURN]!,
        openTurnSeq: openTurnSeq < 0 ? undefined : openTurnSeq,
        projection: { from: state[FROM]!, ...(headerSeq < 0 ? {} : { headerSeq }) },
      }
    },
  }
}

/** Whether the record just taken is where the next of the source's ranges ends. */
function isExpectedEnd(state: Float64Array, expected: readonly CheckpointRange[]): boolean {
  return expected[state[EXPECTED]!]?.throughSeq === state[SEQ]! - 1
}

/**
 * Checks the open range, summed through the record just taken, against the source's that ends
 * there, and closes it as the source did; refuses when they differ (`createKeptScanner`).
 */
function closeExpected(
  state: Float64Array,
  ranges: CheckpointRange[],
  expected: readonly CheckpointRange[],
): boolean {
  const range = expected[state[EXPECTED]!]!
  const isMatching =
    state[CHECKSUM] === range.crc &&
    state[POSITION] === range.position &&
    state[CHARACTERS] === range.characters
  if (!isMatching) return refuse(state)
  ranges.push(range)
  state[CHECKSUM] = 0
  state[RANGE_FROM] = range.characters
  state[EXPECTED]!++
  return true
}

/** Closes the open range at the last record taken, if it is due (`closeRangeIfDue`). */
function closeScannedRange(state: Float64Array, ranges: CheckpointRange[], size: number): void {
  if (state[SEQ] === 0) return
  const sums = { ranges, crc: state[CHECKSUM]!, fromCharacters: state[RANGE_FROM]!, size }
  closeRangeIfDue(sums, state[SEQ]! - 1, state[POSITION]!, state[CHARACTERS]!)
  state[CHECKSUM] = sums.crc
  state[RANGE_FROM] = sums.fromCharacters
}

/** Takes the stored line `text` as the record of the next seq, ending at `end`. */
function takeText(state: Float64Array, text: string, end: number): boolean {
  const type = envelopeType(text, state[SEQ]!)
  if (type === undefined) return refuse(state)
  if (type === 'turn/start') return takeTurnStart(state, turnOfText(text), end)
  if (type === 'compaction') return takeCompaction(state, text, end)
  take(state, type, end)
  return true
}

/** `KeptScanner.addLines`. */
function scanLines(
  state: Float64Array,
  lines: CopiedLines,
  form: ChecksumForm,
  ranges: CheckpointRange[],
  expected: readonly CheckpointRange[],
): boolean {
  if (state[IS_REFUSED]) return false
  const { bytes, starts, ends, positions, isAscii } = lines
  let summed = 0
  for (let index = 0; index < positions.length; index++) {
    const start = starts[index]!
    const end = ends[index]!
    const position = positions[index]!
    const type = envelopeTypeOfBytes(bytes, start, end, state[SEQ]!)
    if (type === undefined) return refuse(state)
    if (type === 'turn/start') {
      if (!takeTurnStart(state, turnOfBytes(bytes, start, end), position)) return false
    } else if (type === 'compaction') {
      if (!takeCompaction(state, bytes.toString('utf8', start, end), position)) return false
    } else take(state, type, position)
    state[CHARACTERS]! += isAscii ? end - start : bytes.toString('utf8', start, end).length
    if (isExpectedEnd(state, expected)) {
      state[CHECKSUM] = stretchChecksum(form, lines, summed, index + 1, state[CHECKSUM]!)
      if (!closeExpected(state, ranges, expected)) return false
      summed = index + 1
    }
  }
  state[CHECKSUM] = stretchChecksum(form, lines, summed, positions.length, state[CHECKSUM]!)
  return true
}

/** Takes the record of the next seq, of `type` (neither a turn start nor a compaction). */
function take(state: Float64Array, type: string, end: number): void {
  if (type === 'turn/end') state[OPEN_TURN_SEQ] = -1
  else if (type === 'request/header') state[HEADER_SEQ] = state[SEQ]!
  state[START] = state[POSITION]!
  state[POSITION] = end
  state[SEQ]!++
}

function takeTurnStart(state: Float64Array, turn: unknown, end: number): boolean {
  if (typeof turn !== 'number') return refuse(state)
  state[LAST_TURN] = turn
  state[OPEN_TURN_SEQ] = state[SEQ]!
  take(state, 'turn/start', end)
  return true
}

function takeCompaction(state: Float64Array, text: string, end: number): boolean {
  const kept = dataOf(text)?.firstKeptSeq
  if (typeof kept !== 'number') return refuse(state)
  state[FROM] = kept
  take(state, 'compaction', end)
  return true
}

function refuse(state: Float64Array): false {
  state[IS_REFUSED] = 1
  return false
}

function turnOfText(text: string): unknown {
  return dataOf(text)?.turn
}

/**
 * The `data` of a stored line the scan parses, or undefined when the line is not JSON: the
 * scan refuses it, and the fork reads and checks the log instead, which names the line.
 */
function dataOf(
  text: string,
): { readonly turn?: unknown; readonly firstKeptSeq?: unknown } | undefined {
  try {
    return (JSON.parse(text) as { data?: { turn?: unknown; firstKeptSeq?: unknown } }).data
  } catch {
    // Not JSON: refused by the caller (`dataOf(...)?.field` is undefined).
    return undefined
  }
}

const TURN_START_DATA = Buffer.from('"type":"turn/start","data":{"turn":', 'latin1')

/**
 * The `turn` of a `turn/start` line `[start, end)`, read off the bytes when its data begins
 * with it as the agent writes it (`{"turn":N,…`); any other form is parsed.
 */
function turnOfBytes(bytes: Buffer, start: number, end: number): unknown {
  const at = bytes.indexOf(TURN_START_DATA, start)
  if (at >= 0 && at < end) {
    const digits = at + TURN_START_DATA.length
    let index = digits
    let turn = 0
    for (
      ;
      index < end && index < digits + 15 && bytes[index]! >= 48 && bytes[index]! <= 57;
      index++
    )
      turn = turn * 10 + bytes[index]! - 48
    const next = bytes[index]
    // As JSON.stringify writes an integer: digits, no leading zero.
    const isPlain = index > digits && (bytes[digits] !== 48 || index === digits + 1)
    if (isPlain && index < end && (next === 44 || next === 125)) return turn
  }
  return turnOfText(bytes.toString('utf8', start, end))
}

/** A buffer to join lines in when the backend lends none; grown as needed, kept. */
let joinBuffer: Buffer = Buffer.allocUnsafe(0)

const NEWLINE = new Uint8Array([10])

const itself = (text: string) => text

/**
 * Continues a checksum in `form` over copied lines, in one call, not one per line. In the
 * `bytes` form the lines are summed where they lie with their newlines, when they follow one
 * another in `bytes` (else one by one). In the `text` form (the CRC-32 of a string is that of
 * its UTF-8 bytes, and a chained CRC is the CRC of the lines joined) they are joined without
 * their newlines in a scratch buffer and summed in one call.
 */
function linesChecksum(form: ChecksumForm, lines: CopiedLines, previous: number): number {
  const count = lines.positions.length
  if (count === 0) return previous
  const { bytes, starts, ends } = lines
  if (form === 'bytes') return sumWithNewlines(lines, previous)
  const first = starts[0]!
  const span = ends[count - 1]! - first
  // The backend's spare buffer if it has one (used during this call only), else our own.
  let scratch = lines.scratch
  if (!scratch || scratch.length < span) {
    if (joinBuffer.length < span) joinBuffer = Buffer.allocUnsafe(Math.max(span, 64 * 1024))
    scratch = joinBuffer
  }
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

/** `linesChecksum` in the `bytes` form. */
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
  /** Every expected range was passed, and each ended where it should with its CRC. */
  readonly isMatching: boolean
}

/**
 * Sums the records a fork copies from a source that knows what it wrote (its ranges, the last
 * ending at the cut), to compare range by range: bytes only, no record parsed.
 */
export function sumKept(
  form: ChecksumForm,
  expected: readonly CheckpointRange[],
): {
  add(records: CopiedLines | CopiedTexts): true
  result(): KeptSum
} {
  let count = 0
  let position = 0
  let checksum = 0
  let next = 0
  let isMatching = true
  return {
    add(records) {
      const length = records.positions.length
      let from = 0
      for (; next < expected.length; next++) {
        const range = expected[next]!
        const end = range.throughSeq - count + 1
        if (end > length) break
        checksum = stretchChecksum(form, records, from, end, checksum)
        if (checksum !== range.crc || records.positions[end - 1] !== range.position)
          isMatching = false
        checksum = 0
        from = end
      }
      // Past the last range (not a cut the source knows): nothing to compare with.
      if (next < expected.length) checksum = stretchChecksum(form, records, from, length, checksum)
      count += length
      position = records.positions.at(-1) ?? position
      return true
    },
    result: () => ({
      lastSeq: count - 1,
      position,
      isMatching: isMatching && next === expected.length,
    }),
  }
}

/** Continues `checksum` over records `[from, to)` of what a copy read. */
function stretchChecksum(
  form: ChecksumForm,
  records: CopiedLines | CopiedTexts,
  from: number,
  to: number,
  checksum: number,
): number {
  if (from >= to) return checksum
  if ('texts' in records) return checksumOfTexts(form, records.texts, from, to, itself, checksum)
  if (from === 0 && to === records.positions.length) return linesChecksum(form, records, checksum)
  const { starts, ends, positions } = records
  const part = {
    ...records,
    starts: starts.slice(from, to),
    ends: ends.slice(from, to),
    positions: positions.slice(from, to),
  }
  return linesChecksum(form, part, checksum)
}

/** The types a kept scan looks into, as bytes; every other type is only passed over. */
const SCANNED_TYPES = ['turn/start', 'turn/end', 'request/header', 'compaction'].map(
  (type) => [type, Buffer.from(type, 'latin1')] as const,
)
const TURN_START = Buffer.from('turn/start', 'latin1')
const TURN_END = Buffer.from('turn/end', 'latin1')
const REQUEST_HEADER = Buffer.from('request/header', 'latin1')
const COMPACTION = Buffer.from('compaction', 'latin1')
const SEQ_KEY = Buffer.from('{"seq":', 'latin1')
const TIME_KEY = Buffer.from(',"time":', 'latin1')
const TYPE_KEY = Buffer.from(',"type":"', 'latin1')

/**
 * `envelopeType` read off the bytes `[at, end)` of a stored line, without decoding it: the
 * type when it is one the scan looks into, '' for any other, undefined when the line does not
 * start `{"seq":<seq>,"time":<number>,"type":"…"`. Every byte is read in place, no call leaves
 * JavaScript: this runs once per kept line of a fork, on the main thread while the copy's reads
 * and writes run in the pool (B11: the scan of 20 MB, 23k lines, took 4.25 ms with
 * `Buffer.indexOf` and a loop over the types, 3.96 ms so, interleaved in one process).
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
  let typeEnd = typeStart
  while (typeEnd < end && bytes[typeEnd] !== 34) typeEnd++
  if (typeEnd >= end) return undefined
  return scannedType(bytes, typeStart, typeEnd)
}

/** The scanned type (`SCANNED_TYPES`) the bytes `[start, end)` spell, else ''. */
function scannedType(bytes: Buffer, start: number, end: number): string {
  switch (end - start) {
    case 8:
      return hasAt(bytes, start, end, TURN_END) ? 'turn/end' : ''
    case 10:
      if (hasAt(bytes, start, end, TURN_START)) return 'turn/start'
      return hasAt(bytes, start, end, COMPACTION) ? 'compaction' : ''
    case 14:
      return hasAt(bytes, start, end, REQUEST_HEADER) ? 'request/header' : ''
    default:
      return ''
  }
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
  rangeCharacters?: number,
  /** The source checkpoint's ranges, to check the kept records against (`createKeptScanner`). */
  expected?: readonly CheckpointRange[],
): Promise<KeptScanResult | undefined> {
  const scanner = createKeptScanner(backend.checksumForm ?? 'text', rangeCharacters, expected)
  for await (const batch of backend.records(id, cut === undefined ? {} : { throughSeq: cut }))
    if (!scanner.addRecords(batch)) return undefined
  return scanner.result(cut)
}

/**
 * The type of a stored line as `envelopeLine` writes it (`{"seq":N,"time":T,"type":"…"`): the
 * type when it is one the scan looks into, '' for any other, undefined when the line does not
 * start so. Read in place, without building a string per line.
 */
function envelopeType(text: string, seq: number): string | undefined {
  if (!text.startsWith('{"seq":')) return undefined
  let at = 7
  let value = 0
  for (let code = text.charCodeAt(at); code >= 48 && code <= 57; code = text.charCodeAt(++at))
    value = value * 10 + code - 48
  // As `{"seq":${seq},` writes it: no sign, no leading zero.
  if (at === 7 || value !== seq || (text.charCodeAt(7) === 48 && at > 8)) return undefined
  if (!text.startsWith(',"time":', at)) return undefined
  const typeKey = text.indexOf(',"type":"', at + 8)
  if (typeKey < 0) return undefined
  const typeStart = typeKey + 9
  if (text.indexOf('"', typeStart) < 0) return undefined
  for (let index = 0; index < SCANNED_TYPES.length; index++) {
    const type = SCANNED_TYPES[index]![0]
    if (text.startsWith(type, typeStart) && text.charCodeAt(typeStart + type.length) === 34)
      return type
  }
  return ''
}

/**
 * The projection checkpoint (docs/log-format.md, decision 0148): what opening a log needs to
 * skip re-checking and re-projecting the events it covers, kept beside the log. It is a cache,
 * never trusted over the log: it names the last seq it covers, where that event's record ends
 * and the CRC-32 of each range of the covered records (checkpoint-ranges.ts), and a read of
 * covered records uses it only when what it reads matches. A checkpoint is untrusted input: `parseCheckpoint` never throws, and a bad
 * one is ignored (the log is checked in full, as without one, and a new one is written).
 */

import {
  boundariesBefore,
  type JsonValue,
  type LogCheckerState,
  type LogState,
  type OpenStep,
  type OpenTurn,
  type ProjectionState,
  type ToolCallBlock,
} from '../core/index.js'
import { type ChecksumForm, type RecordBatch, storedBytesOf } from './backend.js'
// Functions only, called after both modules have loaded: the two import each other.
import { areRangesWellFormed, type CheckpointRange } from './checkpoint-ranges.js'
import { crc32 } from './crc32.js'

/**
 * The checkpoint format this build writes and reads; any other version is ignored. Version 3
 * (decision 0162): a JSONL checksum covers the stored bytes, line ends included. Version 4
 * (decision 0178): a CRC per range of about 1 MiB instead of one over all covered records.
 */
export const CHECKPOINT_VERSION = 4

export type Checkpoint = {
  /** The last seq covered: events `[0..throughSeq]`. */
  readonly throughSeq: number
  /** Where the record of `throughSeq` ends, in the backend's terms (`StoredRecord.position`). */
  readonly position: number
  /**
   * Where the record of `throughSeq` starts (the end of the one before), when known: a file
   * backend reads the tail from there without reading the covered records (decision 0161).
   */
  readonly start?: number
  /**
   * The covered records in runs of about 1 MiB, in order, the last ending at `throughSeq`,
   * each with the checksum of its records (`checksumOfRecords`, in the backend's form).
   */
  readonly ranges: readonly CheckpointRange[]
  /** The characters of those lines (the next checkpoint's policy counts from them). */
  readonly characters: number
  /** The invariant checker after the covered events. */
  readonly checker: LogCheckerState
  /** The projection after the covered events. */
  readonly projection: ProjectionState
}

/** When a live session writes a checkpoint (the defaults: decision 0148). */
export type CheckpointPolicy = {
  /** Written at close (and after open) only for logs of at least this many stored characters. */
  readonly minCharacters: number
  /** Written at a durability point once this many characters were appended since the last one, */
  readonly everyCharacters: number
  /** … or this many events. */
  readonly everyEvents: number
  /** The stored characters of a range with a CRC of its own (checkpoint-ranges.ts). */
  readonly rangeCharacters: number
}

export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = {
  minCharacters: 256 * 1024,
  everyCharacters: 4 * 1024 * 1024,
  everyEvents: 10_000,
  rangeCharacters: 1024 * 1024,
}

const NEWLINE = Buffer.from('\n')

/**
 * Continues a running checksum (start from 0) over the line records `[from, to)` of a batch,
 * in the backend's form (docs/log-format.md). In the `bytes` form a batch that carries its
 * bytes is summed in one call: a call per record costs about as much as the CRC of a 1 KB line
 * itself. Without them each text is summed with a `\n` (its bytes, if they were UTF-8), a
 * stretch of records per call.
 */
export function checksumOfRecords(
  form: ChecksumForm,
  batch: RecordBatch,
  from: number,
  to: number,
  previous: number,
): number {
  if (from >= to) return previous
  const stored = form === 'bytes' ? storedBytesOf(batch) : undefined
  if (stored) {
    const start = from === 0 ? stored.start : batch[from - 1]!.position
    const end = batch[to - 1]!.position
    return crc32(stored.bytes.subarray(start - stored.start, end - stored.start), previous)
  }
  return checksumOfTexts(form, batch, from, to, recordText, previous)
}

/** A record's text, or undefined for a torn one, which no checksum covers. */
const recordText = (record: RecordBatch[number]) =>
  record.kind === 'line' ? record.text : undefined

/**
 * Continues a checksum in `form` over the texts of `items[from, to)` (each with a `\n` in the
 * `bytes` form; those `textOf` gives none for are skipped). The texts are encoded into a scratch
 * buffer and summed a stretch per call: CRC-32 chains, and the CRC of a string is that of its
 * UTF-8 bytes, which `write` gives alike. One call per text, each encoding its string first,
 * costs about twice as much for ~1 KB texts; joining them as one string costs more still.
 */
export function checksumOfTexts<Item>(
  form: ChecksumForm,
  items: readonly Item[],
  from: number,
  to: number,
  textOf: (item: Item) => string | undefined,
  previous: number,
): number {
  const newline = form === 'bytes' ? 1 : 0
  let checksum = previous
  let filled = 0
  for (let index = from; index < to; index++) {
    const text = textOf(items[index]!)
    if (text === undefined) continue
    // At most 3 UTF-8 bytes per UTF-16 code unit.
    const most = text.length * 3 + newline
    if (filled + most > SCRATCH.length) {
      checksum = crc32(SCRATCH.subarray(0, filled), checksum)
      filled = 0
      if (most > SCRATCH.length) {
        checksum = crc32(text, checksum)
        if (newline) checksum = crc32(NEWLINE, checksum)
        continue
      }
    }
    filled += SCRATCH.write(text, filled, 'utf8')
    if (newline) SCRATCH[filled++] = 0x0a
  }
  return filled === 0 ? checksum : crc32(SCRATCH.subarray(0, filled), checksum)
}

/**
 * Where `checksumOfTexts` encodes texts to sum them: one CRC call per 64 KiB. Shared by every
 * call: summing is synchronous.
 */
const SCRATCH = Buffer.allocUnsafe(64 * 1024)

/** Continues a running checksum over stored lines as written, in order (an append batch). */
export function checksumOfLines(
  form: ChecksumForm,
  lines: readonly string[],
  previous: number,
): number {
  if (lines.length === 0) return previous
  // One CRC over the joined batch: CRC-32 chains, so it equals one CRC per line. The CRC-32 of
  // a string is that of its UTF-8 bytes: in the `bytes` form, what the JSONL writer writes.
  if (form === 'bytes') return crc32(`${lines.join('\n')}\n`, previous)
  return crc32(lines.length === 1 ? lines[0]! : lines.join(''), previous)
}

/**
 * The stored text: `{"version":4,"crc":<CRC-32 of body>,"body":<body>}`, so damage to the
 * checkpoint itself (a torn write, a flipped byte) is caught before any of it is used.
 */
export function encodeCheckpoint(checkpoint: Checkpoint): string {
  const { fold } = checkpoint.checker
  const body = JSON.stringify({
    throughSeq: checkpoint.throughSeq,
    position: checkpoint.position,
    start: checkpoint.start ?? null,
    ranges: checkpoint.ranges.map(({ throughSeq, position, crc, characters }) => ({
      throughSeq,
      position,
      crc,
      characters,
    })),
    characters: checkpoint.characters,
    checker: {
      nextSeq: checkpoint.checker.nextSeq,
      lastTurn: fold.lastTurn,
      openTurn: fold.openTurn ?? null,
      step: fold.step
        ? {
            turn: fold.step.turn,
            step: fold.step.step,
            startSeq: fold.step.startSeq,
            assistantSeq: fold.step.assistantSeq ?? null,
            calls: fold.step.calls,
            resultIndex: fold.step.resultIndex,
            started: [...fold.step.started],
          }
        : null,
      boundaries: packBits(checkpoint.checker.boundaries, checkpoint.checker.nextSeq),
    },
    projection: checkpoint.projection,
  })
  return `${PREFIX}${CHECKPOINT_VERSION},"crc":${crc32(body)},"body":${body}}`
}

const PREFIX = '{"version":'
const HEAD = /^\{"version":(\d+),"crc":(\d+),"body":/

/** The checkpoint in `text`, or undefined when it is absent, of another version or damaged. */
export function parseCheckpoint(text: string | undefined): Checkpoint | undefined {
  if (text === undefined) return undefined
  const head = HEAD.exec(text)
  if (!head || Number(head[1]) !== CHECKPOINT_VERSION || !text.endsWith('}')) return undefined
  const body = text.slice(head[0].length, -1)
  if (crc32(body) !== Number(head[2])) return undefined
  try {
    return readBody(JSON.parse(body))
  } catch {
    // Not JSON, or a shape this build did not write: no checkpoint.
    return undefined
  }
}

function readBody(value: unknown): Checkpoint | undefined {
  if (!isRecord(value)) return undefined
  const { throughSeq, position, start, ranges: storedRanges, characters: stored } = value
  const { checker, projection } = value
  if (!isCount(throughSeq) || !isCount(position) || !isCount(stored)) return undefined
  if (start !== null && (!isCount(start) || start > position)) return undefined
  const ranges = readRanges(storedRanges)
  if (!ranges || !areRangesWellFormed(ranges, throughSeq, position, stored)) return undefined
  if (!isRecord(checker) || !isRecord(projection)) return undefined
  const nextSeq = checker.nextSeq
  if (nextSeq !== throughSeq + 1 || !isCount(checker.lastTurn)) return undefined
  const openTurn = readOpenTurn(checker.openTurn, throughSeq)
  const step = readStep(checker.step, throughSeq)
  if (openTurn === false || step === false || typeof checker.boundaries !== 'string')
    return undefined
  const boundaries = unpackBits(checker.boundaries, nextSeq)
  const { from, headerSeq } = projection
  if (!boundaries || !isCount(from) || from > throughSeq + 1) return undefined
  if (headerSeq !== undefined && (!isCount(headerSeq) || headerSeq > throughSeq)) return undefined
  const fold: LogState = { lastTurn: checker.lastTurn, openTurn, step }
  return {
    throughSeq,
    position,
    ...(start === null ? {} : { start }),
    ranges,
    characters: stored,
    checker: { nextSeq, fold, boundaries },
    projection: { from, ...(headerSeq === undefined ? {} : { headerSeq }) },
  }
}

function readRanges(value: unknown): CheckpointRange[] | undefined {
  if (!Array.isArray(value)) return undefined
  const ranges: CheckpointRange[] = []
  for (const range of value) {
    if (!isRecord(range)) return undefined
    const { throughSeq, position, crc, characters } = range
    if (!isCount(throughSeq) || !isCount(position) || !isCount(crc) || !isCount(characters))
      return undefined
    if (crc > 0xffff_ffff) return undefined
    ranges.push({ throughSeq, position, crc, characters })
  }
  return ranges
}

function readOpenTurn(value: unknown, throughSeq: number): OpenTurn | undefined | false {
  if (value === null) return undefined
  if (!isRecord(value)) return false
  const { turn, seq, lastStep } = value
  if (!isCount(turn) || !isCount(seq) || !isCount(lastStep) || seq > throughSeq) return false
  return { turn, seq, lastStep }
}

function readStep(value: unknown, throughSeq: number): OpenStep | undefined | false {
  if (value === null) return undefined
  if (!isRecord(value)) return false
  const { turn, step, startSeq, assistantSeq, calls, resultIndex, started } = value
  if (!isCount(turn) || !isCount(step) || !isCount(startSeq) || !isCount(resultIndex)) return false
  if (startSeq > throughSeq || !Array.isArray(calls) || !Array.isArray(started)) return false
  if (assistantSeq !== null && (!isCount(assistantSeq) || assistantSeq > throughSeq)) return false
  if (!calls.every(isToolCall) || !started.every((id) => typeof id === 'string')) return false
  if (resultIndex > calls.length) return false
  return {
    turn,
    step,
    startSeq,
    assistantSeq: assistantSeq ?? undefined,
    calls: calls as ToolCallBlock[],
    resultIndex,
    started: new Set(started as string[]),
  }
}

function isToolCall(value: unknown): boolean {
  return (
    isRecord(value) &&
    value.type === 'tool-call' &&
    typeof value.id === 'string' &&
    typeof value.name === 'string' &&
    'args' in value
  )
}

function isRecord(value: unknown): value is Record<string, JsonValue | undefined> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/** One bit per seq, base64: a 100k-event log's boundaries take 17 KB. */
/** The boundary bits of the seqs before `count`, as base64 (the in-memory layout, 0166). */
function packBits(boundaries: Uint8Array, count: number): string {
  return Buffer.from(boundariesBefore(boundaries, count)).toString('base64')
}

function unpackBits(text: string, count: number): Uint8Array | undefined {
  const bits = Buffer.from(text, 'base64')
  if (bits.length !== (count + 7) >> 3) return undefined
  // A bit past `count` would let a later event stand as a boundary it is not.
  if (count & 7 && bits[bits.length - 1]! >> (count & 7) !== 0) return undefined
  return new Uint8Array(bits)
}

/**
 * Loading a stored log: every record decoded, its blobs read back, and checked in order
 * (envelope, type, data, invariants), so the events handed to a live session are exactly what
 * was appended and form a valid log (an open last turn allowed).
 */

import {
  createLogChecker,
  deepFreeze,
  isEventType,
  type LogChecker,
  type LogCheckerState,
  LogCorruptError,
  type ProjectionState,
  RudderError,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js'
import type { Backend, ChecksumForm, RecordBatch } from './backend.js'
import { type Checkpoint, checksumOfRecords } from './checkpoint.js'
import {
  type CheckpointRange,
  closeRangeIfDue,
  emptyRangeSums,
  type RangeSums,
  rangeIndexOf,
  reopenRanges,
  sumCheckedRanges,
} from './checkpoint-ranges.js'
import { type DecodedLine, decodeLine, decodeTrustedLine, resolveBlobs } from './codec.js'
import {
  createEventCheck,
  type EventCheck,
  locate,
  parseHeader,
  repairHint,
} from './event-check.js'
import { EVENT_DATA_CHECK } from './stored-shapes.js'

export type LoadedEvents = {
  /**
   * Not frozen: nobody else holds them, and most are never handed out. A caller that hands them
   * out freezes them first, as a live session does when they leave it (decision 0182).
   */
  readonly events: SessionEvent[]
  /** Backend position where each event's record ends, by seq. */
  readonly positions: number[]
  readonly tornTail?: {
    readonly location: string
    readonly bytes: number
    readonly position: number
  }
  readonly openTurn: number | undefined
  /** The invariant checker, advanced over `events` (a live session keeps using it). */
  readonly checker: LogChecker
  /** Salvage only: the first problem, where loading stopped. */
  readonly problem?: { readonly location: string; readonly message: string }
  /**
   * The ranges of the stored records of `events` and the open one's CRC (`checksumOfRecords`),
   * and their texts' characters (for the next checkpoint).
   */
  readonly sums: RangeSums
  readonly characters: number
  /**
   * Set when the events through the checkpoint's seq were taken on its word (it matched what
   * was read): their projection, to restore instead of projecting them again.
   */
  readonly restored?: {
    readonly projection: ProjectionState
    readonly throughSeq: number
    /** The characters of the covered lines. */
    readonly characters: number
  }
}

export type LoadOptions = {
  /** Stop after this seq (fork). */
  readonly throughSeq?: number
  /** Stop at the first problem and return the valid prefix instead of throwing (repair). */
  readonly salvage?: boolean
  /**
   * The log was checked when this store wrote it (fork, decision 0067): parse JSON and check
   * event types and invariants, but not each event's data against its schema.
   */
  readonly trusted?: boolean
  /**
   * A checkpoint read beside the log (decision 0148). The events it covers are parsed and
   * frozen but not checked again, and the checker continues from its state, if and only if
   * each of its ranges ends at its position and the checksum of its records is its CRC.
   * Otherwise the log is loaded as without it (read again, checked in full).
   */
  readonly checkpoint?: Checkpoint | undefined
  /** Where ranges close past the checkpoint (`CheckpointPolicy.rangeCharacters`). */
  readonly rangeCharacters?: number
}

/** Reads and checks the header of session `id`. */
export async function loadHeader(backend: Backend, id: string): Promise<SessionHeader> {
  const stored = await backend.readHeader(id)
  return parseHeader(stored.text, stored.location, id)
}

/**
 * Loads and checks the events of session `id`. Throws `LogCorruptError` (location and the
 * repair hint), `UNKNOWN_EVENT_TYPE` or a `StoreError` for I/O, unless salvaging.
 */
export async function loadEvents(
  backend: Backend,
  id: string,
  options: LoadOptions = {},
): Promise<LoadedEvents> {
  const load = new FullLoad(backend, id, options)
  const { events, positions, sums, checkpoint, throughSeq } = load
  try {
    for await (const batch of backend.records(
      id,
      options.throughSeq === undefined ? {} : { throughSeq },
    )) {
      // The checksum is summed a stretch of the batch at a time (one call, not one per record):
      // records before `summed` are in it.
      let summed = 0
      // The batch decoded ahead, its blobs being read; then walked in order as if decoded here.
      load.coveredSeq = load.isCovered ? events.length : -1
      const ahead = decodeAhead(
        batch,
        0,
        throughSeq + 1 - events.length,
        decodeLoadRecord,
        resolveLoadRecord,
        load,
      )
      for (let index = 0; index < batch.length; index++) {
        // Most records are taken by `takeReady`; the rest, one at a time, here.
        index = takeReady(load, batch, ahead, index)
        if (events.length > throughSeq) {
          sums.crc = checksumOfRecords(load.form, batch, summed, index, sums.crc)
          return loaded(load)
        }
        if (index === batch.length) break
        const record = batch[index]!
        if (record.kind === 'torn') {
          if (load.isCovered) return loadWithoutCheckpoint(load)
          load.tornTail = {
            location: record.location,
            bytes: record.bytes,
            position: record.position,
          }
          continue
        }
        load.characters += record.text.length
        if (load.isCovered) {
          const line = ahead.lines[index]
          if (!line) return loadWithoutCheckpoint(load)
          const read = ahead.reads?.[index]
          if (read) await read
          events.push(line as SessionEvent)
          positions.push(record.position)
          if (line.seq === checkpoint!.ranges[load.nextRange]!.throughSeq) {
            // One of the checkpoint's ranges ends here: its CRC and end must be what was read.
            const first = line.seq - (index - summed)
            load.nextRange = sumCheckedRanges(
              load.form,
              batch,
              summed,
              index + 1,
              first,
              sums,
              checkpoint!.ranges,
              load.nextRange,
            )
            summed = index + 1
            if (load.nextRange < 0) return loadWithoutCheckpoint(load)
          }
          if (line.seq === checkpoint!.throughSeq) {
            load.isCovered = false
            load.coveredCharacters = load.characters
            load.check = createEventCheck(
              createLogChecker({ allowOpenTurn: true }, checkpoint!.checker),
              { checkData: !load.isTrusted },
            )
          }
          continue
        }
        try {
          const failure = load.failure
          load.failure = undefined
          if (failure !== undefined) throw failure
          const event = checkedEvent(ahead, index, load.check)
          events.push(event instanceof Promise ? await event : event)
          positions.push(record.position)
        } catch (caught) {
          const location = backend.locate(id, record.where)
          const error = locate(caught, location, load.hint)
          if (!options.salvage || !isLogProblem(error)) throw error
          sums.crc = checksumOfRecords(load.form, batch, summed, index, sums.crc)
          return { ...loaded(load), problem: { location, message: (error as Error).message } }
        }
        if (events.length > throughSeq) {
          sums.crc = checksumOfRecords(load.form, batch, summed, index + 1, sums.crc)
          return loaded(load)
        }
      }
      const count = lineCount(batch)
      sums.crc = checksumOfRecords(load.form, batch, summed, count, sums.crc)
      // Past the checkpoint, ranges close where batches end (checkpoint-ranges.ts).
      if (!load.isCovered && count > 0)
        closeRangeIfDue(sums, events.length - 1, batch[count - 1]!.position, load.characters)
    }
  } catch (error) {
    // A covered record that cannot be read back as it was (a blob gone): report it as usual.
    if (load.isCovered && isLogProblem(error)) return loadWithoutCheckpoint(load)
    // The backend itself could not read on (a damaged database page): salvage keeps the prefix.
    if (!options.salvage || !isLogProblem(error)) throw error
    const location = error instanceof LogCorruptError ? error.location : backend.describe(id)
    return { ...loaded(load), problem: { location, message: (error as Error).message } }
  }
  // The log ends before the checkpoint's seq.
  if (load.isCovered) return loadWithoutCheckpoint(load)
  // A whole log read: its first events' shapes are kept, as a covered read's are.
  if (options.throughSeq === undefined) keepShapes(events, SPECIMEN_COUNT)
  return loaded(load)
}

/**
 * Takes the records of `batch` from `from` on that need nothing but taking: a decoded line
 * whose blobs are not being read, covered and not the end of a checkpoint range, or checked
 * and valid. Returns the index of the first record it did not take (`batch.length` when it
 * took them all); `loadEvents` takes that one. Records past `throughSeq` were not decoded
 * (`decodeAhead`), so it stops at the first of them.
 * A check that threw is left in `load.failure`. This loop is the load's work per record; inside
 * `loadEvents`, an async function V8 optimised while it ran, the code referred to objects made
 * per load and was discarded at nearly every load once they were collected: 17–25 ms of
 * compiling per load of a 20 MB log without a checkpoint (bench B2, decision 0183).
 */
function takeReady(load: FullLoad, batch: RecordBatch, ahead: DecodedAhead, from: number): number {
  const { events, positions } = load
  for (let index = from; index < batch.length; index++) {
    const record = batch[index]!
    const line = ahead.lines[index]
    if (record.kind === 'torn' || line === undefined || ahead.reads?.[index] !== undefined)
      return index
    if (load.isCovered) {
      const { checkpoint } = load
      if (
        line.seq === checkpoint!.ranges[load.nextRange]!.throughSeq ||
        line.seq === checkpoint!.throughSeq
      )
        return index
      events.push(line as SessionEvent)
    } else {
      try {
        events.push(load.check.accept(line))
      } catch (caught) {
        load.failure = caught
        return index
      }
    }
    load.characters += record.text.length
    positions.push(record.position)
  }
  return batch.length
}

/**
 * A load of a whole log (`loadEvents`) and how far it got: one object of one class, read by the
 * module functions that do the work per record (`takeReady`, `decodeLoadRecord`), so that no
 * closure is made per load or per batch. One is held for the process (`FULL_LOAD_SHAPE`): the
 * optimised code of those functions checks this class, which otherwise died with each load, and
 * they were compiled again at every load of the bench (bench B2, decision 0183). Exported for
 * the test that holds it to that.
 */
export class FullLoad {
  readonly backend: Backend
  readonly id: string
  readonly options: LoadOptions
  readonly hint: string
  readonly form: ChecksumForm
  readonly checkpoint: Checkpoint | undefined
  readonly isTrusted: boolean
  /** The last seq to load (`LoadOptions.throughSeq`), or infinity. */
  readonly throughSeq: number
  check: EventCheck
  /** What checking the record `takeReady` stopped at threw, for `loadEvents` to report. */
  failure: unknown = undefined
  readonly events: SessionEvent[] = []
  readonly positions: number[] = []
  tornTail: LoadedEvents['tornTail'] = undefined
  readonly sums: RangeSums
  characters = 0
  /** Still reading events the checkpoint covers; the index of its next range to check. */
  isCovered: boolean
  nextRange = 0
  coveredCharacters = 0
  /** While a batch is decoded ahead: the seq its next covered record must be, or -1. */
  coveredSeq = -1

  constructor(backend: Backend, id: string, options: LoadOptions) {
    this.backend = backend
    this.id = id
    this.options = options
    this.hint = repairHint(id)
    this.form = backend.checksumForm ?? 'text'
    this.checkpoint = options.throughSeq === undefined ? options.checkpoint : undefined
    this.isTrusted = options.trusted === true
    this.throughSeq = options.throughSeq ?? Number.POSITIVE_INFINITY
    this.check = createEventCheck(undefined, { checkData: !this.isTrusted })
    this.sums = emptyRangeSums(options.rangeCharacters)
    this.isCovered = this.checkpoint !== undefined
  }
}

/** What `load` read, so far. */
function loaded(load: FullLoad): LoadedEvents {
  const { checkpoint, tornTail } = load
  return {
    events: load.events,
    positions: load.positions,
    openTurn: load.check.checker.openTurn,
    checker: load.check.checker,
    sums: load.sums,
    characters: load.characters,
    ...(tornTail ? { tornTail } : {}),
    ...(checkpoint && !load.isCovered
      ? {
          restored: {
            projection: checkpoint.projection,
            throughSeq: checkpoint.throughSeq,
            characters: load.coveredCharacters,
          },
        }
      : {}),
  }
}

/**
 * The checkpoint does not fit this log (stale in a way a prefix cannot be, damaged, or a
 * covered record edited): loads as without it, so every problem is found and reported as usual.
 */
function loadWithoutCheckpoint(load: FullLoad): Promise<LoadedEvents> {
  return loadEvents(load.backend, load.id, { ...load.options, checkpoint: undefined })
}

/** Record `index` of a batch of `load` decoded (`decodeAhead`; see `decodeCoveredRecord`). */
function decodeLoadRecord(text: string, _index: number, load: FullLoad): DecodedLine | undefined {
  if (load.coveredSeq < 0) return load.isTrusted ? decodeTrustedLine(text) : decodeLine(text)
  const line = coveredLine(text, load.coveredSeq)
  load.coveredSeq =
    line === undefined || line.seq === load.checkpoint!.throughSeq ? -1 : load.coveredSeq + 1
  return line
}

function resolveLoadRecord(
  line: DecodedLine,
  record: LineRecord,
  load: FullLoad,
): Promise<void> | undefined {
  return resolveBlobs(
    line,
    load.backend.blobs,
    load.backend.locate(load.id, record.where),
    load.hint,
  )
}

/**
 * Record `index` of a batch decoded ahead, its blobs put back and checked (`check`), not frozen
 * (see `LoadedEvents.events`). Throws what decoding and checking throw, and what reading its
 * blobs threw. Synchronous unless the record refers to blobs: an `await` per record cost a
 * promise and a microtask turn per event (bench B2).
 */
function checkedEvent(
  ahead: DecodedAhead,
  index: number,
  check: EventCheck,
): SessionEvent | Promise<SessionEvent> {
  const line = ahead.lines[index]
  if (!line) throw ahead.problem
  const read = ahead.reads?.[index]
  if (!read) return check.accept(line)
  return read.then(() => check.accept(line))
}

/**
 * A batch's line records decoded ahead of the walk that takes them in (`decodeAhead`):
 * `lines[i]` is record `i` decoded, up to the first that failed (undefined; `problem` is what
 * decoding it threw, if it threw); `reads[i]` the read of record `i`'s blobs, where it has some.
 */
type DecodedAhead = {
  readonly lines: (DecodedLine | undefined)[]
  problem: unknown
  reads: (Promise<void> | undefined)[] | undefined
}

/**
 * Decodes the line records of `batch` from index `from` on, in order, at most `most` of them,
 * with `decode` (which returns undefined or throws for a record that fails; decoding stops
 * there), and starts reading the blobs of each decoded line that refers to some (`resolve`,
 * which may decline). The reads, in the thread pool, run beside each other and beside the
 * decoding of the rest of the batch instead of one after another between records (B13). The
 * loader then walks the batch in order as before and awaits each record's read where it read
 * it before, so events are taken in, and the first problem is reported, exactly in log order:
 * a record's blob that cannot be read is reported at that record even if a later one failed
 * to decode. A read the walk never reaches (it stopped at an earlier problem) finishes
 * unobserved.
 */
function decodeAhead<C>(
  batch: RecordBatch,
  from: number,
  most: number,
  decode: (text: string, index: number, context: C) => DecodedLine | undefined,
  resolve: (line: DecodedLine, record: LineRecord, context: C) => Promise<void> | undefined,
  context: C,
): DecodedAhead {
  // Every key from the start: a key added later would give some batches another hidden class.
  const ahead: DecodedAhead = {
    lines: new Array(batch.length),
    problem: undefined,
    reads: undefined,
  }
  let decoded = 0
  for (let index = from; index < batch.length && decoded < most; index++) {
    const record = batch[index]!
    if (record.kind !== 'line') continue
    let line: DecodedLine | undefined
    try {
      line = decode(record.text, index, context)
    } catch (error) {
      ahead.problem = error
      return ahead
    }
    if (!line) return ahead
    ahead.lines[index] = line
    decoded++
    const read = line.blobs && resolve(line, record, context)
    if (!read) continue
    read.catch(() => {
      // Observed by the walk when it reaches this record; if it stops before, nobody asks.
    })
    ahead.reads ??= []
    ahead.reads[index] = read
  }
  return ahead
}

type LineRecord = Extract<RecordBatch[number], { kind: 'line' }>

/**
 * A record the checkpoint covers, parsed as far as telling that it is the event expected at
 * `seq` of a type this rudder reads, or undefined (then the checkpoint is not used).
 */
function coveredLine(text: string, seq: number): DecodedLine | undefined {
  let line: DecodedLine
  try {
    line = decodeTrustedLine(text)
  } catch {
    // Not an envelope: the full load that follows reports where and why.
    return undefined
  }
  if (line.seq !== seq || (!isEventType(line.type) && line.ignorable !== true)) return undefined
  return line
}

/** The line records of a batch: all but a torn end. */
function lineCount(batch: RecordBatch): number {
  return batch.at(-1)?.kind === 'torn' ? batch.length - 1 : batch.length
}

/** Problems in the log itself, which salvage stops at (I/O failures and newer formats are not). */
function isLogProblem(error: unknown): boolean {
  return (
    error instanceof RudderError &&
    (error.code === 'LOG_CORRUPT' || error.code === 'UNKNOWN_EVENT_TYPE')
  )
}

/**
 * What a session opened without reading its log knows of the events it did not read: a
 * checkpoint, or a fork's source at the cut (whose ranges may be unknown).
 */
export type Covered = {
  /** The last seq covered. */
  readonly throughSeq: number
  /**
   * The ranges of the stored records of the covered events, the last ending at `throughSeq`,
   * if known (checkpoint-ranges.ts).
   */
  readonly ranges?: readonly CheckpointRange[] | undefined
  /** The characters of those lines. */
  readonly characters: number
  /** The invariant checker after the covered events. */
  readonly checker: LogCheckerState
  /** The projection after the covered events. */
  readonly projection: ProjectionState
}

/** The events after a checkpoint, read without the ones it covers (`loadTail`). */
export type LoadedTail = {
  /** Events `checkpoint.throughSeq + 1` on, checked. */
  readonly events: SessionEvent[]
  /** Where the record of the checkpoint's seq and of each of `events` ends. */
  readonly positions: number[]
  readonly tornTail?: LoadedEvents['tornTail']
  /** The invariant checker continued from the checkpoint's state over `events`. */
  readonly checker: LogChecker
  /** The sums of every stored record through the last event, and their characters. */
  readonly sums: RangeSums
  readonly characters: number
}

/**
 * Reads the events after `checkpoint`, starting at the record of its seq (decision 0161): that
 * record must be the checkpoint's seq and end at its position, else the checkpoint does not
 * fit the log and this returns undefined (the caller loads the log in full). The events after
 * it are checked as any load checks them, by a checker continuing from the checkpoint's.
 * The covered records are not read: they are checked against the checkpoint's ranges when
 * the session reads them (`readCovered`).
 */
export async function loadTail(
  backend: Backend,
  id: string,
  checkpoint: Checkpoint,
  rangeCharacters?: number,
): Promise<LoadedTail | undefined> {
  const hint = repairHint(id)
  const form = backend.checksumForm ?? 'text'
  const check = createEventCheck(createLogChecker({ allowOpenTurn: true }, checkpoint.checker))
  const events: SessionEvent[] = []
  const positions: number[] = []
  let tornTail: LoadedEvents['tornTail']
  // The checkpoint's last range goes on over the records after it.
  const sums = reopenRanges(checkpoint.ranges, rangeCharacters)
  let characters = checkpoint.characters
  let isFirst = true
  try {
    for await (const batch of backend.records(id, {
      fromSeq: checkpoint.throughSeq,
      ...(checkpoint.start === undefined ? {} : { fromPosition: checkpoint.start }),
    })) {
      /** The first record of the batch after the checkpoint's own. */
      let after = 0
      // Decoded ahead, its blobs being read, but the checkpoint's own record (read below).
      const ahead = decodeAhead(
        batch,
        isFirst ? 1 : 0,
        Number.POSITIVE_INFINITY,
        decodeLine,
        (line, record) => resolveBlobs(line, backend.blobs, backend.locate(id, record.where), hint),
        undefined,
      )
      for (let index = 0; index < batch.length; index++) {
        const record = batch[index]!
        if (record.kind === 'torn') {
          if (isFirst) return undefined
          tornTail = { location: record.location, bytes: record.bytes, position: record.position }
          continue
        }
        if (isFirst) {
          // The checkpoint's own record: read to tell that the log still has it where it was.
          const line = coveredLine(record.text, checkpoint.throughSeq)
          if (!line || record.position !== checkpoint.position) return undefined
          positions.push(record.position)
          isFirst = false
          after = 1
          continue
        }
        characters += record.text.length
        try {
          const event = checkedEvent(ahead, index, check)
          events.push(event instanceof Promise ? await event : event)
          positions.push(record.position)
        } catch (caught) {
          throw locate(caught, backend.locate(id, record.where), hint)
        }
      }
      const count = lineCount(batch)
      sums.crc = checksumOfRecords(form, batch, after, count, sums.crc)
      if (count > after)
        closeRangeIfDue(
          sums,
          checkpoint.throughSeq + events.length,
          batch[count - 1]!.position,
          characters,
        )
    }
  } catch (error) {
    // The checkpoint's record itself could not be read back: load as without the checkpoint.
    if (isFirst && isLogProblem(error)) return undefined
    throw error
  }
  if (isFirst) return undefined
  return {
    events,
    positions,
    checker: check.checker,
    sums,
    characters,
    ...(tornTail ? { tornTail } : {}),
  }
}

/**
 * Reads stored events `fromSeq..throughSeq` that a checkpoint covers (or that follow it), for a
 * session that does not hold them: each parsed, its seq and type checked, its blobs read back.
 * With the covered ranges known, whole ranges are read, from the start of the one holding
 * `fromSeq` (JSONL seeks there) through the end of the one holding `throughSeq`, and each is
 * checked against its CRC as the read passes its end; the records outside the seqs asked for
 * are only summed, not parsed (decision 0178). Without them (a fork's child whose source did
 * not know its sums), exactly the seqs asked for are read and checked field by field
 * (envelope, type, data). What does not fit is reported through `mismatch` (the caller
 * discards the checkpoint). The events are not frozen: the session freezes what it hands out
 * (`SessionHistory`, decision 0175).
 */
export function readCovered(
  backend: Backend,
  id: string,
  range: CoveredRange,
  covered: Covered,
  mismatch: (reason: string, location: string) => Error,
): AsyncGenerator<SessionEvent[]> {
  return readCoveredFrom(coveredRead(backend, id, range, covered, mismatch))
}

type CoveredRange = {
  readonly fromSeq: number
  readonly throughSeq: number
  readonly signal?: AbortSignal
}

/**
 * The state of a covered read. The loops are handed one object of one hidden class, not the
 * arguments: optimised code checks the class of every object it reads, and `covered` (a parsed
 * checkpoint) and `range` have classes that die with the session, which discarded that code at
 * the next full collection (bench B2, decision 0170). Read here, once per call, by code V8
 * never optimises.
 */
function coveredRead(
  backend: Backend,
  id: string,
  range: CoveredRange,
  covered: Pick<Covered, 'ranges'>,
  mismatch: (reason: string, location: string) => Error,
): CoveredRead {
  const ranges = covered.ranges ?? NO_RANGES
  const first = rangeIndexOf(ranges, range.fromSeq)
  const last = rangeIndexOf(ranges, range.throughSeq)
  const isChecked = first < ranges.length
  const fromSeq = !isChecked ? range.fromSeq : first > 0 ? ranges[first - 1]!.throughSeq + 1 : 0
  return {
    backend,
    id,
    hint: repairHint(id),
    form: backend.checksumForm ?? 'text',
    fromSeq,
    fromPosition: isChecked && first > 0 ? ranges[first - 1]!.position : -1,
    firstSeq: range.fromSeq,
    lastSeq: range.throughSeq,
    throughSeq: last < ranges.length ? ranges[last]!.throughSeq : range.throughSeq,
    signal: range.signal,
    ranges,
    coveredSeq: ranges.at(-1)?.throughSeq ?? -1,
    mismatch,
    seq: fromSeq,
    nextRange: first,
    summed: 0,
    sums: Uint32Array.of(0),
    specimens: fromSeq === 0 ? SPECIMEN_COUNT : 0,
  }
}

const NO_RANGES: readonly CheckpointRange[] = []

/** A read of covered events and how far it got: always these keys, in this order. */
type CoveredRead = {
  readonly backend: Backend
  readonly id: string
  readonly hint: string
  readonly form: ChecksumForm
  /** The first seq read, and where its record starts (-1: the backend finds it). */
  readonly fromSeq: number
  readonly fromPosition: number
  /** The first and last seq handed out. */
  readonly firstSeq: number
  readonly lastSeq: number
  /** The last seq read: the end of the range holding `lastSeq`. */
  readonly throughSeq: number
  readonly signal: AbortSignal | undefined
  /** The covered ranges; records after the last (`coveredSeq`) are checked field by field. */
  readonly ranges: readonly CheckpointRange[]
  readonly coveredSeq: number
  readonly mismatch: (reason: string, location: string) => Error
  /** The seq of the next record. */
  seq: number
  /** The index of the next range to check, and of the first record of this batch not summed. */
  nextRange: number
  summed: number
  /**
   * The CRC of the open range so far. In a typed array, not a field: a number past 2^31 - 1 is
   * stored unlike a small one, and a field that held both would give this object a new hidden
   * class in some reads and not others (decision 0170).
   */
  readonly sums: Uint32Array
  /** The shape specimens still wanted (`keepShapes`). */
  specimens: number
}

/**
 * The batches of a covered read. The per-record work is in `decodeCovered` and `takeCovered`,
 * called once per batch: in the generator, V8 optimised the loop while it ran, then met the
 * code that runs once per read (its end) without type feedback, deoptimised, and compiled it
 * again at the next read, 50–240 ms of compile per load of the 20 MB log on a background
 * thread (as `readLines` did, decision 0162).
 */
async function* readCoveredFrom(read: CoveredRead): AsyncGenerator<SessionEvent[]> {
  const { backend, id } = read
  const records = backend.records(id, {
    fromSeq: read.fromSeq,
    throughSeq: read.throughSeq,
    ...(read.fromPosition < 0 ? {} : { fromPosition: read.fromPosition }),
  })
  for await (const batch of records) {
    read.signal?.throwIfAborted()
    const ahead = decodeCovered(read, batch)
    read.summed = 0
    const taken = takeCovered(read, batch, ahead, [], 0)
    const events = taken instanceof Promise ? await taken : taken
    if (read.specimens > 0) read.specimens = keepShapes(events, read.specimens)
    if (events.length > 0) yield events
  }
  if (read.seq !== read.throughSeq + 1)
    throw read.mismatch(
      `it ends at seq ${read.seq - 1}, before seq ${read.throughSeq}`,
      backend.describe(id),
    )
}

/**
 * A batch of a covered read decoded ahead: the records of the seqs asked for, their blobs
 * being read. Records no range vouches for are checked as a load checks them (but the
 * invariants, which the checker's state at open already stands for). Locations are built only
 * when needed: a path per record is a tenth of a large read's time.
 */
function decodeCovered(read: CoveredRead, batch: RecordBatch): DecodedAhead {
  // Every record of a covered read is a line but a torn last one, so record `index` is seq
  // `read.seq + index`.
  const from = Math.max(0, read.firstSeq - read.seq)
  const most = read.lastSeq - Math.max(read.seq, read.firstSeq) + 1
  return decodeAhead(batch, from, most, decodeCoveredRecord, resolveCovered, read)
}

/**
 * Record `index` of a covered read's batch, decoded (`decodeAhead`). Module functions with the
 * read as their context, not closures made per batch: optimised code that calls a closure
 * checks that very closure, which dies with its batch.
 */
function decodeCoveredRecord(
  text: string,
  index: number,
  read: CoveredRead,
): DecodedLine | undefined {
  const seq = read.seq + index
  return seq <= read.coveredSeq ? coveredLine(text, seq) : checkedLine(text, seq)
}

function resolveCovered(
  line: DecodedLine,
  record: LineRecord,
  read: CoveredRead,
): Promise<void> | undefined {
  if (line.seq < read.firstSeq) return undefined
  return resolveBlobs(
    line,
    read.backend.blobs,
    read.backend.locate(read.id, record.where),
    read.hint,
    read.signal,
  )
}

/**
 * Takes the records of `batch` from `from` on: those of the seqs asked for into `events` (not
 * frozen: see `readCovered`), each range that ends among them checked (`checkRange`); returns
 * `events`, or from the first record whose blobs are being read on, a promise of them. Throws
 * `mismatch`.
 */
function takeCovered(
  read: CoveredRead,
  batch: RecordBatch,
  ahead: DecodedAhead,
  events: SessionEvent[],
  from: number,
): SessionEvent[] | Promise<SessionEvent[]> {
  for (let index = from; index < batch.length; index++) {
    const record = batch[index]!
    if (record.kind === 'torn') throw read.mismatch('its last record is cut short', record.location)
    const seq = read.seq
    const line = seq >= read.firstSeq && seq <= read.lastSeq ? ahead.lines[index] : null
    if (line === undefined)
      throw read.mismatch(
        `the record of seq ${seq} is not what was written`,
        read.backend.locate(read.id, record.where),
      )
    if (read.nextRange < read.ranges.length && seq === read.ranges[read.nextRange]!.throughSeq)
      checkRange(read, batch, index)
    read.seq++
    if (line === null) continue
    const blobRead = ahead.reads?.[index]
    if (blobRead)
      return blobRead.then(() => {
        events.push(line as SessionEvent)
        return takeCovered(read, batch, ahead, events, index + 1)
      })
    events.push(line as SessionEvent)
  }
  // The rest of the batch belongs to the next range: summed in one call.
  if (read.nextRange < read.ranges.length)
    read.sums[0] = checksumOfRecords(read.form, batch, read.summed, batch.length, read.sums[0]!)
  return events
}

/**
 * Checks the range that ends at record `index` of `batch`: the CRC of its records and where
 * its last one ends must be the range's. Throws `mismatch`; then the next range opens.
 */
function checkRange(read: CoveredRead, batch: RecordBatch, index: number): void {
  const range = read.ranges[read.nextRange]!
  const checksum = checksumOfRecords(read.form, batch, read.summed, index + 1, read.sums[0]!)
  if (checksum !== range.crc || batch[index]!.position !== range.position) {
    const start = read.nextRange > 0 ? read.ranges[read.nextRange - 1]!.throughSeq + 1 : 0
    const record = batch[index]!
    throw read.mismatch(
      `the records of seqs ${start} to ${range.throughSeq} are not the ones written`,
      record.kind === 'line' ? read.backend.locate(read.id, record.where) : record.location,
    )
  }
  read.sums[0] = 0
  read.summed = index + 1
  read.nextRange++
}

/**
 * How many events of a log read from its start are kept as specimens of their shapes
 * (`keepShapes`).
 */
const SPECIMEN_COUNT = 64

/** Copies of the first events of the latest log read from its start (`keepShapes`). */
let shapeSpecimens: readonly unknown[] = []

/** The shape specimens held now (`keepShapes`), for tests. */
export function heldShapeSpecimens(): readonly unknown[] {
  return shapeSpecimens
}

/**
 * Keeps frozen copies of up to `wanted` of `events` (their strings emptied, so nothing of the
 * log's content is kept), replacing those of an earlier log when it starts one, and returns how
 * many are still wanted. `JSON.parse` gives an object the hidden class its keys and the kinds
 * of its values make, and V8 holds such a class only while some object has it: once a closed
 * session's events were collected, the optimised code of the loader and the projector, which
 * checks those classes, was discarded, and the next load of a log of the same shapes compiled
 * it again (20–110 ms on a background thread per 20 MB load, bench B2, decision 0170). Logs
 * repeat a handful of shapes, so the first events of the last log keep most of them alive:
 * a few KB. Frozen as the events are (freezing gives an object a class of its own).
 */
function keepShapes(events: readonly SessionEvent[], wanted: number): number {
  const count = Math.min(wanted, events.length)
  const copies = events.slice(0, count).map(emptiedCopy)
  shapeSpecimens = wanted === SPECIMEN_COUNT ? copies : shapeSpecimens.concat(copies)
  return wanted - count
}

/** `event` parsed again from its JSON with every string emptied: the same keys, in order. */
function emptiedCopy(event: SessionEvent): unknown {
  return deepFreeze(JSON.parse(JSON.stringify(event, emptyStrings)))
}

function emptyStrings(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? '' : value
}

/** A record parsed and checked as a load checks it (envelope, type, data), or undefined. */
function checkedLine(text: string, seq: number): DecodedLine | undefined {
  try {
    const line = decodeLine(text)
    if (line.seq !== seq) return undefined
    if (!isEventType(line.type)) return line.ignorable === true ? line : undefined
    return EVENT_DATA_CHECK[line.type](line.data) ? undefined : line
  } catch {
    // Not an event envelope.
    return undefined
  }
}

/**
 * A covered read held for the life of the process, made by the same literal as every read, so
 * that their hidden class outlives every read. The class of an object literal hangs off V8's
 * map cache by weak transitions: once the last read was collected it died, and the loops that
 * check it (`decodeAhead`, `decodeCoveredRecord`, `takeCovered`) were deoptimised ("weak
 * objects") and compiled again every third load of the bench (each time after V8's retained
 * maps ran out), 10–45 ms of TurboFan per compile of `takeCovered` on a background thread
 * (bench B2, decision 0175). Exported so that it is a module binding (see `PROJECTION_SHAPES`).
 * Last in the module: it reads the constants above.
 */
export const COVERED_READ_SHAPE: object = coveredRead(
  { checksumForm: 'text' } as Backend,
  '',
  { fromSeq: 0, throughSeq: -1 },
  {},
  (reason) => new Error(reason),
)

/** A full load held for the life of the process (see `COVERED_READ_SHAPE`; decision 0183). */
export const FULL_LOAD_SHAPE: object = new FullLoad({ checksumForm: 'text' } as Backend, '', {})

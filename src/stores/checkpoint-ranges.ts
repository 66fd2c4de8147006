/**
 * The checkpoint's CRC per range (decision 0178, rule 1 and 2 of decision 0149): the covered
 * records are cut into runs of about 1 MiB of stored characters, each with the
 * CRC-32 of its records and where its last record ends, so that a read of any part of the
 * covered history reads whole ranges from where one starts and checks each as it passes its
 * end. Ranges end where a batch (an append's, a load's, a scan's) ends, so the running CRC an
 * append continues over the bytes it writes is the range's own: nothing is summed twice.
 */
import type { ChecksumForm, RecordBatch } from './backend.js'
// Read when called, not at load: checkpoint.ts imports this module too.
import { checksumOfRecords, DEFAULT_CHECKPOINT_POLICY } from './checkpoint.js'

/** One run of covered records: `[previous range's throughSeq + 1 .. throughSeq]`. */
export type CheckpointRange = {
  /** The seq of the range's last record. */
  readonly throughSeq: number
  /**
   * Where that record ends in the backend's terms (`StoredRecord.position`: a JSONL byte
   * offset, a seq elsewhere): where the next range starts.
   */
  readonly position: number
  /** The CRC-32 of the range's records, in the backend's form (`checksumOfRecords`). */
  readonly crc: number
  /** The stored characters of the records `[0..throughSeq]` (cumulative, without line ends). */
  readonly characters: number
}

/**
 * The running sums of a log being read or appended to: its closed ranges, and the CRC so far
 * of the open range that follows them. Owned by one reader or writer, changed in place.
 */
export type RangeSums = {
  readonly ranges: CheckpointRange[]
  /** The CRC-32 of the open range's records so far (0 when it has none). */
  crc: number
  /** The cumulative characters where the open range starts (the last closed one's). */
  fromCharacters: number
  /**
   * The characters at which the open range is closed, at the first batch end past them
   * (`CheckpointPolicy.rangeCharacters`, 1 MiB by default).
   */
  readonly size: number
}

/** Sums for a log read or written from its first record, closing ranges at `size`. */
export function emptyRangeSums(
  size: number = DEFAULT_CHECKPOINT_POLICY.rangeCharacters,
): RangeSums {
  return { ranges: [], crc: 0, fromCharacters: 0, size }
}

/**
 * Sums that continue a checkpoint's `ranges`: its last range is the open one again (appends
 * extend it), so a checkpoint rewritten after a few appends does not add a range each time.
 */
export function reopenRanges(
  ranges: readonly CheckpointRange[],
  size: number = DEFAULT_CHECKPOINT_POLICY.rangeCharacters,
): RangeSums {
  const open = ranges.at(-1)
  if (!open) return emptyRangeSums(size)
  const closed = ranges.slice(0, -1)
  return { ranges: closed, crc: open.crc, fromCharacters: closed.at(-1)?.characters ?? 0, size }
}

/**
 * Closes the open range at the record of `throughSeq` (ending at `position`, with `characters`
 * stored characters through it), when it holds at least `sums.size`. Call at a batch end,
 * after summing the batch into `sums.crc`.
 */
export function closeRangeIfDue(
  sums: RangeSums,
  throughSeq: number,
  position: number | undefined,
  characters: number,
): void {
  if (characters - sums.fromCharacters < sums.size || position === undefined) return
  sums.ranges.push({ throughSeq, position, crc: sums.crc, characters })
  sums.crc = 0
  sums.fromCharacters = characters
}

/**
 * The ranges of a checkpoint through `throughSeq` (ending at `position`, `characters` through
 * it): the closed ones and the open one, if it holds any record. A copy: `sums` goes on.
 */
export function rangesThrough(
  sums: RangeSums,
  throughSeq: number,
  position: number,
  characters: number,
): CheckpointRange[] {
  const closed = sums.ranges
  const lastClosed = closed.at(-1)?.throughSeq ?? -1
  if (throughSeq <= lastClosed) return closed.filter((range) => range.throughSeq <= throughSeq)
  return [...closed, { throughSeq, position, crc: sums.crc, characters }]
}

/** The index of the range holding `seq` (the first ending at or after it), or `ranges.length`. */
export function rangeIndexOf(ranges: readonly CheckpointRange[], seq: number): number {
  let low = 0
  let high = ranges.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (ranges[middle]!.throughSeq < seq) low = middle + 1
    else high = middle
  }
  return low
}

/** `ranges` with every position moved by `shift` (a fork's child: its header's length differs). */
export function shiftRanges(
  ranges: readonly CheckpointRange[],
  shift: number,
): readonly CheckpointRange[] {
  if (shift === 0) return ranges
  return ranges.map((range) => ({ ...range, position: range.position + shift }))
}

/**
 * Whether `ranges` read as a checkpoint's may be: in order, each ending after the one before,
 * the last at `throughSeq`, `position` and `characters`.
 */
export function areRangesWellFormed(
  ranges: readonly CheckpointRange[],
  throughSeq: number,
  position: number,
  characters: number,
): boolean {
  const last = ranges.at(-1)
  if (!last || last.throughSeq !== throughSeq || last.position !== position) return false
  if (last.characters !== characters) return false
  for (let index = 1; index < ranges.length; index++) {
    const before = ranges[index - 1]!
    const range = ranges[index]!
    if (range.throughSeq <= before.throughSeq || range.position <= before.position) return false
    if (range.characters <= before.characters) return false
  }
  return true
}

/**
 * Sums records `[from, to)` of `batch` into the open range, checking each of `expected` that
 * ends among them: its CRC and position must be what was read, after which it is closed in
 * `sums` as it is and the next range opens. `firstSeq` is the seq of `batch[from]`. Returns the
 * index in `expected` of the first range not closed yet, or -1 when one does not match.
 * The last of `expected` is checked but left open (a checkpoint's last range goes on).
 */
export function sumCheckedRanges(
  form: ChecksumForm,
  batch: RecordBatch,
  from: number,
  to: number,
  firstSeq: number,
  sums: RangeSums,
  expected: readonly CheckpointRange[],
  next: number,
): number {
  let summed = from
  while (next < expected.length) {
    const range = expected[next]!
    const index = from + range.throughSeq - firstSeq
    if (index >= to) break
    sums.crc = checksumOfRecords(form, batch, summed, index + 1, sums.crc)
    summed = index + 1
    if (sums.crc !== range.crc || batch[index]!.position !== range.position) return -1
    next++
    if (next === expected.length) break
    sums.ranges.push(range)
    sums.crc = 0
    sums.fromCharacters = range.characters
  }
  sums.crc = checksumOfRecords(form, batch, summed, to, sums.crc)
  return next
}

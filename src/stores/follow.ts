/**
 * Following a session without its lease (docs/spec.md §9.1, decisions 0063 and 0165): every
 * record is decoded, checked against one invariant checker in order and yielded from
 * `fromSeq` on, then every new record the same way. A backend that can tell of writes
 * (`watch`) wakes the follower at once; the others are polled. Either way a wake-up only
 * triggers a read from the next seq, so a lost or duplicated notice can neither skip nor
 * repeat an event.
 *
 * Nothing read is held: an event before `fromSeq` is checked and dropped, one after it is
 * yielded as soon as it is checked, so a follower costs the checker's state and one batch of
 * records whatever the log's length. A follow from after the projection checkpoint beside the
 * log starts from it (the checker's state at its seq, as `open` does: decision 0161) and reads
 * only the records after it; without one, or from before it, the log is checked from seq 0.
 */
import { createLogChecker, deepFreeze, isEventType, type SessionEvent } from '../core/index.js'
import type { Backend } from './backend.js'
import { type Checkpoint, parseCheckpoint } from './checkpoint.js'
import { decodeLine, decodeTrustedLine, resolveBlobs } from './codec.js'
import { createEventCheck, type EventCheck, locate, repairHint } from './event-check.js'

export type FollowLogOptions = {
  readonly fromSeq: number
  /** Aborted by the caller or by the store closing. */
  readonly signal: AbortSignal
  /** Longest wait between two reads (a backend that watches still reads this often). */
  readonly pollMs: number
}

/** Where the next read starts: the checker's state there, the seq, and where its record starts. */
type Cursor = {
  readonly check: EventCheck
  next: number
  /** Where the record of `next` starts (the end of the one before), if known. */
  position: number | undefined
}

export async function* followLog(
  backend: Backend,
  id: string,
  options: FollowLogOptions,
): AsyncGenerator<SessionEvent> {
  const { signal, fromSeq } = options
  let dirty = false
  let wake: (() => void) | undefined
  // Watch before the first read, so a write between that read and the wait is not missed.
  const unwatch = await backend.watch?.(id, () => {
    dirty = true
    wake?.()
  })
  try {
    const cursor = await startOf(backend, id, fromSeq)
    for (let isFirst = true; ; isFirst = false) {
      if (!isFirst) {
        if (!dirty) await pause(options.pollMs, signal, (resume) => (wake = resume))
        wake = undefined
      }
      if (signal.aborted) return
      dirty = false
      for await (const event of readOn(backend, id, cursor, signal)) {
        // Before `fromSeq`: checked (the events after depend on it), then dropped.
        if (event.seq < fromSeq) continue
        if (signal.aborted) return
        yield deepFreeze(event)
      }
    }
  } catch (error) {
    // Stopped under a read: the store closing ends its backend while a query may be in flight
    // (PostgreSQL: "Cannot use a pool after calling end"). The follow ends, as it would have
    // at its next wake-up; an error with the signal still live is the follower's to see.
    if (signal.aborted) return
    throw error
  } finally {
    await unwatch?.()
  }
}

/** Where a session's stored log ends, read as a follower reads it (`SessionStore.stat`). */
export type LogEnd = {
  /** The seq after the last complete record. */
  readonly nextSeq: number
  /** The turn the log ends inside, if any. */
  readonly openTurn?: number
}

/**
 * Reads session `id`'s log to its end as `followLog` does, holding none of it: from the
 * checkpoint beside the log when it fits, else from seq 0, every event after the start
 * checked. A torn last line is left out. Throws what `followLog` throws.
 */
export async function logEnd(backend: Backend, id: string): Promise<LogEnd> {
  const cursor = await startOf(backend, id, Number.POSITIVE_INFINITY)
  for await (const _event of readOn(backend, id, cursor)) {
    // Checked and dropped: only where the log ends is wanted.
  }
  const openTurn = cursor.check.checker.openTurn
  return { nextSeq: cursor.next, ...(openTurn === undefined ? {} : { openTurn }) }
}

/** The start of a read for events from `fromSeq`: after the checkpoint if it fits, else seq 0. */
async function startOf(backend: Backend, id: string, fromSeq: number): Promise<Cursor> {
  return (
    (fromSeq > 0 && (await checkpointCursor(backend, id, fromSeq))) || {
      check: createEventCheck(),
      next: 0,
      position: undefined,
    }
  )
}

/**
 * The complete records from the cursor on, each decoded, its blobs read back and checked,
 * advancing the cursor past it; a torn last line ends the read (it is read whole next time).
 * Throws `LogCorruptError` (located, with the repair hint) or `UNKNOWN_EVENT_TYPE`.
 */
async function* readOn(
  backend: Backend,
  id: string,
  cursor: Cursor,
  signal?: AbortSignal,
): AsyncGenerator<SessionEvent> {
  const hint = repairHint(id)
  const from = cursor.position
  for await (const records of backend.records(id, {
    fromSeq: cursor.next,
    ...(from === undefined ? {} : { fromPosition: from }),
  })) {
    if (signal?.aborted) return
    for (const record of records) {
      if (record.kind === 'torn') return
      let event: SessionEvent
      try {
        const line = decodeLine(record.text)
        if (line.blobs)
          await resolveBlobs(line, backend.blobs, backend.locate(id, record.where), hint)
        event = cursor.check.accept(line)
      } catch (error) {
        throw locate(error, backend.locate(id, record.where), hint)
      }
      cursor.next++
      cursor.position = record.position
      yield event
    }
  }
}

/**
 * A start after the checkpoint beside the log, for a follow from `fromSeq` past its seq: the
 * checkpoint's record must still be its seq and end at its position (what `loadTail` asks,
 * decision 0161), else undefined (the log is then checked from seq 0, as without one).
 */
async function checkpointCursor(
  backend: Backend,
  id: string,
  fromSeq: number,
): Promise<Cursor | undefined> {
  const checkpoint = await readCheckpoint(backend, id)
  if (!checkpoint || checkpoint.throughSeq >= fromSeq) return undefined
  const { throughSeq } = checkpoint
  try {
    for await (const records of backend.records(id, {
      fromSeq: throughSeq,
      throughSeq,
      ...(checkpoint.start === undefined ? {} : { fromPosition: checkpoint.start }),
    })) {
      const record = records[0]
      if (record?.kind !== 'line' || record.position !== checkpoint.position) return undefined
      if (!isRecordOf(record.text, throughSeq)) return undefined
      return {
        check: createEventCheck(createLogChecker({ allowOpenTurn: true }, checkpoint.checker)),
        next: throughSeq + 1,
        position: checkpoint.position,
      }
    }
  } catch {
    // The checkpoint's record cannot be read there: the read from seq 0 reports what is wrong.
  }
  return undefined
}

/** The checkpoint as stored, parsed; undefined when there is none or it cannot be read. */
async function readCheckpoint(backend: Backend, id: string): Promise<Checkpoint | undefined> {
  if (!backend.readCheckpoint) return undefined
  try {
    return parseCheckpoint(await backend.readCheckpoint(id))
  } catch {
    // An I/O failure on the checkpoint alone: follow as without one.
    return undefined
  }
}

/** The record is an event envelope of seq `seq`, of a type this rudder reads. */
function isRecordOf(text: string, seq: number): boolean {
  try {
    const line = decodeTrustedLine(text)
    return line.seq === seq && (isEventType(line.type) || line.ignorable === true)
  } catch {
    // Not an envelope.
    return false
  }
}

function pause(
  ms: number,
  signal: AbortSignal,
  onWake: (resume: () => void) => void,
): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    onWake(done)
  })
}

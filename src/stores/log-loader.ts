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
  LogCorruptError,
  type ProjectionState,
  RudderError,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js'
import type { Backend } from './backend.js'
import { type Checkpoint, checksumOf } from './checkpoint.js'
import { type DecodedLine, decodeLine, decodeTrustedLine, resolveBlobs } from './codec.js'
import { createEventCheck, locate, parseHeader, repairHint } from './event-check.js'

export type LoadedEvents = {
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
  /** `checksumOf` the stored lines of `events`, and their characters (for the next checkpoint). */
  readonly checksum: number
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
   * the record of its seq ends at its position and the checksum of the records read through
   * it is its checksum. Otherwise the log is loaded as without it (read again, checked in full).
   */
  readonly checkpoint?: Checkpoint | undefined
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
  const hint = repairHint(id)
  const checkpoint = options.throughSeq === undefined ? options.checkpoint : undefined
  let check = createEventCheck(undefined, { checkData: options.trusted !== true })
  const decode = options.trusted ? decodeTrustedLine : decodeLine
  const events: SessionEvent[] = []
  const positions: number[] = []
  let tornTail: LoadedEvents['tornTail']
  let checksum = 0
  let characters = 0
  /** Still reading events the checkpoint covers. */
  let isCovered = checkpoint !== undefined
  let coveredCharacters = 0
  const throughSeq = options.throughSeq ?? Number.POSITIVE_INFINITY
  const result = () => ({
    events,
    positions,
    openTurn: check.checker.openTurn,
    checker: check.checker,
    checksum,
    characters,
    ...(tornTail ? { tornTail } : {}),
    ...(checkpoint && !isCovered
      ? {
          restored: {
            projection: checkpoint.projection,
            throughSeq: checkpoint.throughSeq,
            characters: coveredCharacters,
          },
        }
      : {}),
  })
  // The checkpoint does not fit this log (stale in a way a prefix cannot be, damaged, or a
  // covered record edited): load as without it, so every problem is found and reported as usual.
  const withoutCheckpoint = () => loadEvents(backend, id, { ...options, checkpoint: undefined })
  try {
    for await (const batch of backend.records(
      id,
      options.throughSeq === undefined ? {} : { throughSeq },
    )) {
      for (const record of batch) {
        if (record.kind === 'torn') {
          if (isCovered) return withoutCheckpoint()
          tornTail = { location: record.location, bytes: record.bytes, position: record.position }
          continue
        }
        checksum = checksumOf(record.text, checksum)
        characters += record.text.length
        if (isCovered) {
          const line = coveredLine(record.text, events.length)
          if (!line) return withoutCheckpoint()
          if (line.blobs)
            await resolveBlobs(line, backend.blobs, backend.locate(id, record.where), hint)
          events.push(deepFreeze(line as SessionEvent))
          positions.push(record.position)
          if (line.seq === checkpoint!.throughSeq) {
            if (record.position !== checkpoint!.position || checksum !== checkpoint!.checksum)
              return withoutCheckpoint()
            isCovered = false
            coveredCharacters = characters
            check = createEventCheck(
              createLogChecker({ allowOpenTurn: true }, checkpoint!.checker),
              { checkData: options.trusted !== true },
            )
          }
          continue
        }
        try {
          const line = decode(record.text)
          if (line.blobs)
            await resolveBlobs(line, backend.blobs, backend.locate(id, record.where), hint)
          // Frozen here, in batches between event-loop turns, so opening the live session over
          // these events finds them frozen already and does no deep walk of its own.
          events.push(deepFreeze(check.accept(line)))
          positions.push(record.position)
        } catch (caught) {
          const location = backend.locate(id, record.where)
          const error = locate(caught, location, hint)
          if (!options.salvage || !isLogProblem(error)) throw error
          return { ...result(), problem: { location, message: (error as Error).message } }
        }
        if (events.length > throughSeq) return result()
      }
    }
  } catch (error) {
    // A covered record that cannot be read back as it was (a blob gone): report it as usual.
    if (isCovered && isLogProblem(error)) return withoutCheckpoint()
    // The backend itself could not read on (a damaged database page): salvage keeps the prefix.
    if (!options.salvage || !isLogProblem(error)) throw error
    const location = error instanceof LogCorruptError ? error.location : backend.describe(id)
    return { ...result(), problem: { location, message: (error as Error).message } }
  }
  // The log ends before the checkpoint's seq.
  if (isCovered) return withoutCheckpoint()
  return result()
}

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

/** Problems in the log itself, which salvage stops at (I/O failures and newer formats are not). */
function isLogProblem(error: unknown): boolean {
  return (
    error instanceof RudderError &&
    (error.code === 'LOG_CORRUPT' || error.code === 'UNKNOWN_EVENT_TYPE')
  )
}

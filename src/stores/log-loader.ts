/**
 * Loading a stored log: every record decoded, its blobs read back, and checked in order
 * (envelope, type, data, invariants), so the events handed to a live session are exactly what
 * was appended and form a valid log (an open last turn allowed).
 */
import {
  deepFreeze,
  type LogChecker,
  LogCorruptError,
  RudderError,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js'
import type { Backend } from './backend.js'
import { decodeLine, decodeTrustedLine, resolveBlobs } from './codec.js'
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
  const check = createEventCheck(undefined, { checkData: options.trusted !== true })
  const decode = options.trusted ? decodeTrustedLine : decodeLine
  const events: SessionEvent[] = []
  const positions: number[] = []
  let tornTail: LoadedEvents['tornTail']
  const throughSeq = options.throughSeq ?? Number.POSITIVE_INFINITY
  const result = () => ({
    events,
    positions,
    openTurn: check.checker.openTurn,
    checker: check.checker,
    ...(tornTail ? { tornTail } : {}),
  })
  try {
    for await (const batch of backend.records(
      id,
      options.throughSeq === undefined ? {} : { throughSeq },
    )) {
      for (const record of batch) {
        if (record.kind === 'torn') {
          tornTail = { location: record.location, bytes: record.bytes, position: record.position }
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
    // The backend itself could not read on (a damaged database page): salvage keeps the prefix.
    if (!options.salvage || !isLogProblem(error)) throw error
    const location = error instanceof LogCorruptError ? error.location : backend.describe(id)
    return { ...result(), problem: { location, message: (error as Error).message } }
  }
  return result()
}

/** Problems in the log itself, which salvage stops at (I/O failures and newer formats are not). */
function isLogProblem(error: unknown): boolean {
  return (
    error instanceof RudderError &&
    (error.code === 'LOG_CORRUPT' || error.code === 'UNKNOWN_EVENT_TYPE')
  )
}

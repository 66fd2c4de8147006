/**
 * Checking what a store reads back (docs/spec.md §3.1, §3.3): the header's format version and shape,
 * each event's type and data, and the log invariants, one event at a time.
 */
import {
  createLogChecker,
  FORMAT_VERSION,
  isEventType,
  LOG_CHECKER_SHAPE,
  type LogChecker,
  LogCorruptError,
  type LogProblem,
  RudderError,
  type SessionEvent,
  type SessionHeader,
} from '../core/index.js'
import type { DecodedLine } from './codec.js'
import { RecordProblem } from './record-problem.js'
import { describeShapeIssue } from './shape-check.js'
import {
  EVENT_DATA_CHECK,
  EVENT_DATA_FULL_CHECK,
  HEADER_CHECK,
  isCommonDataValid,
} from './stored-shapes.js'

/** The hint every refusal of a damaged log carries. */
export function repairHint(sessionId: string): string {
  return `run \`rudder sessions repair ${sessionId}\` to copy the valid prefix into a new session (the original is kept)`
}

/**
 * Parses and checks a header. Throws `FORMAT_TOO_NEW` for a newer format (checked first, so a
 * newer header of another shape still gets that message), `LogCorruptError` otherwise.
 */
export function parseHeader(
  text: string,
  location: string,
  expectedId: string | undefined,
): SessionHeader {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new LogCorruptError(
      location,
      `the header is not valid JSON (${(error as Error).message})`,
      {
        cause: error,
      },
    )
  }
  const version = (value as { formatVersion?: unknown } | null)?.formatVersion
  if (typeof version === 'number' && version > FORMAT_VERSION)
    throw new RudderError(
      'FORMAT_TOO_NEW',
      `${location}: the session was written by a newer rudder (log format ${version}; this rudder reads up to ${FORMAT_VERSION}); upgrade rudder to open it`,
    )
  const found = HEADER_CHECK(value)
  if (found) throw new LogCorruptError(location, describeShapeIssue(found, 'the header'))
  const header = value as SessionHeader
  if (expectedId !== undefined && header.id !== expectedId)
    throw new LogCorruptError(
      location,
      `the header names session ${JSON.stringify(header.id)} but the store keeps it as ${JSON.stringify(expectedId)}`,
    )
  return header
}

/** Checks decoded events in order; `accept` throws at the first one that is not valid. */
export interface EventCheck {
  /** Returns the line as a valid event, or throws a `RecordProblem`. */
  accept(line: DecodedLine): SessionEvent
  /** The invariant checker, advanced over every event accepted so far. */
  readonly checker: LogChecker
}

/**
 * `checker`: continue from a checker already advanced over the events before (a follower).
 * `checkData: false` skips the schema check of each event's data (a fork reading what this
 * store checked when it was written, decision 0067); types and invariants are still checked.
 */
export function createEventCheck(
  checker: LogChecker = createLogChecker({ allowOpenTurn: true }),
  options: { readonly checkData?: boolean } = {},
): EventCheck {
  return new LoadedEventCheck(checker, options.checkData ?? true)
}

/**
 * A class, not a closure per check: a store makes one at every load, and optimised code that
 * calls a closure holds that very closure, so the load path was compiled again at every load
 * (decision 0182). `accept` is one function for every check.
 */
class LoadedEventCheck implements EventCheck {
  readonly checker: LogChecker
  readonly #checkData: boolean

  constructor(checker: LogChecker, checkData: boolean) {
    this.checker = checker
    this.#checkData = checkData
  }

  accept(line: DecodedLine): SessionEvent {
    if (!isEventType(line.type)) {
      if (line.ignorable !== true)
        throw new RecordProblem(
          'UNKNOWN_EVENT_TYPE',
          `event type ${JSON.stringify(line.type)} is unknown to this rudder and not marked ignorable; it was written by a newer rudder or a plugin, so upgrade rudder (or load the plugin) to open this session`,
        )
    } else if (this.#checkData) {
      const found = EVENT_DATA_CHECK[line.type](line.data)
      if (found)
        throw new RecordProblem('LOG_CORRUPT', describeShapeIssue(found, `${line.type} data`))
    }
    const event = line as SessionEvent
    const problems = this.checker.record(event)
    if (problems.length > 0)
      throw new RecordProblem(
        'LOG_CORRUPT',
        problems.map((problem) => `${problem.message} [${problem.rule}]`).join('; '),
      )
    return event
  }
}

/**
 * A check held for the life of the process (see `LOG_CHECKER_SHAPE`): the hidden class of its
 * instances, which the optimised load loops check, then outlives every load (decision 0182).
 */
export const LOADED_EVENT_CHECK_SHAPE: EventCheck = new LoadedEventCheck(LOG_CHECKER_SHAPE, true)

/** Turns a `RecordProblem` into the error callers see, located and with the hint. */
export function locate(error: unknown, location: string, hint: string): unknown {
  if (!(error instanceof RecordProblem)) return error
  return error.code === 'LOG_CORRUPT'
    ? new LogCorruptError(location, `${error.message}; ${hint}`)
    : new RudderError('UNKNOWN_EVENT_TYPE', `${location}: ${error.message}`)
}

/** The error an append that breaks an invariant (docs/spec.md §3.3) gets, as the live session words it. */
export function invariantViolation(
  event: SessionEvent,
  problems: readonly LogProblem[],
): RudderError {
  return new RudderError(
    'INVARIANT_VIOLATION',
    `cannot append "${event.type}": ${problems.map((problem) => `${problem.message} [${problem.rule}]`).join('; ')}`,
  )
}

/**
 * Checks the data of an event about to be written, so a store never writes what it would
 * refuse to read. Throws `INVALID_EVENT_DATA` naming the type and field.
 */
export function checkForWrite(event: SessionEvent): void {
  if (isCommonDataValid(event.type, event.data) || !isEventType(event.type)) return
  // The quick verdict was asked above: the full check words what it found.
  const found = EVENT_DATA_FULL_CHECK[event.type](event.data)
  if (found)
    throw new RudderError(
      'INVALID_EVENT_DATA',
      `cannot append "${event.type}": ${describeShapeIssue(found, 'data')}; a store would refuse to read this event back, so fix the value before appending`,
    )
}

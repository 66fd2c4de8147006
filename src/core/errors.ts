/**
 * rudder's errors: one base class with a stable, closed `code`, and subclasses only where
 * callers handle a failure differently. Messages say what is wrong, where, and how to fix it.
 */

/** Every code a `RudderError` can carry. Stable: callers switch on these. */
export type RudderErrorCode =
  /** Data given to `append` is not plain JSON. */
  | 'INVALID_EVENT_DATA'
  /** A caller passed a value the API does not accept (thrown before any side effect). */
  | 'INVALID_INPUT'
  /** An event type that is neither a core type nor marked `ignorable`. */
  | 'UNKNOWN_EVENT_TYPE'
  /** An append would break an invariant of docs/spec.md §3.3. */
  | 'INVARIANT_VIOLATION'
  /** A stored log cannot be read as written. */
  | 'LOG_CORRUPT'
  /** A log written by a newer rudder. */
  | 'FORMAT_TOO_NEW'
  /** A call on an agent or store after `dispose()` / `close()`. */
  | 'DISPOSED'
  /** An operation that needs the agent idle (or a turn open) was called at the wrong time. */
  | 'WRONG_STATE'
  | 'CONFIG'
  | 'PROVIDER'
  | 'TOOL_ARGUMENTS'
  | 'STORE'
  | 'SESSION_BUSY'
  | 'SESSION_NOT_FOUND'
  /** A fork cut inside an open turn. */
  | 'OPEN_TURN'
  /** A failure inside rudder itself; the message says what broke. */
  | 'INTERNAL'

/** The base of every error rudder throws on purpose. */
export class RudderError extends Error {
  override name = 'RudderError'
  readonly code: RudderErrorCode

  constructor(code: RudderErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
  }
}

/** Malformed configuration: names the file (or variable) and key, and the fix. */
export class ConfigError extends RudderError {
  override name = 'ConfigError'
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG', message, options)
  }
}

/** A stored log that cannot be read: names the file, line or seq, and a hint. */
export class LogCorruptError extends RudderError {
  override name = 'LogCorruptError'
  readonly location: string
  constructor(location: string, message: string, options?: { cause?: unknown }) {
    super('LOG_CORRUPT', `${location}: ${message}`, options)
    this.location = location
  }
}

/** A provider failure outside a stream (streams report failures as `error` parts). */
export class ProviderError extends RudderError {
  override name = 'ProviderError'
  readonly retryable: boolean
  constructor(message: string, options: { retryable: boolean; cause?: unknown }) {
    super('PROVIDER', message, options)
    this.retryable = options.retryable
  }
}

/** Tool arguments from the model that do not match the tool's schema. */
export class ToolArgumentsError extends RudderError {
  override name = 'ToolArgumentsError'
  constructor(message: string, options?: { cause?: unknown }) {
    super('TOOL_ARGUMENTS', message, options)
  }
}

/** A store that could not read or write. */
export class StoreError extends RudderError {
  override name = 'StoreError'
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE', message, options)
  }
}

/** A second writer tried to open a session another live process holds. */
export class SessionBusyError extends RudderError {
  override name = 'SessionBusyError'
  readonly sessionId: string
  readonly pid: number
  /** The machine of the holder, when the lease names it (another host sharing the store). */
  readonly host?: string
  constructor(sessionId: string, pid: number, host?: string) {
    super(
      'SESSION_BUSY',
      `session ${sessionId} is open in process ${pid}${host === undefined ? '' : ` on host ${host}`}; close it there (or wait for it to exit) before writing to it here`,
    )
    this.sessionId = sessionId
    this.pid = pid
    if (host !== undefined) this.host = host
  }
}

/** Exhaustiveness guard for switches over tagged unions. */
export function assertNever(value: never, what = 'value'): never {
  throw new RudderError('INVALID_INPUT', `unexpected ${what}: ${JSON.stringify(value)}`)
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    // Unserializable (cyclic) throwables still need a message.
    return String(error)
  }
}

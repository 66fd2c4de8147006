/**
 * JSON-RPC errors an editor can act on. Every failure that leaves a handler goes through
 * `toRequestError`, so the client gets a code and a message that says what is wrong and how to
 * fix it, never the SDK's bare "Internal error" with a stack in its data.
 */
import { RequestError } from '@agentclientprotocol/sdk/unstable'
import { RudderError } from '../../index.js'

/** -32602: the request itself is wrong (a relative cwd, an unsupported block, a bad mode). */
export function invalidParams(message: string, data?: Record<string, unknown>): RequestError {
  return new RequestError(-32602, message, data)
}

/** -32002: the session named is not open on this connection, or not in the store. */
export function sessionNotFound(sessionId: string, message?: string): RequestError {
  return new RequestError(
    -32002,
    message ??
      `session ${JSON.stringify(sessionId)} is not open on this connection; open it with session/load or session/resume first (session/list shows the ids)`,
    { sessionId },
  )
}

/** Error codes of rudder that mean the caller asked for something that cannot be. */
const CALLER_MISTAKES: ReadonlySet<string> = new Set(['INVALID_INPUT', 'OPEN_TURN'])

/**
 * Maps anything thrown inside a handler to a `RequestError`: our own `RequestError`s pass
 * through, a missing session is -32002, caller mistakes -32602, and everything else -32603
 * carrying the message (and rudder's error code in `data.code`): a configuration error such as
 * a missing API key names the variable or file to fix.
 */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error
  if (error instanceof RudderError) {
    if (error.code === 'SESSION_NOT_FOUND')
      return new RequestError(-32002, error.message, { code: error.code })
    if (CALLER_MISTAKES.has(error.code))
      return new RequestError(-32602, error.message, { code: error.code })
    return new RequestError(-32603, error.message, { code: error.code })
  }
  if (error instanceof TypeError) return new RequestError(-32602, error.message)
  const message = error instanceof Error ? error.message : String(error)
  return new RequestError(-32603, `rudder failed unexpectedly: ${message}`)
}

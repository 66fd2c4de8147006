/**
 * The `openai` SDK's errors as the final error part of a stream.
 */
import { APIConnectionError, APIError, APIUserAbortError } from 'openai'
import { messageOf } from '../../core/index.js'
import {
  abortedPart,
  connectionFailurePart,
  type ErrorPart,
  httpFailurePart,
  invalidResponsePart,
} from '../failure.js'
import { isNetworkError } from '../network-errors.js'

/** The error part for anything the request or its stream threw. Never throws. */
export function chatFailurePart(error: unknown, provider: string, signal: AbortSignal): ErrorPart {
  if (signal.aborted || error instanceof APIUserAbortError) return abortedPart(provider)
  if (error instanceof APIConnectionError || isNetworkError(error))
    return connectionFailurePart(provider, error)
  if (error instanceof APIError) {
    const body = error.error as { message?: unknown } | undefined
    const code = error.code ?? error.type
    return httpFailurePart({
      provider,
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(error.headers === undefined ? {} : { headers: error.headers }),
      ...(code ? { code: String(code) } : {}),
      message: typeof body?.message === 'string' ? body.message : error.message,
    })
  }
  // The SDK parses each event with JSON.parse: a malformed event line surfaces here.
  if (error instanceof SyntaxError)
    return invalidResponsePart(provider, `an event is not valid JSON (${error.message})`)
  return {
    type: 'error',
    code: 'provider-error',
    message: `${provider}: the request failed: ${messageOf(error)}`,
    retryable: false,
  }
}

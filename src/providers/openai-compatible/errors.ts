/**
 * The `openai` SDK's errors as the final error part of a stream.
 */
import { messageOf } from '../../core/index.js'
import {
  abortedPart,
  connectionFailurePart,
  type ErrorPart,
  type FailureContext,
  httpFailurePart,
  timeoutPart,
} from '../failure.js'
import { isNetworkError } from '../network-errors.js'

/** The SDK's error classes; the SDK itself is loaded only when a request is made. */
export type OpenAISdk = Pick<
  typeof import('openai'),
  'APIConnectionError' | 'APIConnectionTimeoutError' | 'APIError' | 'APIUserAbortError'
>

/**
 * The error part for anything the request or its stream threw. `sdk` is absent when loading
 * the SDK itself failed. Never throws.
 */
export function chatFailurePart(
  error: unknown,
  context: FailureContext,
  sdk?: OpenAISdk,
): ErrorPart {
  const { provider, signal, endpoint } = context
  if (signal.aborted || (sdk && error instanceof sdk.APIUserAbortError))
    return abortedPart(provider)
  // The SDK's own timer (`timeout`) ran out before the response headers arrived.
  if (sdk && error instanceof sdk.APIConnectionTimeoutError)
    return timeoutPart(provider, endpoint, context.timeoutMs)
  if ((sdk && error instanceof sdk.APIConnectionError) || isNetworkError(error))
    return connectionFailurePart(provider, error, endpoint)
  if (sdk && error instanceof sdk.APIError) {
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
  return {
    type: 'error',
    code: 'provider-error',
    message: `${provider}: the request failed: ${messageOf(error)}`,
    retryable: false,
  }
}

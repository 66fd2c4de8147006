/**
 * The Anthropic SDK's errors as the final error part of a stream.
 */
import { messageOf } from '../../core/index.js'
import {
  abortedPart,
  connectionFailurePart,
  type ErrorPart,
  type FailureContext,
  httpFailurePart,
  sentences,
  timeoutPart,
} from '../failure.js'
import { isNetworkError } from '../network-errors.js'

/** The SDK's error classes; the SDK itself is loaded only when a request is made. */
export type AnthropicSdk = Pick<
  typeof import('@anthropic-ai/sdk'),
  'APIConnectionError' | 'APIConnectionTimeoutError' | 'APIError' | 'APIUserAbortError'
>

/**
 * The error part for anything the request or its stream threw. `sdk` is absent when loading
 * the SDK itself failed. Never throws.
 */
export function messagesFailurePart(
  error: unknown,
  context: FailureContext,
  sdk?: AnthropicSdk,
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
    // An `error` event inside a 200 stream has no status; its type says what happened
    // (`overloaded_error`, `api_error`, …).
    const code = error.type ?? error.errorCode
    return httpFailurePart({
      provider,
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(error.headers === undefined ? {} : { headers: error.headers }),
      ...(code ? { code } : {}),
      message: error.apiMessage ?? error.message,
    })
  }
  const message = messageOf(error)
  if (/authentication/i.test(message))
    return {
      type: 'error',
      code: 'authentication',
      message: sentences(
        `${provider}: ${message}`,
        'Pass apiKey to anthropic(), or set ANTHROPIC_API_KEY.',
      ),
      retryable: false,
    }
  return {
    type: 'error',
    code: 'provider-error',
    message: `${provider}: the request failed: ${message}`,
    retryable: false,
  }
}

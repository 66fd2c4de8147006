/**
 * Turning a failed model call into the one final `error` part of a stream (docs/spec.md §8): which
 * failures are worth retrying, when the prompt was too long, and how long the provider asked us
 * to wait. Shared by every HTTP adapter; the adapters only extract a `HttpFailure` from their
 * SDK's error classes.
 */
import { describeEndpoint, type Endpoint } from './base-url.js'
import { describeNetworkError } from './network-errors.js'
import type { StreamPart } from './provider.js'

/** The `error` stream part. */
export type ErrorPart = Extract<StreamPart, { readonly type: 'error' }>

/** What an adapter's failure message names: who, where, and the limit that may have been hit. */
export type FailureContext = {
  readonly provider: string
  /** The caller's signal: after it aborted, every failure is `aborted`. */
  readonly signal: AbortSignal
  readonly endpoint: Endpoint
  /** The wait for the response headers, for the `timeout` message. */
  readonly timeoutMs: number
}

/** What an adapter knows about a failed HTTP exchange (before or during streaming). */
export type HttpFailure = {
  /** The provider id, for the message (`openai`, `deepseek`, `anthropic`, …). */
  readonly provider: string
  /** HTTP status; undefined for an error event sent inside a 200 stream. */
  readonly status?: number
  readonly headers?: Headers
  /** The provider's machine-readable code or type (`rate_limit_exceeded`, `overloaded_error`). */
  readonly code?: string
  /** The provider's human-readable message. */
  readonly message: string
}

/** `code` of the error part when the provider says the prompt does not fit the context window. */
export const CONTEXT_OVERFLOW = 'context-overflow'

// How providers word "the prompt is too long" (OpenAI, DeepSeek, vLLM, Anthropic, llama.cpp).
const OVERFLOW_PATTERNS =
  /prompt is too long|maximum context length|context[_ ]length[_ ]exceeded|context window|exceeds? the context|input is too long|too many (input )?tokens/i

// Codes of error events inside a stream that mean the service is briefly unable to answer
// (Anthropic's `overloaded_error`, `api_error`, …; OpenAI's `server_error`): retrying helps.
const TRANSIENT_CODES = new Set([
  'overloaded_error',
  'api_error',
  'rate_limit_error',
  'timeout_error',
  'server_error',
  'rate_limit_exceeded',
])

/** Whether an HTTP status is worth retrying: 408, 429 and every 5xx (docs/spec.md §8). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}

/**
 * How long the provider asked us to wait, from `retry-after-ms` (milliseconds) or `retry-after`
 * (seconds, or an HTTP date). Undefined when neither header is usable.
 */
export function retryAfterMsOf(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const milliseconds = headers.get('retry-after-ms')
  if (milliseconds !== null && milliseconds.trim() !== '') {
    const value = Number(milliseconds)
    if (Number.isFinite(value) && value >= 0) return Math.round(value)
  }
  const after = headers.get('retry-after')
  if (after === null || after.trim() === '') return undefined
  const seconds = Number(after)
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Whether a failure says the prompt is longer than the model's context window. */
export function isContextOverflow(failure: HttpFailure): boolean {
  if (failure.status === 413) return true
  if (failure.code === 'context_length_exceeded') return true
  const isClientError = failure.status === undefined || failure.status === 400
  return isClientError && OVERFLOW_PATTERNS.test(failure.message)
}

/** The error part for a failed HTTP exchange or an error event inside the stream. */
export function httpFailurePart(failure: HttpFailure): ErrorPart {
  const where =
    failure.status === undefined ? 'error event in the stream' : `HTTP ${failure.status}`
  const code = failure.code ? ` (${failure.code})` : ''
  const base = `${failure.provider}: ${where}${code}: ${failure.message}`
  if (isContextOverflow(failure)) {
    return {
      type: 'error',
      code: CONTEXT_OVERFLOW,
      message: sentences(
        base,
        "The prompt does not fit the model's context window: compact the conversation or use a model with a larger window.",
      ),
      retryable: false,
    }
  }
  const retryAfterMs = retryAfterMsOf(failure.headers)
  return {
    type: 'error',
    code:
      failure.code || (failure.status === undefined ? 'stream-error' : `http-${failure.status}`),
    message: sentences(base, hintFor(failure.status)),
    retryable: isRetryable(failure),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  }
}

function isRetryable(failure: HttpFailure): boolean {
  // The provider may say explicitly whether a retry can help; the SDKs obey this header too.
  const says = failure.headers?.get('x-should-retry')
  if (says === 'true') return true
  if (says === 'false') return false
  if (failure.status !== undefined) return isRetryableStatus(failure.status)
  if (failure.code === undefined) return false
  // Some services (OpenRouter) put an HTTP status as the code of an error sent inside the stream.
  if (/^\d{3}$/.test(failure.code)) return isRetryableStatus(Number(failure.code))
  return TRANSIENT_CODES.has(failure.code)
}

function hintFor(status: number | undefined): string {
  switch (status) {
    case 401:
    case 403:
      return 'Check the API key (and that it belongs to this provider and base URL).'
    case 404:
      return 'Check the model name and the base URL.'
    default:
      return ''
  }
}

/**
 * Joins sentences with one space, ending each but the last with a period unless it already ends
 * with punctuation, so a provider's own "…api-keys." never becomes "…api-keys..". Empty ones are
 * left out.
 */
export function sentences(...texts: string[]): string {
  const kept = texts.map((text) => text.trim()).filter((text) => text !== '')
  return kept
    .map((text, index) => (index === kept.length - 1 || /[.!?]$/.test(text) ? text : `${text}.`))
    .join(' ')
}

/**
 * The error part for a connection that failed or broke before or during streaming, naming
 * where requests go and what chose that address.
 */
export function connectionFailurePart(
  provider: string,
  error: unknown,
  endpoint: Endpoint,
): ErrorPart {
  return {
    type: 'error',
    code: 'connection',
    message: sentences(
      `${provider}: cannot reach ${describeEndpoint(endpoint)}: ${describeNetworkError(error)}`,
      'Check that the server is running and the base URL is right; retrying may help.',
    ),
    retryable: true,
  }
}

/** The error part for a server that did not start answering within `timeoutMs`. */
export function timeoutPart(provider: string, endpoint: Endpoint, timeoutMs: number): ErrorPart {
  return {
    type: 'error',
    code: 'timeout',
    message: sentences(
      `${provider}: no response from ${describeEndpoint(endpoint)} within ${durationOf(timeoutMs)}`,
      'The server may be down or overloaded; retrying may help, and the limit is the provider setting timeoutMs.',
    ),
    retryable: true,
  }
}

/** `60 s`, `1.5 s`, `250 ms`: a limit as people read it. */
export function durationOf(milliseconds: number): string {
  if (milliseconds < 1000) return `${milliseconds} ms`
  return `${Number((milliseconds / 1000).toFixed(1))} s`
}

/** The error part after the caller aborted the request. */
export function abortedPart(provider: string): ErrorPart {
  return {
    type: 'error',
    code: 'aborted',
    message: `${provider}: the request was aborted`,
    retryable: false,
  }
}

/** The error part for a stream the adapter could not read (not the provider's wire format). */
export function invalidResponsePart(provider: string, detail: string): ErrorPart {
  return {
    type: 'error',
    code: 'invalid-response',
    message: sentences(
      `${provider}: the server sent a response rudder cannot read: ${detail}`,
      "Check that the base URL points at a server speaking this provider's API.",
    ),
    retryable: false,
  }
}

/** The error part for a stream that stopped before the provider said the response was complete. */
export function incompleteResponsePart(provider: string): ErrorPart {
  return {
    type: 'error',
    code: 'incomplete-response',
    message: `${provider}: the response stream ended before the model finished (the connection was probably cut); retrying the request may help`,
    retryable: true,
  }
}

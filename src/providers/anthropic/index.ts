/**
 * `anthropic()`: a provider for the Anthropic Messages API, on the official SDK.
 */
import { checkBaseURL, endpointOf } from '../base-url.js'
import { findKnownModel } from '../known-models.js'
import { streamFrom } from '../lazy-stream.js'
import type { Provider } from '../provider.js'
import { resolveLimits, type StreamLimitOptions } from '../stream-guard.js'
import type { Connection, MessagesSetup } from './messages-stream.js'

export type AnthropicOptions = StreamLimitOptions & {
  /** The model used when a request names none (`claude-sonnet-5-5`). */
  readonly model: string
  /** The API key. Default: the SDK's (`ANTHROPIC_API_KEY`, then its own credential lookup). */
  readonly apiKey?: string
  /** Default: the SDK's (`ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`). */
  readonly baseURL?: string
  /**
   * What chose `baseURL` (a config file, `ANTHROPIC_BASE_URL`, …), named by connection and
   * timeout errors. Default: "the baseURL option".
   */
  readonly baseURLSource?: string
  /** The provider id in the log. Default `anthropic`. */
  readonly id?: string
  /**
   * `max_tokens` when `params.maxTokens` is not set (the API requires one). Default: the model's
   * output limit from the known-model table, else 8192.
   */
  readonly maxTokens?: number
  /** Extra HTTP headers on every request (an `anthropic-beta` flag, say). */
  readonly headers?: Readonly<Record<string, string>>
  /** The `fetch` to use. Default: the global one. */
  readonly fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
}

/** `max_tokens` for a model that is not in the known-model table. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192

/**
 * Creates an Anthropic provider. Throws `ConfigError` at once when the base URL is not an http(s)
 * URL or a limit is not a positive whole number.
 *
 * The stream never throws: HTTP failures, `error` events (`overloaded_error` is retryable),
 * connection errors, malformed events and aborts end it with one `error` part (`code:
 * 'context-overflow'` when the prompt is too long; `retryAfterMs` from the response headers).
 * Limits: no response headers within `timeoutMs` is `timeout`, no event but pings for
 * `idleTimeoutMs` is `idle-timeout` (both retryable), more than `maxResponseChars` is
 * `response-too-large`.
 * The SDK's own retries are off: the agent retries and announces each attempt. Aborting the
 * signal, or stopping iteration early, aborts the HTTP request.
 */
export function anthropic(options: AnthropicOptions): Provider {
  const id = options.id ?? 'anthropic'
  checkBaseURL('anthropic', options.baseURL, 'https://api.anthropic.com')
  const limits = resolveLimits(`anthropic (${id})`, options)
  const endpoint = endpointOf(options, 'ANTHROPIC_BASE_URL', 'https://api.anthropic.com')
  // The SDK is loaded on the first request, so a process that never calls this provider
  // does not pay for loading it.
  let connection: Promise<Connection> | undefined
  const connect = () => {
    connection ??= import('@anthropic-ai/sdk').then((sdk) => ({
      sdk,
      client: new sdk.default({
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
        // Bounds the wait for the response headers; the body is watched by the idle timeout.
        timeout: limits.timeoutMs,
        ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        maxRetries: 0,
        // The SDK would print unparseable events to the console; they become error parts instead.
        logLevel: 'off',
      }),
    }))
    return connection
  }
  const maxTokensFor = (model: string) =>
    options.maxTokens ??
    findKnownModel(model, 'anthropic')?.maxOutputTokens ??
    DEFAULT_ANTHROPIC_MAX_TOKENS

  const setup: MessagesSetup = { connect, id, endpoint, limits }
  return {
    id,
    model: options.model,
    // The request, response and error modules load with the first request, like the SDK.
    stream: (request, signal) =>
      streamFrom(
        () => import('./messages-stream.js'),
        (module) => module.streamMessages(setup, maxTokensFor(request.model), request, signal),
      ),
  }
}

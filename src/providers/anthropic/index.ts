/**
 * `anthropic()`: a provider for the Anthropic Messages API, on the official SDK.
 */
import type Anthropic from '@anthropic-ai/sdk'
import { checkBaseURL } from '../base-url.js'
import { findKnownModel } from '../known-models.js'
import type { ModelRequest, Provider, StreamPart } from '../provider.js'
import { streamThroughSdk } from '../sdk-stream.js'
import { type AnthropicSdk, messagesFailurePart } from './errors.js'
import { toMessagesRequest } from './request.js'
import { readMessageStream } from './response.js'

export type AnthropicOptions = {
  /** The model used when a request names none (`claude-sonnet-5-5`). */
  readonly model: string
  /** The API key. Default: the SDK's (`ANTHROPIC_API_KEY`, then its own credential lookup). */
  readonly apiKey?: string
  /** Default: the SDK's (`ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`). */
  readonly baseURL?: string
  /** The provider id in the log. Default `anthropic`. */
  readonly id?: string
  /**
   * `max_tokens` when `params.maxTokens` is not set (the API requires one). Default: the model's
   * output limit from the known-model table, else 8192.
   */
  readonly maxTokens?: number
  /** Extra HTTP headers on every request (an `anthropic-beta` flag, say). */
  readonly headers?: Readonly<Record<string, string>>
  /** Milliseconds to wait for the server before the request fails (retryable). SDK default otherwise. */
  readonly timeoutMs?: number
  /** The `fetch` to use. Default: the global one. */
  readonly fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
}

/** `max_tokens` for a model that is not in the known-model table. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192

/**
 * Creates an Anthropic provider. Throws `ConfigError` at once when the base URL is not an http(s) URL.
 *
 * The stream never throws: HTTP failures, `error` events (`overloaded_error` is retryable),
 * connection errors, malformed events and aborts end it with one `error` part (`code:
 * 'context-overflow'` when the prompt is too long; `retryAfterMs` from the response headers).
 * The SDK's own retries are off: the agent retries and announces each attempt. Aborting the
 * signal, or stopping iteration early, aborts the HTTP request.
 */
export function anthropic(options: AnthropicOptions): Provider {
  const id = options.id ?? 'anthropic'
  checkBaseURL('anthropic', options.baseURL, 'https://api.anthropic.com')
  // The SDK is loaded on the first request, so a process that never calls this provider
  // does not pay for loading it.
  let connection: Promise<Connection> | undefined
  const connect = () => {
    connection ??= import('@anthropic-ai/sdk').then((sdk) => ({
      sdk,
      client: new sdk.default({
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
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

  return {
    id,
    model: options.model,
    stream: (request, signal) =>
      streamMessages(connect, id, maxTokensFor(request.model), request, signal),
  }
}

type Connection = { readonly sdk: AnthropicSdk; readonly client: Anthropic }

function streamMessages(
  connect: () => Promise<Connection>,
  id: string,
  maxTokens: number,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart, void, undefined> {
  return streamThroughSdk({
    id,
    signal,
    connect,
    send: ({ client }, abort) =>
      client.messages.create(toMessagesRequest(request, maxTokens), { signal: abort }),
    read: (events) => readMessageStream(events, id, signal),
    fail: (error, sdk) => messagesFailurePart(error, id, signal, sdk),
  })
}

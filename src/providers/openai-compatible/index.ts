/**
 * `openaiCompatible()`: a provider for any server speaking OpenAI Chat Completions (OpenAI,
 * DeepSeek, Ollama, vLLM, llama.cpp), on the official `openai` SDK.
 */
import { ConfigError } from '../../core/index.js'
import { checkBaseURL, endpointOf } from '../base-url.js'
import { streamFrom } from '../lazy-stream.js'
import type { Provider } from '../provider.js'
import { resolveLimits, type StreamLimitOptions } from '../stream-guard.js'
import type { ChatSetup, Connection } from './chat-stream.js'
import { type FetchFunction, withNormalizedErrorBodies } from './error-bodies.js'
import type { ChatDialect } from './request.js'

export type OpenAICompatibleOptions = StreamLimitOptions & {
  /** The model used when a request names none (`gpt-4.1`, `deepseek-chat`, `qwen3:8b`). */
  readonly model: string
  /**
   * The server's base URL, including the version path (`https://api.deepseek.com`,
   * `http://localhost:11434/v1`). Default: the SDK's (`OPENAI_BASE_URL`, else OpenAI).
   */
  readonly baseURL?: string
  /**
   * The API key, sent as a bearer token. Default: the SDK's (`OPENAI_API_KEY`). A local server
   * that checks no key (Ollama, vLLM without `--api-key`) accepts any string.
   */
  readonly apiKey?: string
  /** The provider id in the log (`openai`, `deepseek`, `ollama`, …). Default `openai`. */
  readonly id?: string
  /**
   * The field that carries `params.maxTokens`. Default: `max_completion_tokens` for OpenAI's own
   * API (its reasoning models reject `max_tokens`), `max_tokens` for every other server.
   */
  readonly maxTokensField?: ChatDialect['maxTokensField']
  /**
   * Send thinking back as `reasoning_content` on assistant messages. DeepSeek's thinking mode
   * needs it after tool calls (and ignores it elsewhere); OpenAI does not accept the field.
   * Default: true for `api.deepseek.com`, false otherwise.
   */
  readonly sendReasoning?: boolean
  /**
   * What chose `baseURL` (a config file, `DEEPSEEK_BASE_URL`, …), named by connection and timeout
   * errors so the user knows what to fix. Default: "the baseURL option".
   */
  readonly baseURLSource?: string
  /** Extra HTTP headers on every request. */
  readonly headers?: Readonly<Record<string, string>>
  /** The `fetch` to use. Default: the global one. */
  readonly fetch?: FetchFunction
}

/**
 * Creates an OpenAI-compatible provider. Throws `ConfigError` at once when no API key is given
 * and `OPENAI_API_KEY` is unset, the base URL is not an http(s) URL, or a limit is not a
 * positive whole number.
 *
 * The stream never throws: HTTP failures, connection errors, malformed events and aborts end it
 * with one `error` part (`retryable` for connection errors, timeouts, 408, 429 and 5xx; `code:
 * 'context-overflow'` when the prompt is too long; `retryAfterMs` from the response headers).
 * Limits: no response headers within `timeoutMs` is `timeout`, no event for `idleTimeoutMs` is
 * `idle-timeout` (both retryable), more than `maxResponseChars` is `response-too-large`.
 * The SDK's own retries are off: the agent retries and announces each attempt. Aborting the
 * signal, or stopping iteration early, aborts the HTTP request.
 */
export function openaiCompatible(options: OpenAICompatibleOptions): Provider {
  const id = options.id ?? 'openai'
  checkBaseURL('openaiCompatible', options.baseURL, 'http://localhost:11434/v1')
  // The SDK is loaded on the first request, so a process that never calls this provider
  // (a scripted run, `--version`) does not pay for loading it.
  if (options.apiKey === undefined && !process.env.OPENAI_API_KEY) {
    throw new ConfigError(
      `openaiCompatible (${id}): no API key. Pass apiKey, or set OPENAI_API_KEY; a local server that checks no key accepts any string.`,
    )
  }
  const limits = resolveLimits(`openaiCompatible (${id})`, options)
  const endpoint = endpointOf(options, 'OPENAI_BASE_URL', 'https://api.openai.com/v1')
  const host = hostOf(endpoint.url)
  let connection: Promise<Connection> | undefined
  const connect = () => {
    connection ??= import('openai').then((sdk) => ({
      sdk,
      client: new sdk.default({
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
        // Bounds the wait for the response headers; the body is watched by the idle timeout.
        timeout: limits.timeoutMs,
        ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
        maxRetries: 0,
        // The SDK would print unparseable events to the console; they become error parts instead.
        logLevel: 'off',
        fetch: withNormalizedErrorBodies(options.fetch ?? globalThis.fetch),
      }),
    }))
    return connection
  }
  const dialect: ChatDialect = {
    maxTokensField:
      options.maxTokensField ??
      (host === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens'),
    sendReasoning: options.sendReasoning ?? host === 'api.deepseek.com',
  }

  const setup: ChatSetup = { connect, id, dialect, endpoint, limits }
  return {
    id,
    model: options.model,
    // The request, response and error modules load with the first request, like the SDK.
    stream: (request, signal) =>
      streamFrom(
        () => import('./chat-stream.js'),
        (module) => module.streamChat(setup, request, signal),
      ),
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    // Checked in the factory; an SDK default that does not parse has no special host.
    return ''
  }
}

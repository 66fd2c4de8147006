/**
 * Limits on one streamed response, so that no server or model can hang a run or grow memory
 * without bound: how long the response may be silent between events (the idle timeout), and how
 * much text, thinking and tool-call content it may carry (the size cap). Keep-alive comments
 * and pings are not progress: a server that sends only those is stalled.
 */
import { ConfigError } from '../core/index.js'
import { describeEndpoint, type Endpoint } from './base-url.js'
import { durationOf, type ErrorPart, sentences } from './failure.js'

/** Milliseconds to wait for the response headers (connect included). */
export const DEFAULT_TIMEOUT_MS = 60_000
/** Milliseconds of silence allowed between events once the response has started. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000
/**
 * Characters of text, thinking and tool calls one response may carry: about a million tokens,
 * several times the output limit of any model rudder knows.
 */
export const DEFAULT_MAX_RESPONSE_CHARS = 4_000_000
/** The longest time a Node timer can wait (about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647

/** The limits an adapter applies to every response. */
export type ResponseLimits = {
  readonly idleTimeoutMs: number
  readonly maxResponseChars: number
}

/** A limit that stopped a stream; the adapter ends the stream with `part`. */
export class StreamLimitError extends Error {
  constructor(readonly part: ErrorPart) {
    super(part.message)
    this.name = 'StreamLimitError'
  }
}

/**
 * Watches one response. The reader of the wire calls `progress` for every event that carries
 * something (the size of its content); `watch` starts the idle timer once the headers are in.
 * When the timer expires, `failure` is set and `onIdle` is called to end the read.
 */
export class ResponseGuard {
  readonly #limits: ResponseLimits
  readonly #provider: string
  readonly #endpoint: Endpoint
  #spent = 0
  #lastProgress = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  #failure: StreamLimitError | undefined

  constructor(options: {
    readonly limits: ResponseLimits
    readonly provider: string
    readonly endpoint: Endpoint
  }) {
    this.#limits = options.limits
    this.#provider = options.provider
    this.#endpoint = options.endpoint
  }

  /** Why the stream was stopped, once the idle timer has expired. */
  get failure(): StreamLimitError | undefined {
    return this.#failure
  }

  /** Starts the idle timer; `onIdle` must make the pending read end (cancel the body). */
  watch(onIdle: () => void): void {
    this.#lastProgress = performance.now()
    const check = () => {
      const quiet = performance.now() - this.#lastProgress
      const left = this.#limits.idleTimeoutMs - quiet
      if (left > 0) {
        this.#timer = setTimeout(check, Math.ceil(left))
        return
      }
      this.#timer = undefined
      this.#failure = new StreamLimitError(this.#idlePart())
      onIdle()
    }
    this.#timer = setTimeout(check, this.#limits.idleTimeoutMs)
  }

  /**
   * Records an event that carries `chars` characters of content (an event counts at least one,
   * so an endless stream of empty events ends too). Throws `StreamLimitError` past the cap.
   */
  progress(chars: number): void {
    this.#lastProgress = performance.now()
    this.#spent += Math.max(1, chars)
    if (this.#spent > this.#limits.maxResponseChars)
      throw new StreamLimitError(tooLargePart(this.#provider, this.#limits.maxResponseChars))
  }

  /** Stops the idle timer. Idempotent. */
  end(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #idlePart(): ErrorPart {
    const limit = durationOf(this.#limits.idleTimeoutMs)
    return {
      type: 'error',
      code: 'idle-timeout',
      message: sentences(
        `${this.#provider}: the response from ${describeEndpoint(this.#endpoint)} stalled: nothing arrived for ${limit}`,
        'Retrying may help; the limit is the provider setting idleTimeoutMs.',
      ),
      retryable: true,
    }
  }
}

/**
 * The error part for a response larger than the cap. Not retryable: a model that talks without
 * end (repeating itself, say) would most likely do it again, at a cost.
 */
export function tooLargePart(provider: string, maxChars: number): ErrorPart {
  return {
    type: 'error',
    code: 'response-too-large',
    message: sentences(
      `${provider}: the response passed ${maxChars.toLocaleString('en-US')} characters of text, thinking and tool calls, so rudder stopped reading it`,
      'The model was probably repeating itself. Ask for less, or raise the provider setting maxResponseChars.',
    ),
    retryable: false,
  }
}

/** The limit options both adapters take; each has a default. */
export type StreamLimitOptions = {
  /** Milliseconds to wait for the response headers, connect included. Default 60 000. */
  readonly timeoutMs?: number
  /** Milliseconds of silence allowed between events of a response. Default 120 000. */
  readonly idleTimeoutMs?: number
  /** Characters of text, thinking and tool calls one response may carry. Default 4 000 000. */
  readonly maxResponseChars?: number
}

/**
 * The limits with their defaults filled in. Throws `ConfigError` naming `who` and the option
 * when a value is not a positive whole number (or a timeout is longer than a timer can wait).
 */
export function resolveLimits(
  who: string,
  options: StreamLimitOptions,
): Required<StreamLimitOptions> {
  const limits = {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    maxResponseChars: options.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS,
  }
  for (const [name, value] of Object.entries(limits)) {
    const isTime = name.endsWith('Ms')
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new ConfigError(
        `${who}: ${name} must be a positive whole number of ${isTime ? 'milliseconds' : 'characters'}, not ${value}`,
      )
    if (isTime && value > MAX_TIMER_MS)
      throw new ConfigError(
        `${who}: ${name} must be at most ${MAX_TIMER_MS} (about 24 days), not ${value}`,
      )
  }
  return limits
}

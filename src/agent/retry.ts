/**
 * The retry policy for retryable provider failures (docs/spec.md §8): exponential backoff with jitter,
 * honouring the provider's `retry-after`.
 */

export type RetryOptions = {
  /** Retries after the first attempt (default 4). 0 disables retrying. */
  readonly maxRetries?: number
  /** Delay before the first retry, before jitter (default 1000 ms). */
  readonly baseDelayMs?: number
  /** Upper bound of the backoff (default 30 000 ms); a longer `retry-after` is still honoured. */
  readonly maxDelayMs?: number
  /** Source of jitter in [0, 1) (default Math.random). */
  readonly random?: () => number
}

export type RetryPolicy = Required<RetryOptions>

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  return {
    maxRetries: options.maxRetries ?? 4,
    baseDelayMs: options.baseDelayMs ?? 1000,
    maxDelayMs: options.maxDelayMs ?? 30_000,
    random: options.random ?? Math.random,
  }
}

/**
 * The delay before retry number `retry` (1 for the first retry). A provider's `retry-after`
 * wins; otherwise the backoff doubles each time, with "equal jitter" between half and all of it
 * so that many clients do not retry in step.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0)
    return retryAfterMs
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return Math.round(backoff / 2 + policy.random() * (backoff / 2))
}

/** Waits `ms`, or less if `signal` aborts first. Never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

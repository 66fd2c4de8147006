/**
 * The configuration of waiting and retrying: per provider, how long to wait for a response to
 * start (`timeoutMs`), how long a started response may stay silent (`idleTimeoutMs`) and how much
 * it may carry (`maxResponseChars`); at the top level, how often and how patiently the agent
 * retries a failed request (`retry`). None of these can send a key anywhere or loosen a policy,
 * so a project's config file may set them like the user's.
 */
import type { z } from 'zod'
import type { RetryOptions } from '../agent/index.js'
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_CHARS,
  DEFAULT_TIMEOUT_MS,
  MAX_TIMER_MS,
  type StreamLimitOptions,
} from '../providers/stream-guard.js'
import { type Zod, zodNow } from '../tools/lazy-zod.js'

const milliseconds = (what: string, z: Zod = zodNow()) =>
  z
    .number()
    .int(`must be a whole number of milliseconds (${what})`)
    .positive(`must be more than 0 milliseconds (${what})`)
    .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} milliseconds (about 24 days)`)

/**
 * The schemas of this file, built on first use rather than at import (bench B10): a run
 * without config files never builds them.
 */
function buildNetworkSchemas(z: Zod = zodNow()) {
  return {
    /** Keys of one entry under `providers`, spread into its schema. */
    providerLimitsShape: {
      /** Milliseconds to wait for the response to start (connect and headers). */
      timeoutMs: milliseconds(`default ${DEFAULT_TIMEOUT_MS}`).optional(),
      /** Milliseconds a started response may send nothing but keep-alives. */
      idleTimeoutMs: milliseconds(`default ${DEFAULT_IDLE_TIMEOUT_MS}`).optional(),
      /** Characters of text, thinking and tool calls one response may carry. */
      maxResponseChars: z
        .number()
        .int(`must be a whole number of characters (default ${DEFAULT_MAX_RESPONSE_CHARS})`)
        .positive('must be more than 0')
        .optional(),
    },
    /** The top-level `retry` key: the agent's retry policy for retryable provider failures. */
    retry: z.strictObject({
      /** Retries after the first attempt (default 4); 0 turns retrying off. */
      maxRetries: z.number().int('must be a whole number').min(0).max(100).optional(),
      /** Milliseconds before the first retry, doubled each time (default 1000). */
      baseDelayMs: z.number().int().min(0).max(MAX_TIMER_MS).optional(),
      /** Longest wait between attempts (default 30 000), unless the server asks for longer. */
      maxDelayMs: z.number().int().min(0).max(MAX_TIMER_MS).optional(),
    }),
  }
}

let networkSchemas: ReturnType<typeof buildNetworkSchemas> | undefined

/** The network schemas, built once (a pure construction, so sharing it is safe). */
export function getNetworkSchemas(): ReturnType<typeof buildNetworkSchemas> {
  networkSchemas ??= buildNetworkSchemas()
  return networkSchemas
}

/** The `retry` key as parsed. */
export type RetryConfig = z.infer<ReturnType<typeof buildNetworkSchemas>['retry']>

/** Settings given for one run (command-line flags), which beat every config file. */
export type NetworkOverrides = {
  readonly timeoutMs?: number
  readonly idleTimeoutMs?: number
  readonly maxRetries?: number
}

/** The adapter's limit options: the overrides, else the provider's config entry, else defaults. */
export function limitsOf(
  entry: { readonly [K in keyof StreamLimitOptions]?: number | undefined },
  overrides: NetworkOverrides = {},
): StreamLimitOptions {
  const timeoutMs = overrides.timeoutMs ?? entry.timeoutMs
  const idleTimeoutMs = overrides.idleTimeoutMs ?? entry.idleTimeoutMs
  return {
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
    ...(entry.maxResponseChars === undefined ? {} : { maxResponseChars: entry.maxResponseChars }),
  }
}

/** The agent's retry options: `maxRetries` from the overrides, else the config's `retry`. */
export function retryOptionsOf(
  retry: RetryConfig | undefined,
  overrides: NetworkOverrides = {},
): RetryOptions {
  const maxRetries = overrides.maxRetries ?? retry?.maxRetries
  return {
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(retry?.baseDelayMs === undefined ? {} : { baseDelayMs: retry.baseDelayMs }),
    ...(retry?.maxDelayMs === undefined ? {} : { maxDelayMs: retry.maxDelayMs }),
  }
}

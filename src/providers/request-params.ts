/**
 * Request parameters (`ModelRequest.params`) split into the ones adapters translate and the
 * ones they pass through to the request body unchanged.
 */
import type { JsonValue } from '../core/index.js'
import type { ModelParams } from './provider.js'

/** Parameters with a provider-neutral name, and the rest. */
export type SplitParams = {
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  /** Every other key, for the request body as written (`top_k`, `thinking`, `reasoning_effort`…). */
  readonly passThrough: Readonly<Record<string, JsonValue>>
}

const NEUTRAL = new Set(['temperature', 'maxTokens', 'topP'])

/**
 * Splits `params`. Keys in `reserved` (the ones the adapter builds itself: `model`, `messages`,
 * `stream`, …) are left out of `passThrough` so a parameter can never replace the conversation.
 */
export function splitParams(params: ModelParams, reserved: ReadonlySet<string>): SplitParams {
  const passThrough: Record<string, JsonValue> = {}
  for (const [key, value] of Object.entries(params)) {
    if (!NEUTRAL.has(key) && !reserved.has(key)) passThrough[key] = value
  }
  return {
    ...(typeof params.temperature === 'number' ? { temperature: params.temperature } : {}),
    ...(typeof params.maxTokens === 'number' ? { maxTokens: params.maxTokens } : {}),
    ...(typeof params.topP === 'number' ? { topP: params.topP } : {}),
    passThrough,
  }
}

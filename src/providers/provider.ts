/**
 * The provider interface (docs/spec.md §8): one method that streams a model response as parts.
 * Once streaming, a provider does not throw: failures become a final `error` part.
 */
import type { JsonObject, JsonValue, Message, StopReason, ToolSpec, Usage } from '../core/index.js'

/** Request parameters. Known keys are typed; adapters pass on what they understand. */
export type ModelParams = JsonObject & {
  readonly temperature?: number
  readonly maxTokens?: number
}

/** Everything a provider needs for one request: a pure function of the log. */
export type ModelRequest = {
  readonly model: string
  readonly system: string
  readonly messages: readonly Message[]
  readonly tools: readonly ToolSpec[]
  readonly params: ModelParams
}

/**
 * One part of a streamed response. Consecutive deltas of one kind form one block; a
 * `signature` closes the thinking block it arrives in.
 */
export type StreamPart =
  | { readonly type: 'text-delta'; readonly text: string }
  | { readonly type: 'thinking-delta'; readonly text: string; readonly signature?: string }
  /** A complete tool call with parsed arguments. */
  | {
      readonly type: 'tool-call'
      readonly id: string
      readonly name: string
      readonly args: JsonValue
    }
  | { readonly type: 'usage'; readonly usage: Usage }
  /** The last part of a successful response. */
  | { readonly type: 'end'; readonly stopReason: StopReason }
  /** The last part of a failed response. */
  | {
      readonly type: 'error'
      /** `context-overflow` when the prompt is too long; otherwise the provider's code. */
      readonly code: string
      readonly message: string
      readonly retryable: boolean
      /** The provider's `retry-after`, when it gave one. */
      readonly retryAfterMs?: number
    }

/** A model provider. */
export interface Provider {
  /** Logged in `request/header` and `assistant/message` (for example `openai`, `anthropic`). */
  readonly id: string
  /** The model used when the agent names none. */
  readonly model?: string
  /**
   * Streams the response to `request`. Ends with exactly one `end` or `error` part; aborting
   * `signal` stops the request (the stream then ends, with an `error` part or without one).
   */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamPart>
}

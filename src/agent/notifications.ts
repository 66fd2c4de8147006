/**
 * Live, non-durable notifications (`agent.subscribe`, docs/spec.md §5.6). Durable events come from
 * `session.subscribe`; these carry what never reaches the log.
 */
import {
  type CompactionReason,
  type DeliveryResult,
  type JsonValue,
  messageOf,
} from '../core/index.js'

export type AgentStatus = 'idle' | 'admitting' | 'running'

export type AgentNotification =
  | { readonly type: 'status/change'; readonly status: AgentStatus }
  /** A model request is about to be sent (attempt 1, or a retry), of at most `maxAttempts`. */
  | {
      readonly type: 'request/start'
      readonly turn: number
      readonly step: number
      readonly attempt: number
      /** The retry policy's `maxRetries` + 1: "attempt 2/5". */
      readonly maxAttempts: number
    }
  /** Streamed output; `block` indexes the assistant message's content being built. */
  | {
      readonly type: 'assistant/delta'
      readonly turn: number
      readonly step: number
      readonly attempt: number
      readonly block: number
      readonly kind: 'text' | 'thinking'
      readonly text: string
    }
  /**
   * A retryable failure; attempt `attempt` (of at most `maxAttempts`) starts after `delayMs`.
   * Deltas of the failed attempt are void. Enough for "waiting for openai/gpt-4.1 (attempt 2/5,
   * retrying in 4 s)…": `provider` and `model` name what is being waited for.
   */
  | {
      readonly type: 'request/retry'
      readonly turn: number
      readonly step: number
      readonly attempt: number
      readonly maxAttempts: number
      readonly delayMs: number
      /** The provider's id (`openai`) and the model (`gpt-4.1`). */
      readonly provider: string
      readonly model: string
      readonly error: { readonly code: string; readonly message: string }
    }
  | {
      readonly type: 'tool/progress'
      readonly turn: number
      readonly step: number
      readonly callId: string
      readonly name: string
      readonly progress: JsonValue
    }
  /** An input's delivery ended (see `DeliveryResult`). */
  | {
      readonly type: 'delivery/end'
      readonly id: string
      readonly kind: 'prompt' | 'steering' | 'context' | 'continue'
      readonly result: DeliveryResult
    }
  /** A compaction's summarizing request is about to be sent (attempt 1, or a retry). */
  | {
      readonly type: 'compaction/request'
      readonly reason: CompactionReason
      readonly attempt: number
      readonly maxAttempts: number
    }
  /** A listener (session observer or extension point) threw; the log is unaffected. */
  | {
      readonly type: 'listener/error'
      readonly source: string
      readonly message: string
      readonly error: unknown
    }

export type AgentListener = (notification: AgentNotification) => void

/** The agent's live listeners: `emit` tells each one, and a listener that throws harms no other. */
export function createNotifier() {
  const listeners = new Set<AgentListener>()
  function emit(notification: AgentNotification): void {
    if (listeners.size === 0) return
    for (const listener of [...listeners]) {
      try {
        listener(notification)
      } catch (error) {
        // A live listener that throws cannot be told through itself; the console is the last resort.
        console.error('rudder: an agent listener threw:', error)
      }
    }
  }
  return {
    emit,
    /**
     * Whether anyone listens now: a hot call site asks before it builds a notification, so a
     * step of an agent nobody watches makes none (bench B5+).
     */
    hasListeners: () => listeners.size > 0,
    /** Reports a listener's or hook's failure as a `listener/error` notification. */
    reportError: (source: string, error: unknown) =>
      emit({ type: 'listener/error', source, message: messageOf(error), error }),
    subscribe(listener: AgentListener): () => void {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
  }
}

/**
 * The `--json` stream: one JSON object per line on stdout. Durable events, live notifications
 * and the final result are told apart by `type` (schema in docs/cli.md).
 */
import type {
  AgentNotification,
  DeliveryResult,
  JsonValue,
  Repair,
  SessionEvent,
  Usage,
} from '../../index.js'

/** A tool call refused in a run: by the policy (`denied`) or for want of approval. */
export type Denial = {
  readonly tool: string
  readonly args: JsonValue
  readonly reason: string
  readonly code: 'denied' | 'not-approved'
}

/** What every result line carries beside the delivery result. */
type RunSummary = {
  readonly sessionId: string
  /** Tokens of this run's model responses, summed. */
  readonly usage: Usage
  readonly durationMs: number
  readonly denials: readonly Denial[]
}

export type JsonLine =
  | {
      readonly type: 'session'
      readonly sessionId: string
      readonly model: string
      readonly repairs: readonly Repair[]
    }
  | { readonly type: 'event'; readonly event: SessionEvent }
  | { readonly type: 'live'; readonly notification: AgentNotification }
  | ({ readonly type: 'result'; readonly result: DeliveryResult } & RunSummary)
  /** `--output-format json`: the one object printed. */
  | ({
      readonly type: 'final'
      readonly status: DeliveryResult['status']
      /** The last assistant text ('' when there is none). */
      readonly text: string
      readonly model: string
      readonly result: DeliveryResult
    } & RunSummary)
  /** A failure before or around the run, when a JSON format is on (the exit code says which). */
  | {
      readonly type: 'error'
      readonly code: string
      readonly message: string
      readonly exitCode: number
    }

export function jsonLine(line: JsonLine): string {
  if (line.type === 'live' && line.notification.type === 'listener/error') {
    // The thrown value itself may not be JSON; its message is what a reader needs.
    const { error: _error, ...rest } = line.notification
    return `${JSON.stringify({ type: 'live', notification: rest })}\n`
  }
  return `${JSON.stringify(line)}\n`
}

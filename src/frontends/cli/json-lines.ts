/**
 * The `--json` stream: one JSON object per line on stdout. Durable events, live notifications
 * and the final result are told apart by `type` (schema in docs/cli.md).
 */
import type { AgentNotification, DeliveryResult, Repair, SessionEvent } from '../../index.js'

export type JsonLine =
  | {
      readonly type: 'session'
      readonly sessionId: string
      readonly model: string
      readonly repairs: readonly Repair[]
    }
  | { readonly type: 'event'; readonly event: SessionEvent }
  | { readonly type: 'live'; readonly notification: AgentNotification }
  | { readonly type: 'result'; readonly sessionId: string; readonly result: DeliveryResult }

export function jsonLine(line: JsonLine): string {
  if (line.type === 'live' && line.notification.type === 'listener/error') {
    // The thrown value itself may not be JSON; its message is what a reader needs.
    const { error: _error, ...rest } = line.notification
    return `${JSON.stringify({ type: 'live', notification: rest })}\n`
  }
  return `${JSON.stringify(line)}\n`
}

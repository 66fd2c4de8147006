/**
 * The pending panel: every input a person gave (prompt, steer, context) and its fate as it
 * changes: queued → staged → logged → completed / blocked (with the reason) / discarded. The
 * front end tracks each delivery it made; the log (the message's `id` is the delivery id),
 * `agent.pending()` snapshots and `delivery/end` notifications move it along.
 *
 * Browser-safe: no Node APIs and only type imports from the library.
 */
import type { DeliveryResult, PendingItem, SessionEvent, UserMessageData } from '../../index.js'
import type { LiveNotification } from './transcript-model.js'

export type InputStatus = 'queued' | 'staged' | 'logged' | DeliveryResult['status']

export type TrackedInput = {
  readonly id: string
  /** What the person asked for: a steer given while no turn ran is a queued prompt. */
  readonly kind: 'prompt' | 'steering' | 'context' | 'continue'
  readonly text: string
  readonly status: InputStatus
  /** Why it was blocked or discarded, or the error its turn ended with. */
  readonly reason?: string
  /** Where it reached the log. */
  readonly seq?: number
  readonly turn?: number
}

export interface InputsModel {
  /** Every tracked input, oldest first. */
  readonly all: readonly TrackedInput[]
  /** Inputs whose fate is not settled yet (queued, staged, or logged with a turn running). */
  readonly open: readonly TrackedInput[]
  readonly version: number
  /** Starts tracking a delivery the front end just made. */
  track(input: {
    readonly id: string
    readonly kind: TrackedInput['kind']
    readonly data?: UserMessageData
  }): void
  /** Folds `agent.pending()`: which tracked inputs are queued and which are staged. */
  applyPending(pending: {
    readonly queued: readonly PendingItem[]
    readonly staged: readonly PendingItem[]
  }): void
  applyEvent(event: SessionEvent): void
  applyNotification(notification: LiveNotification): void
  /** Stops showing an input (after the front end put it back in the editor, say). */
  forget(id: string): void
}

const FINAL: ReadonlySet<InputStatus> = new Set([
  'completed',
  'max-tokens',
  'step-limit',
  'stop-limit',
  'error',
  'canceled',
  'blocked',
  'discarded',
])

/** Whether an input's fate is settled: its turn ended, or (a context) it reached the log. */
export function isSettled(input: Pick<TrackedInput, 'kind' | 'status'>): boolean {
  return FINAL.has(input.status) || (input.kind === 'context' && input.status === 'logged')
}

export function createInputsModel(): InputsModel {
  const inputs = new Map<string, TrackedInput>()
  let version = 0
  const update = (id: string, change: Partial<TrackedInput>) => {
    const input = inputs.get(id)
    if (!input) return
    inputs.set(id, { ...input, ...change })
    version++
  }
  return {
    get all() {
      return [...inputs.values()]
    },
    get open() {
      return [...inputs.values()].filter((input) => !isSettled(input))
    },
    get version() {
      return version
    },
    track({ id, kind, data }) {
      const text = data
        ? data.content.map((block) => (block.type === 'text' ? block.text : '[image]')).join('')
        : ''
      inputs.set(id, { id, kind, text, status: 'queued' })
      version++
    },
    applyPending({ queued, staged }) {
      for (const item of queued) {
        const input = inputs.get(item.id)
        if (input && input.status !== 'queued')
          update(item.id, { status: 'queued', kind: item.kind })
        else if (input && input.kind !== item.kind) update(item.id, { kind: item.kind })
      }
      for (const item of staged) {
        const input = inputs.get(item.id)
        if (input && input.status !== 'staged')
          update(item.id, { status: 'staged', kind: item.kind })
      }
    },
    applyEvent(event) {
      if (event.type !== 'user/message' && event.type !== 'steering/message') return
      const data = event.data as { readonly id?: unknown; readonly turn?: unknown }
      if (typeof data.id !== 'string' || !inputs.has(data.id)) return
      const input = inputs.get(data.id)
      if (!input || isSettled(input)) return
      update(data.id, {
        status: 'logged',
        seq: event.seq,
        ...(typeof data.turn === 'number' ? { turn: data.turn } : {}),
      })
    },
    applyNotification(notification) {
      if (notification.type !== 'delivery/end') return
      const { result } = notification
      switch (result.status) {
        case 'logged':
          update(notification.id, {
            status: 'logged',
            seq: result.seq,
            ...(result.turn === undefined ? {} : { turn: result.turn }),
          })
          return
        case 'blocked':
          update(notification.id, { status: 'blocked', reason: result.reason })
          return
        case 'discarded':
          // 'canceled', 'disposed' or 'withdrawn' (agent.withdraw): every reason is shown as is.
          update(notification.id, { status: 'discarded', reason: result.reason })
          return
        case 'completed':
        case 'max-tokens':
        case 'step-limit':
        case 'stop-limit':
        case 'error':
        case 'canceled':
          update(notification.id, {
            status: result.status,
            turn: result.turn,
            ...(result.error === undefined ? {} : { reason: result.error.message }),
          })
          return
        default: {
          // Exhaustive without a value import (this module is browser-safe): a new status
          // fails to compile here.
          const unhandled: never = result
          return unhandled
        }
      }
    },
    forget(id) {
      if (inputs.delete(id)) version++
    },
  }
}

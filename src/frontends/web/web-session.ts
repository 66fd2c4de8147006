/**
 * A session this host runs, as the web sees it: the runtime's agent plus what the page needs
 * beside the log (docs/spec.md §11): every input given through the host and its fate (the
 * shared pending-panel model), the deliveries' results for the API, approval questions, and
 * the live state a reconnecting page must be shown. It turns all of it into one ordered stream
 * of items for the session's channel.
 */
import type {
  CompactResult,
  DeliveryResult,
  PendingItem,
  SessionEvent,
  UserMessageData,
} from '../../index.js'
import type { ApprovalAnswer } from '../../runtime/approval-control.js'
import type { SessionRuntime } from '../../runtime/host.js'
import { createInputsModel, isSettled, type TrackedInput } from '../view/inputs-model.js'
import type { LiveNotification } from '../view/transcript-model.js'
import type { ApprovalBoard } from './approval-board.js'
import { createLiveState } from './live-state.js'
import type { DeliveryAnswer, LiveSnapshot, StreamMessage } from './wire.js'

/** What a web session streams: durable events and live messages, in the order they happened. */
export type WebSessionItem =
  | { readonly kind: 'event'; readonly event: SessionEvent }
  | { readonly kind: 'message'; readonly message: StreamMessage }

export type InputKind = 'prompt' | 'steering' | 'context'

export interface WebSession {
  readonly id: string
  readonly runtime: SessionRuntime
  /** `send` (prompt), `steer` (steering) or `inject` (context). Throws what the agent throws. */
  give(kind: InputKind, data: UserMessageData): DeliveryAnswer
  continueTurn(): DeliveryAnswer
  compact(instructions?: string): DeliveryAnswer
  /** Cancels the running turn; returns what was discarded (to put back in an editor). */
  cancel(keepQueue: boolean): readonly PendingItem[]
  /** A delivery made through this host, with its result once settled. */
  delivery(id: string): DeliveryAnswer | undefined
  /** Resolves when the delivery settles (or `signal` aborts: then with its state at that time). */
  settled(id: string, signal: AbortSignal): Promise<DeliveryAnswer | undefined>
  answerApproval(id: string, answer: ApprovalAnswer): boolean
  snapshot(): Omit<LiveSnapshot, 'mode'>
  subscribe(listener: (item: WebSessionItem) => void): () => void
  /** Stops listening to the runtime (the runtime itself is closed by its owner). */
  detach(): void
}

type DeliveryEntry = {
  readonly kind: DeliveryAnswer['kind']
  result?: DeliveryResult | CompactResult
  readonly done: Promise<void>
}

/** Settled inputs kept for the panel beyond the open ones (older ones are forgotten). */
const KEPT_SETTLED_INPUTS = 100
/** Settled deliveries kept for `GET …/deliveries/:id`. */
const KEPT_DELIVERIES = 1000

export function createWebSession(runtime: SessionRuntime, approvals: ApprovalBoard): WebSession {
  const { agent, session } = runtime
  const id = session.header.id
  const listeners = new Set<(item: WebSessionItem) => void>()
  const inputs = createInputsModel()
  const live = createLiveState()
  const deliveries = new Map<string, DeliveryEntry>()
  const sentInputs = new Map<string, TrackedInput>()
  let inputsVersion = inputs.version
  let compactions = 0

  const emit = (item: WebSessionItem) => {
    for (const listener of listeners) listener(item)
  }
  const message = (value: StreamMessage) => emit({ kind: 'message', message: value })

  /** Sends the inputs whose state changed since last time, and forgets old settled ones. */
  const flushInputs = () => {
    if (inputs.version === inputsVersion) return
    const all = inputs.all
    for (const input of all) {
      if (sentInputs.get(input.id) === input) continue
      sentInputs.set(input.id, input)
      message({ type: 'input', input })
    }
    const settled = all.filter((input) => isSettled(input))
    for (const input of settled.slice(0, Math.max(0, settled.length - KEPT_SETTLED_INPUTS))) {
      inputs.forget(input.id)
      sentInputs.delete(input.id)
    }
    inputsVersion = inputs.version
  }
  const foldPending = () => inputs.applyPending(agent.pending())

  const register = (
    deliveryId: string,
    kind: DeliveryAnswer['kind'],
    result: Promise<DeliveryResult | CompactResult>,
  ) => {
    const entry: DeliveryEntry = {
      kind,
      done: result.then((value) => {
        entry.result = value
      }),
    }
    deliveries.set(deliveryId, entry)
    if (deliveries.size > KEPT_DELIVERIES) {
      for (const [key, old] of deliveries) {
        if (deliveries.size <= KEPT_DELIVERIES) break
        if (old.result !== undefined) deliveries.delete(key)
      }
    }
  }
  const answer = (deliveryId: string): DeliveryAnswer | undefined => {
    const entry = deliveries.get(deliveryId)
    if (!entry) return undefined
    return {
      id: deliveryId,
      kind: entry.kind,
      settled: entry.result !== undefined,
      ...(entry.result === undefined ? {} : { result: entry.result }),
    }
  }

  const stopEvents = session.subscribe((event) => {
    live.applyEvent(event)
    inputs.applyEvent(event)
    if (event.type === 'turn/start' || event.type === 'turn/end') foldPending()
    emit({ kind: 'event', event })
    flushInputs()
  })
  const stopNotifications = agent.subscribe((raw) => {
    const notification: LiveNotification =
      raw.type === 'listener/error'
        ? { type: 'listener/error', source: raw.source, message: raw.message }
        : raw
    live.applyNotification(notification)
    inputs.applyNotification(notification)
    if (notification.type === 'status/change' || notification.type === 'delivery/end') foldPending()
    message({ type: 'notification', notification })
    flushInputs()
  })
  const stopApprovals = approvals.subscribe((change) => message(change))

  const track = (
    kind: TrackedInput['kind'],
    give: () => { id: string; result: Promise<DeliveryResult> },
    data?: UserMessageData,
  ): DeliveryAnswer => {
    const before = session.nextSeq
    const delivery = give()
    register(delivery.id, kind, delivery.result)
    inputs.track({ id: delivery.id, kind, ...(data === undefined ? {} : { data }) })
    // An idle inject is logged inside the call, before the input was tracked.
    // Appended after open, so held in memory.
    for (let seq = before; seq < session.nextSeq; seq++) inputs.applyEvent(session.eventAt(seq)!)
    foldPending()
    flushInputs()
    void delivery.result.then((result) => {
      const input = inputs.all.find((candidate) => candidate.id === delivery.id)
      if (input && !isSettled(input)) {
        inputs.applyNotification({ type: 'delivery/end', id: delivery.id, kind, result })
        flushInputs()
      }
    })
    return answer(delivery.id)!
  }

  return {
    id,
    runtime,
    give(kind, data) {
      switch (kind) {
        case 'prompt':
          return track(kind, () => agent.send(data), data)
        case 'steering':
          return track(kind, () => agent.steer(data), data)
        case 'context':
          return track(kind, () => agent.inject(data), data)
      }
    },
    continueTurn: () => track('continue', () => agent.continue()),
    compact(instructions) {
      const compactId = `compact-${++compactions}`
      const result = agent.compact(instructions === undefined ? {} : { instructions }).catch(
        (error: unknown): CompactResult => ({
          status: 'error',
          error: {
            code: (error as { code?: string }).code ?? 'INTERNAL',
            message: (error as Error).message,
          },
        }),
      )
      register(compactId, 'compact', result)
      void result.then((value) => message({ type: 'compact/end', id: compactId, result: value }))
      return answer(compactId)!
    },
    cancel(keepQueue) {
      const { discarded } = agent.cancel({ keepQueue })
      foldPending()
      flushInputs()
      return discarded
    },
    delivery: answer,
    async settled(deliveryId, signal) {
      const entry = deliveries.get(deliveryId)
      if (!entry) return undefined
      await Promise.race([
        entry.done,
        new Promise<void>((resolve) => {
          if (signal.aborted) resolve()
          signal.addEventListener('abort', () => resolve(), { once: true })
        }),
      ])
      return answer(deliveryId)
    },
    answerApproval: (approvalId, value) => approvals.answer(approvalId, value),
    snapshot: () => ({
      status: agent.status,
      label: runtime.label,
      replay: [{ type: 'status/change', status: agent.status }, ...live.snapshot()],
      inputs: inputs.all,
      approvals: approvals.open(),
    }),
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    detach() {
      stopEvents()
      stopNotifications()
      stopApprovals()
      listeners.clear()
    },
  }
}

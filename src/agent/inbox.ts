/**
 * The agent's inbox (docs/spec.md §5.2): the FIFO queue of direct prompts, continuations and
 * manual compactions, and the outbox of staged steering and contexts, each entry with the
 * delivery that tells its caller its fate. The inbox does not know phases or turns: the agent
 * decides when to drain, settle or discard, the inbox does it in acceptance order.
 */
import {
  type DeliveryResult,
  type DiscardReason,
  optional,
  type PendingItem,
  type Session,
  type UserMessageData,
} from '../core/index.js'
import type { CompactResult } from './compaction.js'
import { type Deferred, defer } from './deferred.js'
import { newMessageId } from './inputs.js'

/** A direct prompt (`send`, or `steer` with no window open): one prompt is one turn. */
export type PromptEntry = {
  readonly kind: 'prompt'
  readonly id: string
  readonly data: UserMessageData
  readonly wakeup: boolean
  readonly done: Deferred<DeliveryResult>
}
/** A turn without a new prompt (`continue()`). */
export type ContinueEntry = {
  readonly kind: 'continue'
  readonly id: string
  readonly done: Deferred<DeliveryResult>
}
/** A manual compaction, run between turns in queue order (`compact()`). */
export type CompactEntry = {
  readonly kind: 'compact'
  readonly id: string
  readonly instructions?: string
  readonly done: Deferred<CompactResult>
}
/** Steering staged for the running turn's next request. */
export type SteeringEntry = {
  readonly kind: 'steering'
  readonly id: string
  readonly data: UserMessageData
  readonly done: Deferred<DeliveryResult>
}
/** A context staged for the log; `isInternal` when a hook returned it (nobody holds its delivery). */
export type ContextEntry = {
  readonly kind: 'context'
  readonly id: string
  readonly data: UserMessageData
  readonly isInternal: boolean
  readonly done: Deferred<DeliveryResult>
}
export type QueuedEntry = PromptEntry | ContinueEntry | CompactEntry
export type StagedEntry = SteeringEntry | ContextEntry
export type Entry = QueuedEntry | StagedEntry
/** What a turn carries: its prompt or continuation and the steering drained into it. */
export type CarriedEntry = PromptEntry | ContinueEntry | SteeringEntry

export type Inbox = {
  /** Adds to the queue; the caller starts the agent if `hasWaking()`. */
  enqueue(entry: QueuedEntry): void
  /** Adds to the outbox, after everything staged before. */
  stage(entry: StagedEntry): void
  /** Whether anything queued can start the agent (a `wakeup: false` prompt cannot). */
  hasWaking(): boolean
  /** Takes the first queued entry, if anything waking is queued. */
  takeNext(): QueuedEntry | undefined
  /**
   * Appends the outbox in acceptance order (docs/spec.md §5.4): contexts as `user/message`,
   * steering as `steering/message {turn}`. Returns the steering appended (its turn carries it).
   */
  drain(turn: number): readonly SteeringEntry[]
  /**
   * The window closed with no turn to carry the outbox (docs/spec.md §5.3 step 4): contexts
   * are appended at once unless steering is staged, which keeps everything for the next prompt.
   */
  settleOutbox(): void
  /** Appends one context now; its delivery resolves `logged`. */
  appendContext(entry: ContextEntry, turn?: number): void
  /** Throws away the outbox and, unless `keepQueue`, the queue; returns what callers held. */
  discard(reason: DiscardReason, options: { readonly keepQueue: boolean }): PendingItem[]
  /** Takes back one item `pending()` lists; undefined if it is no longer pending. */
  withdraw(id: string): PendingItem | undefined
  pending(): { readonly queued: PendingItem[]; readonly staged: PendingItem[] }
  /** Settles a delivery once, and tells listeners of a caller-held one. */
  settle(entry: Entry, result: DeliveryResult): void
}

export type InboxOptions = {
  readonly session: Session
  /** Told of every caller-held delivery that ends (`delivery/end`). */
  readonly onDeliveryEnd: (
    entry: PromptEntry | ContinueEntry | StagedEntry,
    result: DeliveryResult,
  ) => void
}

export function createInbox({ session, onDeliveryEnd }: InboxOptions): Inbox {
  const queue: QueuedEntry[] = []
  const outbox: StagedEntry[] = []

  function settle(entry: Entry, result: DeliveryResult): void {
    if (entry.kind === 'compact') {
      // A compaction has no delivery of its own; only a cancel or dispose ends it from here.
      if (result.status === 'discarded' && result.reason !== 'withdrawn')
        entry.done.resolve({ status: 'discarded', reason: result.reason })
      return
    }
    if (entry.done.isSettled) return
    entry.done.resolve(result)
    if (!(entry.kind === 'context' && entry.isInternal)) onDeliveryEnd(entry, result)
  }

  function appendContext(entry: ContextEntry, turn?: number): void {
    const event = session.append('user/message', { id: entry.id, ...entry.data })
    settle(entry, { status: 'logged', seq: event.seq, ...optional('turn', turn) })
  }

  const isHeld = (entry: Entry): entry is PromptEntry | StagedEntry =>
    entry.kind === 'prompt' ||
    entry.kind === 'steering' ||
    (entry.kind === 'context' && !entry.isInternal)

  return {
    enqueue: (entry) => queue.push(entry),
    stage: (entry) => outbox.push(entry),
    hasWaking: () => queue.some(isWaking),
    takeNext: () => (queue.some(isWaking) ? queue.shift() : undefined),
    drain(turn) {
      if (outbox.length === 0) return NO_STEERING
      const steering: SteeringEntry[] = []
      for (let entry = outbox.shift(); entry; entry = outbox.shift()) {
        if (entry.kind === 'context') appendContext(entry, turn)
        else {
          session.append('steering/message', { id: entry.id, ...entry.data, turn })
          steering.push(entry)
        }
      }
      return steering
    },
    settleOutbox() {
      if (outbox.some((entry) => entry.kind === 'steering')) return
      for (let entry = outbox.shift(); entry; entry = outbox.shift())
        if (entry.kind === 'context') appendContext(entry)
    },
    appendContext,
    discard(reason, { keepQueue }) {
      const discarded: PendingItem[] = []
      const entries: Entry[] = [...outbox.splice(0), ...(keepQueue ? [] : queue.splice(0))]
      for (const entry of entries) {
        settle(entry, { status: 'discarded', reason })
        if (isHeld(entry)) discarded.push(pendingItem(entry))
      }
      return discarded
    },
    withdraw(id) {
      for (const list of [queue, outbox] as Entry[][]) {
        const index = list.findIndex((entry) => entry.id === id && isHeld(entry))
        const entry = list[index]
        if (!entry || !isHeld(entry)) continue
        list.splice(index, 1)
        settle(entry, { status: 'discarded', reason: 'withdrawn' })
        return pendingItem(entry)
      }
      return undefined
    },
    pending: () => ({
      queued: queue.filter((entry) => entry.kind === 'prompt').map(pendingItem),
      staged: outbox.filter(isHeld).map(pendingItem),
    }),
    settle,
  }
}

/** What a drain of an empty outbox returns: a step drains at least once (bench B5+). */
const NO_STEERING: readonly SteeringEntry[] = Object.freeze([])

/** A queued entry is waking unless it is a prompt sent with `wakeup: false`. */
const isWaking = (entry: QueuedEntry) => entry.kind !== 'prompt' || entry.wakeup

function pendingItem(entry: PromptEntry | StagedEntry): PendingItem {
  return { id: entry.id, kind: entry.kind, data: entry.data }
}

/** New entries: a fresh id and an unsettled delivery. */
export const entries = {
  prompt: (data: UserMessageData, wakeup: boolean): PromptEntry => ({
    kind: 'prompt',
    id: newMessageId(),
    data,
    wakeup,
    done: defer(),
  }),
  continue: (): ContinueEntry => ({ kind: 'continue', id: newMessageId(), done: defer() }),
  compact: (instructions: string | undefined): CompactEntry => ({
    kind: 'compact',
    id: newMessageId(),
    ...optional('instructions', instructions),
    done: defer(),
  }),
  steering: (data: UserMessageData): SteeringEntry => ({
    kind: 'steering',
    id: newMessageId(),
    data,
    done: defer(),
  }),
  context: (data: UserMessageData, isInternal: boolean): ContextEntry => ({
    kind: 'context',
    id: newMessageId(),
    data,
    isInternal,
    done: defer(),
  }),
}

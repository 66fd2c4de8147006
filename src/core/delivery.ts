/**
 * The outcomes of input handed to an agent (docs/spec.md §5.1). Plain types, here so that tools and
 * front ends can name them without depending on the agent.
 */
import type { UserMessageData } from './values.js'

/** Where `send` puts a message: its own turn (default) or the running turn's next step. */
export type SendOptions = {
  readonly target?: 'next-turn' | 'next-step'
  /** Default true: an idle agent starts at once. False: wait until something else starts it. */
  readonly wakeup?: boolean
}

/** An input waiting in the queue (prompts) or the outbox (steering, contexts). */
export type PendingItem = {
  readonly id: string
  readonly kind: 'prompt' | 'steering' | 'context'
  readonly data: UserMessageData
}

/** What `cancel()` threw away, so a front end can put it back in its editor. */
export type Cancellation = { readonly discarded: readonly PendingItem[] }

/** How a delivery ended. */
export type DeliveryResult =
  /** An injected context reached the log. */
  | { readonly status: 'logged'; readonly seq: number; readonly turn?: number }
  /** The turn that carried the message ended; `text` is its last assistant text. */
  | {
      readonly status:
        | 'completed'
        | 'max-tokens'
        | 'step-limit'
        | 'stop-limit'
        | 'error'
        | 'canceled'
      readonly turn: number
      readonly text?: string
      readonly error?: { readonly code: string; readonly message: string }
    }
  /** Prompt admission said no. */
  | { readonly status: 'blocked'; readonly reason: string }
  /** It never reached the log: a cancel or dispose threw it away, or its caller withdrew it. */
  | { readonly status: 'discarded'; readonly reason: DiscardReason }

/** Why an input never reached the log: `cancel()`, `dispose()`, or `withdraw(id)`. */
export type DiscardReason = 'canceled' | 'disposed' | 'withdrawn'

/** A handle on one input: its id and how it ends. */
export type Delivery = { readonly id: string; readonly result: Promise<DeliveryResult> }

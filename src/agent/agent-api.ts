/**
 * The agent's public surface (docs/spec.md §5.1): its options and the `Agent` interface.
 * `createAgent` (agent.ts) builds it.
 */
import type {
  Cancellation,
  Delivery,
  HookName,
  PendingItem,
  SendOptions,
  Session,
  UserMessageData,
} from '../core/index.js'
import type { ModelParams, Provider } from '../providers/provider.js'
import type { Tool, ToolAgent } from '../tools/tool.js'
import type { ApproveCallback } from './approval.js'
import type { CompactionOptions, CompactResult } from './compaction.js'
import type { HookListeners, HookOptions } from './hooks.js'
import type { AgentListener, AgentStatus } from './notifications.js'
import type { RetryOptions } from './retry.js'
import type { AgentSettings, AgentSettingsChange } from './settings.js'

export type AgentOptions = {
  /** A live session: from a store, or `createSession()`. The agent does not close it. */
  readonly session: Session
  readonly provider: Provider
  /** Default: the provider's model. */
  readonly model?: string
  readonly system?: string
  readonly params?: ModelParams
  readonly tools?: readonly Tool[]
  readonly hooks?: HookOptions
  /** Decides `ask` answers of `tool-pre`. Default: refuse, with a message saying how to allow. */
  readonly approve?: ApproveCallback
  /** Steps per turn before it ends with `step-limit` (default 100). */
  readonly maxSteps?: number
  /** `turn-stopping` continuations per turn before `stop-limit` (default 8). */
  readonly maxStopContinuations?: number
  /** The tools' working directory (default `process.cwd()`). */
  readonly cwd?: string
  readonly retry?: RetryOptions
  /** Tool results above `limit` characters (default 50 000) are cut; the full text goes to a file in `dir`. */
  readonly toolOutput?: { readonly limit?: number; readonly dir?: string }
  /** The `session-start` reason; inferred from the session when absent. */
  readonly startReason?: 'new' | 'resume' | 'fork'
  /** Automatic compaction needs the model's context window; see `CompactionOptions`. */
  readonly compaction?: CompactionOptions
  /**
   * After this many ms idle with nothing queued, the agent lets its session release the history
   * it holds (`session.releaseHistory()`, decision 0166); the next turn reads it back. Default
   * 60 000; `Infinity` never. Sessions with nothing to read back from ignore it.
   */
  readonly releaseHistoryAfterMs?: number
}

/** The agent (docs/spec.md §5.1). */
export interface Agent extends ToolAgent {
  readonly session: Session
  readonly status: AgentStatus
  /** Queues a direct message: one send is one turn. `target: 'next-step'` is `steer`. */
  send(input: string | UserMessageData, options?: SendOptions): Delivery
  /** Redirects the running turn (joins its next request); when no window is open, a queued prompt. */
  steer(input: string | UserMessageData): Delivery
  /** Supplementary context with a non-user source; logged at once when no window is open. */
  inject(context: UserMessageData): Delivery
  /** Queues a turn without a new prompt. */
  continue(): Delivery
  /**
   * Summarizes older history into a `compaction` event (docs/spec.md §10). Runs between turns, after
   * whatever is already queued; resolves with what happened.
   */
  compact(options?: { readonly instructions?: string }): Promise<CompactResult>
  /**
   * Changes what the next requests are made with: the provider and model (`/model` in a front
   * end), the system prompt, parameters or the tool set (an MCP server's tools changed). It
   * takes effect at the next step, even inside a running turn; a step already started keeps
   * what it started with. The change reaches the log as a new `request/header` at that step.
   * Throws `INVALID_INPUT` (nothing changed) for a model-less provider or duplicate tool names.
   */
  configure(changes: AgentSettingsChange): void
  /** What the next step will be made with. */
  readonly settings: AgentSettings
  /** Aborts the current admission or turn; discards the outbox and, unless `keepQueue`, the queue. */
  cancel(options?: { readonly keepQueue?: boolean }): Cancellation
  on<K extends HookName>(hook: K, listener: HookListeners[K]): () => void
  /** Live notifications (deltas, status, retries, tool progress, delivery outcomes). */
  subscribe(listener: AgentListener): () => void
  pending(): { readonly queued: PendingItem[]; readonly staged: PendingItem[] }
  /**
   * Takes back one input `pending()` lists (a queued prompt, or staged steering or context)
   * before it reaches the log: its delivery resolves `{ status: 'discarded', reason:
   * 'withdrawn' }` and a `delivery/end` notification says so. Returns the item, so a front end
   * can put its text back in the editor, or undefined when it is no longer pending (admitted,
   * drained, already settled, or unknown): then nothing changed. docs/spec.md §5.1.
   */
  withdraw(id: string): PendingItem | undefined
  /** Resolves when nothing runs and nothing waking is queued. */
  idle(): Promise<void>
  /** Cancel, dropping everything, then release; later calls throw. */
  dispose(): Promise<void>
}

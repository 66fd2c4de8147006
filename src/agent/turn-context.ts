/**
 * What a running turn needs from its agent, in three parts: the dependencies built once per
 * agent, the run's scope (its signal and compaction), and a three-method view of the inbox.
 * A turn sees them as one flat `TurnContext`; a step adds the settings it was started with.
 */
import type { Session, ToolSpec, UserMessageData } from '../core/index.js'
import type { ModelParams, Provider } from '../providers/provider.js'
import type { Tool, ToolAgent } from '../tools/tool.js'
import type { ApproveCallback } from './approval.js'
import type { CompactionSettings, CompactResult } from './compaction.js'
import type { HookRegistry } from './hooks.js'
import type { AgentNotification } from './notifications.js'
import type { RetryPolicy } from './retry.js'

/** What a step's request is made with; `agent.configure()` changes it between steps. */
export type StepSettings = {
  readonly provider: Provider
  readonly model: string
  readonly system: string
  readonly params: ModelParams
  readonly tools: ReadonlyMap<string, Tool>
  readonly toolSpecs: readonly ToolSpec[]
}

/** Built once per agent. */
export type TurnDependencies = {
  readonly session: Session
  readonly hooks: HookRegistry
  readonly approve: ApproveCallback
  readonly maxSteps: number
  readonly maxStopContinuations: number
  readonly toolOutput: { readonly limit: number; readonly dir: string }
  readonly retry: RetryPolicy
  readonly cwd: string
  readonly agent: ToolAgent
  readonly compaction: CompactionSettings
  emit(notification: AgentNotification): void
  /** Whether `emit` has anyone to tell now (asked before building a notification). */
  hasListeners(): boolean
  reportError(source: string, error: unknown): void
  /** The settings the next step is made with (they may change between steps). */
  current(): StepSettings
}

/** One run's scope. */
export type RunScope = {
  /** Aborted by cancel or dispose. */
  readonly signal: AbortSignal
  /** Why the run was aborted (`cancel` or `dispose`). */
  cancelCause(): 'cancel' | 'dispose'
  /** Compacts the log now (outside a step), with this run's signal. */
  compact(reason: 'auto' | 'overflow'): Promise<CompactResult>
}

/** The inbox as a turn sees it. */
export type TurnInbox = {
  /** Stages a hook's context (it reaches the log at the next drain; dropped after a cancel). */
  stage(context: UserMessageData): void
  /** Appends everything staged; true if any steering was appended. */
  drain(turn: number): boolean
  /** Closes the acceptance window (just before `turn/end`). */
  closeWindow(): void
}

export type TurnContext = TurnDependencies & RunScope & TurnInbox
/** A turn's context with the settings one step was started with. */
export type StepContext = TurnContext & StepSettings

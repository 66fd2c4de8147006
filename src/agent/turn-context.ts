/**
 * What a running turn needs from its agent: dependencies, limits, the run's signal, and the
 * agent-owned operations on the outbox and acceptance window.
 */
import type { EventMap, Session, ToolSpec, UserMessageData } from '../core/index.js'
import type { ModelParams, Provider } from '../providers/provider.js'
import type { Tool, ToolAgent } from '../tools/tool.js'
import type { CompactionSettings, CompactResult } from './compaction.js'
import type { HookRegistry, ToolCallInfo } from './hooks.js'
import type { AgentNotification } from './notifications.js'
import type { RetryPolicy } from './retry.js'

/** Asked when a `tool-pre` listener answers `ask`. */
export type ApprovalRequest = {
  readonly call: ToolCallInfo
  readonly reason?: string
  readonly signal: AbortSignal
}
/**
 * `true` / `false`, or a decision with the reason given to the model on refusal. The words a
 * `tool-pre` listener uses are understood too: `'allow'` / `'run'` approve, `'deny'` refuses.
 */
export type ApprovalDecision =
  | boolean
  | 'allow'
  | 'run'
  | 'deny'
  | { readonly approved: boolean; readonly reason?: string }
  | { readonly action: 'allow' | 'run' | 'deny'; readonly reason?: string }
export type ApproveCallback = (
  request: ApprovalRequest,
) => ApprovalDecision | Promise<ApprovalDecision>

/** The part of a turn's context that `agent.configure()` can change between steps. */
export type StepSettingsOf<Context extends TurnContext> = Pick<
  Context,
  'provider' | 'model' | 'system' | 'params' | 'tools' | 'toolSpecs'
>

export type TurnContext = {
  readonly session: Session
  readonly provider: Provider
  readonly model: string
  readonly system: string
  readonly params: ModelParams
  readonly tools: ReadonlyMap<string, Tool>
  readonly toolSpecs: readonly ToolSpec[]
  readonly hooks: HookRegistry
  readonly approve: ApproveCallback
  readonly maxSteps: number
  readonly maxStopContinuations: number
  readonly toolOutput: { readonly limit: number; readonly dir: string }
  readonly retry: RetryPolicy
  readonly cwd: string
  readonly agent: ToolAgent
  /** Aborted by cancel or dispose. */
  readonly signal: AbortSignal
  /** Why the run was aborted (`cancel` or `dispose`). */
  cancelCause(): string
  /** The latest `request/header` logged, to log a new one only when it changes. */
  readonly header: { last: EventMap['request/header'] | undefined }
  emit(notification: AgentNotification): void
  reportError(source: string, error: unknown): void
  /** Stages a context in the outbox (it reaches the log at the next drain). */
  stage(context: UserMessageData): void
  /** Appends everything staged; true if any steering was appended. */
  drain(turn: number): boolean
  /** Closes the acceptance window (just before `turn/end`). */
  closeWindow(): void
  /** The settings the next step is made with (they may change between steps). */
  current(): StepSettingsOf<TurnContext>
  readonly compaction: CompactionSettings
  /** Compacts the log now (outside a step), with this run's signal. */
  compact(reason: 'auto' | 'overflow'): Promise<CompactResult>
}

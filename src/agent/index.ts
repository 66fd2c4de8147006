export {
  type Agent,
  type AgentOptions,
  type AgentSettings,
  type AgentSettingsChange,
  createAgent,
} from './agent.js'
export type {
  ApprovalDecision,
  ApprovalReply,
  ApprovalRequest,
  ApproveCallback,
} from './approval.js'
export { type CompactionOptions, type CompactResult, estimateTokens } from './compaction.js'
export type {
  HookListeners,
  HookOptions,
  PromptSubmitEvent,
  PromptSubmitResult,
  SerialListener,
  SessionStartEvent,
  StepEvent,
  ToolCallInfo,
  ToolPostEvent,
  ToolPostResult,
  ToolPreEvent,
  ToolPreResult,
  TurnStoppingEvent,
  WaterfallListener,
} from './hooks.js'
export type { AgentListener, AgentNotification, AgentStatus } from './notifications.js'
export type { RetryOptions } from './retry.js'
